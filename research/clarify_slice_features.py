"""A clarify decision fitted on real MTRAG-UN turns (tried, not shipped): the model-free rules' verdict and
a few numbers about the turn and its passages, combined by one logistic regression.

Out of fold it asked 14 of the tuning slice's 36 UNDERSPECIFIED turns (38.9%) at a 2% false-alarm
threshold, against 12 of 36 for the rules alone, and 4 of its 18 UNANSWERABLE turns: no gain worth a
product switch (benchmarks/results/clarify.md).

The rules of ``judging/underspecified.py`` were each written for a handful of turns; on the MTRAG-UN
tuning slice they ask 12 of its 36 UNDERSPECIFIED turns. What most of the rest share is plain in the
data: a definite phrase ("the famous basketball player", "the police department's", "the New York
county") that nothing in the conversation names, on a turn that leaves the conversation's subject (far
from the last exchange), over passages about several different things. ``slice_features`` measures those
(one embedding call: the question, the last exchange, the first passages), ``research/clarify_slice.py``
fits the weights and the threshold on the tuning slice and MTRAG's reference turns
(``-o`` writes them and their card).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.judging.clarify_no_passages import NoPassageModel, parse_no_passage_model
from mtrag_graph.judging.underspecified import _named
from mtrag_graph.text import STOPWORDS, stem, words

AGENT_CHARS = 600  # of the last agent turn embedded: its opening says what it is about
PASSAGE_CHARS = 500
MAX_PASSAGES = 8  # the first passages are the ones the turn would be answered from
MAX_TITLES = 10

FEATURES = (
    "rules",
    "first_turn",
    "new_phrase",
    "new_words",
    "cos_last_user",
    "cos_last_agent",
    "has_passages",
    "titles",
    "passage_spread",
    "best_passage_gap",
)

# a determiner and the words after it up to the next stopword or punctuation ("the famous basketball
# player", "the police department's", "this tricolor national flag")
_DETERMINER = re.compile(
    r"\b(?:the|this|that|these|those)\s+((?:[\w-]+(?:['\u2019]s)?\s*){1,4})", re.IGNORECASE
)


def new_phrases(history: Sequence[dict[str, str]], question: str) -> list[str]:
    """The question's determiner phrases none of whose content words the conversation said."""
    said = _named(history)
    found = []
    for match in _DETERMINER.finditer(question):
        content = []
        for word in words(match.group(1)):
            if word in STOPWORDS:
                break
            content.append(word)
        content = [w for w in content if len(w) > 2]
        if content and not any(stem(w) in said for w in content):
            found.append(" ".join(content))
    return found


def _new_words(history: Sequence[dict[str, str]], question: str) -> float:
    said = _named(history)
    content = [stem(w) for w in words(question) if w not in STOPWORDS and len(w) > 2]
    return sum(c not in said for c in content) / len(content) if content else 0.0


def _title(passage: Mapping[str, Any]) -> str:
    title = str(passage.get("title") or "").strip().lower()
    return title or str(passage.get("document_id") or "").split("-")[0]


def slice_features(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[Mapping[str, Any]] | None,
    embedder: Any,
    rules: bool,
) -> dict[str, float]:
    """The turn's inputs (``FEATURES``): ``rules`` is the model-free signals' decision; one ``embed`` call."""
    users = [t["text"] for t in history if t.get("speaker") == "user"][-1:]
    agents = [t["text"][:AGENT_CHARS] for t in history if t.get("speaker") == "agent"][-1:]
    shown = [str(p.get("text", ""))[:PASSAGE_CHARS] for p in (passages or [])[:MAX_PASSAGES]]
    vectors = np.asarray(embedder.embed([question, *users, *agents, *shown]), dtype=np.float64)
    q, at = vectors[0], 1
    features = {
        "rules": float(rules),
        "first_turn": float(not history),
        "new_phrase": float(bool(new_phrases(history, question))),
        "new_words": _new_words(history, question),
    }
    for name, present in (("cos_last_user", users), ("cos_last_agent", agents)):
        features[name] = float(vectors[at] @ q) if present else 0.0
        at += bool(present)
    passage_vectors = vectors[at:]
    features["has_passages"] = float(bool(shown))
    features["titles"] = min(len({_title(p) for p in passages or []}), MAX_TITLES) / MAX_TITLES
    if len(passage_vectors) >= 2:
        pairwise = passage_vectors @ passage_vectors.T
        upper = pairwise[np.triu_indices(len(passage_vectors), k=1)]
        features["passage_spread"] = float(1 - upper.mean())
        to_question = passage_vectors @ q
        features["best_passage_gap"] = float(
            to_question.max() - np.delete(to_question, to_question.argmax()).mean()
        )
    else:
        features["passage_spread"] = 0.0
        features["best_passage_gap"] = 0.0
    return features


def load_slice_model(path: str | Path) -> NoPassageModel:
    """A model written by ``research.clarify_slice -o``: the no-passage model's form over ``FEATURES``."""
    return parse_no_passage_model(
        Path(path).read_text(encoding="utf-8"), known=FEATURES, what="clarify slice model"
    )
