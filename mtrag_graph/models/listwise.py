"""Listwise reranking by a chat model: shown the question and numbered passages, the model replies with
their order ("[3] > [1] > [2]"), as the SemEval-2026 MTRAGEval "5ting" system reranks.

Specs (``models.embeddings.get_reranker``): ``listwise`` asks the default large model (the reader,
``settings.large_model``); ``listwise:SPEC`` any chat model spec ``get_chat_model`` takes.

The reply is untrusted: only bracketed numbers in range count, a repeat is dropped, passages the reply
does not name follow in their given order. A reply that names none is asked once more with a correction
(decoding is deterministic, so an unchanged prompt would fail the same way); then, or when the model
keeps failing with transient errors, the given order stands, counted in ``fallbacks`` and logged.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from mtrag_graph import settings
from mtrag_graph.models.calls import TRANSIENT_ERRORS, invoke_text
from mtrag_graph.models.factory import ModelSpec, get_chat_model, model_name

logger = logging.getLogger("mtrag_graph")

RANKING = (
    "Below are {count} passages, each with an identifier in brackets. Rank them by how relevant they "
    "are to the question.\n\n"
    "Question: {question}\n\n"
    "{passages}\n\n"
    "Question: {question}\n\n"
    "Rank the {count} passages above by relevance to the question, most relevant first. Reply with only "
    "their identifiers in that order, like [2] > [1] > [3], and nothing else."
)
PASSAGE = "[{number}] {text}"
CORRECTION = (
    "That reply named no passage. Reply with only the identifiers of the passages, most relevant first, "
    "like [2] > [1] > [3]."
)

DEPTH = 10  # passages the model orders; the rest keep their order below them
WORDS_PER_PASSAGE = 80
PARSE_RETRIES = 1  # re-asks after a reply that names no passage
TOKENS_PER_IDENTIFIER = 6  # "[10] > " is about five tokens
_IDENTIFIER = re.compile(r"\[(\d+)\]")


def parse_ranking(reply: str, count: int) -> list[int]:
    """The 0-based indices of the passages ``reply`` names ("[2] > [1]" gives [1, 0]), in its order:
    bracketed numbers from 1 to ``count`` only, each once (its first mention)."""
    order: list[int] = []
    for match in _IDENTIFIER.finditer(reply):
        index = int(match.group(1)) - 1
        if 0 <= index < count and index not in order:
            order.append(index)
    return order


def shown_text(text: str, words_per_passage: int) -> str:
    """A passage as the prompt shows it: ``title: text`` (``passage_text`` puts the title on the first
    line) cut to its first ``words_per_passage`` words, the title's included."""
    head, newline, body = text.strip().partition("\n")
    title = head.split()
    if newline and len(title) < words_per_passage:
        return f"{' '.join(title)}: {' '.join(body.split()[: words_per_passage - len(title)])}"
    return " ".join(text.split()[:words_per_passage])


def ranking_prompt(question: str, passages: Sequence[str], words_per_passage: int) -> str:
    shown = "\n".join(
        PASSAGE.format(number=number, text=shown_text(text, words_per_passage))
        for number, text in enumerate(passages, start=1)
    )
    return RANKING.format(count=len(passages), question=question.strip(), passages=shown)


class ListwiseReranker:
    """Scores passages by the order a chat model puts the first ``depth`` of them in (one call per query).

    Scores fall strictly with the final rank (``1 / (1 + rank)``), so sorting by score gives that order
    with no ties. Safe to share between threads: ``score`` keeps its state local, and ``fallbacks`` (how
    many queries kept the given order because no reply named a passage) is counted under a lock.
    """

    def __init__(
        self,
        model_spec: ModelSpec | None = None,
        depth: int = DEPTH,
        words_per_passage: int = WORDS_PER_PASSAGE,
    ):
        if depth < 1 or words_per_passage < 1:
            raise ValueError("listwise reranker: depth and words_per_passage must be at least 1")
        spec = model_spec if model_spec is not None else settings.large_model()
        self._model = get_chat_model(spec)
        self.name = f"listwise({model_name(spec)})"
        self.depth = depth
        self.words_per_passage = words_per_passage
        self.fallbacks = 0
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        order = self.rank(query, passages)
        scores = [0.0] * len(passages)
        for rank, index in enumerate(order):
            scores[index] = 1.0 / (1 + rank)
        return scores

    def rank(self, query: str, passages: Sequence[str]) -> list[int]:
        """The passages' indices, best first: the model's order of the first ``depth``, then the rest."""
        head = list(passages[: self.depth])
        rest = list(range(len(head), len(passages)))
        if len(head) < 2:
            return [*range(len(head)), *rest]
        named = self._ask(query, head)
        return [*named, *(i for i in range(len(head)) if i not in named), *rest]

    def _ask(self, query: str, passages: list[str]) -> list[int]:
        """The order the model names (possibly partial); the given order when no reply names a passage."""
        messages: list[BaseMessage] = [HumanMessage(ranking_prompt(query, passages, self.words_per_passage))]
        conversation = list(messages)
        raws: list[str] = []
        for _ in range(PARSE_RETRIES + 1):
            try:
                reply = invoke_text(
                    self._model,
                    conversation,
                    max_tokens=TOKENS_PER_IDENTIFIER * len(passages) + 8,
                    temperature=0.0,
                )
            except TRANSIENT_ERRORS as error:  # invoke_text already retried them
                raws.append(f"{type(error).__name__}: {error}")
                break
            raws.append(str(reply.content))
            order = parse_ranking(raws[-1], len(passages))
            if order:
                return order
            conversation = [*messages, AIMessage(content=raws[-1]), HumanMessage(CORRECTION)]
        with self._lock:
            self.fallbacks += 1
        logger.warning("%s named no passage (%r): the given order stands", self.name, raws[-1][:200])
        return list(range(len(passages)))
