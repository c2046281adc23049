"""Text out of documents: Markdown, plain text, HTML, PDF and Word, as sections with a page or a heading.

Each reader yields ``Section(text, page, heading)`` pieces in document order without holding the whole
text when the format allows it: plain text and Markdown are read in blocks (a 200 MB file never sits in
memory whole), a PDF page by page. A file that cannot be read raises ``ExtractError`` with the reason
(corrupt, encrypted, empty, binary); the caller reports it and goes on with the other files.

The libraries (measured in ``benchmarks/extractors.py`` on real manuals, figures in docs/documents.md):
pypdfium2 for PDF, with pypdf re-reading any page whose words run together (and the file and page named in
a warning when neither separates them); for HTML, markdownify on the main region of a documentation
generator's page (Sphinx, MkDocs, Doxygen) and trafilatura on any other page (main text as Markdown,
boilerplate dropped), after permalink glyphs are removed and navigation pages (a generator's index or
search page, a redirect, a page of links) are refused as ``NotContent``; python-docx for Word. None
downloads a model.
"""

from __future__ import annotations

import copy
import functools
import logging
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtrag_graph.models.bundled import minilm_path

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst")
HTML_SUFFIXES = (".html", ".htm")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, ".pdf", ".docx")
PASSAGE_SUFFIXES = (".jsonl",)
SUFFIXES = (*DOCUMENT_SUFFIXES, *PASSAGE_SUFFIXES)

