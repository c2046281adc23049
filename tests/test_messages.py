"""The prompt layer: every graph prompt comes from Context, one conversation and one passage formatter."""

from __future__ import annotations

import dataclasses

import pytest

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.messages import answer_messages, format_conversation, format_passages, relation_messages
from mtrag_graph.prompts import answer_variants, candidate_judge, clarify, grounded, rewrite
from mtrag_graph.stages.candidates import Candidate
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close.",
]
# Fragments filled into prompts (what an empty slot shows), not prompts of their own.
FRAGMENTS = {"EXAMPLE_NO_DOCUMENTS", "EXAMPLE_FIRST_TURN", "NO_ANSWER", "GLOBAL_REWRITE_RULES"}


def test_every_graph_prompt_is_the_default_of_a_context_field():
    defaults = {f.default for f in dataclasses.fields(Context) if isinstance(f.default, str)}
    for module in (grounded, rewrite, clarify, answer_variants, candidate_judge):
        for name, value in vars(module).items():
            if name.isupper() and isinstance(value, str) and name not in FRAGMENTS:
                assert value in defaults, f"{module.__name__}.{name} cannot be overridden from Context"


@pytest.mark.parametrize(
    ("field", "role"),
    [
        ("rewrite_system_prompt", "classify_model"),
        ("global_rewrite_system_prompt", "rewrite_model"),
        ("global_rewrite_instruction", "rewrite_model"),
        ("related_to_question_instruction", "classify_model"),
        ("related_to_answer_instruction", "classify_model"),
        ("related_to_question_rule", "classify_model"),
        ("grounded_context_template", "gate_model"),
        ("gate_instruction", "gate_model"),
        ("generate_instruction", "generate_model"),
    ],
)
def test_a_prompt_override_reaches_the_model(field, role):
    # the first draft's own instruction is read when the first draft may decline (first_draft "may_decline")
    context = fake_context(**{field: "OVERRIDDEN"}, first_draft="may_decline")
    build_graph(output="state").invoke(
        {"task": make_task(["How do bees talk?", "They dance.", "Why?"], PASSAGES)}, context=context
    )
    prompts = [str(m.content) for call in getattr(context, role).calls for m in call["messages"]]
    assert any("OVERRIDDEN" in text for text in prompts)


def test_the_conversation_formatter_names_the_speakers_user_and_agent():
    turns = [{"speaker": "user", "text": "Hi  there"}, {"speaker": "agent", "text": "Hello " * 50}]
    text = format_conversation(turns, agent_chars=20)
    assert text.splitlines()[0] == "User: Hi there"
    assert (
        text.splitlines()[1].startswith("Agent: Hello") and len(text.splitlines()[1]) <= len("Agent: ") + 20
    )


def test_the_passage_formatter_numbers_documents_or_lists_their_starts():
    passages = [{"title": "Bees", "text": "They dance."}, {"text": "Flowers bloom."}]
    assert format_passages(passages, 100) == (
        "[Document 1] Bees\nThey dance.\n[End of document 1]\n\n[Document 2]\nFlowers bloom.\n[End of document 2]"
    )
    assert format_passages(passages, 100, numbered=False) == "- Bees: They dance.\n- Flowers bloom."


def test_a_documents_lines_stay_lines_in_the_prompt():
    # a table flattened onto one line cannot be read by column (the real-documents set: "the ratio of
    # zstd at level -1 is 530 MB/s", the next column); a list or a command keeps its own lines too
    table = "| Compressor    | Ratio | Speed    |\n|---|---|---|\n| zstd -1       | 2.887 | 530 MB/s |\n\n\n\nRun:\n  zstd -19 file"
    body = format_passages([{"title": "README", "text": table}], 500).splitlines()[1:-1]
    assert body == ["| Compressor | Ratio | Speed |", "|---|---|---|", "| zstd -1 | 2.887 | 530 MB/s |", "",
                    "Run:", "zstd -19 file"]  # fmt: skip


def _answer_state(**extra):
    passages = [{"document_id": str(i), "text": text} for i, text in enumerate(PASSAGES)]
    return {"question": "How do bees find flowers?", "kept_passages": passages, "gate": "yes", **extra}


def test_a_draft_that_answers_at_once_carries_its_rules_in_the_system_text():
    context, candidate = Context(), Candidate(model="fake")
    first = answer_messages(_answer_state(gate_evidence={"score": 0.9}), context, candidate)
    assert first[0].content == f"{grounded.SYSTEM}\n\n{grounded.ANSWER_RULES}"
    body = str(first[1].content)
    assert body.endswith("Question: How do bees find flowers?") and "hold at least part" not in body
    # the retry after a rejected draft keeps that system text and the documents before its own instruction
    retry = answer_messages(_answer_state(answer_problems=["it is cut off"]), context, candidate)
    assert retry[0].content == first[0].content
    shared = body.split("Question:")[0]
    assert len(shared) > 100 and str(retry[1].content).startswith(shared)
    assert "it is cut off" in str(retry[1].content)


@pytest.mark.parametrize(
    ("state", "overrides"),
    [
        (_answer_state(gate_evidence={"p_yes": 0.8, "gate_argmax": "yes"}), {}),  # a gate that asked a model
        (_answer_state(), {"answer_system_rules": ""}),  # rules off: the instruction after the documents
    ],
)
def test_otherwise_the_first_draft_keeps_the_grounded_system_text(state, overrides):
    messages = answer_messages(state, Context(**overrides), Candidate(model="fake"))
    assert messages[0].content == grounded.SYSTEM
    assert str(messages[1].content).endswith(
        grounded.GENERATE_AFTER_DECLINE.format(question="How do bees find flowers?")
    )


def test_a_draft_that_may_decline_keeps_the_grounded_system_text():
    messages = answer_messages(_answer_state(), Context(first_draft="may_decline"), Candidate(model="fake"))
    assert messages[0].content == grounded.SYSTEM
    assert "reply exactly: I don't know" in str(messages[1].content)


def test_the_relation_rules_end_the_system_text_or_follow_the_texts():
    pair = ("How do bees talk?", "They dance.")
    inside = relation_messages("Why?", pair, Context())
    assert inside["question"][0].content == f"{rewrite.SYSTEM}\n\n{rewrite.RELATED_TO_QUESTION_RULE}"
    assert inside["question"][1].content == "Earlier question: How do bees talk?\nNew question: Why?"
    assert inside["answer"][0].content.endswith(rewrite.RELATED_TO_ANSWER_RULE)
    after = relation_messages("Why?", pair, Context(relation_rules_in_system=False))
    assert after["question"][0].content == after["answer"][0].content == rewrite.SYSTEM
    # the layout before the rules moved: one system text, the rule after the texts
    assert after["answer"][1].content == (
        "Text: They dance.\nQuestion: Why?\n\n"
        "Does the question ask about something mentioned in the text? Reply with only yes or no."
    )
