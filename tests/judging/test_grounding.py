"""The grounding check: per-sentence support, fact checks, dropping unsupported sentences, and the node."""

from __future__ import annotations

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging.grounding import (
    ORPHANED,
    anchored_support,
    grounded_answer,
    keep_supported,
    numbers_in,
    quantities_in,
    sentence_support,
    unsupported_facts,
)
from mtrag_graph.judging.verdict import UNSUPPORTED
from mtrag_graph.state import AbstainReason
from mtrag_graph.testing import fake_context, make_task
from mtrag_graph.text.answers import parse_evidence_first

ANTHEM = [
    "The national anthem has been played before NFL games since the Second World War.",
    "Players stand on the sideline while the national anthem is played before the game.",
]
GRAPH = build_graph(output="state")


def test_a_fact_the_passages_lack_is_unsupported_however_many_words_they_share():
    support = sentence_support("The NFL started playing the national anthem in 1921.", ANTHEM, "", 0.5)
    assert [s.supported for s in support] == [False]
    assert support[0].unsupported_facts == ["1921"]
    assert support[0].score >= 0.5  # the topic's words are all there: only the fact gives it away


def test_names_past_the_first_word_and_acronyms_are_facts():
    facts = unsupported_facts(
        "In 1946 the Court appointed Justice Harry Stone.", ["The Court appointed a justice."]
    )
    assert facts == ["1946", "harry", "stone"]
    assert unsupported_facts("IBM Cloud keeps backups.", ["Backups are kept."]) == ["cloud", "ibm"]


def test_numbers_match_however_they_are_written():
    passages = ["The plan costs $1,000 a year and covers two users."]
    assert unsupported_facts("It costs 1000 dollars for 2 users.", passages) == []
    assert unsupported_facts("It costs 1200 dollars.", passages) == ["1200"]
    # no number is read out of a word that holds digits ("SHA256" once gave "56", found nowhere)
    crypto = ["Borg encrypts with 256-bit AES and checks integrity with HMAC-SHA256."]
    assert unsupported_facts("256-bit AES, with HMAC-SHA256.", crypto) == []
    assert numbers_in("HMAC-SHA256 and v1") == set()


def test_quantities_are_numbers_with_their_units_however_they_are_written():
    assert quantities_in("It takes 1-2 hours, or 1 to 2 hours.") == {"1-2 h"}
    assert quantities_in("Keep 2GB free (additional_free_space: 2G).") == {"2 g"}
    assert quantities_in("1700 MB/s, a 256-bit key, 46%, 10 minutes, 3 months") == {
        "1700 m/s", "256 bit", "46 %", "10 min", "3 month",
    }  # fmt: skip
    assert quantities_in("in the 1990s, 5 apples, page 30") == set()
    # number words from two count as their digits; an age is said too many ways to hold to its unit
    assert quantities_in("a five-year term, twenty percent, one day") == {"5 year", "20 %"}
    assert quantities_in("He was 83 years old; you must be 18 years of age.") == set()
    assert quantities_in("5 milliseconds, 5 ms, 10 Mbps") == {"5 ms", "10 m/s"}
    assert quantities_in("twenty-five years") == set()  # not "five years": the digits check it


def test_a_quantity_needs_its_number_and_unit_together_in_a_passage():
    # report split charis-3 turn 3 (unanswerable): "1" and "2" are on the pages, "1-2 hours" is not
    pages = ["6.7 Command hierarchy. 1. Run dpkg-buildpackage.", "2. Upload the package."]
    assert unsupported_facts("The full build takes approximately 1-2 hours.", pages) == ["1-2 h"]
    # the value read from another line: 30 is on the page, not as the default's seconds
    manual = ["Default: 60 seconds between snapshots.", "See page 30 for the interval."]
    assert unsupported_facts("The default interval is 30 seconds.", manual) == ["30 s"]
    assert unsupported_facts("The default interval is 60 seconds.", manual) == []
    assert unsupported_facts("Set it to 2GB.", ["additional_free_space: 2G"]) == []
    # the user's own quantity may come back
    assert unsupported_facts("Yes, 90 seconds works.", manual, "Can I use 90 seconds?") == []


