"""Setting flags built from the stages' registrations: a yes/no setting takes true or false."""

from __future__ import annotations

import argparse

import pytest

from mtrag_graph.cli import build_parser
from mtrag_graph.commands._options import add_model_options, context_from_args, overrides_from_args
from mtrag_graph.context import Context


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mtrag-graph answer")
    add_model_options(parser)
    return parser


@pytest.mark.parametrize(
    ("given", "expected"), [("true", True), ("false", False), ("Off", False), ("1", True)]
)
def test_a_yes_no_setting_flag_becomes_a_boolean(given, expected):
    context = context_from_args(_parser().parse_args(["--evidence-shown-once", given]))
    assert context.evidence_shown_once is expected
    assert context.evidence_after_questions is False  # the default, untouched


def test_a_yes_no_setting_flag_refuses_other_words_and_names_the_flag(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["--evidence-after-questions", "maybe"])
    assert "--evidence-after-questions: expected true or false, not 'maybe'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["answer", "chat", "serve"])
def test_every_command_that_runs_the_graph_takes_a_preset_and_its_flags_override_it(command):
    given = {
        "answer": ["answer", "t.jsonl", "-o", "o"],
        "chat": ["chat", "--passages", "p"],
        "serve": ["serve", "--passages", "p"],
    }
    args = build_parser().parse_args(
        [*given[command], "--preset", "vllm", "--gate-model", "qwen2.5-coder-1.5b"]
    )
    context = Context.from_preset(args.preset, **overrides_from_args(args))
    assert context.generate_model == "vllm:qwen2.5-coder-1.5b@http://127.0.0.1:8012/v1"
    assert context.rewrite_model == "vllm:qwen2.5-coder-0.5b@http://127.0.0.1:8011/v1"
    assert context.gate_model == "qwen2.5-coder-1.5b"
