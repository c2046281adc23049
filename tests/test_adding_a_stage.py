"""docs/extending.md's "Add a stage" and "Add a setting" done for real on a copy of the package, and the
files each touched counted.

The stage (``tone_check``: asks a model whether the answer's tone is polite, with a setting, a prompt
and a model call) is one new module; ``context.py`` gains its settings by one base class and
``graph.py`` gains the node and its route. A fresh process then runs the copy: the stage's setting is
described in the context schema, offered as a CLI flag, keyed in no decision it does not belong to,
its model is among the run's models, its status line streams, its model call is recorded and its
decision reaches the prediction's route.

A setting of a built-in stage is one edit of that stage's module (``stages/gate.py``): the setting is
then in ``Context`` with its default, in the context schema with its description (and its choices), a
CLI flag, in the cache key of the decisions that run the stage and only theirs, and a value outside its
choices is refused.
"""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

STAGE_MODULE = '''
"""Is the answer polite? One yes/no from a model (an example stage)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from langgraph.runtime import Runtime

from mtrag_graph import settings
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.calls import ask_choice
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.state import State

TONE_INSTRUCTION = "Answer: {answer}\\n\\nIs this answer polite? Reply with only yes or no."

register(Stage("tone", "Checks that the answer is polite.", nodes=("tone_check",), label="checking the tone"))


@dataclass(kw_only=True)
class ToneSettings:
    tone_model: str = setting(factory=settings.large_model, stage="tone", model=True, flag=True,
                              description="Model asked whether the answer is polite.")
    tone_instruction: str = setting(TONE_INSTRUCTION, stage="tone", description="Asks whether the answer is polite.")


class ToneWrites(TypedDict, total=False):
    polite: bool


def judge_tone(answer: str, context: Any) -> bool:
    """The stage's decision: is ``answer`` polite? (an unparsed reply counts as polite)"""
    from langchain_core.messages import HumanMessage

    messages = [HumanMessage(context.tone_instruction.format(answer=answer))]
    value, _ = ask_choice(get_chat_model(context.tone_model), messages, ["yes", "no"], retries=context.parse_retries)
    return value != "no"


@guarded(writes=ToneWrites)
def tone_check(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
    return {"polite": judge_tone(state.get("answer") or "", runtime.context)}
'''

CHECK = """
import json, sys
from mtrag_graph.cli import build_parser
from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.measure.decisions import run
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.runtime.batch import models_of
from mtrag_graph.runtime.bookkeeping import route_of
from mtrag_graph.runtime.streaming import iter_events
from mtrag_graph.stages import settings_of
from mtrag_graph.testing import fake_context, make_task

assert Context.__module__ == "mtrag_graph.context" and __import__("mtrag_graph").__file__.startswith(sys.argv[1])
schema = build_graph().get_context_jsonschema()["properties"]
tone = ScriptedChatModel(responses=["no"])
context = fake_context(tone_model=tone)
task = make_task(["How do bees dance?"], ["Bees dance the waggle dance."])
events = list(iter_events(build_graph(output="state"), {"task": task}, context=context))
state = events[-1][1]
print(json.dumps({
    "schema": schema["tone_instruction"].get("description"),
    "flag": build_parser().parse_args(["answer", "t.jsonl", "-o", "o", "--tone-model", "x"]).tone_model == "x",
    "keyed_by_gate": "tone_model" in run.READS["gate"],
    "stage_settings": list(settings_of(Context, "tone")),
    "models": tone in models_of(context),
    "steps": [v for k, v in events if k == "step"],
    "calls": [c["node"] for c in state["model_calls"] if c.get("model") != "lexical"],
    "route": route_of(state).get("polite"),
}))
"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} no longer has {old!r}: update docs/extending.md and this test"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_new_stage_touches_three_files_and_reaches_every_surface(tmp_path):
    package = tmp_path / "mtrag_graph"
    shutil.copytree(REPO / "mtrag_graph", package, ignore=shutil.ignore_patterns("__pycache__"))

    # 1. the stage's own module: settings, prompt, registration, decision, node
    (package / "nodes" / "tone_check.py").write_text(textwrap.dedent(STAGE_MODULE), encoding="utf-8")
    # 2. context.py: the stage's settings join Context
    _edit(
        package / "context.py",
        "from mtrag_graph.stages import check_choices\n",
        "from mtrag_graph.nodes.tone_check import ToneSettings\nfrom mtrag_graph.stages import check_choices\n",
    )
    _edit(package / "context.py", "class Context(\n", "class Context(\n    ToneSettings,\n")
    # 3. graph.py: the node, and its place on the main line
    _edit(
        package / "graph.py",
        "from mtrag_graph.nodes.select_history import select_history\n",
        "from mtrag_graph.nodes.select_history import select_history\n"
        "from mtrag_graph.nodes.tone_check import tone_check\n",
    )
    _edit(
        package / "graph.py",
        "    accept_answer,\n    abstain,",
        "    accept_answer,\n    tone_check,\n    abstain,",
    )
    _edit(
        package / "graph.py",
        '    "accept_answer": next_or_abstain("generate", FINISH, choose=_kept_or_retry(FINISH)),',
        '    "accept_answer": next_or_abstain("generate", "tone_check", choose=_kept_or_retry("tone_check")),\n'
        '    "tone_check": next_or_abstain(FINISH),',
    )

    touched = _changed_files(REPO / "mtrag_graph", package)
    assert touched == ["context.py", "graph.py", "nodes/tone_check.py"]

    seen = _run_on_copy(tmp_path, CHECK)
    assert seen["schema"] == "Asks whether the answer is polite."
    assert seen["flag"] and seen["models"]
    assert {"tone_model", "tone_instruction"} <= set(seen["stage_settings"])
    assert not seen["keyed_by_gate"]  # the gate's cache key does not hold a setting it never reads
    assert "checking the tone" in seen["steps"]
    assert "tone_check" in seen["calls"]
    assert seen["route"] is False  # the scripted tone model said "no"


SETTING = """
    gate_style: Literal["strict", "lenient"] = setting(
        "strict", stage="gate", flag=True, description="How readily the gate says yes (an example setting)."
    )
