"""One default, settings by stage: what every surface derives from the stage registrations."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from mtrag_graph.cli import build_parser
from mtrag_graph.commands._options import context_from_args
from mtrag_graph.context import Context
from mtrag_graph.graph import NODES, build_graph
from mtrag_graph.measure.decisions import run, sets
from mtrag_graph.presets import preset_names
from mtrag_graph.runtime.batch import models_of
from mtrag_graph.stages import STAGES, choices_of, label_of, model_settings, settings_of, stage_of
from mtrag_graph.testing import fake_context
from research.settings_audit import audit
from tests.conftest import REPO
from tests.measure.decisions.conftest import TASKS, fake_retriever

FIELDS = tuple(f.name for f in dataclasses.fields(Context))


def test_the_default_context_is_the_default_preset():
    assert Context() == Context.from_preset("ncl") == Context.from_preset()
    assert Context().clarify


def test_every_preset_loads_and_names_only_differences_from_the_default():
    for name in preset_names():
        context = Context.from_preset(name)
        assert isinstance(context, Context)


def test_every_setting_is_described_in_the_graph_context_schema():
    schema = build_graph().get_context_jsonschema()
    assert set(schema["properties"]) == set(FIELDS)
    undescribed = [name for name, spec in schema["properties"].items() if not spec.get("description")]
    assert undescribed == []


def test_every_setting_belongs_to_a_registered_stage_and_every_node_to_a_stage():
    assert {stage_of(f) for f in dataclasses.fields(Context)} <= set(STAGES)
    names = {getattr(node, "__name__", "") for node in NODES}
    owned = {node for stage in STAGES.values() for node in stage.nodes}
    assert names <= owned


def test_status_lines_come_from_the_stages():
    assert label_of("global_rewrite") == "rewriting the question"
    assert label_of("retrieve") == "retrieving passages"
    assert label_of("generate") == "writing the answer"
    assert label_of("load_task") is None


def test_the_models_of_a_run_come_from_the_model_settings():
    context = Context(clarify=False)
    assert models_of(context) == [getattr(context, name) for name in model_settings(Context)
                                  if stage_of(_field(name)) not in ("clarify", "candidates")]  # fmt: skip
    assert len(models_of(Context())) == len(models_of(context)) + 1  # clarify's model when it is on


def test_the_cli_offers_every_flag_setting_with_its_description(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["answer", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for setting in dataclasses.fields(Context):
        if setting.metadata.get("flag"):
            assert " ".join(setting.metadata["description"].split())[:40] in text


def test_the_large_model_flag_sets_every_model_that_defaults_to_the_large_model():
    args = build_parser().parse_args(["answer", "t.jsonl", "-o", "o.jsonl", "--large-model", "scripted:x"])
    context = args.func.__globals__["context_from_args"](args)
    assert context.generate_model == context.gate_model == context.judge_model == "scripted:x"
    assert context.rewrite_model != "scripted:x"


def _field(name: str) -> dataclasses.Field:
    return next(f for f in dataclasses.fields(Context) if f.name == name)


class ReadRecorder:
    """Records which Context settings a decision reads."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.building = 0  # reads while a Context is built (its validation) are no decision's

    def context(self, base: Context) -> Context:
        recorder = self

        class Recording(type(base)):  # type: ignore[misc]
            def __init__(self, **settings: Any) -> None:
                recorder.building += 1
                try:
                    super().__init__(**settings)
                finally:
                    recorder.building -= 1

            def __getattribute__(self, name: str) -> Any:
                if name in FIELDS and not recorder.building:
                    recorder.read.add(name)
                return super().__getattribute__(name)

        return Recording(**{f: getattr(base, f) for f in FIELDS})


def _items(decision: str) -> list[dict[str, Any]]:
    tasks = [dict(t) for t in TASKS]
    if decision in ("gate", "evidence"):
        return sets.gate_items(tasks, fake_retriever)
    if decision == "clarify":
        return sets.clarify_items(tasks)
    return sets.relation_items(tasks)


@pytest.mark.parametrize("decision", sorted(run.DECISIONS))
def test_every_setting_a_decision_reads_is_in_its_cache_key(decision, monkeypatch):
    recorder = ReadRecorder()
    replace = dataclasses.replace

    def copying(obj: Any, **changes: Any) -> Any:  # a copy reads every field: not the decision's reads
        recorder.building += 1
        try:
            return replace(obj, **changes)
        finally:
            recorder.building -= 1

    monkeypatch.setattr(run.dataclasses, "replace", copying)
    context = recorder.context(
        fake_context(grounding="facts", generate=["I don't know.", "Bees do a round dance."], clarify=True)
    )
    for item in _items(decision)[:4]:
        run.DECISIONS[decision](item, context)
    assert recorder.read, "the decision read no setting: the recorder is not working"
    assert recorder.read <= set(run.READS[decision]), sorted(recorder.read - set(run.READS[decision]))