BLOCK_CHARS = 1 << 20  # text files are read in blocks of about 1 MB, cut at a blank line
HTML_MAX_BYTES = 64 << 20  # an HTML parser holds the whole tree: larger pages are refused, not read
PDF_READERS = (
    "pypdfium2",
    "pypdf",
)  # the default first; the next one re-reads a page whose words run together
RUN_TOGETHER_LETTERS = 16  # a run of this many letters without a space or punctuation is suspect ...
RUN_TOGETHER_SHARE = 0.09  # ... and a page with this share of its letters in such runs has lost its spaces
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)(?:\s+#+)?\s*$")  # an ATX heading; "C#" keeps its "#"
# Glyphs that mark a place rather than say something: pilcrow, section sign, link and anchor symbols,
# Doxygen's member diamond, zero-width and thin spaces.
_GLYPHS = re.compile("[\u00b6\u00a7\U0001f517\u2693\u25c6\u200b\u2009\ufeff]")


class ExtractError(ValueError):
    """A file that yields no text, with the reason (corrupt, encrypted, empty, binary, unsupported)."""


class NotContent(ExtractError):
    """A readable file that holds no content of its own (a navigation page, a generator's copy of a
    page's source): left out of the index, with the reason in its summary."""


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


def read_document(path: str | Path, *, pdf_reader: str = PDF_READERS[0]) -> Document:
    """Open ``path`` and say how to read it; reading errors surface from ``sections`` as ``ExtractError``.

    ``pdf_reader`` names the library that reads a PDF first (``PDF_READERS``; the benchmark compares them)."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ExtractError(f"cannot read: {error.strerror or error}") from None
    if size == 0:
        raise ExtractError("empty file")
    if suffix == ".pdf":
        return _pdf(path, pdf_reader)
    if suffix == ".docx":
        return _docx(path)
    if suffix in HTML_SUFFIXES:
        return _html(path, size)
    if suffix in TEXT_SUFFIXES:
        if _is_sphinx_source_copy(path):
            raise NotContent("Sphinx's copy of a page's source (its HTML page is read)")
        return _text(path, markdown=suffix in (".md", ".markdown"))
    raise ExtractError(f"unsupported file type '{suffix or path.name}'")


def clean_title(text: str | None) -> str:
    """A title or heading as a reader sees it in a citation: one line, no permalink glyphs ("¶", "🔗"),
    no Markdown markers (leading ``#``, closing ``#``, ``**``, backticks, ``[text](url)`` links)."""
    if not text:
        return ""
    text = _GLYPHS.sub(" ", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^\s*#{1,6}\s+", "", text)
    text = re.sub(r"\s+#+\s*$", "", text)
    text = re.sub(r"(\*\*|`)", "", text)
    text = re.sub(r"(?<![\w*])\*(\S(?:[^*]*\S)?)\*(?![\w*])", r"\1", text)
    return " ".join(text.split())


def _is_sphinx_source_copy(path: Path) -> bool:
    """A file under a built Sphinx site's ``_sources/`` (the site has ``searchindex.js`` or ``_static/``)."""
    for folder in path.parents:
        if folder.name == "_sources":
            site = folder.parent
            return (site / "searchindex.js").exists() or (site / "_static").is_dir()
    return False


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
                heading, lines = clean_title(match.group(2)) or None, [_GLYPHS.sub("", line).rstrip()]
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
                    title = clean_title(match.group(2)) or title
                    break
        sections = _markdown_sections(_blocks(path))
    else:
        sections = (Section(block.strip()) for block in _blocks(path) if block.strip())
    return Document(path, title, sections)


# -- HTML --------------------------------------------------------------------------------------------

# Permalink anchors documentation generators put beside headings (Sphinx and MkDocs "headerlink", Doxygen
# "permalink", anchor.js, Docusaurus "hash-link", markdown-it "header-anchor"): never text.
_PERMALINK_CLASSES = frozenset(
    (
        "headerlink",
        "permalink",
        "anchorjs-link",
        "hash-link",
        "anchor-link",
        "header-anchor",
        "heading-anchor",
    )
)
_NAVIGATION_FILES = {
    "genindex.html": "the documentation generator's general index",
    "search.html": "the documentation generator's search page",
    "py-modindex.html": "the documentation generator's module index",
    "modindex.html": "the documentation generator's module index",
    "404.html": "the site's page-not-found page",
}
NAVIGATION_LINK_SHARE = 0.7  # a page whose main text is mostly link text is a table of contents or an index


def _drop_permalinks(tree: Any) -> None:
    """Remove permalink anchors (the "¶", "#", "🔗" beside a heading) from an HTML tree."""
    for element in list(tree.iter("a", "span")):
        classes = set((element.get("class") or "").split())
        glyph_only = (
            element.tag == "a"
            and (element.get("href") or "").startswith("#")
            and not _GLYPHS.sub("", element.text_content()).strip()
        )
        if classes & _PERMALINK_CLASSES or glyph_only:
            element.drop_tree()  # keeps the element's tail text


def _unwrap_named_anchors(tree: Any) -> None:
    """Keep the text of named anchors (``<a name="osx">``, a link target, no ``href``) and drop the tags.

    Pages written without a site generator (FAQ converters, texinfo, hand-written HTML) often wrap a
    whole heading in one: ``<h2><a name="osx">Question 2.1. Is it possible ...?</a></h2>``. The article
    reader drops such an element with its text, so the Asymptote FAQ's pages lost every question and
    kept only the answers."""
    for element in list(tree.iter("a")):
        if element.get("href") is None and (element.get("name") or element.get("id")):
            element.drop_tag()


def _one_line_headings(tree: Any) -> None:
    """Put each heading's text on one line: the article reader reads a line break inside a heading
    ("Question 2.1. Is it possible to install Asymptote on Mac OS\nX?") as the heading's end."""
    for heading in tree.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        for part in heading.iter():
            if part.text:
                part.text = _one_line(part.text)
            if part is not heading and part.tail:
                part.tail = _one_line(part.tail)


def _one_line(text: str) -> str:
    """``text`` with its runs of white space (line breaks too) made one space, its ends' spaces kept."""
    inner = " ".join(text.split())
    if not inner:
        return " " if text else ""
    return (" " if text[:1].isspace() else "") + inner + (" " if text[-1:].isspace() else "")


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _normalise_doxygen(tree: Any) -> None:
    """Doxygen's page title and code fragments in the tags an article reader knows (an ``h1``, a ``pre``),
    and its header, path bar and footer dropped."""
    import lxml.html  # noqa: PLC0415 - loaded for HTML files only

    for fragment in tree.xpath(f"//div[{_has_class('fragment')}]"):
        code = lxml.html.Element("pre")
        code.text = "\n".join(line.text_content() for line in fragment.xpath(f".//div[{_has_class('line')}]"))
        code.tail = fragment.tail
        fragment.getparent().replace(fragment, code)
    for title in tree.xpath(f"//div[{_has_class('headertitle')}]/div[{_has_class('title')}]"):
        title.tag = "h1"
    for chrome in tree.xpath(
        f"//div[@id='top'] | //div[{_has_class('navpath')}] | //address[{_has_class('footer')}]"
    ):
        chrome.drop_tree()


def _keep_code_blocks(tree: Any) -> None:
    """A one-line ``<pre>`` ("pip install mkdocs") ends in a line break, so that the Markdown keeps it as a
    fenced block rather than an inline code span."""
    for block in tree.iter("pre"):
        if "\n" not in block.text_content().strip():
            _end_with_newline(block)


def _end_with_newline(element: Any) -> None:
    """Add a line break after the last text of ``element`` (its last child's tail, or deeper)."""
    if len(element) == 0:
        element.text = (element.text or "") + "\n"
    elif element[-1].tail:
        element[-1].tail += "\n"
    else:
        _end_with_newline(element[-1])


def _unescape_markdown(markdown: str) -> str:
    """Trafilatura's Markdown escapes ``_`` and ``*`` in plain text ("tide\\_table"): the index wants the
    words as written. Fenced code is left as it is."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        lines.append(line if fenced else re.sub(r"\\([_*`#\[\]()|<>!+.-])", r"\1", line))
    return "\n".join(lines)


_GENERATORS = ("docutils", "sphinx", "mkdocs", "doxygen", "docusaurus", "vitepress")
# Where documentation generators put a page's own text, most specific first (MkDocs Material's article,
# Sphinx's and MkDocs' role="main", a Sphinx theme's div.body, Doxygen's div.contents), then any page's.
_MAIN_REGIONS = (
    f"//article[{_has_class('md-content__inner')}]",
    "//*[@role='main']",
    f"//div[{_has_class('body')}]",
    f"//div[{_has_class('contents')}]",
    "//main",
    "//article",
    "//body",
)
# Page furniture inside a generator's main region: sidebars, navigation, footers, forms.
_FURNITURE = " | ".join(
    (
        ".//nav",
        ".//footer",
        ".//form",
        ".//script",
        ".//style",
        ".//noscript",
        ".//*[@role='navigation']",
        *(
            f".//div[{_has_class(name)}]"
            for name in ("sphinxsidebar", "related", "md-sidebar", "rst-footer-buttons")
        ),
    )
)


def _main_region(tree: Any) -> Any:
    for path in _MAIN_REGIONS:
        found = tree.xpath(path)
        if found:
            return found[0]
    return tree


def _from_generator(tree: Any) -> bool:
    """A page a documentation generator made (its generator tag, or Sphinx's scripts)."""
    named = " ".join(tree.xpath("//meta[@name='generator']/@content")).lower()
    return any(g in named for g in _GENERATORS) or bool(
        tree.xpath("//script[contains(@src, 'documentation_options')]")
    )


def _generator_markdown(tree: Any) -> tuple[str, str]:
    """The title and Markdown of a documentation generator's page: its main region as it is (headings,
    lists, tables, code blocks fenced where they stand), links as their text, images left out.

    An article reader (trafilatura) guesses the main text by its look, which on such pages loses
    headings nested in sections and flattens code blocks inside list items; these pages say where
    their text is."""
    import lxml.html  # noqa: PLC0415 - loaded for HTML files only
    from markdownify import markdownify  # noqa: PLC0415 - loaded for HTML files only

    main = _main_region(tree)
    for furniture in main.xpath(_FURNITURE):
        furniture.drop_tree()
    headings = main.xpath(".//h1")
    title = clean_title(headings[0].text_content()) if headings else ""
    markdown = markdownify(
        lxml.html.tostring(main, encoding="unicode"),
        heading_style="ATX",
        bullets="-",
        strip=["a", "img"],
        escape_underscores=False,
        escape_asterisks=False,
        escape_misc=False,
    )
    return title, re.sub(r"\n{3,}", "\n\n", markdown).strip()


def navigation_reason(tree: Any, name: str) -> str | None:
    """Why an HTML page is navigation rather than content, or None: the generator's index, search or
    page-not-found page (by name, when its main text is short or mostly links), a redirect stub, or a page
    whose main text is mostly links (a Sphinx ``index.html`` that is only a toctree, a Doxygen file list)."""
    main = _main_region(tree)
    text = " ".join(main.text_content().split())
    linked = sum(len(" ".join(a.text_content().split())) for a in main.iter("a"))
    share = linked / len(text) if text else 1.0
    own = len(text) - linked
    if name.lower() in _NAVIGATION_FILES and (own < 1000 or share >= 0.5):
        return f"navigation page: {_NAVIGATION_FILES[name.lower()]}"
    refresh = tree.xpath("//meta[translate(@http-equiv, 'REFSH', 'refsh')='refresh']/@content")
    if refresh and own < 1000:
        target = refresh[0].partition("=")[2].strip(" '\"") or "another page"
        return f"navigation page: a redirect to {target}"
    if share >= NAVIGATION_LINK_SHARE and own < 2000 and sum(1 for _ in main.iter("a")) >= 5:
        return (
            f"navigation page: {round(100 * share)}% of its text is links (a table of contents or an index)"
        )
    return None


HEADINGS_KEPT = 0.5  # the article reader must keep this share of a page's section headings


def _heading_texts(tree: Any) -> list[str]:
    """The page's section headings (``h2`` to ``h6``), each on one line."""
    texts = (" ".join(h.text_content().split()) for h in tree.iter("h2", "h3", "h4", "h5", "h6"))
    return [t for t in texts if t]


def _lost_headings(headings: list[str], markdown: str) -> bool:
    """Did the article reader drop most of a page's section headings (three or more)? It guesses the main
    text by its look, and on a page of questions each followed by a code block (the Asymptote FAQ's 2D
    graphs page) it kept the code and dropped every question; such a page is read as it stands."""
    if len(headings) < 3:
        return False
    flat = " ".join(markdown.split())
    kept = sum(1 for heading in headings if heading in flat)
    return kept < HEADINGS_KEPT * len(headings)


def _html(path: Path, size: int) -> Document:
    import trafilatura  # noqa: PLC0415 - loaded for HTML files only
    from trafilatura.utils import load_html  # noqa: PLC0415 - as above

    if size > HTML_MAX_BYTES:
        raise ExtractError(
            f"HTML page of {size >> 20} MB (over {HTML_MAX_BYTES >> 20} MB); convert it to text"
        )
    _check_text(path)
    tree = load_html(path.read_text(encoding="utf-8", errors="replace"))
    if tree is None:
        raise ExtractError("no text found in the HTML page")
    _drop_permalinks(tree)
    _unwrap_named_anchors(tree)
    _one_line_headings(tree)
    if any("doxygen" in g.lower() for g in tree.xpath("//meta[@name='generator']/@content")):
        _normalise_doxygen(tree)
    _keep_code_blocks(tree)
    reason = navigation_reason(tree, path.name)
    if reason is not None:
        raise NotContent(reason)
    metadata = trafilatura.extract_metadata(copy.deepcopy(tree))
    title = clean_title(metadata.title if metadata is not None else None)
    if _from_generator(tree):
        heading, markdown = _generator_markdown(tree)
        title = heading or title
    else:
        headings = _heading_texts(tree)
        markdown = _unescape_markdown(
            trafilatura.extract(
                copy.deepcopy(tree),
                output_format="markdown",
                include_tables=True,
                include_links=False,
                favor_recall=True,
            )
            or ""
        )
        if _lost_headings(headings, markdown):
            heading, markdown = _generator_markdown(tree)
            title = heading or title
    if not markdown.strip():
        raise ExtractError("no text found in the HTML page")
    return Document(path, title or path.stem, _markdown_sections(iter([markdown])))


# -- PDF ---------------------------------------------------------------------------------------------

_SOFT_HYPHEN = re.compile(r"([^\W\d_][\w.-]*)(?:[\x02\ufffe\xad]|-[ \t]*\n)[ \t]*\n?[ \t]*([^\W\d_][\w-]*)")
_LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
    }
)
_LETTER_RUN = re.compile(r"[^\W\d_]+")


def run_together_share(text: str) -> float:
    """The share of a page's letters that sit in runs of ``RUN_TOGETHER_LETTERS`` letters or more.

    On the pages of six Debian manuals (docs/documents.md) a page read right stays below 0.08 (long words:
    "internationalization") and a page whose spaces were lost is above 0.10. A page of under 200 letters
    says nothing (0.0)."""
    runs = _LETTER_RUN.findall(text)
    letters = sum(map(len, runs))
    if letters < 200:
        return 0.0
    return sum(len(run) for run in runs if len(run) >= RUN_TOGETHER_LETTERS) / letters


class _Hyphenation:
    """Joins the halves of a word broken at a line end, or keeps the hyphen of a compound broken there.

    PDF readers mark a break as a soft hyphen (pypdfium2) or leave "word-" at the line's end (pypdf). A
    line-end hyphen is the typesetter's (join: "pack-ages") unless the hyphenated form is written
    earlier in the document or on the page ("debian-user"); otherwise the joined word is taken when it is a
    word of the bundled tokenizer's vocabulary or written there, and the hyphen kept when the second half is
    a word ("gzip-compressed")."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, text: str) -> str:
        page = {w.lower() for w in re.findall(r"[\w-]+", text)}

        def known(word: str) -> bool:
            return word in page or word in self.seen

        def mend(match: re.Match[str]) -> str:
            head, tail = match.group(1), match.group(2)
            joined, hyphened = (head + tail).lower(), f"{head}-{tail}".lower()
            vocabulary = _vocabulary()
            if known(hyphened):
                return f"{head}-{tail}"
            if joined in vocabulary or known(joined):
                return head + tail
            if tail.lower() in vocabulary:
                return f"{head}-{tail}"
            return head + tail

        mended = _SOFT_HYPHEN.sub(mend, text)
        self.seen |= page
        return mended


@functools.cache
def _vocabulary() -> frozenset[str]:
    """Whole words of the bundled MiniLM tokenizer's vocabulary (about 20,000 English words)."""
    with open(minilm_path() / "vocab.txt", encoding="utf-8") as handle:
        return frozenset(w for w in (line.strip() for line in handle) if w.isalpha() and w.islower())


_UNMAPPED_BULLET = re.compile(r"^[ \t]*[\x80-\x9f][ \t]+", re.MULTILINE)


def clean_pdf_text(text: str, hyphenation: Callable[[str], str] | None = None) -> str:
    """A PDF page's text as the index wants it: Unix line ends, ligatures spelled out, words broken at a
    line end mended (``_Hyphenation``), a bullet the font left unmapped shown as one, no control
    characters, no trailing blanks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_LIGATURES)
    text = (hyphenation or _Hyphenation())(text)
    # a C1 control character opening a line is a list bullet whose glyph the font did not map to text
    # (the 4ti2 manual's itemize bullets come out as U+0088): a bullet, the way the evidence reads lists
    text = _UNMAPPED_BULLET.sub("\u2022 ", text)
    text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\xad]", "", text)
    return re.sub(r"[ \t]+\n", "\n", text).strip()


class _PdfPages:
    """One reader's view of a PDF: its page count, its metadata title and each page's raw text."""

    reader = ""
    pages = 0
    title = ""

    def text(self, number: int) -> str:
        raise NotImplementedError


_PDFIUM_ERRORS = {
    2: "the file cannot be opened",
    3: "not in PDF format, or damaged",
    5: "unsupported security handler",
    6: "page not found or damaged",
}


class _Pdfium(_PdfPages):
    reader = "pypdfium2"

    def __init__(self, path: Path):
        import pypdfium2  # noqa: PLC0415 - native (PDFium): PDF files only
        import pypdfium2.raw as pdfium_c  # noqa: PLC0415 - as above

        try:
            self.document = pypdfium2.PdfDocument(str(path))
        except pypdfium2.PdfiumError as error:
            if error.err_code == pdfium_c.FPDF_ERR_PASSWORD:
                raise ExtractError("encrypted PDF (needs a password)") from None
            said = _PDFIUM_ERRORS.get(error.err_code or 0, "unknown error")
            raise ExtractError(f"corrupt PDF (PDFium: {said})") from None
        self.pages = len(self.document)
        self.title = self.document.get_metadata_value("Title")
        self.error = pypdfium2.PdfiumError

    def text(self, number: int) -> str:
        try:
            page = self.document[number]
            try:
                return page.get_textpage().get_text_bounded()
            finally:
                page.close()
        except self.error as error:
            raise ExtractError(f"corrupt PDF page {number + 1} (PDFium: {error})") from None


class _Pypdf(_PdfPages):
    reader = "pypdf"

    def __init__(self, path: Path):
        import pypdf  # noqa: PLC0415 - loaded for PDF files only
        from pypdf.errors import PyPdfError  # noqa: PLC0415 - as above

        self.errors = (PyPdfError, ValueError, KeyError, TypeError)
        try:
            self.document = pypdf.PdfReader(path)
            if self.document.is_encrypted and not self.document.decrypt(""):
                raise ExtractError("encrypted PDF (needs a password)")
            self.pages = len(self.document.pages)
            info = self.document.metadata
        except ExtractError:
            raise
        except (*self.errors, OSError) as error:
            raise ExtractError(f"corrupt PDF ({type(error).__name__}: {error})") from None
        self.title = str(info.title) if info is not None and info.title else ""

    def text(self, number: int) -> str:
        try:
            return self.document.pages[number].extract_text() or ""
        except self.errors as error:
            raise ExtractError(f"corrupt PDF page {number + 1} ({type(error).__name__}: {error})") from None


_PDF_OPENERS: dict[str, Callable[[Path], _PdfPages]] = {"pypdfium2": _Pdfium, "pypdf": _Pypdf}


def pdf_page_texts(path: str | Path, reader: str = PDF_READERS[0]) -> Iterator[str]:
    """Each page's raw text as one reader gives it: no clean-up, no second reader (to compare readers)."""
    if reader not in _PDF_OPENERS:
        raise ValueError(f"unknown PDF reader '{reader}' (one of {', '.join(_PDF_OPENERS)})")
    pages = _PDF_OPENERS[reader](Path(path))
    return (pages.text(number) for number in range(pages.pages))


def _page_list(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``pages 1-3, 7`` (at most 12 ranges named)."""
    ranges: list[list[int]] = []
    for number in numbers:
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    named = [str(a) if a == b else f"{a}-{b}" for a, b in ranges[:12]]
    more = f" and {len(ranges) - 12} more ranges" if len(ranges) > 12 else ""
    return ("page " if numbers == [numbers[0]] else "pages ") + ", ".join(named) + more


def _pdf(path: Path, reader: str = PDF_READERS[0]) -> Document:
    if reader not in _PDF_OPENERS:
        raise ValueError(f"unknown PDF reader '{reader}' (one of {', '.join(_PDF_OPENERS)})")
    primary = _PDF_OPENERS[reader](path)
    if primary.pages == 0:
        raise ExtractError("PDF without pages")
    title = clean_title(primary.title) or path.stem
    others = [name for name in PDF_READERS if name != reader]

    def sections() -> Iterator[Section]:
        hyphenation = _Hyphenation()
        fallbacks: dict[str, _PdfPages] = {}
        mended: dict[str, list[int]] = {}
        unmended: list[int] = []
        found = False
        for number in range(primary.pages):
            raw = primary.text(number)
            share = run_together_share(raw)
            if share > RUN_TOGETHER_SHARE:
                best, best_share, best_reader = raw, share, primary.reader
                for name in others:
                    try:
                        other = fallbacks.get(name) or fallbacks.setdefault(name, _PDF_OPENERS[name](path))
                        alternative = other.text(number)
                    except ExtractError:
                        continue
                    if run_together_share(alternative) < best_share:
                        best, best_share, best_reader = alternative, run_together_share(alternative), name
                raw = best
                if best_share > RUN_TOGETHER_SHARE:
                    unmended.append(number + 1)
                else:
                    mended.setdefault(best_reader, []).append(number + 1)
            text = clean_pdf_text(raw, hyphenation)
            if text:
                found = True
                yield Section(text, page=number + 1)
        for name, pages in mended.items():
            log.warning(
                "%s: words run together in %s's text of %s; read with %s instead",
                path,
                primary.reader,
                _page_list(pages),
                name,
            )
        if unmended:
            log.warning(
                "%s: words run together on %s in every PDF reader (%s); indexed as read",
                path,
                _page_list(unmended),
                ", ".join(PDF_READERS),
            )
        if not found:
            raise ExtractError("no text in the PDF (scanned images need OCR, which is not done here)")

    return Document(path, title, sections())


# -- Word --------------------------------------------------------------------------------------------


def _docx(path: Path) -> Document:
    import docx  # noqa: PLC0415 - loaded for Word files only
    from docx.opc.exceptions import PackageNotFoundError  # noqa: PLC0415 - as above

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
        raise ExtractError(f"corrupt Word document ({type(error).__name__}: {error})") from None
    title = clean_title(document.core_properties.title)
    paragraphs: list[tuple[str | None, str]] = []
    heading: str | None = None
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        if not text:
            continue
        if style == "Title" or style.startswith("Heading"):
            title = title or clean_title(text)
            heading = clean_title(text) or None
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
