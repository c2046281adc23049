"""Text out of documents: Markdown, plain text, HTML, PDF and Word, as sections with a page or a heading.

Each reader yields ``Section(text, page, heading)`` pieces in document order without holding the whole
text when the format allows it: plain text and Markdown are read in blocks (a 200 MB file never sits in
memory whole), a PDF page by page. A file that cannot be read raises ``ExtractError`` with the reason
(corrupt, encrypted, empty, binary); the caller reports it and goes on with the other files.

The libraries (measured in ``benchmarks/extractors.py``, figures in docs/documents.md): pypdf for PDF,
trafilatura for HTML (main text as Markdown, boilerplate dropped), python-docx for Word. None downloads
a model.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst")
HTML_SUFFIXES = (".html", ".htm")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, ".pdf", ".docx")
PASSAGE_SUFFIXES = (".jsonl",)
SUFFIXES = (*DOCUMENT_SUFFIXES, *PASSAGE_SUFFIXES)

BLOCK_CHARS = 1 << 20  # text files are read in blocks of about 1 MB, cut at a blank line
HTML_MAX_BYTES = 64 << 20  # an HTML parser holds the whole tree: larger pages are refused, not read
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class ExtractError(ValueError):
    """A file that yields no text, with the reason (corrupt, encrypted, empty, binary, unsupported)."""


@dataclass(frozen=True)
class Section:
    text: str
    page: int | None = None  # 1-based page of a PDF
    heading: str | None = None  # the nearest heading above the text (Markdown, HTML, Word)


@dataclass
class Document:
    path: Path
    title: str
    sections: Iterator[Section]


def read_document(path: str | Path) -> Document:
    """Open ``path`` and say how to read it; reading errors surface from ``sections`` as ``ExtractError``."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ExtractError(f"cannot read: {error.strerror or error}") from None
    if size == 0:
        raise ExtractError("empty file")
    if suffix == ".pdf":
        return _pdf(path)
    if suffix == ".docx":
        return _docx(path)
    if suffix in HTML_SUFFIXES:
        return _html(path, size)
    if suffix in TEXT_SUFFIXES:
        return _text(path, markdown=suffix in (".md", ".markdown"))
    raise ExtractError(f"unsupported file type '{suffix or path.name}'")


# -- plain text and Markdown -------------------------------------------------------------------------


def _check_text(path: Path) -> None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError as error:
        raise ExtractError(f"cannot read: {error.strerror or error}") from None
    if b"\x00" in head:
        raise ExtractError("binary content (NUL bytes), not text")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 4:  # a cut multibyte character at the block's end is fine
            raise ExtractError("binary content (not UTF-8 text)") from None


def _blocks(path: Path) -> Iterator[str]:
    """The file's text in blocks of about ``BLOCK_CHARS``, each ending at a blank line where possible."""
    carry = ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            chunk = handle.read(BLOCK_CHARS)
            if not chunk:
                break
            if "\x00" in chunk:
                raise ExtractError("binary content (NUL bytes), not text")
            text = carry + chunk
            cut = text.rfind("\n\n")
            if cut <= 0:
                cut = text.rfind("\n")
            if cut <= 0:
                carry = text
                if len(carry) > 4 * BLOCK_CHARS:  # one endless line: cut it anyway
                    yield carry
                    carry = ""
                continue
            yield text[:cut]
            carry = text[cut:]
    if carry.strip():
        yield carry


def _markdown_sections(blocks: Iterator[str]) -> Iterator[Section]:
    """Sections of Markdown text, each under its nearest heading (the heading line kept in the text)."""
    heading: str | None = None
    lines: list[str] = []
    fenced = False
    for block in blocks:
        for line in block.splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            match = None if fenced else _HEADING.match(line)
            if match:
                if any(x.strip() for x in lines):
                    yield Section("\n".join(lines).strip(), heading=heading)
                heading, lines = match.group(2).strip(), [line]
            else:
                lines.append(line)
        if len(lines) > 2000:  # a long section is handed on in pieces (the chunker joins nothing across)
            yield Section("\n".join(lines).strip(), heading=heading)
            lines = []
    if any(x.strip() for x in lines):
        yield Section("\n".join(lines).strip(), heading=heading)


