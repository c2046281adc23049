"""Citations of document passages name the file and page: the label, the chat's sources, predictions."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mtrag_graph.citations import CitedAnswer, answer_citations
from mtrag_graph.commands.chat import TurnPrinter
from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.ingest.build import ingest
from mtrag_graph.passages import source_label


@pytest.mark.parametrize(
    ("passage", "label"),
    [
        (
            {"document_id": "docs/guide.pdf#page=2&chunk=5", "file": "docs/guide.pdf", "page": 2},
            "guide.pdf, p. 2",
        ),
        ({"document_id": "guide.pdf#page=2&chunk=5", "title": "Harbor Guide"}, "guide.pdf, p. 2"),
        (
            {"document_id": "install.md#chunk=2", "file": "install.md", "section": "Requirements"},
            "install.md, Requirements",
        ),
        ({"document_id": "notes.txt#chunk=1"}, "notes.txt"),
        (
            {"document_id": "p-1", "title": "Cloudant", "url": "https://example.com/cloudant"},
            "https://example.com/cloudant",
        ),
        ({"document_id": "p-1", "title": "Cloudant"}, "Cloudant (p-1)"),
    ],
)
def test_a_source_label_names_the_file_and_page(passage: dict, label: str):
    assert source_label(passage) == label


def test_the_chat_prints_the_file_and_page_under_the_answer():
    out = io.StringIO()
    sentences = [{"text": "The ferry leaves at 06:40.", "supported": True, "passages": [0]}]
    # a source without its origin fields: the label reads the file and page from its id
    sources = [{"document_id": "guide.pdf#page=2&chunk=2", "title": "Harbor Guide", "text": "x"}]
    TurnPrinter(out).finish(CitedAnswer("The ferry leaves at 06:40.", sentences, sources))
    assert "[1] guide.pdf, p. 2" in out.getvalue()


def test_prediction_citations_carry_the_sources_of_document_passages():
    state = {
        "answer": "The ferry leaves at 06:40.",
        "grounding": {
            "sentences": [{"text": "The ferry leaves at 06:40.", "supported": True, "passages": [0]}]
        },
        "kept_passages": [
            {"document_id": "guide.pdf#page=2&chunk=2", "file": "guide.pdf", "page": 2, "text": "x"}
        ],
    }
    assert answer_citations(state)[0]["sources"] == ["guide.pdf, p. 2"]


def test_prediction_citations_of_benchmark_passages_are_unchanged():
    state = {
        "answer": "A.",
        "grounding": {"sentences": [{"text": "A.", "supported": True, "passages": [0]}]},
        "kept_passages": [{"document_id": "p-1", "title": "T", "text": "A."}],
    }
    assert "sources" not in answer_citations(state)[0]


@pytest.mark.slow
def test_a_question_answered_on_the_pdfs_second_page_cites_it(documents: Path, tmp_path: Path):
    """The whole path with the real models: MiniLM passages, the bundled LLM, the citation of page 2."""
    (documents / "broken.pdf").write_bytes(b"%PDF-1.4\n garbage")
    report = ingest([documents], tmp_path / "index", show_progress=False)
    assert [s.name for s in report.skipped] == ["broken.pdf"] and report.files_read == 4
    task = {
        "task_id": "docs<::>1",
        "input": [{"speaker": "user", "text": "When does the ferry to Quillon Island leave?"}],
    }
    # the default clarify step asks back here ("the ferry", passages of two titled documents, neither
    # named: its definite-reference signal): the answer path is what this test is about
    context = Context(index_dir=str(tmp_path / "index"), clarify=False)
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert "6:40" in state["answer"], state["answer"]
    cited = {label for sentence in answer_citations(state) for label in sentence.get("sources", [])}
    assert "guide.pdf, p. 2" in cited
