"""Real documents made in a temporary folder: Markdown, HTML, a PDF of three pages, a Word document."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from fpdf import FPDF

from tests.retrieval.conftest import write_corpus

PDF_PAGES = [
    "Harbor Guide. Chapter one covers the history of the old harbor and its lighthouse keepers.",
    "The ferry to Quillon Island leaves from pier 7 every morning at 06:40 and costs 12 euros.",
    "Chapter three lists the fish market hours and the names of the boats in the fleet.",
]


def make_pdf(path: Path, pages: list[str] = PDF_PAGES, title: str = "Harbor Guide") -> Path:
    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def make_docx(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Expense Policy", level=1)
    document.add_paragraph("Travel costs are refunded within 30 days of the receipt being filed.")
    document.add_heading("Meals", level=2)
    document.add_paragraph("A meal on a business trip may cost at most 45 euros per day.")
    document.save(str(path))
    return path


MARKDOWN = """# Install Guide

Some words of introduction about the tool.

## Requirements

The tool needs Python 3.11 and a C compiler.

## Upgrading

Run the upgrade command, then restart the service.
"""

HTML = """<!doctype html><html><head><title>Office Hours</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<main><article><h1>Office Hours</h1>
<p>The front desk of the Lindholm office opens at 08:15 on weekdays and closes at 17:30.</p>
<h2>Holidays</h2>
<p>On public holidays the Lindholm office stays closed, and calls go to the answering service.</p>
</article></main><footer>Copyright 2025</footer></body></html>
"""


def make_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "install.md").write_text(MARKDOWN, encoding="utf-8")
    (folder / "hours.html").write_text(HTML, encoding="utf-8")
    make_pdf(folder / "guide.pdf")
    make_docx(folder / "policy.docx")
    return folder


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "docs")


@pytest.fixture
def corpus_rows(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "cloud.jsonl")


LATEX_PAGE = [
    "The ferry to Quillon Island leaves from pier 7 every morning at 06:40.",
    "A return ticket costs 12 euros, and children under twelve travel free.",
    "The harbour office sells tickets from 06:00; the fare = 12 euros on board.",
    "Bicycles are carried on the lower deck when the weather allows it.",
]


def make_latex_style_pdf(path: Path, pages: list[list[str]], space: int = 383) -> Path:
    """A PDF built the way xdvipdfmx writes LaTeX output, where pypdf runs words together.

    The font is a Type0 (Identity-H) subset without a space glyph; glyph ids follow TrueType order (space
    is glyph 3, "a" glyph 68), so code 0x0020 is some other, wide glyph ("=" here) that pypdf takes for the
    space; each line is one TJ array whose interword gaps are position offsets of ``space``/1000 em, as
    TeX sets them. PDFium measures the gaps and keeps the spaces."""
    chars = sorted({c for page in pages for line in page for c in line if c != " "})
    cid = {c: ord(c) - 29 for c in chars}
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    pairs = "".join(f"<{cid[c]:04X}> <{ord(c):04X}>\n" for c in chars)
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        f"{len(chars)} beginbfchar\n{pairs}endbfchar\nendcmap CMapName currentdict /CMap defineresource pop end end"
    ).encode()
    to_unicode = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap))
    descriptor = add(
        b"<< /Type /FontDescriptor /FontName /LMRoman10 /Flags 32 /FontBBox [0 -250 1000 750] /ItalicAngle 0 "
        b"/Ascent 750 /Descent -250 /CapHeight 700 /StemV 80 >>"
    )
    widths = " ".join(f"{cid[c]} [{1000 if c == '=' else 500}]" for c in chars).encode()
    descendant = add(
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /LMRoman10 /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 1000 /W [%s] /CIDToGIDMap /Identity >>"
        % (descriptor, widths)
    )
    font = add(
        b"<< /Type /Font /Subtype /Type0 /BaseFont /LMRoman10 /Encoding /Identity-H /DescendantFonts [%d 0 R] "
        b"/ToUnicode %d 0 R >>" % (descendant, to_unicode)
    )
    pages_id = len(objects) + 2 * len(pages) + 1
    page_ids = []
    for lines in pages:
        ops = ["BT /F1 10 Tf 72 720 Td 12 TL"]
        for line in lines:
            words = ("".join(f"{cid[c]:04X}" for c in word) for word in line.split())
            ops.append("[" + f"-{space}".join(f"<{w}>" for w in words) + "] TJ T*")
        stream = "\n".join([*ops, "ET"]).encode()
        content = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_id, content, font)
            )
        )
    kids = " ".join(f"{n} 0 R" for n in page_ids).encode()
    add(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids)))
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    out = bytearray(b"%PDF-1.5\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        xref,
    )
    path.write_bytes(bytes(out))
    return path
