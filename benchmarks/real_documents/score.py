"""Scoring one answered task of the real-documents set, and the table over a run.

Verdicts, for each task:

- ``asked_back``: the graph asked a clarifying question instead of answering;
- ``idk``: it said it doesn't know (an abstention, or an answer that declines);
- ``right`` (answerable): every key fact is in the answer (one of its spellings, normalised), it does
  not open with the opposite of the reference's yes or no, not
  ``idk``, not ``asked_back``;
- ``invented``: an answer to an unanswerable question, or an answer to an answerable one that holds
  none of its key facts;
- ``cited_holds_fact`` (right answers): a passage the answer cites holds the facts (its text has
  them all, or it is at the gold place: the file and page, or the file and section);
- ``facts_verbatim`` (right answers): every number, name, option, path and command of the answer
  (``judging.decline.key_facts``) that the user did not say is found, as a whole word, in the text of a
  passage it cites; the ones that are not are in ``unquoted``;
- ``retrieved``: a kept passage holds the facts (the same test), whatever the answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from benchmarks.real_documents.data import Turn, Where
from mtrag_graph.judging.decline import holds_fact, key_facts
from mtrag_graph.passages import source_label
from mtrag_graph.text import declines

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "‐": "-", "‑": "-", "–": "-", "—": "-"})
_MARKUP = re.compile(r"[`*_\\¶]")
_SPACE = re.compile(r"\s+")
_PAGE_IN_ID = re.compile(r"#page=(\d+)&")  # a PDF passage's id: FILE#page=P&chunk=N (ingest/build.py)


def normalise(text: str) -> str:
    """Lower case, NFKC, plain quotes and dashes, no Markdown emphasis or code marks, one space."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return _SPACE.sub(" ", _MARKUP.sub(" ", text)).strip().lower()


def holds(text: str, spelling: str) -> bool:
    """Is ``spelling`` in ``text`` (both normalised), not as part of a longer word or number?"""
    needle = normalise(spelling)
    if not needle:
        return False
    # a number is not part of a longer one ("6" is not in "1.6.9"); a word not part of a longer word
    before = (r"(?<![\w.])" if needle[0].isdigit() else r"(?<!\w)") if needle[0].isalnum() else ""
    after = (r"(?!\w|\.\d)" if needle[-1].isdigit() else r"(?!\w)") if needle[-1].isalnum() else ""
    return re.search(before + re.escape(needle) + after, normalise(text)) is not None


def facts_found(text: str, key_facts: Sequence[Sequence[str]]) -> int:
    """How many of the key facts ``text`` holds (a fact: any one of its spellings)."""
    return sum(any(holds(text, spelling) for spelling in fact) for fact in key_facts)


def _section_key(text: str) -> str:
    return re.sub(r"[^\w]+", " ", normalise(text)).strip()


def at_gold_place(passage: Mapping[str, Any], where: Where | None) -> bool:
    """Is the passage in the gold file, on its page (PDF) or under its section heading?"""
    if where is None:
        return False
    source = str(passage.get("source") or str(passage.get("document_id") or "").split("#")[0])
    if PurePosixPath(source).name != where.file:
        return False
    if where.page is not None:
        page = passage.get("page")
        if page is None:  # a kept passage not found in the index: its id names the page
            match = _PAGE_IN_ID.search(str(passage.get("document_id") or ""))
            page = int(match[1]) if match else None
        return page == where.page
    if where.section is not None:
        return _section_key(str(passage.get("section") or "")) == _section_key(where.section)
    return False


def passage_holds(passage: Mapping[str, Any], turn: Turn) -> bool:
    text = str(passage.get("text") or "")
    return facts_found(text, turn.key_facts) == len(turn.key_facts) or at_gold_place(passage, turn.where)


@dataclass(frozen=True)
class Verdict:
    task_id: str
    follow_up: bool
    answerable: bool
    howto: bool
    asked_back: bool
    idk: bool
    right: bool
    invented: bool
    cited_holds_fact: bool | None  # None: not a right answer
    # right answers: every number, name, option, path and command of the answer is found verbatim in a
    # passage it cites (None: not a right answer); the ones that are not, in ``unquoted``
    facts_verbatim: bool | None
    retrieved: bool | None  # None: unanswerable
    seconds: float
    first_shown_seconds: float | None
    answer: str
    cited: tuple[str, ...]
    unquoted: tuple[str, ...] = ()


