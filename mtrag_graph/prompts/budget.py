"""Fitting prompts to the model's context window, before the call.

The rule (documented in the README):
- The prompt may use ``context_window_tokens - answer_max_tokens - RESERVE_TOKENS`` tokens, counted as
  ``CHARS_PER_TOKEN`` characters each (a conservative ratio for English text with Qwen and Llama
  tokenizers, which average about 4).
- The conversation gets at most ``HISTORY_SHARE`` of that; turns are dropped oldest first, and a
  single turn longer than the whole share is cut.
- Passages share the rest equally: each is cut (at a word boundary) to ``PASSAGE_MAX_CHARS`` or to its
  equal share, whichever is smaller. The order of passages (best first) is kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

CHARS_PER_TOKEN = 3.0
RESERVE_TOKENS = 256  # system text, instruction tail, chat-template tokens
HISTORY_SHARE = 0.25
MIN_PROMPT_CHARS = 2000  # a window too small for this still gets a usable prompt (the model cuts the rest)
TURN_OVERHEAD_CHARS = 8  # "Agent: " and the line break around each turn
MIN_PASSAGE_CHARS = 200  # a passage's equal share never drops below this
TITLE_CHARS = 200
PASSAGE_MAX_CHARS = 2000  # each passage is cut to this in the grounded prompts


def prompt_char_budget(context_window_tokens: int, answer_max_tokens: int) -> int:
    usable = int((context_window_tokens - answer_max_tokens - RESERVE_TOKENS) * CHARS_PER_TOKEN)
    return max(usable, MIN_PROMPT_CHARS)


_BLANK_LINES = re.compile(r"\n{3,}")


def cut(text: str, limit: int, *, keep_lines: bool = False) -> str:
    """``text`` with whitespace collapsed, cut at a word boundary to at most ``limit`` characters.

    ``keep_lines``: line breaks stay (a blank line at most between two lines), so a table keeps one row
    a line and a list or a command its own lines; only runs of spaces within a line are collapsed."""
    if keep_lines:
        lines = (" ".join(line.split()) for line in text.splitlines())
        text = _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
    else:
        text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: max(limit - 3, 0)]
    space = max(head.rfind(" "), head.rfind("\n"))
    return (head[:space] if space >= 0 else head) + "..."


def trim_history(turns: Sequence[dict[str, str]], max_chars: int) -> list[dict[str, str]]:
    """The newest turns whose texts fit in ``max_chars`` (oldest dropped first)."""
    kept: list[dict[str, str]] = []
    used = 0
    for turn in reversed(turns):
        size = len(turn["text"]) + TURN_OVERHEAD_CHARS
        if used + size > max_chars:
            if not kept:  # the newest turn alone is too long: keep its cut version
                kept.append({**turn, "text": cut(turn["text"], max_chars - TURN_OVERHEAD_CHARS)})
            break
        kept.append(turn)
        used += size
    return list(reversed(kept))


def fit_passages(
    passages: Sequence[dict[str, Any]], max_chars_each: int, total_chars: int
) -> list[dict[str, Any]]:
    """Passages with texts cut so that together they fit in ``total_chars``."""
    if not passages:
        return []
    share = max(min(max_chars_each, total_chars // len(passages)), MIN_PASSAGE_CHARS)
    return [
        {**p, "text": cut(p.get("text", ""), share), "title": cut(p.get("title") or "", TITLE_CHARS)}
        for p in passages
    ]