"""

SETTING_CHECK = """
import json, sys
from mtrag_graph.cli import build_parser
from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.measure.decisions import run

assert __import__("mtrag_graph").__file__.startswith(sys.argv[1])
try:
    build_parser().parse_args(["answer", "t.jsonl", "-o", "o", "--gate-style", "sloppy"])
    flag_refused = False
except SystemExit:
    flag_refused = True
try:
    Context(gate_style="sloppy")
    refused = ""
except ValueError as error:
    refused = str(error)
schema = build_graph().get_context_jsonschema()["properties"]["gate_style"]
print(json.dumps({
    "default": Context().gate_style,
    "schema": [schema.get("description"), schema.get("enum")],
    "flag": build_parser().parse_args(["answer", "t.jsonl", "-o", "o", "--gate-style", "lenient"]).gate_style,
    "keyed_by": sorted(d for d, names in run.READS.items() if "gate_style" in names),
    "refused": refused,
    "flag_refused": flag_refused,
}))
"""


def test_a_new_setting_of_a_stage_touches_that_stage_s_module_only(tmp_path):
    package = tmp_path / "mtrag_graph"
    shutil.copytree(REPO / "mtrag_graph", package, ignore=shutil.ignore_patterns("__pycache__"))
    gate = package / "stages" / "gate.py"
    _edit(
        gate,
        "from dataclasses import dataclass\n",
        "from dataclasses import dataclass\nfrom typing import Literal\n",
    )
    _edit(gate, "class GateSettings:\n", "class GateSettings:\n" + SETTING[1:])

    assert _changed_files(REPO / "mtrag_graph", package) == ["stages/gate.py"]

    seen = _run_on_copy(tmp_path, SETTING_CHECK)
    assert seen["default"] == "strict"
    assert seen["schema"] == ["How readily the gate says yes (an example setting).", ["strict", "lenient"]]
    assert seen["flag"] == "lenient"
    assert seen["keyed_by"] == ["evidence", "gate"]  # the decisions that run the gate, and only those
    assert "gate_style" in seen["refused"] and "sloppy" in seen["refused"]
    assert seen["flag_refused"]


def _run_on_copy(tmp_path: Path, script: str) -> dict:
    """Run ``script`` in a fresh process on the copy of the package in ``tmp_path``; its last line's JSON."""
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{REPO}", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _changed_files(original: Path, copy: Path) -> list[str]:
    changed = []
    for path in sorted(copy.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(copy)
        before = original / relative
        if not before.exists() or not filecmp.cmp(before, path, shallow=False):
            changed.append(str(relative))
    return changed
