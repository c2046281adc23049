"""Passages of about 512 tokens with 100 tokens of overlap, as the benchmark's corpora are cut.

Sections (a PDF page, the text under a heading) are split on their own, so a passage never crosses a
page or a heading, and within a section on paragraph, line, sentence and word boundaries, in that order
of preference (``langchain-text-splitters``' recursive splitter). Every passage of a section under a
heading starts with that heading (the section's own heading line, "## 3.1. Turning it on", where it has
one): a fact in the third passage of a long section is still found, and read, with what it is about.
Tokens are counted with the bundled MiniLM's WordPiece tokenizer, the tokenizer family of the
benchmark's ELSER passages; the heading's tokens count towards the passage's size.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from mtrag_graph.ingest.extract import Section
from mtrag_graph.models.bundled import minilm_path

CHUNK_TOKENS = 512
CHUNK_OVERLAP = 100
HEADING_TOKENS = 48  # a longer heading is carried cut to this many tokens' worth of words
SEPARATORS = ["\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", ""]


@dataclass(frozen=True)
class Chunk:
    text: str
    page: int | None
    heading: str | None


_SPLITTERS: dict[tuple[int, int], Any] = {}
_TOKENIZER: list[Any] = []
_LOCK = threading.Lock()


def _tokenizer() -> Any:
    if not _TOKENIZER:
        from transformers import AutoTokenizer  # noqa: PLC0415 - heavy (transformers): indexing documents only

        tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
        tokenizer.model_max_length = 1 << 30  # counting only: no warning for sections over 512 tokens
        _TOKENIZER.append(tokenizer)
    return _TOKENIZER[0]


def splitter(chunk_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP) -> Any:
    """The recursive splitter measuring length in MiniLM tokens (built once per size)."""
    if not 0 <= overlap < chunk_tokens:
        raise ValueError(f"overlap ({overlap}) must be below the chunk size ({chunk_tokens})")
    with _LOCK:
        if (chunk_tokens, overlap) not in _SPLITTERS:
            from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415 - loaded when documents are indexed

            _SPLITTERS[(chunk_tokens, overlap)] = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
                _tokenizer(),
                chunk_size=chunk_tokens,
                chunk_overlap=overlap,
                separators=SEPARATORS,
                keep_separator="end",
            )
        return _SPLITTERS[(chunk_tokens, overlap)]


def _heading_and_body(section: Section) -> tuple[str, str]:
    """The line a section's passages start with, and the text to split: the section's own first line when
    that is its heading ("## 3.1. Turning it on", then the rest), else its heading and all of its text.
    A heading is cut to about ``HEADING_TOKENS`` tokens."""
    if not section.heading:
        return "", section.text
    first, _, rest = section.text.lstrip().partition("\n")
    line, body = (
        (first.strip(), rest)
        if first.startswith("#") and section.heading in first
        else (section.heading, section.text)
    )
    words = line.split()
    while len(words) > 1 and len(_tokenizer().tokenize(" ".join(words))) > HEADING_TOKENS:
        words = words[: max(1, len(words) * 3 // 4)]
    return " ".join(words), body


def chunk_sections(
    sections: Iterable[Section], chunk_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> Iterator[Chunk]:
    """The passages of a document, section by section (lazy: a long document is never held whole); each
    passage of a section under a heading starts with the heading."""
    for section in sections:
        heading, body = _heading_and_body(section)
        room = chunk_tokens
        if heading:
            room = max(chunk_tokens - len(_tokenizer().tokenize(heading)) - 2, (chunk_tokens + 1) // 2)
        for piece in splitter(room, min(overlap, room - 1)).split_text(body):
            piece = piece.strip()
            if piece and heading and not piece.startswith(heading):
                piece = f"{heading}\n\n{piece}"
            if (
                piece
            ):  # a heading with no text under it (a chapter's title before its first section) is no passage
                yield Chunk(piece, section.page, section.heading)
