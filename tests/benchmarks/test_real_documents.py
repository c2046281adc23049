"""The real-documents set: its data, loading with clear errors, the tasks it makes, fetching (no network:
a package built here, a failing apt-get), scoring and the results page."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.real_documents.__main__ import check_set, index_dir, write_results
from benchmarks.real_documents.data import (
    Conversation,
    QuestionSet,
    SetError,
    Turn,
    Where,
    conversation_tasks,
    load_manifest,
    load_set,
    parse_conversation,
    parse_document,
)
from benchmarks.real_documents.fetch import FetchError, deb_name, fetch_document, fetch_split
from benchmarks.real_documents.score import holds, score_record, table
from mtrag_graph.tasks import parse_task

SHA = "0" * 64
PORTS = Where("README.md", section="Ports")


def document_raw(**changes):
    raw = {
        "name": "guide",
        "kind": "markdown",
        "split": "tuning",
        "package": "guide-doc",
        "version": "1.0-1",
        "architecture": "all",
        "files": [
            {"path": "usr/share/doc/guide/README.md.gz", "name": "README.md", "sha256": SHA},
            {"path": "usr/share/doc/guide/manual.pdf", "name": "manual.pdf", "sha256": SHA},
        ],
    }
    raw.update(changes)
    return raw


def documents():
    document = parse_document(document_raw(), 0)
    return {document.name: document}


def turn(question="Which port?", *, answerable=True, facts=(("8008",),), where=None, answer="8008"):
    return Turn(
        question=question,
        answer=answer,
        answerable=answerable,
        key_facts=facts if answerable else (),
        where=(where or PORTS) if answerable else None,
    )


# --- the shipped set -------------------------------------------------------------------------------


def test_shipped_set_has_the_questions_the_issue_asks_for():
    questions = load_set()
    turns = [(i, t) for c in questions.conversations for i, t in enumerate(c.turns)]
    assert len(turns) >= 80
    assert sum(not t.answerable for _, t in turns) >= 15
    assert sum(t.howto for _, t in turns) >= 3
    assert len(questions.documents) >= 5


@pytest.mark.parametrize("split", ["tuning", "report"])
def test_each_split_has_its_own_documents_with_first_turns_follow_ups_and_unanswerables(split):
    questions = load_set()
    conversations = questions.split_conversations(split)
    turns = [(i, t) for c in conversations for i, t in enumerate(c.turns)]
    assert len(questions.split_documents(split)) >= 2
    assert {c.document for c in conversations} == {d.name for d in questions.split_documents(split)}
    assert any(i == 0 and t.answerable for i, t in turns)
    assert any(i > 0 and t.answerable for i, t in turns)
    assert any(i == 0 and not t.answerable for i, t in turns)
    assert any(i > 0 and not t.answerable for i, t in turns)


def test_shipped_set_holds_the_kinds_of_documents_users_bring():
    kinds = {d.kind for d in load_manifest().values()}
    assert {"pdf-latex", "pdf-dblatex", "html-sphinx", "html-mkdocs", "markdown"} <= kinds


# --- loading: errors name the entry and the field ----------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "scan"}, "kind"),
        ({"split": "test"}, "split"),
        ({"version": ""}, "version"),
        ({"files": []}, "files"),
        ({"files": [{"path": "a", "name": "a.md", "sha256": "abc"}]}, "files[0].sha256"),
        ({"files": [{"path": "a", "name": "../a.md", "sha256": SHA}]}, "files[0].name"),
    ],
)
def test_a_bad_manifest_entry_names_the_document_and_the_field(changes, field):
    with pytest.raises(SetError) as error:
        parse_document(document_raw(**changes), 0)
    assert error.value.item == "document guide"
    assert error.value.field == field


def conversation_raw(*turns, document="guide"):
    return {"conversation_id": "guide-1", "document": document, "turns": list(turns)}


@pytest.mark.parametrize(
    ("raw", "item", "field"),
    [
        (conversation_raw({"question": "q", "answer": "a"}, document="other"), "conversation guide-1", "document"),
        (conversation_raw(), "conversation guide-1", "turns"),
        (conversation_raw({"question": "q", "answer": "a", "where": {"file": "README.md"}}), "conversation guide-1 turn 1", "key_facts"),
        (conversation_raw({"question": "q", "answer": "a", "key_facts": ["x"]}), "conversation guide-1 turn 1", "where"),
        (conversation_raw({"question": "q", "answer": "a", "key_facts": ["x"], "where": {"file": "other.md"}}), "conversation guide-1 turn 1", "where.file"),
        (conversation_raw({"question": "q", "answer": "a", "key_facts": ["x"], "where": {"file": "manual.pdf"}}), "conversation guide-1 turn 1", "where.page"),
        (conversation_raw({"question": "q", "answer": "a", "answerable": False, "key_facts": ["x"]}), "conversation guide-1 turn 1", "key_facts"),
        (conversation_raw({"question": "", "answer": "a", "answerable": False}), "conversation guide-1 turn 1", "question"),
    ],
)  # fmt: skip
def test_a_bad_question_names_the_conversation_turn_and_field(raw, item, field):
    with pytest.raises(SetError) as error:
        parse_conversation(raw, 1, documents())
    assert (error.value.item, error.value.field) == (item, field)


def test_a_fact_given_as_a_string_is_one_spelling():
    raw = conversation_raw(
        {"question": "q", "answer": "a", "key_facts": ["x", ["y", "z"]], "where": {"file": "README.md"}}
    )
    assert parse_conversation(raw, 1, documents()).turns[0].key_facts == (("x",), ("y", "z"))


# --- tasks -----------------------------------------------------------------------------------------


def test_each_turn_is_a_task_carrying_the_earlier_turns_and_their_reference_answers():
    conversation = Conversation(
        "guide-1", "guide", (turn("Which port does it use?"), turn("And for TLS?", answerable=False))
    )
    first, second = conversation_tasks(conversation, "real-documents-tuning")
    assert first["task_id"] == "guide-1<::>1" and first["input"] == [
        {"speaker": "user", "text": "Which port does it use?"}
    ]
    assert second["input"] == [
        {"speaker": "user", "text": "Which port does it use?"},
        {"speaker": "agent", "text": "8008"},
        {"speaker": "user", "text": "And for TLS?"},
    ]
    assert second["answerability"] == ["UNANSWERABLE"]
    parsed = parse_task(second)
    assert parsed.passages is None  # full RAG: the graph retrieves
    assert parsed.question == "And for TLS?"


# --- fetching --------------------------------------------------------------------------------------


def build_deb(root: Path, package: str, version: str, files: dict[str, bytes]) -> Path:
    tree = root / "tree"
    for path, content in files.items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.org>\n"
        "Description: test\n"
    )
    out = root / "out.deb"
    subprocess.run(
        ["dpkg-deb", "--build", "--root-owner-group", str(tree), str(out)], check=True, capture_output=True
    )
    return out


def test_a_document_is_unpacked_decompressed_and_checked_against_its_hash(tmp_path):
    readme = b"# Guide\n\nThe server listens on port 8008.\n"
    deb = build_deb(
        tmp_path, "guide-doc", "1.0-1", {"usr/share/doc/guide/README.md.gz": gzip.compress(readme)}
    )
    document = parse_document(
        document_raw(files=[{"path": "usr/share/doc/guide/README.md.gz", "name": "README.md",
                             "sha256": hashlib.sha256(readme).hexdigest()}]),
        0,
    )  # fmt: skip
    cache = tmp_path / "cache"
    (cache / "debs").mkdir(parents=True)
    shutil.copy(deb, cache / "debs" / deb_name(document))
    folder = fetch_document(document, cache)
    assert (folder / "README.md").read_bytes() == readme
    assert folder == cache / "documents" / "tuning" / "guide"


def test_a_file_whose_hash_differs_is_refused_naming_the_document(tmp_path):
    deb = build_deb(
        tmp_path, "guide-doc", "1.0-1", {"usr/share/doc/guide/README.md.gz": gzip.compress(b"changed")}
    )
    document = parse_document(document_raw(files=[document_raw()["files"][0]]), 0)
    (tmp_path / "cache" / "debs").mkdir(parents=True)
    shutil.copy(deb, tmp_path / "cache" / "debs" / deb_name(document))
    with pytest.raises(
        FetchError, match=r"document guide: README.md from guide-doc_1.0-1_all.deb has SHA-256"
    ):
        fetch_document(document, tmp_path / "cache")
    assert not (tmp_path / "cache" / "documents" / "tuning" / "guide" / "README.md").exists()


def test_a_version_gone_from_the_archive_is_said_plainly(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "apt-get"
    fake.write_text("#!/bin/sh\necho \"E: Version '1.0-1' for 'guide-doc' was not found\" >&2\nexit 100\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(FetchError) as error:
        fetch_document(parse_document(document_raw(), 0), tmp_path / "cache")
    message = str(error.value)
    assert "document guide: package guide-doc version 1.0-1 could not be downloaded" in message
    assert "was not found" in message and "snapshot.debian.org/package/guide-doc/1.0-1/" in message


# --- scoring ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spelling", "found"),
    [
        ("Set `site\\_name` in mkdocs.yml", "site_name", True),
        ("It listens on PORT 8008.", "port 8008", True),
        ("Use `make`.", "make", True),
        ("Use cmake.", "make", False),
        ("Keep 16 archives", "6", False),
        ("version 1.6.9", "6", False),
        ("version 6.101", "6", False),
        ("keep 6 monthly", "6", True),
        ("add it to your .gitignore file", "gitignore", True),
        ("“non‑ASCII” characters", "non-ascii", True),
        ("aborting safely", "abort", False),
    ],
)
def test_key_facts_match_normalised_and_never_inside_a_longer_word_or_number(text, spelling, found):
    assert holds(text, spelling) is found


def record(answer, *, abstained=False, asked=False, contexts=(), cited=(), seconds=3.0):
    return {
        "task_id": "guide-1<::>1",
        "status": "ok",
        "predictions": [
            {"text": answer, "citations": [{"text": answer, "passages": list(cited)}] if cited else []}
        ],
        "contexts": list(contexts),
        "route": {"abstained": abstained, "clarification": {"asked": asked}, "seconds": seconds},
    }


PORT_PASSAGE = {"document_id": "guide/README.md#chunk=2", "text": "The server listens on port 8008."}
OTHER_PASSAGE = {"document_id": "guide/README.md#chunk=1", "text": "Install it with pip."}


def test_an_answer_with_every_key_fact_citing_the_passage_that_holds_it_is_right():
    verdict = score_record(
        record("It listens on port 8008.", contexts=[OTHER_PASSAGE, PORT_PASSAGE], cited=[1]),
        turn(),
        False,
        {},
    )
    assert verdict.right and verdict.cited_holds_fact and verdict.retrieved
    assert not (verdict.idk or verdict.asked_back or verdict.invented)


def test_a_right_answer_citing_only_a_passage_without_the_fact_is_right_but_not_cited_right():
    verdict = score_record(
        record("Port 8008.", contexts=[OTHER_PASSAGE, PORT_PASSAGE], cited=[0]), turn(), False, {}
    )
    assert verdict.right and verdict.cited_holds_fact is False and verdict.retrieved


def test_a_cited_passage_at_the_gold_page_counts_although_its_text_lost_the_fact():
    where = Where("manual.pdf", page=4)
    passage = {"document_id": "guide/manual.pdf#page=4&chunk=9", "text": "port8008 (words run together)"}
    verdict = score_record(record("Port 8008.", contexts=[passage], cited=[0]), turn(where=where), False, {})
    assert verdict.cited_holds_fact and verdict.retrieved


def test_a_cited_passage_under_the_gold_section_counts_by_the_index_s_section():
    passages = {OTHER_PASSAGE["document_id"]: {"source": "guide/README.md", "section": "Ports¶"}}
    verdict = score_record(record("Port 8008.", contexts=[OTHER_PASSAGE], cited=[0]), turn(), False, passages)
    assert verdict.cited_holds_fact


def test_an_abstention_is_i_dont_know_and_a_question_back_is_asked_back():
    idk = score_record(record("I don't know.", abstained=True, contexts=[PORT_PASSAGE]), turn(), False, {})
    assert idk.idk and not idk.right and not idk.invented and idk.retrieved
    declined = score_record(record("The documents do not say."), turn(), False, {})
    assert declined.idk
    asked = score_record(
        record("Which one do you mean: README or CONTRIBUTING?", asked=True), turn(), True, {}
    )
    assert asked.asked_back and not asked.idk and not asked.right and asked.follow_up


def test_an_answer_to_an_unanswerable_question_or_without_any_key_fact_is_invented():
    unanswerable = score_record(record("It listens on port 443."), turn(answerable=False), False, {})
    assert unanswerable.invented and unanswerable.retrieved is None
    wrong = score_record(record("It listens on port 443."), turn(), False, {})
    assert wrong.invented and not wrong.right
    partial = score_record(record("Port 8008."), turn(facts=(("8008",), ("TLS",))), False, {})
    assert not partial.right and not partial.invented


def test_a_yes_or_no_opposite_to_the_reference_is_wrong_though_it_quotes_the_fact():
    reference = turn("Does it listen on 443?", answer="No, it listens on 8008.")
    quoted = "The document says: \u201cThe server listens on port 8008.\u201d"
    assert score_record(record(quoted), reference, False, {}).right
    assert score_record(record("No. " + quoted), reference, False, {}).right
    assert not score_record(record("Yes. " + quoted), reference, False, {}).right


def test_the_table_counts_first_turns_and_follow_ups_apart():
    verdicts = [
        score_record(record("Port 8008.", contexts=[PORT_PASSAGE], cited=[0]), turn(), False, {}),
        score_record(record("Which one?", asked=True), turn(), True, {}),
        score_record(record("I don't know.", abstained=True), turn(answerable=False), True, {}),
    ]
    text = table(verdicts)
    assert (
        "| first turns | 1 | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) | 0/1 (0%) | 0/1 (0%) | 0/1 (0%) |"
        in text
    )
    assert "| follow-ups | 1 | 0/1 (0%) | - | - | 0/1 (0%) | 0/1 (0%) | 1/1 (100%) | 0/1 (0%) |" in text
    assert "| follow-ups | 1 | 1/1 (100%) | 0/1 (0%) | 0/1 (0%) |" in text  # the unanswerable one, declined


# --- the command's pieces --------------------------------------------------------------------------


def test_the_results_page_keeps_its_text_and_replaces_only_the_split_s_table(tmp_path):
    page = tmp_path / "documents.md"
    page.write_text("# Real documents\n\nWhat holds now.\n")
    write_results(page, "tuning", "first table")
    write_results(page, "report", "report table")
    write_results(page, "tuning", "second table")
    text = page.read_text()
    assert text.startswith("# Real documents\n\nWhat holds now.\n")
    assert "second table" in text and "first table" not in text and "report table" in text
    assert text.count("<!-- tuning split") == 1


def test_check_finds_a_key_fact_missing_from_its_section(tmp_path):
    folder = tmp_path / "tuning" / "guide"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(
        "# Guide\n\n## Ports\n\nThe server listens on port 8008.\n\n## Install\n\nUse pip.\n"
    )
    questions = QuestionSet(documents=documents())
    questions.conversations = [
        Conversation("guide-1", "guide", (turn(), turn(facts=(("pip",),)), turn(facts=(("9090",),)))),
    ]
    problems = check_set(questions, "tuning", tmp_path / "tuning")
    assert len(problems) == 2
    assert problems[0].startswith("guide-1<::>2: README.md Ports: key facts not found: [('pip',)]")
    assert "guide-1<::>3" in problems[1]


def test_the_shipped_questions_file_is_one_conversation_a_line():
    lines = Path("benchmarks/data/real_documents/questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["turns"] for line in lines if line.strip())


def test_a_split_folder_holds_only_the_files_the_manifest_names(tmp_path):
    readme = b"# Guide\n"
    deb = build_deb(
        tmp_path, "guide-doc", "1.0-1", {"usr/share/doc/guide/README.md.gz": gzip.compress(readme)}
    )
    entry = {
        "path": "usr/share/doc/guide/README.md.gz",
        "name": "README.md",
        "sha256": hashlib.sha256(readme).hexdigest(),
    }
    document = parse_document(document_raw(files=[entry]), 0)
    cache = tmp_path / "cache"
    (cache / "debs").mkdir(parents=True)
    shutil.copy(deb, cache / "debs" / deb_name(document))
    stray = cache / "documents" / "tuning" / "old-document" / "notes.md"
    stray.parent.mkdir(parents=True)
    stray.write_text("from an older manifest")
    folder = fetch_split([document], cache)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == ["guide", "guide/README.md"]


def test_another_chunking_gets_an_index_of_its_own(tmp_path):
    assert index_dir(tmp_path, "tuning") == tmp_path / "index-tuning"
    assert index_dir(tmp_path, "tuning", 256, 50) == tmp_path / "index-tuning-c256-o50"


def test_a_right_answer_s_facts_are_checked_verbatim_in_the_passages_it_cites():
    quoted = score_record(record("Port 8008.", contexts=[PORT_PASSAGE], cited=[0]), turn(), False, {})
    assert quoted.facts_verbatim is True and quoted.unquoted == ()
    extra = score_record(record("Port 8008, with --tls-port 8443.", contexts=[PORT_PASSAGE], cited=[0]),
                         turn(), False, {})  # fmt: skip
    assert extra.right and extra.facts_verbatim is False
    assert set(extra.unquoted) == {"--tls-port", "8443"}


def test_a_fact_the_user_said_need_not_be_quoted():
    said = record("Port 8008 for mtrag-serve.", contexts=[PORT_PASSAGE], cited=[0])
    said["input"] = [{"speaker": "user", "text": "Which port does mtrag-serve use?"}]
    assert score_record(said, turn(), False, {}).facts_verbatim is True
