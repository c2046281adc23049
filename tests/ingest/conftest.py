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
