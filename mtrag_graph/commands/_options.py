"""The options the commands that run the graph share: the model and setting flags (from the stages'
registrations), concurrency, and the ``Context`` they build (every override goes through its
validation: a command never changes a built ``Context``)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from mtrag_graph.stages import choices_of, cli_settings


def _flag(setting: dataclasses.Field) -> str:
    flag = setting.metadata["flag"]
    return flag if isinstance(flag, str) else "--" + setting.name.replace("_", "-")


def _default(setting: dataclasses.Field) -> Any:
    if setting.default is not dataclasses.MISSING:
        return setting.default
    return setting.default_factory()  # type: ignore[misc,operator]


def add_preset_option(parser: argparse.ArgumentParser) -> None:
    """``--preset``: the pipeline preset the flags override (``answer``, ``chat``, ``serve`` alike; ``vllm``
    is the default pipeline on its two vLLM servers)."""
    parser.add_argument(
        "--preset",
        help="pipeline preset: a name in mtrag_graph/presets (ncl, the default; vllm: the default on vLLM) "
        "or a .json path",
    )


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Model and setting overrides shared by the commands that run the graph: ``--small-model`` and
    ``--large-model``, then every setting a stage offers as a flag (``stages.setting(flag=True)``)."""
    from mtrag_graph.context import Context

    group = parser.add_argument_group("models and settings (default: the offline bundled models)")
    group.add_argument(
        "--small-model", help="spec for the models that default to MTRAG_SMALL_MODEL (rewriting)"
    )
    group.add_argument(
        "--large-model", help="spec for the models that default to MTRAG_LARGE_MODEL (every other model)"
    )
    choices = choices_of(Context)
    for setting in cli_settings(Context):
        default = _default(setting)
        if isinstance(default, bool):
            kind: Any = boolean
        elif isinstance(default, int | float):
            kind = type(default)
        else:
            kind = str
        extra = f" (default {default})" if isinstance(default, int | float) and default != () else ""
        one_of = choices.get(setting.name)
        group.add_argument(
            _flag(setting), dest=setting.name, type=kind, metavar=setting.name.split("_")[-1].upper(),
            choices=[v for v in one_of.values if v is not None] if one_of and not one_of.many else None,
            help=setting.metadata["description"] + extra,
        )  # fmt: skip


def boolean(text: str) -> bool:
    """A yes/no setting's flag value: true/false, yes/no, on/off or 1/0 (any case)."""
    value = text.strip().lower()
    if value in ("true", "yes", "on", "1"):
        return True
    if value in ("false", "no", "off", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")


def at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_concurrency_options(parser: argparse.ArgumentParser, what: str = "tasks") -> None:
    """``--concurrency`` and ``--endpoint-concurrency`` (see mtrag_graph/runtime/concurrency.py)."""
    parser.add_argument(
        "--concurrency",
        type=at_least_one,
        default=1,
        metavar="N",
        help=f"{what} in flight at once (default 1); local llama.cpp models still run one call at a time",
    )
    parser.add_argument(
        "--endpoint-concurrency",
        type=at_least_one,
        metavar="M",
        help="requests in flight per remote endpoint (default: one per task in flight)",
    )


def overrides_from_args(args: argparse.Namespace) -> dict:
    """Context overrides from the model and setting flags (unset flags are None and ignored)."""
    from mtrag_graph import settings
    from mtrag_graph.context import Context

    overrides: dict[str, Any] = {s.name: getattr(args, s.name, None) for s in cli_settings(Context)}
    for setting in dataclasses.fields(Context):
        if not setting.metadata.get("model") or overrides.get(setting.name) is not None:
            continue
        if setting.default_factory is settings.small_model:
            overrides[setting.name] = args.small_model
        elif setting.default_factory is settings.large_model:
            overrides[setting.name] = args.large_model
    overrides["clarify"] = getattr(args, "clarify", None)  # unset: the preset decides
    return overrides


def context_from_args(args: argparse.Namespace, **overrides: Any):
    """The Context of ``--preset`` with the flags' overrides, then ``overrides`` (a command's own, e.g.
    chat's ``--corpus``): all of them validated as the Context is built. None values are ignored."""
    from mtrag_graph.context import Context

    given = {name: value for name, value in overrides.items() if value is not None}
    return Context.from_preset(getattr(args, "preset", None), **{**overrides_from_args(args), **given})
