"""The prompt layer: prompt text from prompts/ (through Context where a preset changes it), one
conversation and one passage formatter."""

from __future__ import annotations

import dataclasses

import pytest

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.prompts import answer_variants, candidate_judge, clarify, grounded, rewrite
from mtrag_graph.prompts.build import (
    format_conversation,
    format_passages,
    grounded_messages,
    prompted_question,
)
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close.",
]
PROMPT_SETTING = ("_instruction", "_prompt", "_template")


def test_every_prompt_setting_defaults_to_a_text_of_the_prompt_modules():
    texts = {
        value
        for module in (grounded, rewrite, clarify, answer_variants, candidate_judge)
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str)
    }
    prompt_settings = [f for f in dataclasses.fields(Context) if f.name.endswith(PROMPT_SETTING)]
    assert prompt_settings, "no prompt setting found: the suffixes no longer name them"
    assert [f.name for f in prompt_settings if f.default not in texts] == []


@pytest.mark.parametrize(
    ("field", "role"),
    [
        ("grounded_system_prompt", "gate_model"),
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


def test_both_shows_a_follow_ups_own_words_before_its_rewrite():
    history = [
        {"speaker": "user", "text": "How do I keep the window open?"},
        {"speaker": "agent", "text": "-p"},
    ]
    state = {
        "question": "And which option skips my init files?",
        "standalone_question": "How can I prevent gnuplot from closing my init files?",
        "history": history,
    }
    assert prompted_question(state, Context()) == "How can I prevent gnuplot from closing my init files?"
    assert prompted_question(state, Context(answer_question="both")) == (
        "And which option skips my init files? (in full: How can I prevent gnuplot from closing my init files?)"
    )
    first = {**state, "history": []}  # a first turn, or a rewrite that changed nothing, shows one question
    assert prompted_question(first, Context(answer_question="both")) == first["standalone_question"]
    same = {**state, "standalone_question": "and which option skips my init files"}
    assert prompted_question(same, Context(answer_question="both")) == same["standalone_question"]
    doubtful = Context(answer_question="doubtful")  # both only where the rewrite is in doubt
    assert prompted_question(state, doubtful) == state["standalone_question"]
    in_doubt = {**state, "rewrite_doubts": ["keeps under three quarters of what was asked"]}
    assert prompted_question(in_doubt, doubtful) == prompted_question(state, Context(answer_question="both"))


def test_answer_conversation_leaves_the_agents_answers_or_the_whole_conversation_out_of_the_prompt():
    state = {
        "question": "Does it suggest the right spelling too?",
        "standalone_question": "Does Commander suggest the correct spelling for a mistyped option?",
        "history": [{"speaker": "user", "text": "How do I show help after an error?"},
                    {"speaker": "agent", "text": "Call program.showHelpAfterError()."}],
        "kept_passages": [{"title": "Readme", "text": "Suggestions are shown by default."}],
    }  # fmt: skip
    state["selected_history"] = state["history"]

    def prompt(mode: str) -> str:
        return str(grounded_messages(state, Context(answer_conversation=mode), "Q?")[1].content)

    assert "User: How do I show help" in prompt("selected") and "showHelpAfterError" in prompt("selected")
    assert "User: How do I show help" in prompt("questions") and "showHelpAfterError" not in prompt(
        "questions"
    )
    none = prompt("none")
    assert "How do I show help" not in none and grounded.NO_CONVERSATION in none
    assert "Suggestions are shown by default." in none  # the documents stay
