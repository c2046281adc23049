"""Passages of about 512 tokens with 100 tokens of overlap, as the benchmark's corpora are cut.

Sections (a PDF page, the text under a heading) are split on their own, so a passage never crosses a
page or a heading, and within a section on paragraph, line, sentence and word boundaries, in that order
of preference (``langchain-text-splitters``' recursive splitter). Tokens are counted with the bundled
MiniLM's WordPiece tokenizer, the tokenizer family of the benchmark's ELSER passages.
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
SEPARATORS = ["\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", ""]


@dataclass(frozen=True)
class Chunk:
    text: str
    page: int | None
    heading: str | None


_SPLITTERS: dict[tuple[int, int], Any] = {}
_LOCK = threading.Lock()


def splitter(chunk_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP) -> Any:
    """The recursive splitter measuring length in MiniLM tokens (built once per size)."""
    if not 0 <= overlap < chunk_tokens:
        raise ValueError(f"overlap ({overlap}) must be below the chunk size ({chunk_tokens})")
    with _LOCK:
        if (chunk_tokens, overlap) not in _SPLITTERS:
            from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415 - optional (the documents extra): indexing documents only
            from transformers import AutoTokenizer  # noqa: PLC0415 - heavy (transformers): indexing documents only

            tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
            tokenizer.model_max_length = 1 << 30  # counting only: no warning for sections over 512 tokens
            _SPLITTERS[(chunk_tokens, overlap)] = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
                tokenizer,
                chunk_size=chunk_tokens,
                chunk_overlap=overlap,
                separators=SEPARATORS,
                keep_separator="end",
            )
        return _SPLITTERS[(chunk_tokens, overlap)]


def chunk_sections(
    sections: Iterable[Section], chunk_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> Iterator[Chunk]:
    """The passages of a document, section by section (lazy: a long document is never held whole)."""
    split = splitter(chunk_tokens, overlap)
    for section in sections:
        for piece in split.split_text(section.text):
            piece = piece.strip()
            if piece:
                yield Chunk(piece, section.page, section.heading)