def _text(path: Path, *, markdown: bool) -> Document:
    _check_text(path)
    title = path.stem
    if markdown:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _, line in zip(range(50), handle, strict=False):
                match = _HEADING.match(line.rstrip("\n"))
                if match and len(match.group(1)) == 1:
                    title = match.group(2).strip()
                    break
        sections = _markdown_sections(_blocks(path))
    else:
        sections = (Section(block.strip()) for block in _blocks(path) if block.strip())
    return Document(path, title, sections)


# -- HTML --------------------------------------------------------------------------------------------


def _html(path: Path, size: int) -> Document:
    import trafilatura  # noqa: PLC0415 - optional (the documents extra): HTML files only

    if size > HTML_MAX_BYTES:
        raise ExtractError(
            f"HTML page of {size >> 20} MB (over {HTML_MAX_BYTES >> 20} MB); convert it to text"
        )
    _check_text(path)
    html = path.read_text(encoding="utf-8", errors="replace")
    markdown = trafilatura.extract(
        html, output_format="markdown", include_tables=True, include_links=False, favor_recall=True
    )
    if not markdown or not markdown.strip():
        raise ExtractError("no text found in the HTML page")
    metadata = trafilatura.extract_metadata(html)
    title = (metadata.title if metadata is not None else None) or path.stem
    return Document(path, title, _markdown_sections(iter([markdown])))


# -- PDF ---------------------------------------------------------------------------------------------


def _pdf(path: Path) -> Document:
    import pypdf  # noqa: PLC0415 - optional (the documents extra): PDF files only
    from pypdf.errors import PyPdfError  # noqa: PLC0415 - as above

    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("encrypted PDF (needs a password)")
        pages = len(reader.pages)
        info = reader.metadata
    except ExtractError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as error:
        raise ExtractError(f"corrupt PDF ({type(error).__name__}: {error})") from None
    if pages == 0:
        raise ExtractError("PDF without pages")
    title = str(info.title).strip() if info is not None and info.title else path.stem

    def sections() -> Iterator[Section]:
        found = False
        for number in range(pages):
            try:
                text = reader.pages[number].extract_text() or ""
            except (PyPdfError, ValueError, KeyError, TypeError) as error:
                raise ExtractError(
                    f"corrupt PDF page {number + 1} ({type(error).__name__}: {error})"
                ) from None
            text = text.strip()
            if text:
                found = True
                yield Section(text, page=number + 1)
        if not found:
            raise ExtractError("no text in the PDF (scanned images need OCR, which is not done here)")

    return Document(path, title, sections())


# -- Word --------------------------------------------------------------------------------------------


def _docx(path: Path) -> Document:
    import docx  # noqa: PLC0415 - optional (the documents extra): Word files only
    from docx.opc.exceptions import PackageNotFoundError  # noqa: PLC0415 - as above

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
        raise ExtractError(f"corrupt Word document ({type(error).__name__}: {error})") from None
    title = (document.core_properties.title or "").strip()
    paragraphs: list[tuple[str | None, str]] = []
    heading: str | None = None
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        if not text:
            continue
        if style == "Title" or style.startswith("Heading"):
            title = title or text
            heading = text
            paragraphs.append((heading, f"{text}"))
        else:
            paragraphs.append((heading, text))
    for table in document.tables:
        for row in table.rows:
            cells = [c.text.strip() for c in row.cells if c.text.strip()]
            if cells:
                paragraphs.append((heading, " | ".join(cells)))
    if not paragraphs:
        raise ExtractError("no text in the Word document")

    def sections() -> Iterator[Section]:
        current: str | None = paragraphs[0][0]
        lines: list[str] = []
        for section_heading, text in paragraphs:
            if section_heading != current and lines:
                yield Section("\n\n".join(lines), heading=current)
                lines = []
            current = section_heading
            lines.append(text)
        if lines:
            yield Section("\n\n".join(lines), heading=current)

    return Document(path, title or path.stem, sections())
