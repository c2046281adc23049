from __future__ import annotations

import json

import pytest

from mtrag_graph.measure.decisions import sets
from mtrag_graph.tasks import TaskError
from tests.measure.decisions.conftest import fake_retriever


def test_split_names_map_to_the_tuning_and_report_files(tmp_path):
    assert sets.split_path(tmp_path, "tuning").name == "mtrag_reference.jsonl"
    assert sets.split_path(tmp_path, "report").name == "mtragun_dev.jsonl"
    with pytest.raises(ValueError, match="unknown split"):
        sets.split_path(tmp_path, "dev")


def test_load_split_reads_only_that_split(data_folder):
    assert len(sets.load_split(data_folder, "tuning")) == 2
    assert len(sets.load_split(data_folder, "report")) == 8


def test_load_split_names_the_bad_task_and_field(data_folder):
    path = data_folder / "tasks" / "mtrag_reference.jsonl"
    path.write_text(json.dumps({"task_id": "bad<::>1", "input": []}) + "\n")
    with pytest.raises(TaskError, match="bad<::>1.*input"):
        sets.load_split(data_folder, "tuning")


def test_gate_positives_are_answerable_and_partial_turns_with_their_passages(tasks):
    items = sets.gate_items(tasks, fake_retriever)
    positives = [i for i in items if i["kind"] == "positive"]
    assert {i["task_id"] for i in positives} == {"c1<::>1", "c1<::>2", "c2<::>1", "c3<::>1", "c4<::>1"}
    assert all(i["label"] is True for i in positives)
    bees = next(i for i in positives if i["task_id"] == "c1<::>1")
    assert bees["passages"][0]["text"] == "Bees do a round dance."


def test_unanswerable_turns_get_the_retrieved_passages(tasks):
    items = sets.gate_items(tasks, fake_retriever)
    [negative] = [i for i in items if i["kind"] == "unanswerable_retrieved"]
    assert negative["task_id"] == "c1<::>3" and negative["label"] is False
    assert negative["passages"][0]["text"] == "retrieved for c1<::>3"


def test_other_conversation_negatives_take_passages_from_another_conversation_of_the_same_domain(tasks):
    items = sets.gate_items(tasks, fake_retriever, other_conversation=5)
    swapped = [i for i in items if i["kind"] == "other_conversation"]
    assert swapped, "expected at least one swapped item"
    by_id = {t["task_id"]: t for t in tasks}
    for item in swapped:
        donor = by_id[item["donor_task_id"]]
        assert donor["conversation_id"] != item["conversation_id"]
        assert sets.domain_of(donor["Collection"]) == item["domain"]
        assert [p["text"] for p in item["passages"]] == [c["text"] for c in donor["contexts"]]
        assert item["label"] is False


def test_other_conversation_count_defaults_to_the_number_of_unanswerable_turns(tasks):
    items = sets.gate_items(tasks, fake_retriever)
    assert sum(i["kind"] == "other_conversation" for i in items) == 1


def test_gate_items_need_a_retriever_for_unanswerable_turns(tasks):
    with pytest.raises(ValueError, match="retriever"):
        sets.gate_items(tasks, None)


def test_gate_items_are_deterministic_for_a_seed(tasks):
    first = sets.gate_items(tasks, fake_retriever, other_conversation=3, seed=7)
    again = sets.gate_items(tasks, fake_retriever, other_conversation=3, seed=7)
    assert first == again


def test_limit_per_kind_subsamples_each_kind(tasks):
    items = sets.gate_items(tasks, fake_retriever, other_conversation=5, limit_per_kind=2)
    kinds = [i["kind"] for i in items]
    assert kinds.count("positive") == 2 and kinds.count("other_conversation") <= 2


def test_clarify_items_label_underspecified_turns_against_answerable_and_partial(tasks):
    items = sets.clarify_items(tasks)
    labels = {i["task_id"]: i["label"] for i in items}
    assert labels["c2<::>2"] is True
    assert labels["c1<::>2"] is False and labels["c1<::>1"] is False
    assert "c1<::>3" not in labels and "c2<::>3" not in labels  # unanswerable, conversational


def test_relation_items_are_turns_after_the_first_with_their_multi_turn_label(tasks):
    items = sets.relation_items(tasks)
    assert {i["task_id"] for i in items} == {"c1<::>2", "c1<::>3", "c2<::>2", "c2<::>3"}
    assert all(i["multi_turn"] == "Follow-up" for i in items)


def test_relation_limit_keeps_each_multi_turn_label(tasks):
    tasks[1]["Multi-Turn"] = ["N/A"]
    items = sets.relation_items(tasks, limit_per_label=1)
    assert sorted(i["multi_turn"] for i in items) == ["Follow-up", "N/A"]
