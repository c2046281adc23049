"""Text extraction libraries compared on files made here (a script that prints a table, not a test).

For each format, files with known text are generated (PDF with fpdf2, Word with python-docx, HTML pages
with navigation, a cookie banner and a footer around the article), and each candidate library extracts
them. Quality: recall (share of the known words found, in order-free counts) and, for HTML, precision
(share of the extracted words that belong to the article: boilerplate lowers it). Speed: pages (PDF) or
documents (HTML, Word) per second, one core.

    python -m benchmarks.extractors [--pdf-pages 200] [--html-pages 50] [--docx 30]
"""

from __future__ import annotations

import argparse
import io
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import docx
from fpdf import FPDF

WORDS = (
    "harbor ferry island pier morning ticket market boat fleet keeper lighthouse tide route schedule "
    "captain cargo dock season weather storm anchor crew passenger harbour station bridge canal"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + f" {rng.randint(1, 999)}."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 6)))


def tokens(text: str) -> Counter:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def recall_precision(truth: str, got: str) -> tuple[float, float]:
    want, have = tokens(truth), tokens(got)
    hit = sum((want & have).values())
    return hit / max(1, sum(want.values())), hit / max(1, sum(have.values()))


# -- PDF -----------------------------------------------------------------------------------------------


def make_pdf(path: Path, pages: int, rng: random.Random) -> list[str]:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    texts = []
    for _ in range(pages):
        text = "\n\n".join(paragraph(rng) for _ in range(4))
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
        texts.append(text)
    pdf.output(str(path))
    return texts


def pdf_pypdf(path: Path) -> list[str]:
    import pypdf

    return [page.extract_text() or "" for page in pypdf.PdfReader(path).pages]


def pdf_pdfminer(path: Path) -> list[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return [
        "".join(e.get_text() for e in page if isinstance(e, LTTextContainer)) for page in extract_pages(path)
    ]


def pdf_pdfium(path: Path) -> list[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    return [document[i].get_textpage().get_text_range() for i in range(len(document))]


# -- HTML ----------------------------------------------------------------------------------------------

CHROME = (
    "<nav><ul>"
    + "".join(f"<li><a href='/{w}'>{w.title()} Menu</a></li>" for w in ("home", "news", "contact"))
    + "</ul></nav>"
    "<div class='cookie'>We use cookies to improve your experience. Accept all cookies or manage settings.</div>"
)
FOOTER = (
    "<footer><p>Copyright 2025 Example Corp. All rights reserved. Privacy policy. Terms of use.</p></footer>"
)


def make_html(rng: random.Random) -> tuple[str, str]:
    parts, truth = [], []
    for i in range(rng.randint(3, 6)):
        heading, text = f"Section {i} {rng.choice(WORDS)}", paragraph(rng)
        parts.append(f"<h2>{heading}</h2><p>{text}</p>")
        truth += [heading, text]
    html = (
        f"<html><head><title>Page</title></head><body>{CHROME}<main><article><h1>Guide</h1>"
        f"{''.join(parts)}</article></main>{FOOTER}</body></html>"
    )
    return html, "Guide " + " ".join(truth)


def html_trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, output_format="markdown", favor_recall=True) or ""


def html_markitdown(html: str) -> str:
    from markitdown import MarkItDown, StreamInfo

    return (
        MarkItDown()
        .convert_stream(io.BytesIO(html.encode()), stream_info=StreamInfo(extension=".html"))
        .markdown
    )


def html_soup(html: str) -> str:
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "lxml").get_text(" ")


# -- Word ----------------------------------------------------------------------------------------------


def make_docx(path: Path, rng: random.Random) -> str:
    document, truth = docx.Document(), []
    for i in range(6):
        heading, text = f"Part {i}", paragraph(rng)
        document.add_heading(heading, level=2)
        document.add_paragraph(text)
        truth += [heading, text]
    document.save(str(path))
    return " ".join(truth)


def docx_python_docx(path: Path) -> str:
    return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)


def docx_markitdown(path: Path) -> str:
    from markitdown import MarkItDown

    return MarkItDown().convert(str(path)).markdown


def measure(items: list, run: Callable, truth: Callable) -> tuple[float, float, float]:
    started = time.perf_counter()
    outputs = [run(item) for item in items]
    seconds = time.perf_counter() - started
    scores = [recall_precision(truth(i), o) for i, o in zip(items, outputs, strict=True)]
    return (
        sum(r for r, _ in scores) / len(scores),
        sum(p for _, p in scores) / len(scores),
        seconds,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-pages", type=int, default=200)
    parser.add_argument("--html-pages", type=int, default=50)
    parser.add_argument("--docx", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(0)
    print("| format | library | recall | precision | per second |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "bench.pdf"
        pages = make_pdf(pdf, args.pdf_pages, rng)
        for name, run in (("pypdf", pdf_pypdf), ("pdfminer.six", pdf_pdfminer), ("pypdfium2", pdf_pdfium)):
            started = time.perf_counter()
            got = run(pdf)
            seconds = time.perf_counter() - started
            scores = [recall_precision(t, g) for t, g in zip(pages, got, strict=True)]
            recall = sum(r for r, _ in scores) / len(scores)
            precision = sum(p for _, p in scores) / len(scores)
            print(
                f"| PDF ({args.pdf_pages} pages) | {name} | {recall:.3f} | {precision:.3f} | {len(pages) / seconds:.0f} pages |"
            )
        html = [make_html(rng) for _ in range(args.html_pages)]
        for name, run in (
            ("trafilatura", html_trafilatura),
            ("markitdown", html_markitdown),
            ("BeautifulSoup get_text", html_soup),
        ):
            recall, precision, seconds = measure(
                html, lambda item, run=run: run(item[0]), lambda item: item[1]
            )
            print(
                f"| HTML ({args.html_pages} pages) | {name} | {recall:.3f} | {precision:.3f} | {len(html) / seconds:.0f} pages |"
            )
        files = []
        for i in range(args.docx):
            path = Path(tmp) / f"doc{i}.docx"
            files.append((path, make_docx(path, rng)))
        for name, run in (("python-docx", docx_python_docx), ("markitdown", docx_markitdown)):
            recall, precision, seconds = measure(
                files, lambda item, run=run: run(item[0]), lambda item: item[1]
            )
            print(
                f"| Word ({args.docx} files) | {name} | {recall:.3f} | {precision:.3f} | {len(files) / seconds:.0f} files |"
            )


if __name__ == "__main__":
    sys.exit(main())
