"""Optional LLM listwise reranker: the model returns an ordering of numbered passages as validated JSON.

The reply is untrusted: unknown numbers and repeats are dropped, and passages the model left out are
appended in their original order, so the result is always a permutation of the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from mtrag_graph.models.calls import CallLog, ask_json
from mtrag_graph.prompts import listwise as prompts


class ListwiseRanking(BaseModel):
    ranking: list[int | str] = Field(description="passage numbers, most useful first")


def complete_ordering(returned: Sequence[Any], count: int) -> tuple[list[int], dict[str, int]]:
    """Turn a model's ordering of passage numbers (1-based) into a permutation of ``range(count)``.

    Also returns what was repaired: ``unknown`` (not a passage number), ``duplicates``, ``missing``.
    """
    order: list[int] = []
    unknown = duplicates = 0
    for item in returned:
        number = _as_number(item)
        if number is None or not 1 <= number <= count:
            unknown += 1
        elif number - 1 in order:
            duplicates += 1
        else:
            order.append(number - 1)
    seen = set(order)
    missing = [i for i in range(count) if i not in seen]
    return order + missing, {"unknown": unknown, "duplicates": duplicates, "missing": len(missing)}


def _as_number(item: Any) -> int | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, str):
        text = item.strip().strip("[]()#").strip()
        return int(text) if text.isdigit() else None
    return None


def listwise_rerank(
    model: BaseChatModel,
    question: str,
    passages: Sequence[dict[str, Any]],
    log: CallLog,
    *,
    retries: int = 2,
    passage_max_chars: int = 600,
    system_prompt: str = prompts.SYSTEM,
    instruction: str = prompts.RANK,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``passages`` reordered by the model, and a report (``parsed``, repairs, raw replies).

    When no reply parses after ``retries`` the input order is kept (``parsed`` is False).
    """
    if len(passages) < 2:
        return list(passages), {"parsed": True, "unknown": 0, "duplicates": 0, "missing": 0, "raws": []}
    listing = "\n".join(f"[{n}] {_snippet(p, passage_max_chars)}" for n, p in enumerate(passages, start=1))
    messages = [
        SystemMessage(content=system_prompt),
        HumanMessage(content=instruction.format(question=question, passages=listing)),
    ]
    reply, raws = ask_json(
        model, messages, ListwiseRanking, log, retries=retries, max_tokens=8 * len(passages) + 32
    )
    order, repairs = complete_ordering(reply.ranking if reply else [], len(passages))
    return [passages[i] for i in order], {"parsed": reply is not None, **repairs, "raws": raws}


def _snippet(passage: dict[str, Any], limit: int) -> str:
    title = passage.get("title") or ""
    text = " ".join(str(passage.get("text", "")).split())
    body = f"{title}: {text}" if title else text
    return body if len(body) <= limit else body[:limit].rstrip() + "..."
