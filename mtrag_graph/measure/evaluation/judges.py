"""LLM judges of the MTRAG benchmark (RB_llm, RL_F, IDK, clarification), their parsers, and a verdict cache.

Judge output is untrusted: every parser takes messy replies (prose around the answer, markdown,
JSON, code fences) and returns None or a documented fallback rather than raising. Verdicts are
cached on disk in SQLite (WAL, so several processes can share it), keyed by judge, prompt version,
verdict kind and inputs, so re-running a report costs no model calls.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from mtrag_graph.measure.evaluation import prompts
from mtrag_graph.models.bundled import cache_dir
from mtrag_graph.models.calls import CallLog, ask_choice, constraint_options, invoke_text, parse_choice
from mtrag_graph.models.factory import ModelSpec, get_chat_model, model_name
from mtrag_graph.text import sentences, words

RATING_CHOICES = tuple(f"Rating: [[{n}]]" for n in range(1, 11))
RATING_FALLBACK = 0.5
IDK_VALUES = {"declines": 1.0, "answers": 0.0, "partial": 0.5}
CLARIFY_VALUES = {"yes": 1.0, "no": 0.0}
OFFICIAL_JUDGES = ("gpt-4o-mini", "gpt-4o-mini-2024-07-18")

_BRACKETED = re.compile(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]")
_LABELLED = re.compile(r"rating[\s*:=]*(?:is[\s*:]*)?\[?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|statement\s*\d*\s*:)\s*", re.IGNORECASE)


# ---------------------------------------------------------------- parsers


def parse_rating(text: str) -> float | None:
    """The 1-10 rating as a score in [0.1, 1] (last ``[[n]]``, else ``Rating: n``); None if absent/invalid."""
    found = _BRACKETED.findall(text) or _LABELLED.findall(text)
    if not found:
        return None
    value = float(found[-1])
    return value / 10 if 1 <= value <= 10 else None


def rating_score(text: str) -> float:
    """RB_llm of one reply: the parsed rating, or 0.5 when nothing parses or the value is out of range."""
    score = parse_rating(text)
    return RATING_FALLBACK if score is None else score


def parse_verdict(text: str, choices: tuple[str, ...]) -> str | None:
    """One of ``choices`` named by a reply: exactly, as ``{"answer": ...}``, as its first word, or as the
    first choice word after an ``Answer:``/``Verdict:`` label or anywhere in the reply; else None."""
    value = parse_choice(text, choices)
    if value is not None:
        return value
    lowered = text.lower()
    label = re.search(r"(?:answer|verdict|judgement|judgment)\s*[:=]\s*\**\s*([a-z]+)", lowered)
    if label and label.group(1) in choices:
        return label.group(1)
    return next((w for w in words(lowered) if w in choices), None)


def parse_statements(text: str, limit: int | None = None) -> list[str]:
    """Statements from a reply: JSON ``{"statements": [...]}`` or a JSON list (fenced or not), else one per
    bulleted / numbered line. Empty list when nothing usable is there."""
    body = text.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    statements: list[str] | None = None
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = body.find(opener), body.rfind(closer)
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(body[start : end + 1])
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            data = data.get("statements", next((v for v in data.values() if isinstance(v, list)), None))
        if isinstance(data, list):
            statements = [str(s).strip() for s in data if isinstance(s, str | int | float) and str(s).strip()]
            break
    if statements is None:
        statements = []
        for line in body.splitlines():
            line = _BULLET.sub("", line).strip().strip('"').strip()
            if line and not line.endswith(":") and not line.startswith(("{", "}", "[", "]")):
                statements.append(line)
    return statements[:limit] if limit else statements


# ---------------------------------------------------------------- cache


class VerdictCache:
    """Judge verdicts on disk (SQLite in WAL mode: atomic writes, safe with several processes)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )

    @staticmethod
    def key(judge: str, kind: str, inputs: dict[str, Any]) -> str:
        payload = json.dumps(
            [prompts.JUDGE_PROMPT_VERSION, judge, kind, inputs], sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM verdicts WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts (key, value) VALUES (?, ?)", (key, json.dumps(value))
            )

    def close(self) -> None:
        self._db.close()


def default_cache_path() -> Path:
    return cache_dir() / "judge-cache" / "verdicts.sqlite"


# ---------------------------------------------------------------- judge


@dataclass(kw_only=True)
class JudgeSettings:
    """How much of a task the judge reads (short prompts keep a small local judge fast)."""

    max_statements: int = 8
    passage_chars: int = 2000
    history_turns: int = 4
    turn_chars: int = 500
    statement_tokens: int = 160
    # "judge": the judge lists the statements (RAGAS); "sentences": the response's sentences, no model
    # call (much cheaper on a CPU, where generating the list dominates the cost of RL_F)
    statements_from: str = "judge"


