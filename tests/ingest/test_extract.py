"""Text out of real files made here: pages of a PDF, headings of Markdown, HTML and Word; bad files."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest

from mtrag_graph.ingest import extract
from mtrag_graph.ingest.chunk import chunk_sections, splitter
from mtrag_graph.ingest.extract import ExtractError, Section, read_document
from tests.ingest.conftest import make_docx, make_pdf


def test_pdf_sections_carry_their_page_and_the_metadata_title(tmp_path: Path):
    document = read_document(make_pdf(tmp_path / "guide.pdf"))
    sections = list(document.sections)
    assert document.title == "Harbor Guide"
    assert [s.page for s in sections] == [1, 2, 3]
    assert "Quillon Island" in sections[1].text and "pier 7" in sections[1].text


def test_markdown_sections_sit_under_their_heading(documents: Path):
    document = read_document(documents / "install.md")
    sections = list(document.sections)
    assert document.title == "Install Guide"
    assert [s.heading for s in sections] == ["Install Guide", "Requirements", "Upgrading"]
    assert "C compiler" in sections[1].text


def test_html_keeps_the_article_and_drops_navigation(documents: Path):
    document = read_document(documents / "hours.html")
    text = " ".join(s.text for s in document.sections)
    assert document.title == "Office Hours"
    assert "08:15" in text and "answering service" in text
    assert "Copyright" not in text and "About" not in text


def test_word_sections_follow_its_headings(tmp_path: Path):
    document = read_document(make_docx(tmp_path / "policy.docx"))
    sections = list(document.sections)
    assert document.title == "Expense Policy"
    assert [s.heading for s in sections] == ["Expense Policy", "Meals"]
    assert "45 euros" in sections[1].text


def test_a_corrupt_pdf_says_so(tmp_path: Path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    with pytest.raises(ExtractError, match="corrupt PDF"):
        list(read_document(path).sections)


def test_an_encrypted_pdf_says_it_needs_a_password(tmp_path: Path):
    writer = pypdf.PdfWriter(clone_from=make_pdf(tmp_path / "plain.pdf"))
    writer.encrypt(user_password="secret", owner_password="owner")
    writer.write(tmp_path / "locked.pdf")
    with pytest.raises(ExtractError, match="encrypted"):
        read_document(tmp_path / "locked.pdf")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.md", b"", "empty file"),
        ("blob.txt", b"\x00\x01\x02\x03 binary", "binary"),
        ("latin.txt", bytes(range(128, 256)) * 40, "binary"),
        ("fake.docx", b"not a zip archive", "corrupt Word"),
        ("image.png", b"\x89PNG\r\n", "unsupported"),
    ],
)
def test_unreadable_files_raise_with_the_reason(tmp_path: Path, name: str, content: bytes, reason: str):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ExtractError, match=reason):
        list(read_document(path).sections)


def test_a_large_text_file_is_read_in_blocks_and_nothing_is_lost(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(extract, "BLOCK_CHARS", 1000)
    paragraphs = [f"Paragraph {i} says the number {i * 7}." for i in range(2000)]
    path = tmp_path / "long.txt"
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    sections = list(read_document(path).sections)
    assert len(sections) > 50 and max(len(s.text) for s in sections) < 2500
    assert " ".join(s.text for s in sections).split() == "\n\n".join(paragraphs).split()


def test_passages_stay_under_the_token_limit_overlap_and_keep_their_page():
    sentences = " ".join(f"Sentence number {i} talks about harbor ferries and fish." for i in range(300))
    chunks = list(chunk_sections([Section(sentences, page=4)], chunk_tokens=128, overlap=30))
    tokens = splitter(128, 30)._length_function
    assert len(chunks) > 5 and all(c.page == 4 for c in chunks)
    assert all(tokens(c.text) <= 128 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks[:-1])  # cut at sentence ends
    assert chunks[1].text[:60] in chunks[0].text  # neighbours share their edge


def test_passages_never_cross_a_page():
    chunks = list(chunk_sections([Section("page one text", page=1), Section("page two text", page=2)]))
    assert [(c.text, c.page) for c in chunks] == [("page one text", 1), ("page two text", 2)]