def test_the_conversation_may_supply_facts_but_is_never_cited():
    support = sentence_support("Harry Stone was appointed in 1946.", ["He was appointed that year."],
                               "User: Who did Harry Stone replace in 1946?", 0.5)  # fmt: skip
    assert support[0].supported
    assert support[0].passages == [0]  # "appointed" comes from the passage


def test_citations_are_the_fewest_passages_that_cover_the_sentence():
    passages = [
        "Bees perform a waggle dance.",
        "Unrelated text about ants.",
        "The dance shows where flowers are.",
    ]
    (support,) = sentence_support("Bees perform a dance that shows where flowers are.", passages, "", 0.5)
    assert support.supported
    assert support.passages == [0, 2]


def test_unsupported_sentences_are_cut_and_the_layout_kept():
    answer = (
        "Bees perform a waggle dance.\n- The dance was discovered in 1927.\n- It shows where flowers are."
    )
    passages = ["Bees perform a waggle dance.", "The dance shows where flowers are."]
    support = sentence_support(answer, passages, "", 0.5)
    assert [s.supported for s in support] == [True, False, True]  # "It" has the dance to point to
    assert keep_supported(answer, support) == "Bees perform a waggle dance.\n- It shows where flowers are."


def test_a_sentence_without_content_words_is_no_claim():
    (support,) = sentence_support("Yes.", ["Anything."], "", 0.9)
    assert support.supported and not support.claim


def test_a_sentence_about_the_conversation_is_no_claim_and_stays_whole():
    answer = "Yes, that's correct. I apologize for the confusion. The anthem is played before NFL games."
    support = sentence_support(answer, ANTHEM, "", 0.5)
    assert [s.claim for s in support] == [False, False, True]
    assert keep_supported(answer, support) == answer


def test_a_sentence_that_says_what_is_missing_is_no_claim():
    answer = (
        "The anthem is played before NFL games. However, the documents do not provide the year it began. "
        "I do not have specific information about college games."
    )
    support = sentence_support(answer, ANTHEM, "", 0.5)
    assert [s.claim for s in support] == [True, False, False]
    assert keep_supported(answer, support) == answer


def test_a_sentence_with_a_world_word_beside_the_dialogue_words_is_still_a_claim():
    (support,) = sentence_support("You are right, the fee is waived.", ANTHEM, "", 0.5)
    assert support.claim and not support.supported


def test_the_graph_drops_the_fabricated_sentence_and_keeps_its_support():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(grounding="facts", generate=[
        "The national anthem has been played before NFL games since the Second World War. "
        "The NFL started playing it in 1921."
    ])  # fmt: skip
    state = GRAPH.invoke({"task": task}, context=context)
    assert (
        state["answer"] == "The national anthem has been played before NFL games since the Second World War."
    )
    grounding = state["grounding"]
    assert grounding["dropped"] == 1
    assert [s["supported"] for s in grounding["sentences"]] == [True, False]
    assert grounding["sentences"][0]["document_ids"] == [task["contexts"][0]["document_id"]]
    assert grounding["answer_before"].endswith("in 1921.")


def test_an_answer_with_no_supported_sentence_is_an_abstention():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(
        grounding="facts", generate=["The NFL started playing the national anthem in 1921."]
    )
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["abstain_reason"] == AbstainReason.VERDICT and state["verdict"]["why"] == UNSUPPORTED
    assert state["answer"] == context.idk_answer


def test_grounding_off_keeps_the_answer():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(generate=["The NFL started playing the national anthem in 1921."], grounding="off")
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["answer"] == "The NFL started playing the national anthem in 1921."
    assert state.get("abstain_reason") is None


def test_evidence_first_answers_only_from_quotes_found_in_the_passages():
    reply = 'Quote: "Players stand on the sideline while the national anthem is played."\nAnswer: They stand.'
    answer, evidence = parse_evidence_first(reply, ANTHEM, "IDK")
    assert answer == "They stand."
    assert evidence["outcome"] == "answered"
    invented = "Quote: The NFL began playing the anthem in 1921.\nAnswer: In 1921."
    assert parse_evidence_first(invented, ANTHEM, "IDK")[0] == "IDK"
    assert parse_evidence_first("Answer: In 1921.", ANTHEM, "IDK")[1]["outcome"] == "declined: no quote"


def test_citation_markers_are_no_facts():
    (support,) = sentence_support("Bees dance [Passage 1].", ["Bees dance."], "", 0.5)
    assert support.supported and support.unsupported_facts == []


