"""Declines: recognised whatever their wording, answers about the documents, repeats of the answer
before, and the answering model's probability of declining as a gate rule (judging/decline.py)."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import HumanMessage

from mtrag_graph.graph import build_graph
from mtrag_graph.judging.decline import decline_probability, first_token_mass, key_facts, sample_disagreements
from mtrag_graph.judging.verdict import FAILED_RETRY, UNSURE, Verdict, repeats_values, verdict
from mtrag_graph.models.fake import FirstTokenModel, ScriptedChatModel
from mtrag_graph.state import AbstainReason
from mtrag_graph.testing import fake_context, make_task
from mtrag_graph.text import declines
from mtrag_graph.text.answers import about_documents, answers_replaced, drop_about_documents, repeats_answer


@pytest.mark.parametrize(
    "text",
    [
        "The documents provided do not contain any information about right-to-left languages.",
        "The provided documents don't mention a snapshot interval.",
        "I could not find the default value in the documents.",
        "There is no relevant information about that.",
        "It is not possible to determine from the provided documents which version it was.",
    ],
)
def test_a_decline_is_recognised_in_its_other_wordings(text):
    assert declines(text)


def test_an_answer_that_states_a_fact_is_no_decline():
    assert not declines("The documents are stored in ~/backups, and prune keeps 7 daily archives.")


def test_a_sentence_about_what_the_documents_cover_is_no_claim():
    assert about_documents("The documents provide information about the time it takes to run zstd.")
    assert about_documents("Document 2 discusses compression levels.")
    assert about_documents("The memory required to decompress a file is specified in the documentation.")
    assert not about_documents("The manual states that the default level is 3.")
    assert not about_documents("The default level is 3.")


def test_an_answer_made_only_of_sentences_about_the_documents_is_empty():
    answer = "The documents provide information about backups. They discuss pruning and archives."
    assert drop_about_documents(answer) == ""
    assert drop_about_documents("The documents discuss pruning. Use --keep-daily 7.") == "Use --keep-daily 7."


def test_the_graph_declines_an_answer_that_only_describes_the_documents():
    context = fake_context(generate=["The documents provide information about bees and their dances."])
    out = build_graph(output="state").invoke(
        {"task": make_task(["How long do bees live?"], ["Bees dance to show where flowers are."])},
        context=context,
    )
    assert out["answer"] == context.idk_answer


def test_a_follow_up_answered_with_the_answer_before_it_is_a_repeat():
    before = "Borg prune keeps seven daily archives when run with --keep-daily 7."
    assert repeats_answer("Borg prune keeps seven daily archives with --keep-daily 7.", before)
    assert not repeats_answer("Monthly archives are kept with --keep-monthly 6.", before)


def test_the_decline_mass_sums_every_decline_opening_among_the_first_tokens():
    top = [{"token": "The", "logprob": math.log(0.6)}, {"token": "I", "logprob": math.log(0.3)},
           {"token": " Sorry", "logprob": math.log(0.05)}]  # fmt: skip
    assert first_token_mass({"content": [{**top[0], "top_logprobs": top}]}) == pytest.approx(0.35)
    assert first_token_mass(None) is None


def test_decline_probability_is_none_on_a_backend_without_log_probabilities():
    assert decline_probability(ScriptedChatModel(responses=["I"]), [HumanMessage("q")]) is None


def test_a_sample_that_declines_or_names_other_facts_disagrees():
    answer = "The RFC was published in 2018."
    question = "In which year was the RFC published?"
    assert sample_disagreements(answer, ["It came out in 2018."], question) == []
    assert sample_disagreements(answer, ["The RFC was published in 2021."], question) == [
        "names none of: 2018"
    ]
    assert sample_disagreements(answer, ["I don't know."], question) == ["declined"]


def test_facts_the_question_already_names_do_not_count_as_agreement():
    question = "What does zstd 1.5.1 reach at level -1?"
    answer = "zstd 1.5.1 reaches a ratio of 2.887 at level -1."
    assert sample_disagreements(answer, ["At -1, zstd 1.5.1 gives a ratio of 2.1."], question)
    assert not sample_disagreements(answer, ["The ratio is 2.887."], question)


def test_a_technical_fact_is_matched_verbatim_in_a_sample():
    answer = "Run `borg prune --keep-daily 7`."
    assert not sample_disagreements(answer, ["Use borg prune --keep-daily 7 to do it."])
    assert sample_disagreements(answer, ["Use borg prune --keep-weekly 4."])


def test_a_passage_reference_is_no_fact_of_the_answer():
    answer = "According to Document 2, decompression needs 32 MB."
    assert sample_disagreements(answer, ["About 32 MB."]) == []


def test_a_short_sample_naming_the_command_and_its_option_agrees_with_the_full_command():
    answer = "Use the command `borg init --encryption=MODE PATH` to create it."
    sample = "You initialize it with the `borg init` command and the `--encryption` option."
    assert sample_disagreements(answer, [sample]) == []


def _probability_verdict(p_decline: float, retrieved: bool = True) -> Verdict:
    """The verdict on a backed answer whose decline prompt puts ``p_decline`` on a decline (threshold 0.1)."""
    answer = "Bees dance to show where the flowers are, 300 metres away."
    model = FirstTokenModel(responses=["unused"], first_tokens=[("I", p_decline), ("3", 1 - p_decline)])
    context = fake_context(generate_model=model, grounding="facts", sample_decline_threshold=0.1)
    state = {"draft": answer, "question": "How far are the flowers?", "history": [], "gate": "yes",
             "retrieve": retrieved, "kept_passages": [{"document_id": "d1", "text": answer}]}  # fmt: skip
    return verdict(state, context)


def test_an_answer_whose_decline_prompt_leans_to_a_decline_is_a_decline():
    decided = _probability_verdict(0.2)
    assert (decided.outcome, decided.why) == ("decline", UNSURE)
    assert decided.signals["p_decline"] == pytest.approx(0.2)
    assert _probability_verdict(0.05).outcome == "keep"


def test_the_decline_probability_is_read_with_retrieved_passages_only():
    decided = _probability_verdict(0.2, retrieved=False)
    assert decided.outcome == "keep" and "p_decline" not in decided.signals


def test_the_numbers_of_a_numbered_list_are_no_facts():
    assert key_facts("Do this:\n1. Run `make`.\n2. Run `make check`.") == {"make", "make check"}


def test_a_follow_up_giving_the_answer_befores_values_again_is_a_repeat():
    before = "1700 MB/s."
    assert repeats_values("Lz4 decompresses at a speed of 1700 MB/s.", before, "How about lz4?")
    assert not repeats_values("Lz4 decompresses at 4500 MB/s.", before, "How about lz4?")
    assert not repeats_values("It decompresses quickly.", before, "How about lz4?")  # no value at all
    # a value the question itself names is no repeat ("Is the limit still 60?")
    assert not repeats_values("The limit is 60 seconds.", "60 seconds.", "Is the limit 60?")
    # a call in a code span is the same call written bare (the fresh split's commander-5 turn 2)
    previous = "Call program.showHelpAfterError() (optionally with a custom message string)."
    spelling = "Does it suggest the correct spelling for a mistyped option out of the box?"
    assert repeats_values("Call `program.showHelpAfterError()` for that.", previous, spelling)
    assert not repeats_values(
        "Yes; `program.showSuggestionAfterError(false)` turns it off.", previous, spelling
    )
    # a plain word of the answer before is no value: the same build type for another build system
    assert not repeats_values("The CMake project uses the `Release` build type.", "release.", "And cmake?")


def test_a_follow_up_that_reuses_a_value_but_says_mostly_new_things_is_no_repeat():
    # people's answers: 15 of the 22 MTRAG answers the values alone flagged add most of their words
    before = "Membership is $30 a month; teens aged 13-17 pay $15."
    asked = "What kind of sports programming does it offer for children?"
    answer = "Children get pick-up basketball, indoor soccer and volleyball from Monday to Thursday, aged 13 or older."
    assert not repeats_values(answer, before, asked)
    assert repeats_values("Teens aged 13 pay the membership.", before, asked)


def test_a_repeated_answer_is_asked_again_without_the_conversation_it_copied():
    drafts = ["Lz4 decompresses at a speed of 1700 MB/s.", "Lz4 decompresses at 4500 MB/s."]
    context = fake_context(generate=drafts, rewrite=["How fast does lz4 decompress?"])
    task = make_task(
        ["How fast does zstd decompress?", "1700 MB/s.", "How about lz4?"],
        ["zstd decompresses at 1700 MB/s and lz4 at 4500 MB/s."],
    )
    out = build_graph(output="state").invoke({"task": task}, context=context)
    assert out["answer"] == "Lz4 decompresses at 4500 MB/s." and out["retries"] == 1
    prompts = [str(c["messages"][-1].content) for c in context.generate_model.calls]
    assert "Agent: 1700 MB/s." in prompts[0]
    assert "Agent: 1700 MB/s." not in prompts[1] and "repeats the previous answer" in prompts[1]


def test_a_repeat_asked_again_that_still_repeats_is_declined():
    drafts = ["Lz4 decompresses at a speed of 1700 MB/s.", "Lz4 is fast: 1700 MB/s."]
    context = fake_context(generate=drafts, rewrite=["How fast does lz4 decompress?"])
    task = make_task(
        ["How fast does zstd decompress?", "1700 MB/s.", "How about lz4?"],
        ["zstd decompresses at 1700 MB/s and lz4 at 1700 MB/s too."],
    )
    out = build_graph(output="state").invoke({"task": task}, context=context)
    assert out["retries"] == 1
    assert out["abstain_reason"] == AbstainReason.VERDICT and out["verdict"]["why"] == FAILED_RETRY
    assert out["answer_problems"] == ["repeats the previous answer instead of answering this question"]


def test_an_answer_about_the_words_an_elliptic_turn_replaced_answers_the_question_before():
    replaced = "change the size of all arrowheads globally rather than passing a size to every Arrow"
    by = "make an arrowhead point the other way"
    copied = "To change the size of all arrowheads globally, override the arrowsize function."
    assert answers_replaced(copied, replaced, by)
    assert not answers_replaced(
        "Use the Arrow option Reverse to make the arrowhead point the other way.", replaced, by
    )
    assert not answers_replaced("Prune keeps 7 daily archives.", "monthly", "daily")
    assert answers_replaced("Prune keeps 6 monthly archives.", "monthly", "daily")
    assert not answers_replaced("lz4 decompresses at 4500 MB/s.", "it", "lz4")  # a pronoun has no words


def test_an_elliptic_turn_answered_with_the_question_befores_answer_is_asked_again_without_it():
    drafts = [
        "To change the size of all arrowheads globally, override the arrowsize function.",
        "Use the Reverse option to make an arrowhead point the other way.",
    ]
    context = fake_context(generate=drafts)
    task = make_task(
        ["How do I change the size of all arrowheads globally?", "Override the arrowsize function.",
         "And to make an arrowhead point the other way?"],
        ["Override the arrowsize function to change the size of all arrowheads globally. "
         "The Reverse option makes an arrowhead point the other way."],
    )  # fmt: skip
    out = build_graph(output="state").invoke({"task": task}, context=context)
    assert out["standalone_question"] == "How do I make an arrowhead point the other way?"
    assert out["retries"] == 1 and out["answer"].startswith("Use the Reverse option")
    prompts = [str(c["messages"][-1].content) for c in context.generate_model.calls]
    assert "Agent: Override the arrowsize function." in prompts[0]
    assert "Agent: Override the arrowsize function." not in prompts[1]
