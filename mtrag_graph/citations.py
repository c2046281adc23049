"""Which passages back which sentence of the answer.

The verdict (``judging/verdict.py``, applied by ``nodes/accept_answer.py``) writes, for each answer sentence, whether the kept
passages back it and which ones (``state["grounding"]["sentences"]``). Where a state has no grounding
(``Context(grounding="off")``), ``grounding_sentences`` computes the same list with the same measure
(``judging.grounding.sentence_support``, no model call). ``answer_citations`` picks the one that
applies, once per run: ``nodes/finish.py`` puts its result in the reply's metadata (with the passages
it indexes), and the prediction file, the page, the API and the terminal chat read it there.
``CitedAnswer`` is the one view of a cited reply (markers, numbered sources) that they use.

Each sentence: ``{"text", "supported", "passages" (indices into kept_passages, best first),
"document_ids", "score", ...}`` as ``judging.grounding.SentenceSupport.as_dict`` gives it, and for
passages of files ``"sources"``, where each cited one comes from (``passages.source_label``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mtrag_graph.judging.grounding import sentence_support, support_entries
from mtrag_graph.passages import source_label
from mtrag_graph.prompts.build import format_conversation
from mtrag_graph.stages.accept import DEFAULT_MIN_SUPPORT

MIN_SUPPORT = DEFAULT_MIN_SUPPORT  # the grounding check's default (Context.grounding_min_support)


def grounding_sentences(
    answer: str,
    passages: Sequence[Mapping[str, Any]],
    conversation: str = "",
    min_support: float = MIN_SUPPORT,
    question: str = "",
) -> list[dict[str, Any]]:
    """Each sentence of ``answer`` with the passages that back it, in the grounding check's shape."""
    texts = [str(p.get("text", "")) for p in passages]
    return support_entries(
        sentence_support(answer, texts, conversation, min_support, question=question), passages
    )


def answer_citations(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The final answer's sentences with their passages: the grounding check's, else computed the same way.

    An abstention ("I don't know") or a clarifying question cites nothing; the answer written after the
    user replied to one (chat, the served API) is cited like any other. The grounding check cut the
    sentences it found unsupported from the answer: only the ones kept are listed.
    """
    clarification = state.get("clarification") or {}
    if state.get("abstain_reason") or (clarification.get("asked") and not clarification.get("reply")):
        return []
    grounding = state.get("grounding")
    kept = state.get("kept_passages") or []
    if isinstance(grounding, Mapping) and grounding.get("sentences") is not None:
        sentences = [dict(s) for s in grounding["sentences"] if s.get("supported")]
    else:
        sentences = grounding_sentences(
            str(state.get("answer") or ""),
            kept,
            format_conversation(state.get("history") or []),
            question=state.get("question") or "",
        )
    if any(p.get("file") for p in kept):  # passages of files: say where each cited one is
        for sentence in sentences:
            sentence["sources"] = [
                source_label(kept[i]) for i in sentence.get("passages") or [] if i < len(kept)
            ]
    return sentences


@dataclass(frozen=True)
class CitedSource:
    """The passage behind the marker ``[number]``: one of the answer's passages (``{}`` when the list
    the answer was cited with lacks it)."""

    number: int
    index: int  # the passage's place among the answer's passages
    passage: Mapping[str, Any]

    @property
    def document_id(self) -> str:
        return str(self.passage.get("document_id"))

    @property
    def title(self) -> str:
        return str(self.passage.get("title") or "")

    @property
    def label(self) -> str:
        return source_label(self.passage)

    def shown(self) -> dict[str, Any]:
        """What the page and the API show of the source: its number, the passage and its origin."""
        return {"number": self.number, **{k: v for k, v in self.passage.items() if k != "score"}}


@dataclass(frozen=True)
class CitedAnswer:
    """An answer as a reader sees it cited: the one view the page, the API and the terminal chat use.

    ``sentences`` are ``answer_citations``' rows, their ``passages`` indices into ``passages`` (a reply's
    ``citations`` and ``sources``). Passages
    are numbered in order of first citation by a supported sentence; ``text`` is the answer with markers
    ``[1]``, ``[2]`` after each sentence that cites, ``parts`` the same as ``{"text", "cites"}`` rows,
    ``sources`` the numbered passages. An answer that cites nothing is itself, in one part.
    """

    answer: str
    sentences: list[dict[str, Any]]
    passages: Sequence[Mapping[str, Any]]

    @classmethod
    def of_reply(cls, reply: Any) -> CitedAnswer:
        """The answer of a reply message (``nodes/finish.py``), cited as its metadata says."""
        metadata = (getattr(reply, "response_metadata", None) or {}).get("mtrag") or {}
        return cls(
            str(reply.content), list(metadata.get("citations") or []), list(metadata.get("sources") or [])
        )

    @property
    def parts(self) -> list[dict[str, Any]]:
        numbers = self._numbers()
        if not numbers:
            return [{"text": self.answer, "cites": []}]
        return [
            {"text": str(s["text"]).strip(), "cites": [numbers[i] for i in _cited(s)]} for s in self.sentences
        ]

    @property
    def text(self) -> str:
        parts = self.parts
        if len(parts) == 1 and not parts[0]["cites"]:
            return self.answer
        return " ".join(f"{p['text']} {''.join(f'[{n}]' for n in p['cites'])}".rstrip() for p in parts)

    @property
    def sources(self) -> list[CitedSource]:
        return [
            CitedSource(number, index, self.passages[index] if index < len(self.passages) else {})
            for index, number in self._numbers().items()
        ]

    def _numbers(self) -> dict[int, int]:
        """``{passage index: its number}``, numbered in order of first citation."""
        numbers: dict[int, int] = {}
        for sentence in self.sentences:
            for index in _cited(sentence):
                numbers.setdefault(index, len(numbers) + 1)
        return numbers


def _cited(sentence: Mapping[str, Any]) -> list[int]:
    """The passages a sentence cites: its backing passages when the sentence is supported."""
    return list(sentence.get("passages") or []) if sentence.get("supported", True) else []
