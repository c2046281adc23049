"""The graph's stages: which nodes each one runs, what the chat says while it runs, and its settings.

A stage is a step of the pipeline (rewrite, relation, history, retrieval, rerank, gate, generate, check,
ground, clarify, candidates) plus ``common`` for what several stages share (the "I don't know" text,
the grounded prompt's frame, parse retries). Each built-in stage is a module of this package
(``stages/gate.py``, ...): its ``register(Stage(...))`` and a ``@dataclass(kw_only=True)`` mixin of its
settings, each declared with ``setting(...)``, which names its stage and describes it. ``Context``
(``context.py``) inherits every stage's mixin: adding a setting to a stage touches that stage's module
only. A description reaches LangGraph's context schema (``graph.get_context_jsonschema()``, what
LangGraph Studio shows) and the CLI's ``--help``; a setting with a fixed set of values is typed as a
``Literal``, so the schema offers its choices and ``check_choices`` refuses any other value.

Everything that must know "all the stages" is derived from these registrations, never kept as a second
list: the settings a decision reads (``settings_of``: the decision benchmark's cache key), the models a
run calls (``model_settings``), the status line of a node (``label_of``), and the CLI's setting flags
(``cli_settings``). A stage of your own registers itself the same way from its own module, which may
hold its node too when it imports nothing of ``context.py`` (docs/extending.md).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Iterable
from dataclasses import MISSING, dataclass
from typing import Any, Literal, Union


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


@dataclass(frozen=True)
class Choices:
    """What a choice setting may hold: one of ``values``, or with ``many`` a tuple of them."""

    values: tuple[Any, ...]
    many: bool = False

    def unknown(self, value: Any) -> list[Any]:
        items = value if self.many and isinstance(value, tuple | list) else [value]
        return [item for item in items if item not in self.values]


@functools.cache
def choices_of(context_type: type) -> dict[str, Choices]:
    """The choice settings of ``context_type``: those typed ``Literal[...]`` (``| None``: None is a
    choice too) or ``tuple[Literal[...], ...]`` (each item is one)."""
    hints = typing.get_type_hints(context_type)
    found = {}
    for field in dataclasses.fields(context_type):
        hint, many = hints[field.name], False
        if typing.get_origin(hint) is tuple and typing.get_args(hint)[1:] == (Ellipsis,):
            hint, many = typing.get_args(hint)[0], True
        options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
        values = tuple(v for o in options if typing.get_origin(o) is Literal for v in typing.get_args(o))
        if values:
            found[field.name] = Choices(values + ((None,) if type(None) in options else ()), many)
    return found


def check_choices(context: Any) -> None:
    """Raise ``ValueError`` naming the setting when a choice setting holds a value not among its choices."""
    context_type: type = type(context)
    for name, choices in choices_of(context_type).items():
        unknown = choices.unknown(getattr(context, name))
        if unknown:
            known = ", ".join(repr(v) for v in choices.values)
            raise ValueError(f"{name}: {', '.join(map(repr, unknown))} is not one of {known}")