def kept_passages(
    record: Mapping[str, Any], passages: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The kept passages of a prediction (its ``contexts``), with their source, page and section from the
    index's passages when the id is found there."""
    kept = []
    for context in record.get("contexts") or []:
        extra = passages.get(str(context.get("document_id")), {})
        kept.append({**extra, **context})
    return kept


_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def contradicts(answer: str, reference: str) -> bool:
    """Does the answer open with "yes" where the reference opens with "no", or the other way round?"""
    said, meant = _YES_NO.match(answer), _YES_NO.match(reference)
    if said is None or meant is None:
        return False
    return said.group(1).lower() != meant.group(1).lower()


def score_record(
    record: Mapping[str, Any], turn: Turn, follow_up: bool, passages: Mapping[str, Mapping[str, Any]]
) -> Verdict:
    """The verdicts of one prediction line (``mtrag-graph answer``'s output) against its turn."""
    route = record.get("route") or {}
    prediction = (record.get("predictions") or [{}])[0]
    answer = str(prediction.get("text") or "")
    clarification = route.get("clarification") or {}
    asked_back = bool(clarification.get("asked")) and not clarification.get("reply")
    idk = not asked_back and (bool(route.get("abstained")) or declines(answer))
    answered = not asked_back and not idk
    found = facts_found(answer, turn.key_facts) if turn.answerable else 0
    # a yes or no that says the opposite of the reference's is wrong, whatever else the answer quotes
    right = (
        turn.answerable and answered and found == len(turn.key_facts) and not contradicts(answer, turn.answer)
    )
    invented = answered and (not turn.answerable or found == 0)
    kept = kept_passages(record, passages)
    cited_indices = sorted({i for s in prediction.get("citations") or [] for i in s.get("passages") or []})
    cited = [kept[i] for i in cited_indices if i < len(kept)]
    said = "\n".join(
        str(t.get("text") or "") for t in record.get("input") or [] if t.get("speaker") == "user"
    )
    unquoted = tuple(
        sorted(
            f
            for f in key_facts(answer)
            if not holds_fact(said, f) and not any(holds_fact(str(p.get("text") or ""), f) for p in cited)
        )
    )
    return Verdict(
        task_id=str(record.get("task_id")),
        follow_up=follow_up,
        answerable=turn.answerable,
        howto=turn.howto,
        asked_back=asked_back,
        idk=idk,
        right=right,
        invented=invented,
        cited_holds_fact=any(passage_holds(p, turn) for p in cited) if right else None,
        facts_verbatim=not unquoted if right else None,
        retrieved=any(passage_holds(p, turn) for p in kept) if turn.answerable else None,
        seconds=float(route.get("seconds") or 0.0),
        first_shown_seconds=route.get("first_shown_seconds"),
        answer=answer,
        cited=tuple(source_label(p) for p in cited),
        unquoted=unquoted if right else (),
    )


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def _median(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    middle = len(ordered) // 2
    value = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return f"{value:.1f}"


GROUPS = (
    ("first turns", lambda v: not v.follow_up),
    ("follow-ups", lambda v: v.follow_up),
    ("all", lambda v: True),
)


def table(verdicts: Iterable[Verdict]) -> str:
    """The Markdown tables: answerable and unanswerable questions apart, first turns and follow-ups apart."""
    verdicts = list(verdicts)
    lines = [
        "| answerable | tasks | right | cited page/section holds the fact | its facts verbatim in a cited passage "
        "| passage with the fact kept | I don't know | asked back | invented |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [*GROUPS[:2], ("how do I ...", lambda v: v.howto), GROUPS[2]]
    for name, keep in groups:
        rows = [v for v in verdicts if v.answerable and keep(v)]
        right = [v for v in rows if v.right]
        lines.append(
            f"| {name} | {len(rows)} | {_rate(len(right), len(rows))} "
            f"| {_rate(sum(bool(v.cited_holds_fact) for v in right), len(right))} "
            f"| {_rate(sum(bool(v.facts_verbatim) for v in right), len(right))} "
            f"| {_rate(sum(bool(v.retrieved) for v in rows), len(rows))} "
            f"| {_rate(sum(v.idk for v in rows), len(rows))} | {_rate(sum(v.asked_back for v in rows), len(rows))} "
            f"| {_rate(sum(v.invented for v in rows), len(rows))} |"
        )
    lines += [
        "",
        "| unanswerable | tasks | declined (I don't know) | asked back | invented (answered) |",
        "|---|---|---|---|---|",
    ]
    for name, keep in GROUPS:
        rows = [v for v in verdicts if not v.answerable and keep(v)]
        lines.append(
            f"| {name} | {len(rows)} | {_rate(sum(v.idk for v in rows), len(rows))} "
            f"| {_rate(sum(v.asked_back for v in rows), len(rows))} | {_rate(sum(v.invented for v in rows), len(rows))} |"
        )
    shown = [v.first_shown_seconds for v in verdicts if v.first_shown_seconds is not None]
    lines += [
        "",
        "| seconds per question | median | max |",
        "|---|---|---|",
        f"| whole answer | {_median([v.seconds for v in verdicts])} | {max((v.seconds for v in verdicts), default=0):.1f} |",
        f"| first shown text | {_median(shown)} | {max(shown, default=0):.1f} |",
    ]
    return "\n".join(lines)
