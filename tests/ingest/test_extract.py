"""Text out of real files made here: pages of a PDF, headings of Markdown, HTML and Word; bad files."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pypdf
import pytest

from mtrag_graph.ingest import extract
from mtrag_graph.ingest.chunk import chunk_sections, splitter
from mtrag_graph.ingest.extract import (
    ExtractError,
    NotContent,
    Section,
    _lost_headings,
    clean_pdf_text,
    clean_title,
    read_document,
    run_together_share,
)
from tests.ingest.conftest import LATEX_PAGE, make_docx, make_latex_style_pdf, make_pdf

DATA = Path(__file__).parent / "data"


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


def test_every_passage_of_a_long_section_starts_with_its_heading():
    text = "## 3.1. Turning it on\n\n" + " ".join(
        f"Gate {i} opens at {i}:00 on weekdays." for i in range(200)
    )
    chunks = list(chunk_sections([Section(text, heading="3.1. Turning it on")], chunk_tokens=128, overlap=30))
    tokens = splitter(128, 30)._length_function
    assert len(chunks) > 5 and all(c.text.startswith("## 3.1. Turning it on\n\nGate") for c in chunks)
    assert all(tokens(c.text) <= 128 for c in chunks)  # the heading counts towards the size
    assert any("Gate 150 opens at 150:00" in c.text for c in chunks)


def test_a_heading_with_no_text_under_it_makes_no_passage():
    sections = [Section("# Chapter 4", heading="Chapter 4"), Section("Word text.", heading="Meals")]
    assert [c.text for c in chunk_sections(sections)] == ["Meals\n\nWord text."]


def test_passages_never_cross_a_page():
    chunks = list(chunk_sections([Section("page one text", page=1), Section("page two text", page=2)]))
    assert [(c.text, c.page) for c in chunks] == [("page one text", 1), ("page two text", 2)]


# -- PDF: words that run together --------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.replace("\n", " ").split()


def test_pypdf_runs_the_words_of_a_latex_style_pdf_together(tmp_path: Path):
    # the fixture's premise: without the guard, pypdf loses the spaces of this PDF
    text = (
        pypdf.PdfReader(make_latex_style_pdf(tmp_path / "manual.pdf", [LATEX_PAGE])).pages[0].extract_text()
    )
    assert "TheferrytoQuillonIsland" in text


def test_the_default_reader_keeps_the_spaces_of_a_latex_style_pdf(tmp_path: Path, caplog):
    path = make_latex_style_pdf(tmp_path / "manual.pdf", [LATEX_PAGE, LATEX_PAGE])
    with caplog.at_level(logging.WARNING, logger="mtrag_graph.ingest.extract"):
        sections = list(read_document(path).sections)
    assert [s.page for s in sections] == [1, 2]
    assert _words(sections[0].text) == _words(" ".join(LATEX_PAGE))
    assert not caplog.records  # nothing ran together: nothing to say


def test_pages_pypdf_runs_together_are_read_again_and_named(tmp_path: Path, caplog):
    path = make_latex_style_pdf(tmp_path / "manual.pdf", [LATEX_PAGE, LATEX_PAGE])
    with caplog.at_level(logging.WARNING, logger="mtrag_graph.ingest.extract"):
        sections = list(read_document(path, pdf_reader="pypdf").sections)
    assert all(_words(s.text) == _words(" ".join(LATEX_PAGE)) for s in sections)
    [record] = caplog.records
    assert "manual.pdf" in record.getMessage() and "pages 1-2" in record.getMessage()
    assert "read with pypdfium2 instead" in record.getMessage()


def test_a_page_no_reader_separates_is_indexed_and_named(tmp_path: Path, caplog):
    # interword gaps of 0.04 em: too tight for any reader to see a space
    path = make_latex_style_pdf(tmp_path / "tight.pdf", [LATEX_PAGE], space=40)
    with caplog.at_level(logging.WARNING, logger="mtrag_graph.ingest.extract"):
        [section] = list(read_document(path).sections)
    assert run_together_share(section.text) > extract.RUN_TOGETHER_SHARE
    [record] = caplog.records
    assert "tight.pdf" in record.getMessage() and "page 1 in every PDF reader" in record.getMessage()


def test_run_together_share_tells_lost_spaces_from_long_words():
    prose = (
        "Internationalization of the installer is done by the translation teams of each language. "
        "Each team keeps its own list of strings, checks it against the English original before a release, "
        "and sends the new file to the maintainers, who build it into the next upload of the package. "
    ) * 3
    assert run_together_share(prose) < extract.RUN_TOGETHER_SHARE
    assert run_together_share(prose.replace(" ", "")) > 0.9
    assert run_together_share("Toolong.") == 0.0  # under 200 letters says nothing


def test_words_broken_at_a_line_end_are_mended_and_compounds_keep_their_hyphen():
    text = "Install the pack\ufffeages first.\nWrite to debian-\nuser or to debian-user.\nA gzip\ufffe\ncompressed file."
    assert (
        clean_pdf_text(text)
        == "Install the packages first.\nWrite to debian-user or to debian-user.\nA gzip-compressed file."
    )


def test_ligatures_and_windows_line_ends_are_normalised():
    assert clean_pdf_text("The \ufb01le is \ufb02at.\r\nNext line.\x0c") == "The file is flat.\nNext line."


def test_a_bullet_the_font_left_unmapped_becomes_a_bullet_and_other_c1_characters_go():
    # the 4ti2 manual's itemize bullets come out of PDFium as U+0088
    page = "functions:\n\x88 qsolve, rays, circuits\n  \x88 zsolve, graver\nA\x85B costs \x9f3."
    assert (
        clean_pdf_text(page)
        == "functions:\n\u2022 qsolve, rays, circuits\n\u2022 zsolve, graver\nAB costs 3."
    )


def test_an_unknown_pdf_reader_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="unknown PDF reader 'pdfplumber'"):
        read_document(make_pdf(tmp_path / "guide.pdf"), pdf_reader="pdfplumber")


@pytest.mark.parametrize("reader", extract.PDF_READERS)
def test_every_pdf_reader_says_when_a_pdf_is_corrupt(tmp_path: Path, reader: str):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    with pytest.raises(ExtractError, match="corrupt PDF"):
        list(read_document(path, pdf_reader=reader).sections)


# -- HTML from documentation generators ---------------------------------------------------------------


def _html_sections(name: str) -> tuple[str, list[Section]]:
    document = read_document(DATA / name)
    return document.title, list(document.sections)


@pytest.mark.parametrize("name", ["sphinx_page.html", "mkdocs_page.html", "doxygen_page.html"])
def test_permalink_glyphs_reach_no_title_heading_or_text(name: str):
    title, sections = _html_sections(name)
    shown = [title] + [s.heading or "" for s in sections] + [s.text for s in sections]
    assert not [t for t in shown if any(glyph in t for glyph in "\u00b6\U0001f517\u25c6")]
    assert not [s.heading for s in sections if s.heading and (s.heading.endswith("#") or "`" in s.heading)]


def test_sphinx_headings_name_their_sections_and_code_blocks_stay_fenced():
    title, sections = _html_sections("sphinx_page.html")
    assert title == "3. Failsafe mode"
    assert [s.heading for s in sections] == [
        "3. Failsafe mode",
        "3.1. Turning it on",
        "3.2. How it works",
        "3.2.1. Limits",
    ]
    assert (
        "```\n$ harborctl edit-config --set failsafe_mode=true\n$ harborctl reload\n```" in sections[1].text
    )
    assert "port `8008`" in sections[1].text and "every `loop_wait` seconds" in sections[2].text
    # a code block inside a list item stays a fenced block of its own
    fenced_in_item = (
        r"1\. To take one gate out of failsafe mode, stop it:\n\n +```\n +\$ harborctl stop gate-2\n +```"
    )
    assert re.search(fenced_in_item, sections[2].text)
    assert not [s for s in sections if "Quick search" in s.text or "Copyright" in s.text]


def test_a_one_line_code_block_stays_a_fenced_block(tmp_path: Path):
    page = (
        "<html><head><title>Install</title></head><body><main><h1>Install</h1><p>"
        + "Install the tool from the package index before anything else, then check its version. " * 4
        + '</p><pre class="highlight"><code class="language-bash">pip install harbor</code></pre>'
        "<p>The command needs network access.</p></main></body></html>"
    )
    (tmp_path / "install.html").write_text(page, encoding="utf-8")
    text = " ".join(s.text for s in read_document(tmp_path / "install.html").sections)
    assert "```\npip install harbor\n```" in text


def test_a_heading_wrapped_in_a_named_anchor_keeps_its_text(tmp_path: Path):
    # an FAQ converter's page (no site generator): the article reader used to drop every question
    answer = "Compile it from the source code; a binary package is kept by a volunteer. " * 3
    page = (
        "<html><head><title>FAQ - Section 2</title></head><body><h1>FAQ - Section 2</h1>"
        '<ul><li><a href="#osx">Q2.1. Install on Mac OS X?</a></ul><hr>'
        '<h2><A name="osx">\nQuestion 2.1.  Is it possible to install Harbor on Mac OS\nX?\n</A></h2>\n'
        f"{answer}\n"
        '<h2><A name="win">\nQuestion 2.2.  Why does <code>harbor\n-V</code> fail?\n</A></h2>\n'
        f"{answer}\n</body></html>"
    )
    (tmp_path / "section2.html").write_text(page, encoding="utf-8")
    headings = [s.heading for s in read_document(tmp_path / "section2.html").sections]
    assert "Question 2.1. Is it possible to install Harbor on Mac OS X?" in headings
    assert "Question 2.2. Why does harbor -V fail?" in headings


def test_a_page_whose_headings_the_article_reader_drops_is_read_as_it_stands(tmp_path: Path, monkeypatch):
    # on the Asymptote FAQ's 2D graphs page (questions, each followed by a code block) the article
    # reader kept the code and dropped every question; here it is made to do the same
    import trafilatura  # noqa: PLC0415 - loaded where it is used, as in the reader

    blocks = "".join(
        f'<h2><A name="q{n}">\nQuestion 6.{n}.  How can I draw the {what} of a graph?\n</A></h2>\n'
        f"<pre>\nimport graph;\ndraw{n}(graph(exp,-1,1),red);\n</pre>\n"
        for n, what in enumerate(("x axis", "y axis", "ticks", "labels", "legend"), start=1)
    )
    page = f"<html><head><title>FAQ</title></head><body><h1>FAQ - Section 6</h1>{blocks}</body></html>"
    (tmp_path / "section6.html").write_text(page, encoding="utf-8")
    code_only = "\n\n".join(f"```\nimport graph;\ndraw{n}(graph(exp,-1,1),red);\n```" for n in range(1, 6))
    monkeypatch.setattr(trafilatura, "extract", lambda *args, **kwargs: code_only)
    sections = list(read_document(tmp_path / "section6.html").sections)
    assert "Question 6.3. How can I draw the ticks of a graph?" in [s.heading for s in sections]
    assert any("draw3(graph(exp,-1,1),red);" in s.text for s in sections)


def test_headings_lost_means_most_of_three_or_more():
    headings = ["Question 1. Why?", "Question 2. How?", "Question 3. When?"]
    assert _lost_headings(headings, "## Question 1. Why?\n\ntext")
    assert not _lost_headings(headings, "## Question 1. Why?\n## Question 2. How?\ntext")
    assert not _lost_headings(headings[:2], "no heading kept")


def test_mkdocs_code_blocks_stay_fenced():
    _, sections = _html_sections("mkdocs_page.html")
    assert [s.heading for s in sections] == ["Backups", "Restoring a ledger"]
    assert (
        "```\nsystemctl stop harbor\nharbor-restore --from /var/backups/ledger-2024-05-01.tar\n```"
        in sections[1].text
    )


def test_doxygen_code_fragments_become_fenced_code_and_names_stay_unescaped():
    title, sections = _html_sections("doxygen_page.html")
    assert title == "Tide tables"
    assert sections[-1].heading == "tide_table_load()"
    assert (
        '```\nint rc = tide_table_load("quillon.tide", &table);\nif (rc != 0) { perror("tide"); }\n```'
        in sections[-1].text
    )
    assert not [s for s in sections if "Generated by" in s.text]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("genindex.html", "general index"),
        ("search.html", "search page"),
        ("sphinx_index.html", "of its text is links"),
        ("redirect.html", "a redirect to ../dev-guide/themes/"),
    ],
)
def test_navigation_pages_are_not_content(name: str, reason: str):
    with pytest.raises(NotContent, match=reason):
        read_document(DATA / name)


def test_a_page_named_search_with_content_of_its_own_is_read(tmp_path: Path):
    article = "<p>" + "Searching the harbour archive takes a ticket number and a date. " * 30 + "</p>"
    (tmp_path / "search.html").write_text(
        f"<html><head><title>Archive search</title></head><body><main>{article}</main></body></html>"
    )
    assert "ticket number" in " ".join(s.text for s in read_document(tmp_path / "search.html").sections)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("DCS Failsafe Mode\u00b6", "DCS Failsafe Mode"),
        ("## Low-level implementation details\u00b6", "Low-level implementation details"),
        ("Set `loop_wait` **first**", "Set loop_wait first"),
        ("[The REST API](rest.html) port", "The REST API port"),
        ("Closing hashes ##", "Closing hashes"),
        ("C#", "C#"),
        ("2 * 3 * 4", "2 * 3 * 4"),
    ],
)
def test_titles_and_headings_lose_glyphs_and_markdown_markers(raw: str, clean: str):
    assert clean_title(raw) == clean


def test_markdown_headings_are_clean_in_sections_and_the_title(tmp_path: Path):
    path = tmp_path / "notes.md"
    path.write_text(
        "# The `harbor` tool\n\nIntro.\n\n## Using **C#** \u00b6\n\nIt works.\n", encoding="utf-8"
    )
    document = read_document(path)
    assert document.title == "The harbor tool"
    assert [s.heading for s in document.sections] == ["The harbor tool", "Using C#"]