class Judge:
    """The benchmark's LLM judges over any chat model the model factory builds."""

    def __init__(
        self, spec: ModelSpec, cache: VerdictCache | None = None, settings: JudgeSettings | None = None
    ):
        self.spec = spec
        self.name = model_name(spec)
        self.cache = cache
        self.settings = settings or JudgeSettings()
        self.log = CallLog(node="evaluate.judge")
        self._model = None

    @property
    def model(self):
        if self._model is None:
            self._model = get_chat_model(self.spec)
        return self._model

    @property
    def is_official(self) -> bool:
        return self.name.split(":")[-1].split("@")[0] in OFFICIAL_JUDGES

    def _cached(self, kind: str, inputs: dict[str, Any], compute) -> dict[str, Any]:
        key = VerdictCache.key(self.name, kind, inputs) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)) is not None:
            return {**hit, "cached": True}
        value = compute()
        if self.cache:
            self.cache.put(key, value)
        return {**value, "cached": False}

    def _messages(self, text: str) -> list:
        return [SystemMessage(content=prompts.JUDGE_SYSTEM), HumanMessage(content=text)]

    def _documents(self, passages: list[str]) -> str:
        limit = self.settings.passage_chars
        if not passages:
            return prompts.NO_DOCUMENTS
        return "\n\n".join(f"[{i}] {p[:limit]}" for i, p in enumerate(passages, start=1))

    def _history(self, history: list[tuple[str, str]]) -> str:
        turns = history[-self.settings.history_turns :] if self.settings.history_turns else []
        if not turns:
            return "(none)"
        names = {"user": "User", "agent": "Assistant"}
        return "\n".join(f"{names.get(s, s)}: {t[: self.settings.turn_chars]}" for s, t in turns)

    def _choice(self, kind: str, template: str, values: dict[str, float], **fields: str) -> dict[str, Any]:
        choices = tuple(values)

        def compute() -> dict[str, Any]:
            verdict, raws = ask_choice(
                self.model, self._messages(template.format(**fields)), choices, self.log
            )
            if verdict is None:
                verdict = parse_verdict(raws[-1], choices) if raws else None
            return {"verdict": verdict, "value": values.get(verdict) if verdict else None, "raw": raws[-1:]}

        return self._cached(kind, fields, compute)

    def idk(self, question: str, response: str) -> dict[str, Any]:
        """IDK verdict: value 1 (says it cannot answer), 0, or 0.5 (partial); None without a verdict."""
        return self._choice("idk", prompts.IDK, IDK_VALUES, question=question, response=response)

    def clarify(self, question: str, response: str) -> dict[str, Any]:
        """Clarification verdict: value 1 when the response asks the user to clarify, else 0."""
        if "?" not in response:  # a clarification asks something; small judges say "yes" to statements
            return {"verdict": "no", "value": 0.0, "raw": [], "rule": "no question mark", "cached": False}
        return self._choice("clarify", prompts.CLARIFY, CLARIFY_VALUES, question=question, response=response)

    def rb_llm(
        self,
        passages: list[str],
        history: list[tuple[str, str]],
        question: str,
        reference: str,
        response: str,
    ) -> dict[str, Any]:
        """RB_llm: the judge's 1-10 rating / 10 (0.5 when the reply does not parse)."""
        fields = {
            "passages": self._documents(passages),
            "history": self._history(history),
            "question": question,
            "reference": reference,
            "response": response,
        }

        def compute() -> dict[str, Any]:
            options = constraint_options(self.model, choices=RATING_CHOICES)
            reply = invoke_text(
                self.model,
                self._messages(prompts.RB_LLM.format(**fields)),
                self.log,
                max_tokens=16 if options else 512,
                **options,
            )
            raw = str(reply.content)
            return {"score": rating_score(raw), "parsed": parse_rating(raw) is not None, "raw": raw}

        return self._cached("rb_llm", fields, compute)

    def statements(self, question: str, response: str) -> list[str]:
        """The response split into atomic statements (at most ``max_statements``)."""
        if self.settings.statements_from == "sentences":
            return sentences(response)[: self.settings.max_statements]
        fields = {
            "question": question,
            "response": response,
            "max_statements": str(self.settings.max_statements),
        }

        def compute() -> dict[str, Any]:
            # plain numbered lines: llama.cpp's JSON-schema grammar is slow on CPU, and lines parse robustly
            messages = self._messages(prompts.RL_F_STATEMENTS.format(**fields))
            raw = str(
                invoke_text(self.model, messages, self.log, max_tokens=self.settings.statement_tokens).content
            )
            statements = list(dict.fromkeys(parse_statements(raw, self.settings.max_statements)))
            if not statements:
                statements = sentences(response)[: self.settings.max_statements]
            return {"statements": statements, "raw": raw}

        return self._cached("rl_f_statements", fields, compute)["statements"]

    def rl_f(self, passages: list[str], question: str, response: str) -> dict[str, Any]:
        """RL_F (RAGAS-style faithfulness): supported statements / statements; None when there are none."""
        statements = self.statements(question, response)
        if not statements:
            return {"score": None, "statements": [], "verdicts": []}
        if not passages:
            return {"score": 0.0, "statements": statements, "verdicts": ["no"] * len(statements)}
        documents = self._documents(passages)
        verdicts = [
            self._choice(
                "rl_f_verdict", prompts.RL_F_VERDICT, CLARIFY_VALUES, passages=documents, statement=s
            )
            for s in statements
        ]
        supported = sum(1 for v in verdicts if v["verdict"] == "yes")
        return {
            "score": supported / len(statements),
            "statements": statements,
            "verdicts": [v["verdict"] for v in verdicts],
        }
