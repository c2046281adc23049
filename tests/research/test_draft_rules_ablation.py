from __future__ import annotations

import pytest

from mtrag_graph.context import Context
from mtrag_graph.judging.verdict import check_draft
from research.draft_rules_ablation import DETECTORS, main, switch_off

STATE = {
    "question": "And over Q?",
    "history": [
        {"speaker": "user", "text": "Which files does zsolve read?"},
        {"speaker": "agent", "text": "zsolve reads PROJECT.mat and PROJECT.rhs."},
    ],  # fmt: skip
    "draft": "Over Q the solver takes its input from PROJECT.mat and PROJECT.rhs as well.",
    "kept_passages": [{"document_id": "d", "text": "zsolve reads PROJECT.mat and PROJECT.rhs."}],
    "gate": "yes",
    "retries": 1,
}


def test_a_detector_switched_off_finds_nothing_and_is_put_back():
    assert (
        "repeats the previous answer instead of answering this question"
        in check_draft(STATE, Context())["answer_problems"]
    )
    undo = switch_off(["repeats_values"])
    try:
        assert check_draft(STATE, Context()) == {"answer": STATE["draft"], "answer_problems": []}
    finally:
        for step in undo:
            step()
    assert check_draft(STATE, Context())["declined"] == "failed_retry"


def test_every_detector_names_code_that_exists():
    for step in switch_off(list(DETECTORS)):
        step()


def test_an_unknown_detector_or_a_missing_command_is_refused(capsys):
    with pytest.raises(SystemExit, match="unknown detector 'nope'"):
        main(["--off", "nope", "--", "mtrag_graph", "--help"])
    assert main(["--off", "all"]) == 2
    assert "after '--'" in capsys.readouterr().err
