"""Setting flags built from the stages' registrations: a yes/no setting takes true or false."""

from __future__ import annotations

import argparse

import pytest

from mtrag_graph.commands._options import add_model_options, context_from_args


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
