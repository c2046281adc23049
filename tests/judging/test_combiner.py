"""judging.combiner: the verdict's fitted rule, and the shipped fit's card."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mtrag_graph.judging.combiner import Combiner, load_combiner
from mtrag_graph.judging.verdict import UNSUPPORTED, verdict
from mtrag_graph.testing import fake_context

PASSAGE = "Bees perform a waggle dance to show the hive where the flowers are."


def test_the_shipped_combiner_has_its_card_and_declines_above_its_threshold():
    combiner = load_combiner("default")
    assert combiner.card["data"].startswith("mtrag_reference.jsonl sha256")
    assert combiner.card["report"]["held-out"]["auc"] > 0.9
    signals = dict.fromkeys(combiner.features, 1.0) | {"missing_facts": 0}
    assert not combiner.declines(signals)[0]  # everything backed
    unsupported = dict.fromkeys(combiner.features, 0.0) | {"missing_facts": 4}
    assert combiner.declines(unsupported)[0]
    with pytest.raises(KeyError, match="support_min"):
        combiner.probability({"supported_share": 1.0})


def test_a_round_trip_keeps_every_weight():
    combiner = Combiner(("a",), (0.5,), (2.0,), (1.5,), -0.1, 0.6, {"data": "x"})
    assert Combiner.from_dict(combiner.as_dict()) == combiner


def _state(draft: str) -> dict:
    return {"draft": draft, "question": "How do bees show where flowers are?", "history": [], "gate": "yes",
            "kept_passages": [{"document_id": "d1", "text": PASSAGE}]}  # fmt: skip


def test_with_the_combiner_an_answer_the_passages_do_not_hold_is_declined_and_a_backed_one_kept():
    context = dataclasses.replace(fake_context(grounding="facts"), verdict_combiner="default")
    kept = verdict(_state("Bees perform a waggle dance to show where the flowers are."), context)
    assert kept.outcome == "keep" and kept.signals["p_unsupported"] < load_combiner("default").threshold
    moved = verdict(_state("The Federal Reserve raised interest rates by 0.75 points in June 2022."), context)
    assert (moved.outcome, moved.why) == ("decline", UNSUPPORTED)  # no claim backed: declined before it


def test_the_combiner_runs_beside_the_rule_and_its_decline_is_recorded(tmp_path):
    shipped = load_combiner("default")
    strict = dataclasses.replace(shipped, threshold=0.0)  # declines every answer it reads
    path = tmp_path / "strict.json"
    path.write_text(json.dumps(strict.as_dict()), encoding="utf-8")
    context = dataclasses.replace(fake_context(grounding="facts"), verdict_combiner=str(path))
    decided = verdict(_state("Bees perform a waggle dance to show where the flowers are."), context)
    assert (decided.outcome, decided.why) == ("decline", UNSUPPORTED) and "p_unsupported" in decided.signals
