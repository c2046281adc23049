"""The real path: bundled models through llama.cpp and the bundled MiniLM, end to end."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.models.reply_cache import ReplyCache
from mtrag_graph.nodes.rewrite import resolved_fragment
from mtrag_graph.testing import make_task

pytestmark = pytest.mark.slow

SMALL = "qwen2.5-coder-0.5b"


def test_bundled_embedder_ranks_the_relevant_passage_first():
    embedder = get_embedder("minilm")
    vectors = embedder.embed(
        ["how do bees find flowers", "bees dance to show flowers", "tax returns are due"]
    )
    assert vectors.shape == (3, 384)
    assert vectors[1] @ vectors[0] > vectors[2] @ vectors[0]


def test_bundled_embedder_puts_an_elliptic_turns_thing_in_the_place_it_stands_for():
    context = Context()
    earlier = [
        {"speaker": "user", "text": "How many monthly archives does the example script keep?"},
        {"speaker": "agent", "text": "6 monthly archives."},
    ]
    resolved = resolved_fragment("And daily ones?", earlier, context)
    assert resolved is not None
    assert resolved.question == "How many daily archives does the example script keep?"
    earlier[0]["text"] = "What build type does the Meson project use by default?"
    assert resolved_fragment("And over Q?", earlier, context) is None


def test_bundled_model_follows_a_yes_no_grammar():
    reply = get_chat_model(SMALL).invoke([HumanMessage(content="Is Paris in France?")], choices=["yes", "no"])
    assert reply.content in ("yes", "no")
    assert reply.response_metadata["prompt_tokens"] > 0


def test_shared_prompt_prefix_is_not_processed_twice():
    model = get_chat_model(SMALL)
    prefix = [SystemMessage(content="You answer briefly. " * 20)]
    model.invoke([*prefix, HumanMessage(content="Say one word.")], max_tokens=2)
    second = model.invoke([*prefix, HumanMessage(content="Say two words.")], max_tokens=2)
    meta = second.response_metadata
    assert meta["prompt_tokens_processed"] < meta["prompt_tokens"] / 2


def test_a_call_starts_from_the_saved_state_of_its_system_text_after_another_call():
    # the 1.5B model judges a follow-up's relation, then writes the answer: the answer's system text is
    # not processed again, and the reply is the one a fresh context gives
    model = get_chat_model(SMALL)
    answer_system = [SystemMessage(content="You answer from the documents only. " * 12)]
    judge_system = [SystemMessage(content="You judge whether two questions are related. " * 6)]
    model.invoke([*answer_system, HumanMessage(content="Say hello to Ann.")], max_tokens=8)
    model.invoke([*judge_system, HumanMessage(content="Is the sky blue?")], max_tokens=2)
    kept = model.invoke([*answer_system, HumanMessage(content="Say hello to Bob.")], max_tokens=8)
    model.invoke([*judge_system, HumanMessage(content="Is grass green?")], max_tokens=2)
    fresh_model = model.model_copy(update={"keep_prefix_states": False})
    fresh_model._llama, fresh_model._lock = model._llama, model._lock
    fresh = fresh_model.invoke([*answer_system, HumanMessage(content="Say hello to Bob.")], max_tokens=8)
    assert kept.content == fresh.content
    assert kept.response_metadata["prompt_tokens_processed"] < 20
    assert fresh.response_metadata["prompt_tokens_processed"] > 80


def test_graph_answers_a_short_task_from_its_passage_with_the_small_model():
    task = make_task(
        ["When did the Eiffel Tower open to the public?"],
        [
            "The Eiffel Tower in Paris was completed in March 1889 and opened to the public on 15 May 1889, "
            "as the entrance arch to the World's Fair.",
            "The Statue of Liberty was dedicated in New York Harbor in October 1886.",
        ],
    )
    context = Context(rewrite_model=SMALL, classify_model=SMALL, gate_model=SMALL, generate_model=SMALL)
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert state["abstain_reason"] is None, state
    assert "1889" in state["answer"]
    assert state["kept_passages"][0]["document_id"] == "d0"


def test_bundled_model_gives_yes_no_probabilities_that_follow_the_facts():
    model = get_chat_model(SMALL)
    _, true_claim, _ = score_choice(
        model, [HumanMessage(content="Is Paris in France? Reply yes or no.")], ["yes", "no"]
    )
    _, false_claim, _ = score_choice(
        model, [HumanMessage(content="Is Paris in Peru? Reply yes or no.")], ["yes", "no"]
    )
    assert true_claim is not None and false_claim is not None
    assert true_claim["yes"] + true_claim["no"] == pytest.approx(1.0)
    assert true_claim["yes"] > false_claim["yes"]


def test_reply_cache_answers_a_repeated_real_call_without_the_model(tmp_path):
    model = get_chat_model(SMALL).model_copy(update={"cache": ReplyCache(tmp_path / "replies.sqlite")})
    question = [HumanMessage(content="Name the capital of France in one word.")]
    first = model.invoke(question, max_tokens=4)
    again = model.invoke(question, max_tokens=4)
    longer = model.invoke(question, max_tokens=5)  # other options: another key, a real call
    assert again.content == first.content and again.response_metadata["cached"] is True
    assert "cached" not in first.response_metadata and "cached" not in longer.response_metadata


@pytest.mark.parametrize(
    ("question", "max_tokens"),
    [
        ("Name three colours of the rainbow, one sentence.", 64),
        ("Write a long story about a cat.", 12),
        ("Say é, ü, 日本 and a bee emoji.", 40),
    ],  # fmt: skip
)
def test_a_streamed_local_reply_has_the_text_and_token_counts_of_a_whole_one(question, max_tokens):
    model = get_chat_model(SMALL)
    messages = [HumanMessage(content=question)]
    model.invoke([HumanMessage(content="Say one word.")], max_tokens=2)  # another prompt in the context
    whole = model.invoke(messages, max_tokens=max_tokens)
    model.invoke([HumanMessage(content="Say one word.")], max_tokens=2)  # the same state before each
    chunks = list(model.stream(messages, max_tokens=max_tokens))
    streamed = chunks[0]
    for chunk in chunks[1:]:
        streamed += chunk
    assert len([c for c in chunks if c.content]) > 3  # token by token, not one piece
    assert streamed.content == whole.content
    keys = ("finish_reason", "prompt_tokens", "prompt_tokens_processed", "completion_tokens")
    assert {k: streamed.response_metadata[k] for k in keys} == {k: whole.response_metadata[k] for k in keys}