def test_the_check_is_on_by_default_and_keeps_the_answer_whole():
    assert Context().grounding == "whole"


def test_whole_shows_the_answer_as_written_with_its_unbacked_sentence_uncited():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    answer = (
        "The national anthem has been played before NFL games since the Second World War. "
        "The NFL started playing it in 1921."
    )
    state = GRAPH.invoke({"task": task}, context=fake_context(grounding="whole", generate=[answer]))
    assert state["answer"] == answer and state.get("abstain_reason") is None
    sentences = state["grounding"]["sentences"]
    assert [s["supported"] for s in sentences] == [True, False]
    assert state["verdict"]["signals"]["supported_share"] == 0.5


def test_whole_still_declines_an_answer_with_no_backed_claim():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(
        grounding="whole", generate=["The NFL started playing the national anthem in 1921."]
    )
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["abstain_reason"] == AbstainReason.VERDICT and state["verdict"]["why"] == UNSUPPORTED


def test_an_answer_without_a_claim_stands():
    task = make_task(["Is the anthem played before games?"], ANTHEM)
    state = GRAPH.invoke({"task": task}, context=fake_context(grounding="facts", generate=["Yes."]))
    assert state["answer"] == "Yes." and state.get("abstain_reason") is None


def test_restating_the_question_is_no_support_but_its_facts_may_be_used():
    question = "Does the American government protect us from foreign scams?"
    passages = ["Scam artists often pretend to be government officials."]
    (restated,) = sentence_support("Yes, the American government protects us from foreign scams.", passages,
                                   "", 0.5, question=question)  # fmt: skip
    assert not restated.supported and restated.unsupported_facts == []  # "American" comes from the question
    (answered,) = sentence_support("Scam artists pretend to be government officials.", passages, "", 0.5,
                                   question=question)  # fmt: skip
    assert answered.supported


def test_a_list_number_split_off_a_sentence_is_no_claim():
    answer = "Index funds track an index. 2. Mutual funds are managed."
    support = sentence_support(answer, ["Index funds track an index.", "Mutual funds are managed."], "", 0.4)
    assert [s.text for s in support if s.claim] == [
        "Index funds track an index.",
        "Mutual funds are managed.",
    ]
    assert unsupported_facts(answer, ["Index funds track an index.", "Mutual funds are managed."]) == []


FORCED = "The national anthem has been played before NFL games since the Second World War."


def test_a_forced_answer_stands_when_the_passages_back_it():
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(grounding="facts", generate=["I don't know.", FORCED], first_draft="may_decline")
    state = GRAPH.invoke({"task": task, "retrieve": False}, context=context)
    assert state["answer"] == FORCED and state["retries"] == 1 and state["decline_retried"]


def test_a_command_written_with_other_spacing_is_the_same_fact():
    # issue 73: the manual writes "PRAGMA journal_mode=WAL;", the 1.5B wrote "`PRAGMA journal_mode = WAL`"
    passages = ["To enable it, run PRAGMA journal_mode=WAL; on the database connection."]
    answer = "Use the `PRAGMA journal_mode = WAL` command. This command changes the journal mode."
    support = sentence_support(answer, passages, "", 0.5)
    assert support[0].supported and support[0].passages == [0]
    assert sentence_support("Run `PRAGMA journal_mode = DELETE`.", passages, "", 0.5)[0].unsupported_facts


def test_a_sentence_that_would_open_the_answer_pointing_to_a_dropped_one_goes_too():
    passages = ["The journal mode of the database changes to write-ahead logging."]
    answer = "Use the `PRAGMA wal_on` command. This command changes the journal mode of the database."
    support = sentence_support(answer, passages, "", 0.5)
    assert [s.supported for s in support] == [False, False]
    assert support[1].unsupported_facts == [ORPHANED]
    assert grounded_answer(answer, support) is None


def test_a_leading_yes_or_no_stays_when_its_sentence_is_dropped():
    passages = ["Discounts on water bills depend on household income."]
    answer = "Yes, the city gave 4000 people a discount. Discounts on water bills depend on household income."
    support = sentence_support(answer, passages, "", 0.5)
    assert [s.supported for s in support] == [False, True]
    assert keep_supported(answer, support) == "Yes. Discounts on water bills depend on household income."


