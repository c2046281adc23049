"""Names the question asks about that no kept passage says (judging/unmentioned.py), and the gate that
declines on them over a user's documents."""

from __future__ import annotations

import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.judging.unmentioned import from_documents, question_names, unmentioned_names
from mtrag_graph.testing import fake_context, make_task

MANUAL = [
    "4ti2 builds and installs several libraries, either as static or shared libraries, using libtool.",
    "The zsolve function requires libzsolve; see the API section.",
]
GRAPH = build_graph(output="state")


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Does 4ti2 offer bindings for Python?", ["Python"]),
        ("Can it back up straight to Amazon S3?", ["Amazon", "S3"]),
        ("How fast does lz4 decompress?", ["lz4"]),
        ("What does borg prune --keep-within 2d keep?", ["--keep-within"]),
        ("What is borg's additional_free_space setting?", ["additional_free_space"]),
        ("What does the function return?", []),  # "What" opens the sentence: not a name
        ("Is it OK to use a level below 9 in the US?", []),  # two letters: as often a common word
    ],
)
def test_the_question_names_are_capitalised_words_inside_it_and_technical_tokens(question, names):
    assert question_names(question) == names


def test_a_name_no_passage_says_is_unmentioned_in_any_case_and_plural():
    passages = [{"title": "API", "text": "The zsolve function requires LIBZSOLVE."}]
    assert unmentioned_names("Do the APIs of Libzsolve work with Python?", passages) == ["Python"]


def test_a_hyphenated_word_compound_is_said_with_its_parts_apart_but_an_option_or_key_is_not():
    pen = [{"title": "Dots", "text": "A dot is six times the width of a pen of explicit width."}]
    assert unmentioned_names("Can dots match an explicit-width pen?", pen) == []
    assert unmentioned_names("Can dots match a fixed-width pen?", pen) == ["fixed-width"]
    keys = [{"title": "prune", "text": "keep within the last day; additional free space"}]
    assert unmentioned_names("What do --keep-within and additional_free_space do?", keys) == [
        "--keep-within",
        "additional_free_space",
    ]


def test_only_passages_cut_from_a_users_documents_count_as_documents():
    assert from_documents([{"document_id": "manual.pdf#page=3&chunk=2"}])
    assert not from_documents([{"document_id": "manual.pdf#page=3&chunk=2"}, {"document_id": "doc-12"}])
    assert not from_documents([])


def _documents_task(question: str) -> dict:
    task = make_task([question], MANUAL)
    for number, passage in enumerate(task["contexts"]):
        passage["document_id"] = f"4ti2-manual.pdf#page={number + 1}&chunk={number}"
    return task


def test_over_documents_a_question_naming_what_no_passage_says_is_declined_without_a_model_call():
    context = fake_context(gate=["yes"], generate=["4ti2 builds several libraries."])
    state = GRAPH.invoke({"task": _documents_task("Does 4ti2 offer bindings for Python?")}, context=context)
    assert state["gate"] == "no" and state["abstain_reason"] == "gate_no"
    assert state["gate_evidence"] == {"unmentioned": ["Python"]}
    assert context.gate_model.calls == [] and context.generate_model.calls == []


def test_a_question_whose_names_the_passages_say_goes_to_the_gate():
    context = fake_context(gate=["yes"], generate=["The zsolve function requires libzsolve."])
    state = GRAPH.invoke({"task": _documents_task("Which function requires libzsolve?")}, context=context)
    assert state["gate"] == "yes" and state["abstain_reason"] is None


def test_benchmark_passages_are_left_to_the_gate():
    task = make_task(["Does 4ti2 offer bindings for Python?"], MANUAL)  # ids "d0", "d1": a corpus
    assert GRAPH.invoke({"task": task}, context=fake_context(gate=["yes"]))["gate"] == "yes"