@pytest.mark.parametrize("decision", sorted(run.DECISIONS))
def test_changing_any_setting_a_decision_reads_changes_its_cache_key(decision):
    base = Context()
    for name in run.READS[decision]:
        value = getattr(base, name)
        if isinstance(value, bool):
            changed: Any = not value
        elif isinstance(value, int | float):
            changed = value + 1
        elif isinstance(value, str):
            changed = value + " (changed)"
        elif value is None:
            changed = 0.5
        else:
            continue  # tuples, dicts and instances enter the key by their repr, as changed values do
        try:
            other = dataclasses.replace(base, **{name: changed})
        except ValueError:  # a setting with a fixed set of values
            continue
        assert run.fingerprint(other, decision) != run.fingerprint(base, decision), name


def test_every_stage_has_its_settings_in_some_decision_key_or_none_to_key():
    keyed = {stage_of(_field(name)) for names in run.READS.values() for name in names}
    assert {"gate", "generate", "accept", "candidates", "clarify", "relation", "common"} <= keyed
    assert settings_of(Context, "clarify") == run.READS["clarify"]


def test_no_module_of_the_package_lists_context_fields_by_hand():
    """A tuple or list literal of three or more setting names outside the stage registrations."""
    offending = []
    for path in sorted((REPO / "mtrag_graph").rglob("*.py")):
        if path.name == "context.py" or path.parent.name == "stages":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                names = [
                    e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                if sum(1 for n in names if n in FIELDS and "_" in n) >= 3:
                    offending.append(f"{Path(path).relative_to(REPO)}:{node.lineno} {names}")
    assert offending == []


def test_the_context_schema_offers_the_choices_of_every_choice_setting():
    schema = build_graph().get_context_jsonschema()["properties"]
    choices = choices_of(Context)
    # the settings whose descriptions name their values: each is typed as a choice
    assert {"answer_question", "rewrite_retry_on", "grounding", "judge_method",
            "first_draft", "clarify_signals"} <= set(choices)  # fmt: skip
    for name, one_of in choices.items():
        offered = schema[name]["items"]["enum"] if one_of.many else schema[name]["enum"]
        assert offered == [v for v in one_of.values if v is not None], name
        assert all(
            v in one_of.values
            for v in (getattr(Context(), name) if one_of.many else [getattr(Context(), name)])
        )


@pytest.mark.parametrize("name", sorted(choices_of(Context)))
def test_a_value_outside_a_setting_s_choices_is_refused_naming_the_setting(name):
    one_of = choices_of(Context)[name]
    with pytest.raises(ValueError, match=f"{name}: 'nonsense' is not one of"):
        Context(**{name: ("nonsense",) if one_of.many else "nonsense"})
    with pytest.raises(ValueError, match=name):
        Context.from_overrides(**{name: ("nonsense",) if one_of.many else "nonsense"})


ENVIRONMENT = {"environ", "environb", "getenv", "putenv", "unsetenv"}
# issue 38 moves the served command's own variables (MTRAG_API_KEYS, the uvicorn worker's arguments)
NOT_YET_MOVED: set[str] = set()


def test_no_module_but_settings_touches_the_environment():
    """Every environment variable is read (and every offline flag set) in ``settings.py``, where it is listed."""
    touching = []
    for path in sorted((REPO / "mtrag_graph").rglob("*.py")):
        name = str(path.relative_to(REPO))
        if name == "mtrag_graph/settings.py" or name in NOT_YET_MOVED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            attribute = isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT
            imported = isinstance(node, ast.ImportFrom) and node.module == "os"
            if attribute or (imported and {a.name for a in node.names} & ENVIRONMENT):
                touching.append(f"{name}:{node.lineno}")
    assert touching == []


def test_every_variable_settings_reads_is_listed_in_its_table():
    text = (REPO / "mtrag_graph" / "settings.py").read_text(encoding="utf-8")
    table = text.split('"""')[1]
    read = set(re.findall(r'_(?:text|flag)\("([A-Z_]+)"\)', text)) | set(
        re.findall(r'setdefault\("([A-Z_]+)"', text)
    )
    assert read and {name for name in read if f"``{name}``" not in table} == set()


def test_a_command_s_own_overrides_go_through_the_context_s_validation():
    args = build_parser().parse_args(["chat", "--corpus", "indexes/docs", "--no-clarify"])
    context = context_from_args(args, clarify=not args.no_clarify, index_dir=args.corpus)
    assert (context.clarify, context.index_dir) == (False, "indexes/docs")
    assert context_from_args(args, index_dir=None).index_dir == Context().index_dir  # None: not given
    with pytest.raises(ValueError, match="grounding: 'loose' is not one of"):
        context_from_args(args, grounding="loose")


def test_a_setting_that_takes_several_choices_refuses_a_single_string():
    with pytest.raises(
        ValueError,
        match="clarify_signals: a tuple of 'bare', 'orphan', 'pointer', 'kinds', 'rule'.*not 'rule'",
    ):
        Context(clarify_signals="rule")
    assert Context(clarify_signals=["rule"]).clarify_signals == ["rule"]  # a preset's JSON list is accepted


def test_context_keeps_at_most_70_settings_and_none_that_only_research_switches_on():
    # issue 73: every setting has a reason a user would recognise; a replay in research/ passes its own
    # value instead of a product switch (research.settings_audit prints where each one is set)
    fields = dataclasses.fields(Context)
    assert len(fields) <= 70
    only_research = sorted(name for name, uses in audit(fields).items() if uses.kind() == "research")
    assert only_research == []