def test_naming_a_passage_by_its_prompt_label_is_no_fact():
    assert unsupported_facts("The breeds listed in Document 1 include Beagle.", ["Breeds: Beagle."]) == []


BIRDS = [
    "Songbirds are part of the passerine order. Most of them sing to mark territory. "
    "Ornithologists count over five thousand species.",
    "Hummingbirds hover in front of flowers and feed on nectar.",
]


def test_anchored_support_wants_the_words_of_a_sentence_together_in_one_passage():
    stitched = "Hummingbirds are part of the songbirds."  # every word somewhere, never together
    assert sentence_support(stitched, BIRDS)[0].score == 1.0
    assert anchored_support(stitched, BIRDS, said_in_passage=False) == [0.6667]
    copied = "Songbirds are part of the passerine order."
    assert anchored_support(copied, BIRDS, said_in_passage=False) == [1.0]


def test_anchored_support_lets_words_already_said_stand_anywhere_in_the_same_passage():
    answer = "Hummingbirds feed on nectar."
    assert anchored_support(answer, BIRDS, question="What do hummingbirds eat?", window=1) == [1.0]
    # the passage must still hold them: the question's words alone back nothing
    assert anchored_support("Hummingbirds sing.", BIRDS, question="Do hummingbirds sing?", window=1) == [0.5]


def test_anchored_support_window_spans_consecutive_sentences():
    answer = "Songbirds sing to mark territory."
    assert anchored_support(answer, BIRDS, window=1) == [0.75]
    assert anchored_support(answer, BIRDS, window=2) == [1.0]
    assert anchored_support("Yes.", BIRDS) == [1.0]


def test_an_invented_reason_is_unsupported_although_the_topic_words_are_found():
    passages = ["debmake starts its version numbers from 4.0 to avoid confusion with the older debmake tool."]
    invented = "Debmake starts its version numbers from 4.0 because it was designed to be a more comprehensive and feature-rich tool."
    stated = "Debmake starts its version numbers from 4.0 to avoid confusion with the older debmake tool."
    [bad] = sentence_support(invented, passages, min_support=0.5)
    [good] = sentence_support(stated, passages, min_support=0.5)
    assert not bad.supported
    assert any(f.startswith("because") for f in bad.unsupported_facts)
    assert good.supported


def test_a_reason_the_passages_give_is_supported():
    passages = ["Bees dance because the dance tells other foragers the direction of the flowers."]
    [s] = sentence_support(
        "Bees dance because it tells foragers the direction of flowers.", passages, min_support=0.5
    )
    assert s.supported


BORG = [
    "borg prune removes archives that do not match the retention options.\n"
    "Use --keep-daily 7 to keep seven daily archives. The repository lives in ~/backups/repo.",
    "The compression is set with --compression zstd,3 and the key file is kept in keys/repo.key.",
]


def test_an_option_the_passages_lack_is_unsupported():
    support = sentence_support("Use --keep-hourly 24 to keep the hourly archives.", BORG, "", 0.0)
    assert "--keep-hourly" in support[0].unsupported_facts
    assert not support[0].supported


def test_an_invented_key_name_is_unsupported_although_its_words_are_there():
    support = sentence_support("Set prune_keep_daily in the repository config.", BORG, "", 0.0)
    assert support[0].unsupported_facts == ["prune_keep_daily"]


def test_a_technical_token_found_verbatim_is_supported_and_its_passage_cited():
    support = sentence_support("The key file is `keys/repo.key`.", BORG, "", 0.0)
    assert support[0].supported
    assert support[0].passages == [1]


def test_a_version_must_appear_verbatim():
    passages = ["zstd 1.5.4 is the version packaged here."]
    assert unsupported_facts("The packaged version is 1.5.2.", passages) == ["1.5.2"]
    assert unsupported_facts("The packaged version is 1.5.4.", passages) == []


def test_a_token_inside_a_longer_word_is_not_found():
    support = sentence_support("Use the -k option.", ["Run it with --keep-daily."], "", 0.0)
    assert "-k" in support[0].unsupported_facts


def test_a_technical_token_from_the_conversation_is_allowed():
    support = sentence_support("Run borg prune --dry-run first.", BORG, "User: what does --dry-run do?", 0.0)
    assert "--dry-run" not in support[0].unsupported_facts
