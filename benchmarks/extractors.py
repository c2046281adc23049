"""Text extraction measured on real manuals nobody on the team wrote (a script that prints tables, not a test).

PDF: seven manuals from Debian's documentation packages that ship the same manual as PDF and as text
(typeset by dblatex/xdvipdfmx, Sphinx's LaTeX through xdvipdfmx and pdfTeX, and Apache FOP), listed
with their packages, versions and SHA-256 in ``benchmarks/data/extractor_documents.json``. Each PDF
reader's text (through the indexer's clean-up, ``clean_pdf_text``) is aligned word by word with the
text version (``word_accuracy``), and timed; the last columns are the indexer itself
(``read_document``: one reader first, the other for pages whose words run together).

HTML: four documentation sites from the same archive (Sphinx, MkDocs), every page read as the indexer
reads it: pages read and left out (with the reason), permalink glyphs left in titles, sections or text,
and code blocks (``<pre>``) against fenced blocks in the passages' text.

The packages are downloaded with ``apt-get download NAME=VERSION`` (Debian or a derivative, after
``apt-get update``) into ``--cache`` and checked against their hashes; nothing is committed.

    python -m benchmarks.extractors [--cache DIR] [--only NAME ...] [--no-sites] [--generated]

``--generated`` adds the earlier comparison on files generated here (PDF with fpdf2, HTML pages with
navigation and a footer around the article, Word files): recall of the known words and precision.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import io
import json
import logging
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtrag_graph.ingest.extract import (
    PDF_READERS,
    ExtractError,
    NotContent,
    clean_pdf_text,
    pdf_page_texts,
    read_document,
)

MANIFEST = Path(__file__).parent / "data" / "extractor_documents.json"
DEFAULT_CACHE = Path.home() / ".cache" / "mtrag-graph" / "extractor-documents"
LAYOUT_WORDS = 12  # a stretch this long found in one version only is layout (a longer table of contents)
GLYPHS = "\u00b6\U0001f517\u25c6"  # pilcrow, link symbol, Doxygen's diamond


# -- the documents ------------------------------------------------------------------------------------


class FetchError(RuntimeError):
    """A package that could not be fetched or does not match its hash; the message names it."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unpacked(entry: dict[str, Any], cache: Path) -> Path:
    """The package's files, unpacked under ``CACHE/x/PACKAGE_VERSION`` (downloaded and checked once)."""
    name = f"{entry['package']}_{entry['version'].replace(':', '%3a')}_{entry['architecture']}"
    folder = cache / "x" / name
    if (folder / ".done").exists():
        return folder
    deb = cache / "debs" / f"{name}.deb"
    if not deb.exists():
        deb.parent.mkdir(parents=True, exist_ok=True)
        if shutil.which("apt-get") is None:
            raise FetchError(f"{entry['name']}: apt-get is not here: put {deb.name} in {deb.parent}")
        done = subprocess.run(
            ["apt-get", "download", f"{entry['package']}={entry['version']}"],
            cwd=deb.parent,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not deb.exists():
            said = (done.stderr or done.stdout).strip().splitlines()
            raise FetchError(
                f"{entry['name']}: package {entry['package']}={entry['version']} could not be downloaded "
                f"({said[-1] if said else done.returncode}; run `apt-get update` first, or put {deb.name} in "
                f"{deb.parent})"
            )
    found = sha256_of(deb.read_bytes())
    if found != entry["deb_sha256"]:
        raise FetchError(
            f"{entry['name']}: {deb.name} has SHA-256 {found}, the manifest pins {entry['deb_sha256']}"
        )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], check=True, capture_output=True)
    (folder / ".done").touch()
    return folder


def fetched_file(entry: dict[str, Any], file: dict[str, str], cache: Path) -> Path:
    """One file of a package, decompressed when it ships gzipped, checked against its SHA-256."""
    source = unpacked(entry, cache) / file["path"]
    target = cache / "files" / entry["name"] / Path(file["path"]).name.removesuffix(".gz")
    if not target.exists():
        data = source.read_bytes()
        data = gzip.decompress(data) if source.suffix == ".gz" else data
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    found = sha256_of(target.read_bytes())
    if found != file["sha256"]:
        raise FetchError(
            f"{entry['name']}: {target.name} has SHA-256 {found}, the manifest pins {file['sha256']}"
        )
    return target


