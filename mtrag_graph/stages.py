"""The graph's stages: which nodes each one runs, what the chat says while it runs, and its settings.

A stage is a step of the pipeline (rewrite, relation, history, retrieval, rerank, gate, generate, check,
ground, clarify, candidates) plus ``common`` for what several stages share (the "I don't know" text,
the grounded prompt's frame, parse retries). Every ``Context`` setting is declared with ``setting(...)``,
which names its stage and describes it; the description reaches LangGraph's context schema
(``graph.get_context_jsonschema()``, what LangGraph Studio shows) and the CLI's ``--help``.

Everything that must know "all the stages" is derived from these registrations, never kept as a second
list: the settings a decision reads (``settings_of``: the decision benchmark's cache key), the models a
run calls (``model_settings``), the status line of a node (``label_of``), and the CLI's setting flags
(``cli_settings``). A new stage registers itself with ``register(Stage(...))`` from its own module and
declares its settings in a ``@dataclass(kw_only=True)`` mixin of ``setting`` fields that ``Context``
inherits (docs/extending.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import MISSING, dataclass
from typing import Any


@dataclass(frozen=True)
class Stage:
    """One stage: its nodes, the status line shown while they run, and the other stages it reads from."""

    name: str
    description: str
    nodes: tuple[str, ...] = ()
    label: str | None = None  # the chat's and the served page's status line while its nodes run
    # other stages whose settings this stage's decision also reads (a cache keyed on this stage must
    # include theirs); ``common`` is always read
    reads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a stage name is an identifier, not '{self.name}'")


STAGES: dict[str, Stage] = {}


def register(stage: Stage) -> Stage:
    """Add ``stage`` to the registry (once per name; the same registration again is a no-op)."""
    known = STAGES.get(stage.name)
    if known is not None and known != stage:
        raise ValueError(f"a different stage named '{stage.name}' is already registered")
    taken = {node: s.name for s in STAGES.values() if s.name != stage.name for node in s.nodes}
    clash = sorted(node for node in stage.nodes if node in taken)
    if clash:
        raise ValueError(f"stage '{stage.name}': nodes {clash} already belong to another stage")
    STAGES[stage.name] = stage
    return stage


def setting(
    default: Any = MISSING,
    *,
    stage: str,
    description: str,
    factory: Any = MISSING,
    model: bool = False,
    flag: bool | str = False,
) -> Any:
    """A ``Context`` field of ``stage``: ``description`` is what Studio and ``--help`` show.

    ``model``: the setting names a model the stage calls (a run's models are these settings' values).
    ``flag``: the CLI's ``answer`` / ``chat`` / ``bench`` offer it as ``--name-with-dashes`` (or as the
    flag given, e.g. ``"--index"``).
    """
    metadata = {"stage": stage, "description": description, "model": model, "flag": flag}
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _settings(context_type: type) -> Iterable[dataclasses.Field]:
    return dataclasses.fields(context_type)


def stage_of(field: dataclasses.Field) -> str:
    stage = field.metadata.get("stage")
    if stage is None:
        raise TypeError(f"Context field '{field.name}' is not declared with stages.setting(stage=...)")
    return str(stage)


def settings_of(context_type: type, *stages: str) -> tuple[str, ...]:
    """The settings of ``stages``, the stages those read, and ``common``: what their decision reads."""
    wanted = {"common"}
    pending = list(stages)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in STAGES:
            raise ValueError(f"unknown stage '{name}': use one of {', '.join(sorted(STAGES))}")
        wanted.add(name)
        pending.extend(STAGES[name].reads)
    return tuple(f.name for f in _settings(context_type) if stage_of(f) in wanted)


def model_settings(context_type: type, *stages: str) -> tuple[str, ...]:
    """The settings that name a model (of ``stages``; all stages when none is given)."""
    return tuple(
        f.name
        for f in _settings(context_type)
        if f.metadata.get("model") and (not stages or stage_of(f) in stages)
    )


def cli_settings(context_type: type) -> tuple[dataclasses.Field, ...]:
    """The settings the commands that run the graph offer as flags."""
    return tuple(f for f in _settings(context_type) if f.metadata.get("flag"))


def stage_of_node(node: str) -> Stage | None:
    for stage in STAGES.values():
        if node in stage.nodes:
            return stage
    return None


def label_of(node: str) -> str | None:
    """What the status line says while ``node`` runs (None: nothing to say)."""
    stage = stage_of_node(node)
    return stage.label if stage is not None else None


for _stage in (
    Stage("common", "Shared by several stages: the abstention text, the grounded prompt's frame, "
          "parse retries, the prompt budget, the embedder.", nodes=("load_task", "evidence_precheck", "abstain", "finish")),
    Stage("clarify", "Asks back when the turn is underspecified (an unresolved reference, passages about "
          "several things).", nodes=("clarify", "ask_user"), label="checking the question", reads=("rewrite",)),
    Stage("rewrite", "Standalone rewrites of the last question.", nodes=("global_rewrite", "local_rewrite"),
          label="rewriting the question"),
    Stage("relation", "Classifies how the question relates to the previous exchange (four classes).",
          nodes=("classify_relation",), label="reading the conversation", reads=("rewrite",)),
    Stage("history", "Selects the history the answer may lean on, by relation class.",
          nodes=("select_history",), label="reading the conversation", reads=("relation",)),
    Stage("retrieval", "Hybrid BM25 + dense search in full-RAG mode.", nodes=("retrieve",),
          label="retrieving passages"),
    Stage("rerank", "Scores the passages against the standalone question and keeps the top k.",
          nodes=("rerank",), label="checking the passages"),
    Stage("gate", "Decides whether the kept passages hold the answer.", nodes=("answerability_gate",),
          label="checking the passages"),
    Stage("generate", "Writes the answer from the kept passages.", nodes=("generate",),
          label="writing the answer"),
    Stage("check", "Cleans the answer and rejects bad ones (one retry, then abstain).",
          nodes=("check_answer",), label="checking the answer"),
    Stage("ground", "Drops answer sentences the passages do not back.", nodes=("ground_answer",),
          label="checking the answer", reads=("generate",)),
    Stage("candidates", "The answer ensemble: several candidates, and a judge that picks one.",
          nodes=("generate_candidate", "judge_candidates"), label="writing candidate answers",
          reads=("generate",)),
):  # fmt: skip
    register(_stage)
