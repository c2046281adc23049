"""What a clarifying question names: the head of the user's phrase, the sense check, the option check."""

from __future__ import annotations

import numpy as np

from mtrag_graph.judging.clarify_options import (
    OPTION_MIN_SIMILARITY,
    kind_of_options,
    modifier_use,
    noun_phrase,
    phrase_heads,
    sensible_options,
    user_noun,
)

SITCOM = "Who played the father in this TV sitcom on ABC?"
KEY = "Could you shed light on the key aspects of the power wielded by the Prime Minister?"


def test_the_noun_asked_about_is_the_head_of_the_users_phrase_not_the_word_after_its_determiner():
    assert noun_phrase(SITCOM, SITCOM.index("TV")) == ["TV", "sitcom"]
    assert user_noun(SITCOM, "tv") == "sitcom"
    assert user_noun("What are the services offered by this state library?", "state") == "library"
    assert user_noun("Is this California county recognized for its support?", "California") == "county"
    assert user_noun("What are the potential rewards of this credit card?", "credit") == "card"


def test_the_noun_keeps_the_users_spelling():
    assert user_noun("What are the best practices for using the SDK?", "sdk") == "SDK"


def test_the_verb_or_predicate_after_an_inverted_subject_is_left_out():
    assert user_noun("When did the tv show end?", "tv") == "show"
    assert user_noun("How does the liquidity of this index fund compare to ETFs?", "index") == "fund"
    assert user_noun("Is the covid vaccine safe?", "covid") == "vaccine"
    assert user_noun("When was the cotton gin invented?", "cotton") == "gin"
    assert user_noun("When was the famous basketball player born?", "famous") == "player"


def test_a_phrase_that_is_no_subject_keeps_its_last_word():
    assert user_noun("Can I visit the law library?", "law") == "library"  # the subject is "I"
    assert user_noun("What is the filing fee?", "filing") == "fee"  # the phrase completes the copula
    assert user_noun("Is the Great Wall of China open?", "Great") == "Wall"  # "of" goes on with the phrase
    assert user_noun("Is this the best river for fishing?", "best") == "river"  # the subject is "this"


def test_adverbs_prepositions_and_possessives_end_the_phrase():
    assert user_noun("Are there new features in the cloud platform recently?", "cloud") == "platform"
    assert user_noun("What is the secret behind this burger?", "secret") == "secret"
    assert user_noun("What was the hurricane's top speed?", "hurricane") == "hurricane"


def test_a_word_not_found_after_a_determiner_is_returned_as_the_question_spells_it():
    assert user_noun("Tell me more about SDK versions?", "sdk") == "SDK"


def test_a_word_that_qualifies_a_plural_noun_offers_no_readings():
    assert modifier_use(KEY, "key") is True
    assert modifier_use("What are the key factors to consider?", "key") is True


def test_a_noun_before_its_verb_a_compound_or_the_end_still_offers_readings():
    assert modifier_use("By how much did the gin increase production?", "gin") is False
    assert modifier_use("Is a jail sentence given for the support conviction?", "support") is False
    assert modifier_use("What are the best practices for using the SDK?", "SDK") is False
    assert modifier_use("What is the key of the national anthem?", "key") is False


TOPICS = {
    "crypto": {"session", "diffie", "hellman", "secret", "encryption"},
    "music": {"anthem", "song"},
    "books": {"novel", "heart", "walk", "darkness"},
}


def topic_embed(texts):
    """A scripted embedder: a text's vector counts its words of each topic (and a little of none)."""
    rows = []
    for text in texts:
        said = set(text.lower().replace("-", " ").replace("?", " ").split())
        rows.append([0.1, *(len(said & words) for words in TOPICS.values())])
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_options_far_from_the_users_question_are_dropped():
    options = ["session key", "song key", "secret key"]
    assert sensible_options(options, "What is the key of the national anthem song?", topic_embed) == [
        "song key"
    ]
    assert sensible_options(options, "Is the session key sent in the clear?", topic_embed) == [
        "session key",
        "secret key",
    ]


def test_an_option_whose_words_ran_together_in_the_passage_is_dropped():
    options = ["Sierra County", "County DepartmentsHow Do", "LeBron James County"]
    kept = sensible_options(options, "Which county?", topic_embed, threshold=-1.0)
    assert kept == ["Sierra County", "LeBron James County"]


def test_the_shipped_threshold_is_a_cosine_between_nothing_and_sameness():
    assert 0.0 < OPTION_MIN_SIMILARITY < 1.0


def test_the_nouns_a_question_points_with_are_its_phrases_heads_past_a_possessive():
    assert phrase_heads("Briefly narrate the story of this novel.") == ["story", "novel"]
    assert phrase_heads("What is the origin of the animal's breed?") == ["origin", "breed"]
    assert phrase_heads("When did the Grey's Anatomy season premiere?") == ["season"]
    # an initialism is one word of its phrase, and a relative clause ends the phrase after its head
    assert phrase_heads("How did the U.S. state derive its name?") == ["state"]
    assert phrase_heads("How did the U.S. state that has no border derive its name?") == ["state"]
    assert phrase_heads("Where does the team that won play?") == ["team"]
    assert phrase_heads("Tell me about the U.S.") == []  # no word of letters alone
    assert phrase_heads("When did the show air?") == ["show"]  # the verb after the subject still dropped


def test_titles_without_a_kind_are_named_by_the_users_noun_nearest_them():
    titles = ["The Tell-Tale Heart", "The Long Walk", "The Left Hand of Darkness"]
    assert kind_of_options("Briefly narrate the story of this novel.", titles, topic_embed) == "novel"
    assert kind_of_options("When was the famous basketball player born?", titles, topic_embed) == "player"
    assert kind_of_options("How is it taxed?", titles, topic_embed) is None
