"""Indexing a folder of real documents: sources and pages, bad files, updates, resuming, atomic writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mtrag_graph.ingest import build
from mtrag_graph.ingest.build import ingest, journal_dir
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.retrieval import index as builtin
from mtrag_graph.retrieval.registry import load_index
from mtrag_graph.retrieval.search import as_passages, search
from tests.ingest.conftest import make_pdf

EMBEDDER = "hashing:256"


def _index(paths, out: Path, **options):
    options.setdefault("embedder", EMBEDDER)
    return ingest(paths if isinstance(paths, list) else [paths], out, show_progress=False, **options)


def _passages(out: Path) -> list[dict]:
    return [json.loads(line) for line in open(out / "passages.jsonl", encoding="utf-8")]


def test_a_folder_of_documents_becomes_passages_with_source_title_and_page(documents: Path, tmp_path: Path):
    report = _index(documents, tmp_path / "index")
    rows = _passages(tmp_path / "index")
    assert report.files_read == 4 and not report.skipped
    assert {r["source"] for r in rows} == {"install.md", "hours.html", "guide.pdf", "policy.docx"}
    ferry = next(r for r in rows if "Quillon" in r["text"])
    assert (ferry["page"], ferry["title"], ferry["_id"]) == (2, "Harbor Guide", "guide.pdf#page=2&chunk=2")
    assert next(r for r in rows if "C compiler" in r["text"])["section"] == "Requirements"


def test_search_returns_the_passages_file_and_page(documents: Path, tmp_path: Path):
    _index(documents, tmp_path / "index")
    index = load_index(tmp_path / "index")
    top = as_passages(index, search(index, "ferry Quillon Island pier", top_k=1, mode="bm25"))[0]
    assert (top["file"], top["page"], top["document_id"]) == ("guide.pdf", 2, "guide.pdf#page=2&chunk=2")


def test_bad_files_are_named_with_their_reason_and_the_rest_is_indexed(documents: Path, tmp_path: Path):
    (documents / "broken.pdf").write_bytes(b"%PDF-1.4\n garbage")
    (documents / "empty.txt").write_bytes(b"")
    (documents / "blob.txt").write_bytes(b"\x00\x01binary")
    (documents / "sub").mkdir()
    (documents / "sub" / "notes.txt").write_text("Nested notes are found too.", encoding="utf-8")
    said = []
    report = _index(documents, tmp_path / "index", on_skip=said.append)
    reasons = {s.name: s.reason for s in said}
    assert set(reasons) == {"broken.pdf", "empty.txt", "blob.txt"}
    assert "corrupt PDF" in reasons["broken.pdf"] and reasons["empty.txt"] == "empty file"
    assert report.files_read == 5 and "sub/notes.txt" in {r["source"] for r in _passages(tmp_path / "index")}


def test_an_unchanged_folder_embeds_nothing(documents: Path, tmp_path: Path):
    _index(documents, tmp_path / "index")
    again = _index(documents, tmp_path / "index")
    assert (again.files_read, again.embedded, again.files_unchanged) == (0, 0, 4)
    assert again.passages_unchanged == again.passages_total > 0


def test_a_changed_file_is_embedded_again_alone_and_a_deleted_one_removed(documents: Path, tmp_path: Path):
    first = _index(documents, tmp_path / "index")
    with open(documents / "install.md", "a", encoding="utf-8") as handle:
        handle.write("\n## Uninstalling\n\nDelete the folder.\n")
    (documents / "hours.html").unlink()
    second = _index(documents, tmp_path / "index")
    assert second.changed_files == ["install.md"] and second.files_unchanged == 2
    assert second.files_removed == 1 and second.passages_removed == 3 + 2
    rows = _passages(tmp_path / "index")
    assert "hours.html" not in {r["source"] for r in rows}
    assert any("Delete the folder" in r["text"] for r in rows)
    assert len(rows) == second.passages_total == first.passages_total - 2 + 1
    assert load_index(tmp_path / "index").dense.ntotal == len(rows)


def test_a_file_that_turns_corrupt_keeps_its_old_passages(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder / "guide.pdf")
    _index(folder, tmp_path / "index")
    (folder / "guide.pdf").write_bytes(b"%PDF-1.4 truncated")
    report = _index(folder, tmp_path / "index")
    assert report.skipped[0].name == "guide.pdf" and report.passages_total == 3
    assert len(_passages(tmp_path / "index")) == 3


def test_an_interrupted_run_resumes_without_embedding_finished_files_again(
    documents: Path, tmp_path: Path, monkeypatch
):
    real = build.passage_rows

    def fails_on_word(source, *args):
        if source.name == "policy.docx":
            raise KeyboardInterrupt  # the run is stopped while reading the last file
        return real(source, *args)

    monkeypatch.setattr(build, "EMBED_BATCH", 1)  # every file is flushed to the journal as it finishes
    monkeypatch.setattr(build, "passage_rows", fails_on_word)
    with pytest.raises(KeyboardInterrupt):
        _index(documents, tmp_path / "index")
    assert not (tmp_path / "index").exists()
    assert len(list(journal_dir(tmp_path / "index").glob("*.jsonl"))) == 3
    monkeypatch.setattr(build, "passage_rows", real)
    resumed = _index(documents, tmp_path / "index")
    assert (resumed.files_resumed, resumed.added_files) == (3, ["policy.docx"])
    assert resumed.passages_total == len(_passages(tmp_path / "index"))
    assert not journal_dir(tmp_path / "index").exists()


def test_a_failed_commit_leaves_the_old_index_whole(documents: Path, tmp_path: Path, monkeypatch):
    _index(documents, tmp_path / "index")
    before = (tmp_path / "index" / "passages.jsonl").read_bytes()
    (documents / "install.md").write_text("# Changed\n\nNew words.\n", encoding="utf-8")

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(builtin, "make_faiss_index", crash)
    with pytest.raises(OSError, match="disk full"):
        _index(documents, tmp_path / "index")
    assert (tmp_path / "index" / "passages.jsonl").read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    monkeypatch.undo()
    assert _index(documents, tmp_path / "index").files_resumed == 1  # its passages were kept in the journal


def test_json_lines_passages_keep_their_ids(tmp_path: Path, corpus_rows: Path):
    _index(corpus_rows, tmp_path / "index")
    assert [r["_id"] for r in _passages(tmp_path / "index")][:2] == ["p-cardinals", "p-london"]


def test_the_chunk_size_is_a_setting_and_a_new_size_reindexes_everything(documents: Path, tmp_path: Path):
    long = " ".join(f"Sentence {i} is about harbors." for i in range(400))
    (documents / "long.txt").write_text(long, encoding="utf-8")
    small = _index(documents, tmp_path / "index", chunk_tokens=64, overlap=10)
    large = _index(documents, tmp_path / "index")
    assert small.passages_total > large.passages_total and large.files_read == 5


def test_the_command_prints_bad_files_and_a_summary(documents: Path, tmp_path: Path):
    (documents / "broken.pdf").write_bytes(b"%PDF-1.4\n garbage")
    command = [sys.executable, "-m", "mtrag_graph", "index", str(documents), "-o", str(tmp_path / "index")]
    done = subprocess.run(
        [*command, "--embedder", EMBEDDER, "--quiet"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "broken.pdf: corrupt PDF" in done.stderr
    assert "4 added, 0 changed" in done.stdout and "1 skipped" in done.stdout
    assert "skipped: broken.pdf: corrupt PDF" in done.stdout
    assert "added: install.md" in done.stdout and "re-embedded" not in done.stdout  # a first run adds
    assert not [line for line in done.stderr.splitlines() if line.startswith(("DEBUG", "INFO"))]


def test_an_index_whose_passages_were_made_by_an_older_reader_is_read_again(documents: Path, tmp_path: Path):
    _index(documents, tmp_path / "index")
    manifest_path = tmp_path / "index" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["chunk"].pop("passages_version")  # as an index built before the version was kept
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    again = _index(documents, tmp_path / "index")
    assert (again.files_read, again.files_unchanged) == (4, 0)
    assert "every file read again: the index was made with other chunk settings" in again.summary()
    assert _index(documents, tmp_path / "index").files_unchanged == 4


def test_a_changed_file_is_listed_as_re_embedded(documents: Path, tmp_path: Path):
    _index(documents, tmp_path / "index")
    (documents / "install.md").write_text("# Install\n\nRun the zzinstaller.\n", encoding="utf-8")
    summary = _index(documents, tmp_path / "index").summary()
    assert "0 added, 1 changed" in summary and "re-embedded (changed): install.md" in summary
    assert "added:" not in summary


def test_a_documentation_site_leaves_out_navigation_pages_and_counts_other_files(tmp_path: Path):
    site = tmp_path / "site"
    shutil.copytree(Path(__file__).parent / "data", site)
    (site / "_static").mkdir()
    (site / "_static" / "searchtools.js").write_text("var Search = {};", encoding="utf-8")
    (site / "searchindex.js").write_text("Search.setIndex({})", encoding="utf-8")
    (site / "_sources").mkdir()
    (site / "_sources" / "sphinx_page.rst.txt").write_text("Failsafe mode\n=============\n", encoding="utf-8")
    report = _index(site, tmp_path / "index")
    assert sorted(report.added_files) == ["doxygen_page.html", "mkdocs_page.html", "sphinx_page.html"]
    assert {item.name for item in report.left_out} == {
        "genindex.html",
        "search.html",
        "sphinx_index.html",
        "redirect.html",
        "_sources/sphinx_page.rst.txt",
    }
    assert not report.skipped and report.other_types == {".js": 2}
    summary = report.summary()
    assert "left out: genindex.html: navigation page" in summary
    assert "not documents: 2 files in the folders (.js 2)" in summary
    rows = _passages(tmp_path / "index")
    assert not [r for r in rows if "\u00b6" in r["text"] + (r["section"] or "") + r["title"]]


def test_many_small_files_are_embedded_in_shared_batches(tmp_path: Path, monkeypatch):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(300):
        (folder / f"note{i:03}.txt").write_text(f"Note {i} mentions harbor {i}.", encoding="utf-8")
    embedder = get_embedder(EMBEDDER)
    sizes: list[int] = []
    real = embedder.embed

    def counting(texts, show_progress=False):
        sizes.append(len(texts))
        return real(texts, show_progress)

    monkeypatch.setattr(embedder, "embed", counting)
    report = _index(folder, tmp_path / "index")
    assert report.passages_total == 300 and sum(sizes) == 300
    assert len(sizes) <= 5  # passages of many files share a batch: not one model call per file


def test_an_index_inside_the_folder_is_not_indexed_itself(documents: Path):
    _index(documents, documents / "index")
    again = _index(documents, documents / "index")
    assert again.files_unchanged == 4 and again.files_read == 0 and not again.skipped
