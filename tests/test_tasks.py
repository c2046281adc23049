"""Task parsing and validation: clear errors naming task and field; arbitrary JSON never crashes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtrag_graph.tasks import TaskError, domain_of, parse_task

GOOD = {
    "task_id": "c1<::>2",
    "input": [
        {"speaker": "user", "text": "Hi?"},
        {"speaker": "agent", "text": "Hello."},
        {"speaker": "user", "text": "What is BM25?"},
    ],
    "contexts": [{"document_id": "d1", "text": "BM25 is a ranking function."}],
    "answerability": ["ANSWERABLE"],
    "Collection": "mt-rag-ibmcloud-elser-512-100-20240502",
}


def test_a_valid_task_parses_into_history_question_and_passages():
    task = parse_task(GOOD)
    assert task.question == "What is BM25?"
    assert [t.speaker for t in task.history] == ["user", "agent"]
    assert task.passages[0]["document_id"] == "d1"
    assert task.answerability == "ANSWERABLE"


def test_capitalised_answerability_is_accepted():
    raw = {**GOOD, "Answerability": ["PARTIAL"]}
    del raw["answerability"]
    assert parse_task(raw).answerability == "PARTIAL"


def test_missing_contexts_means_full_rag_mode():
    raw = {k: v for k, v in GOOD.items() if k != "contexts"}
    assert parse_task(raw).passages is None


def test_nan_contexts_means_full_rag_mode():
    assert parse_task({**GOOD, "contexts": math.nan}).passages is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"input": None}, "input"),
        ({"input": []}, "input"),
        ({"input": "hello"}, "input"),
        ({"input": [{"speaker": "agent", "text": "x"}]}, "input[0].speaker"),
        ({"input": [{"speaker": "user", "text": "   "}]}, "input[0].text"),
        ({"input": [{"speaker": "user", "text": 3}]}, "input[0].text"),
        ({"input": [{"speaker": "bot", "text": "x"}]}, "input[0].speaker"),
        ({"contexts": "passage"}, "contexts"),
        ({"contexts": [{"text": None}]}, "contexts[0].text"),
        ({"contexts": ["plain string"]}, "contexts[0]"),
        ({"task_id": ""}, "task_id"),
    ],
)
def test_bad_fields_raise_an_error_naming_task_and_field(change, field):
    with pytest.raises(TaskError) as error:
        parse_task({**GOOD, **change})
    assert error.value.field == field
    assert field in str(error.value)


def test_an_error_without_task_id_names_the_line():
    with pytest.raises(TaskError) as error:
        parse_task({"input": []}, line=7)
    assert error.value.task == "line 7"


def test_a_non_object_task_is_rejected():
    with pytest.raises(TaskError) as error:
        parse_task([1, 2], line=3)
    assert error.value.field == "<task>"


@pytest.mark.parametrize(
    ("collection", "domain"),
    [("mt-rag-ibmcloud-elser-512-100-20240502", "cloud"), ("ibmcloud", "cloud"), ("fiqa", "fiqa"),
     ("mt-rag-clapnq-elser-512-100-20240503", "clapnq"), ("govt", "govt"), ("other", None)],
)  # fmt: skip
def test_collections_map_to_domains(collection, domain):
    assert domain_of(collection) == domain


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from(["task_id", "input", "contexts", "answerability", "targets", "Collection"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(field_names, json_values, max_size=6))
def test_arbitrary_json_is_either_a_task_or_a_task_error(raw):
    try:
        task = parse_task(raw, line=1)
    except TaskError as error:
        assert error.field
    else:
        assert task.question.strip()


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["speaker", "text", "extra"]), json_values, max_size=3))
def test_arbitrary_turns_are_either_valid_or_a_task_error(turn):
    try:
        parse_task({**GOOD, "input": [turn]}, line=1)
    except TaskError as error:
        assert error.field.startswith("input")