# -- word accuracy ------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


@dataclass
class Accuracy:
    right: int = 0  # reference words read right where both versions have text
    misread: int = 0  # reference words at such places that the extraction does not have (run together, split)
    reference_only: int = 0  # stretches of LAYOUT_WORDS+ words, or words, found in the reference alone
    extracted_only: int = 0  # words found in the extraction alone (running heads, page numbers)
    found: float = 0.0  # reference words found anywhere in the extraction (counted, in any order)

    @property
    def accuracy(self) -> float:
        return self.right / max(1, self.right + self.misread)


def same_letters(one: list[str], other: list[str]) -> bool:
    """Two stretches of words that spell mostly the same letters (the spaces aside)."""
    return difflib.SequenceMatcher(None, "".join(one), "".join(other), autojunk=False).ratio() >= 0.5


def word_accuracy(reference: str, extracted: str) -> Accuracy:
    """Align the two texts word by word (difflib) and count the reference words read right.

    Where the alignment pairs a stretch of the reference with a stretch of the extraction (a word run
    together with its neighbours, split in two, misspelt), the reference words missing from the paired
    stretch are misread. A stretch found in one version only is layout, not reading: the text version's
    longer table of contents, its footnoted URLs, the PDF's running heads and page numbers; so is a paired
    stretch over ``LAYOUT_WORDS`` words on either side whose letters differ (a footnote placed elsewhere),
    while one with the same letters is words run together and counts as misread. ``found`` counts the
    reference's words anywhere in the extraction, which a reader that drops text lowers."""
    ref, got = words(reference), words(extracted)
    result = Accuracy()
    matcher = difflib.SequenceMatcher(None, ref, got, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            result.right += i2 - i1
        elif tag == "delete":
            result.reference_only += i2 - i1
        elif tag == "insert":
            result.extracted_only += j2 - j1
        elif max(i2 - i1, j2 - j1) > LAYOUT_WORDS and not same_letters(ref[i1:i2], got[j1:j2]):
            result.reference_only += i2 - i1
            result.extracted_only += j2 - j1
        else:
            hit = sum((Counter(ref[i1:i2]) & Counter(got[j1:j2])).values())
            result.right += hit
            result.misread += i2 - i1 - hit
    whole_ref, whole_got = Counter(ref), Counter(got)
    result.found = sum((whole_ref & whole_got).values()) / max(1, len(ref))
    return result


# -- the readers ----------------------------------------------------------------------------------------


def pdfminer_pages(path: Path) -> Iterator[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    for page in extract_pages(path):
        yield "".join(element.get_text() for element in page if isinstance(element, LTTextContainer))


def raw_reader(name: str) -> Callable[[Path], Iterator[str]]:
    if name == "pdfminer.six":
        return pdfminer_pages
    return lambda path: pdf_page_texts(path, name)


RAW_READERS = (*PDF_READERS, "pdfminer.six")


def read_pdf(path: Path, reader: Callable[[Path], Iterator[str]]) -> tuple[str, float]:
    started = time.perf_counter()
    pages = list(reader(path))
    seconds = time.perf_counter() - started
    return "\n\n".join(clean_pdf_text(page) for page in pages), seconds


def indexed_pdf(path: Path, first: str) -> tuple[str, float]:
    started = time.perf_counter()
    text = "\n\n".join(section.text for section in read_document(path, pdf_reader=first).sections)
    return text, time.perf_counter() - started


def pdf_table(manifest: dict[str, Any], cache: Path, only: set[str]) -> None:
    entries = [e for e in manifest["pdfs"] if not only or e["name"] in only]
    columns = [*RAW_READERS, *(f"indexer, {r} first" for r in PDF_READERS)]
    print("Word accuracy against the text version (reference words found anywhere, in brackets):\n")
    print("| manual (package version) | typeset by | pages | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    seconds: Counter[str] = Counter()
    pages = 0
    for entry in entries:
        pdf = fetched_file(entry, entry["pdf"], cache)
        reference = fetched_file(entry, entry["reference"], cache).read_text(
            encoding="utf-8", errors="replace"
        )
        cells = []
        for column in columns:
            if column in RAW_READERS:
                text, took = read_pdf(pdf, raw_reader(column))
            else:
                text, took = indexed_pdf(pdf, column.split(", ")[1].split(" ")[0])
            seconds[column] += took
            score = word_accuracy(reference, text)
            cells.append(f"{score.accuracy:.3f} ({score.found:.3f})")
        pages += entry["pages"]
        print(
            f"| {entry['name']} ({entry['package']} {entry['version']}) | {entry['typeset_by']} | {entry['pages']} | "
            + " | ".join(cells)
            + " |",
            flush=True,
        )
    print("| **pages per second** (one core, shared machine) | | " + f"{pages} | ", end="")
    print(" | ".join(f"{pages / seconds[c]:.0f}" for c in columns) + " |")


# -- documentation sites ------------------------------------------------------------------------------


def site_row(entry: dict[str, Any], cache: Path) -> str:
    folder = unpacked(entry, cache) / entry["folder"]
    pages = sorted(folder.rglob("*.html"))
    read, left_out, failed = 0, Counter[str](), 0
    glyphs = fenced = pre = 0
    for page in pages:
        pre += len(re.findall(r"<pre[\s>]", page.read_text(encoding="utf-8", errors="replace")))
        try:
            document = read_document(page)
            sections = list(document.sections)
        except NotContent as reason:
            left_out[f"{page.name}: {str(reason).removeprefix('navigation page: ')}"] += 1
            continue
        except ExtractError:
            failed += 1
            continue
        read += 1
        shown = [document.title, *(s.heading or "" for s in sections), *(s.text for s in sections)]
        glyphs += sum(text.count(g) for text in shown for g in GLYPHS)
        fenced += sum(s.text.count("```") for s in sections) // 2
    named = "; ".join(sorted(left_out)) or "none"
    return (
        f"| {entry['name']} ({entry['package']} {entry['version']}) | {entry['generator']} | {len(pages)} | {read} | "
        f"{sum(left_out.values())}: {named} | {failed} | {glyphs} | {fenced} of {pre} |"
    )


def sites_table(manifest: dict[str, Any], cache: Path, only: set[str]) -> None:
    print("\nDocumentation sites, every page read as the indexer reads it:\n")
    print(
        "| site (package version) | generator | pages | read | left out (why) | failed | glyphs left | fenced code blocks of `<pre>` |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for entry in manifest["sites"]:
        if not only or entry["name"] in only:
            print(site_row(entry, cache), flush=True)


# -- files generated here (the earlier comparison) ---------------------------------------------------

WORDS = (
    "harbor ferry island pier morning ticket market boat fleet keeper lighthouse tide route schedule "
    "captain cargo dock season weather storm anchor crew passenger harbour station bridge canal"
).split()


def paragraph(rng: random.Random) -> str:
    def sentence() -> str:
        return (
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize()
            + f" {rng.randint(1, 999)}."
        )

    return " ".join(sentence() for _ in range(rng.randint(3, 6)))


def recall_precision(truth: str, got: str) -> tuple[float, float]:
    want, have = Counter(words(truth)), Counter(words(got))
    hit = sum((want & have).values())
    return hit / max(1, sum(want.values())), hit / max(1, sum(have.values()))


def generated_table(seed: int = 0) -> None:
    import docx
    from fpdf import FPDF

    rng = random.Random(seed)
    print("\nFiles generated here (recall of the known words / precision, per second on one core):\n")
    print("| format | library | recall | precision | per second |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        pdf, texts = FPDF(), []
        pdf.set_font("helvetica", size=11)
        for _ in range(100):
            texts.append("\n\n".join(paragraph(rng) for _ in range(4)))
            pdf.add_page()
            pdf.multi_cell(0, 6, texts[-1])
        path = Path(tmp) / "bench.pdf"
        pdf.output(str(path))
        for name in RAW_READERS:
            started = time.perf_counter()
            got = list(raw_reader(name)(path))
            took = time.perf_counter() - started
            scores = [recall_precision(t, g) for t, g in zip(texts, got, strict=True)]
            recall, precision = (sum(x) / len(scores) for x in zip(*scores, strict=True))
            print(
                f"| PDF (100 pages, fpdf2) | {name} | {recall:.3f} | {precision:.3f} | {len(texts) / took:.0f} pages |"
            )
        html = []
        for _ in range(30):
            parts = [(f"Section {i} {rng.choice(WORDS)}", paragraph(rng)) for i in range(rng.randint(3, 6))]
            body = "".join(f"<h2>{h}</h2><p>{t}</p>" for h, t in parts)
            page = (
                "<html><head><title>Page</title></head><body><nav><ul><li><a href='/'>Home Menu</a></li>"
                "<li><a href='/news'>News Menu</a></li></ul></nav><div class='cookie'>We use cookies to improve your "
                f"experience. Accept all cookies.</div><main><article><h1>Guide</h1>{body}</article></main>"
                "<footer><p>Copyright 2025 Example Corp. All rights reserved. Privacy policy.</p></footer></body></html>"
            )
            html.append((page, "Guide " + " ".join(f"{h} {t}" for h, t in parts)))
        for name, run in html_libraries().items():
            started = time.perf_counter()
            scores = [recall_precision(truth, run(page)) for page, truth in html]
            took = time.perf_counter() - started
            recall, precision = (sum(x) / len(scores) for x in zip(*scores, strict=True))
            print(
                f"| HTML (30 pages) | {name} | {recall:.3f} | {precision:.3f} | {len(html) / took:.0f} pages |"
            )
        files = []
        for i in range(20):
            document, truth = docx.Document(), []
            for part in range(6):
                text = paragraph(rng)
                document.add_heading(f"Part {part}", level=2)
                document.add_paragraph(text)
                truth += [f"Part {part}", text]
            document.save(str(Path(tmp) / f"doc{i}.docx"))
            files.append((Path(tmp) / f"doc{i}.docx", " ".join(truth)))
        for name, read in docx_libraries().items():
            started = time.perf_counter()
            scores = [recall_precision(truth, read(path)) for path, truth in files]
            took = time.perf_counter() - started
            recall, precision = (sum(x) / len(scores) for x in zip(*scores, strict=True))
            print(
                f"| Word (20 files) | {name} | {recall:.3f} | {precision:.3f} | {len(files) / took:.0f} files |"
            )


def html_libraries() -> dict[str, Callable[[str], str]]:
    import trafilatura
    from bs4 import BeautifulSoup
    from markitdown import MarkItDown, StreamInfo

    def markitdown(html: str) -> str:
        info = StreamInfo(extension=".html")
        return MarkItDown().convert_stream(io.BytesIO(html.encode()), stream_info=info).markdown

    return {
        "trafilatura": lambda html: (
            trafilatura.extract(html, output_format="markdown", favor_recall=True) or ""
        ),
        "markitdown": markitdown,
        "BeautifulSoup get_text": lambda html: BeautifulSoup(html, "lxml").get_text(" "),
    }


def docx_libraries() -> dict[str, Callable[[Path], str]]:
    import docx
    from markitdown import MarkItDown

    return {
        "python-docx": lambda path: "\n".join(p.text for p in docx.Document(str(path)).paragraphs),
        "markitdown": lambda path: MarkItDown().convert(str(path)).markdown,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"downloads go here ({DEFAULT_CACHE})"
    )
    parser.add_argument("--only", nargs="*", default=[], metavar="NAME", help="only these manuals / sites")
    parser.add_argument("--no-sites", action="store_true", help="PDF manuals only")
    parser.add_argument("--generated", action="store_true", help="also the comparison on generated files")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # pypdf's font warnings and the indexer's run-together notes
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    only = set(args.only)
    pdf_table(manifest, args.cache, only)
    if not args.no_sites:
        sites_table(manifest, args.cache, only)
    if args.generated:
        generated_table()


if __name__ == "__main__":
    main()
