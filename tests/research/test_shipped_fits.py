"""The fits the product loads are rebuilt from their cards' commands and give the same numbers.

The shipped gate classifier (mtrag_graph/data/gate_classifier.json) is rebuilt from the tuning split and
an index of the mini corpora, with the command its card names; the built gate set must hash to the
card's set_sha256 and the classifier's numbers must be the shipped ones.
"""

from __future__ import annotations

import json
import shlex
from importlib import resources

import pytest

from mtrag_graph.cli import main as mtrag_graph
from mtrag_graph.nodes import answerability_gate as gate
from research.fit_gate import main as fit_gate
from tests.conftest import mtrag_data_path


@pytest.mark.slow
def test_the_shipped_gate_classifier_is_rebuilt_from_its_card(tmp_path):
    shipped = gate.load_classifier("default")
    assert shipped.card is not None
    corpora = sorted(str(p) for p in mtrag_data_path("corpora/mini").glob("*.jsonl"))
    index = tmp_path / "index"
    assert mtrag_graph(["index", *corpora, "-o", str(index)]) == 0
    command = shlex.split(shipped.card["command"])
    assert command[:3] == ["python", "-m", "research.fit_gate"]
    out = tmp_path / "gate.json"
    argv = [str(out) if a == "mtrag_graph/data/gate_classifier.json" else a for a in command[3:]]
    argv = [str(index) if a == "INDEX" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert fit_gate(["--data", str(mtrag_data_path(".")), *argv]) == 0
    rebuilt = json.loads(out.read_text())
    expected = json.loads((resources.files("mtrag_graph") / "data" / "gate_classifier.json").read_text())
    assert rebuilt["card"]["set_sha256"] == expected["card"]["set_sha256"]
    assert rebuilt["card"]["data_sha256"] == expected["card"]["data_sha256"]
    for key in ("mean", "scale", "coef"):
        assert rebuilt[key] == pytest.approx(expected[key], abs=1e-6)
    assert rebuilt["intercept"] == pytest.approx(expected["intercept"], abs=1e-6)
    assert rebuilt["threshold"] == pytest.approx(expected["threshold"], abs=1e-6)
