"""The clarify node, switched on by Context.clarify: batch answers with the question, chat asks."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging import clarify_options, underspecified
from mtrag_graph.judging.underspecified import (
    is_underspecified,
    passage_things,
    restates,
    unresolved_reference,
    untitled_name,
)
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.nodes.clarify import clarifying_question
from mtrag_graph.prompts import clarify as clarify_prompts
from mtrag_graph.testing import fake_context, make_task

LIBRARIES = ["The Alameda library opens at 9 am.", "The Monterey library opens at 10 am."]
TITLES = ["Alameda Free Library", "Monterey Public Library"]
QUESTION_ASKED = "Which library do you mean: Alameda Free Library or Monterey Public Library?"


def titled(task: dict) -> dict:
    """The task with the library passages' titles, as the corpora give them."""
    for passage, title in zip(task.get("contexts", []), TITLES, strict=False):
        passage["title"] = title
    return task


def judge(*replies: str) -> ScriptedChatModel:
    """A clarify-model fake replying in call order: the referent it names (when the turn has history),
    then the clarifying question. No replies: any call fails the test."""
    return ScriptedChatModel(responses=list(replies))


EARLIER = ["Which libraries open early?", "The Alameda library and the Monterey library open early."]


GRAPH = build_graph(output="state")


@pytest.fixture(autouse=True)
def every_option_is_sensible(monkeypatch):
    """The fake context's hashed words are no semantic space: here the option check keeps every option
    (it is tested with a scripted embedder in tests/nodes/test_clarify_options.py)."""
    monkeypatch.setattr(clarify_options, "OPTION_MIN_SIMILARITY", -1.0)


def test_a_first_turn_pointing_at_an_unnamed_thing_is_answered_with_a_clarifying_question():
    context = fake_context(clarify=True, clarify_model=judge())
    state = GRAPH.invoke(
        {"task": titled(make_task(["When does this library open?"], LIBRARIES))}, context=context
    )
    assert state["answer"] == QUESTION_ASKED
    assert state["clarification"]["asked"] is True
    # a first turn's "this library" points at nothing the user named, whatever the passages hold
    assert state["clarification"]["evidence"].startswith("orphan: 'this library' on a first turn")
    assert context.clarify_model.calls == []  # the question names the passages' alternatives, no model
    assert context.gate_model.calls == [] and context.generate_model.calls == []


def test_a_later_turn_pointing_at_something_the_last_exchange_never_named_is_clarified():
    turns = ["Which clinics are open?", "The Causeway clinic is open.", "When does this library open?"]
    context = fake_context(clarify=True, clarify_model=judge())
    state = GRAPH.invoke({"task": titled(make_task(turns, LIBRARIES))}, context=context)
    assert state["answer"] == QUESTION_ASKED and state["clarification"]["asked"] is True


def test_a_referent_named_in_the_last_exchange_is_clear_without_a_model_call():
    model = judge()
    context = fake_context(clarify=True, clarify_model=model)
    state = GRAPH.invoke(
        {"task": make_task([*EARLIER, "When does this library open?"], LIBRARIES)}, context=context
    )
    assert state["clarification"] == {"asked": False}
    assert model.calls == []


def test_unresolved_reference_uses_no_list_of_nouns():
    history = [{"speaker": "user", "text": "Tell me about the Bunker Hill tunnel."},
               {"speaker": "agent", "text": "The tunnel opened in 1990."}]  # fmt: skip
    assert unresolved_reference(history, "How long is this tunnel?") is None
    assert unresolved_reference(history, "Who designed this zeppelin?") == "this zeppelin"
    assert unresolved_reference([], "What was the quasar's brightness?") == "the quasar's"
    assert unresolved_reference(history, "Is that what they said?") is None
    assert unresolved_reference([], "Tell me about a specific lighthouse.") == "a specific lighthouse"


def test_a_demonstrative_that_is_a_subject_or_stands_for_a_list_points_at_nothing_unnamed():
    # MTRAG-UN tuning false alarms: "this" the subject of "is ... different from"; "those" the user's own list
    speech = [{"speaker": "user", "text": "what is Speech to Text service?"},
              {"speaker": "agent", "text": "It transcribes the human voice."}]  # fmt: skip
    assert unresolved_reference(speech, "Is this different from text to speech one?") is None
    assert unresolved_reference(speech, "Is this dialect different in Spain?") == "this dialect"
    fire = [{"speaker": "user", "text": "Is there any threshold combination of temp, humidity and wind?"},
            {"speaker": "agent", "text": "I do not have that information."}]  # fmt: skip
    question = "No, I meant if there is any point of those elements that trigger wildfire."
    assert unresolved_reference(fire, question) is None
    assert underspecified.untied_pointer(fire, question) is None
    euro = [{"speaker": "user", "text": "Why could the woes of some EU states end the Euro?"},
            {"speaker": "agent", "text": "Because Spain, Italy, Portugal and Greece will have to default."}]  # fmt: skip
    assert underspecified.untied_pointer(euro, "But those countries are no longer in recession.") is None
    # an answer's list of common words, or words that list nothing, is no set the user points at
    rain = [{"speaker": "user", "text": "What makes a storm?"},
            {"speaker": "agent", "text": "As the air gets cool, it forms thunderstorms and heavy rain; local, "
                                         "state, or federal agencies warn."}]  # fmt: skip
    assert underspecified.untied_pointer(rain, "Can those cyclones reach us?") == "those cyclones"


def test_a_kind_of_thing_and_a_compound_possessive_point_with_their_head_noun():
    bills = [{"speaker": "user", "text": "For all type of bills where should I learn?"},
             {"speaker": "agent", "text": "Contact the Consumer Affairs Branch."}]  # fmt: skip
    question = "Who can file a restraining order for this type of violence?"
    assert unresolved_reference(bills, question) == "this type of violence"
    assert unresolved_reference(bills, "Who pays for this type of bill?") is None
    parks = [{"speaker": "user", "text": "Are the Sonoma parks nice?"}, {"speaker": "agent", "text": "Yes."}]
    question = "What does the police department's Explorer program offer?"
    assert unresolved_reference(parks, question) == "the police department's"
    # the no-passage model's feature is read as it was fitted
    assert unresolved_reference(parks, question, as_fitted=True) is None
    assert unresolved_reference(bills, "Who can file one for this type of violence?", as_fitted=True) is None
    orders = [{"document_id": str(i), "title": t, "text": f"{t} protect people."}
              for i, t in enumerate(["Domestic Violence", "Workplace Violence Restraining Orders"])]  # fmt: skip
    question = "Who can file a restraining order for this type of violence?"
    assert underspecified.kind_and_names(bills, question, orders) == (
        "type of violence",
        ["Domestic Violence", "Workplace Violence Restraining Orders"],
    )


def test_a_turn_without_an_unresolved_reference_costs_no_model_call():
    model = judge()
    GRAPH.invoke(
        {"task": make_task(["When does the Alameda library open?"], LIBRARIES)},
        context=fake_context(clarify=True, clarify_model=model),
    )
    assert model.calls == []


def test_an_unresolved_reference_without_passages_to_choose_from_is_not_asked_about():
    # an UNANSWERABLE turn has no passages: it must stay "I don't know", never become a question; a
    # later turn here, since a first turn's "this library" points at nothing at all (the orphan signal)
    context = fake_context(clarify=True, clarify_model=judge())
    history = ["Do I need a card to borrow books?", "Yes, a library card is needed to borrow books."]
    state = GRAPH.invoke({"task": make_task([*history, "When does this library open?"], [])}, context=context)
    assert state["clarification"] == {"asked": False}
    assert state["abstain_reason"] == "no_evidence"
    first = GRAPH.invoke({"task": make_task(["When does this library open?"], [])}, context=context)
    assert first["clarification"]["evidence"].startswith("orphan: 'this library'")


def test_passages_about_one_thing_resolve_a_later_turns_reference():
    context = fake_context(clarify=True, clarify_model=judge(), generate=["It opens at 9 am."])
    turns = ["Where can I read newspapers?", "Many places keep newspapers.", "When does this library open?"]
    task = titled(make_task(turns, LIBRARIES[:1]))
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["clarification"] == {"asked": False}


def test_a_first_turns_pointer_is_asked_about_over_passages_about_one_thing():
    # MTRAG-UN: "Does this animal have antlers ...?" opening a conversation, one passage about moose
    moose = [{"document_id": "m", "title": "Moose", "text": "Moose have antlers."}]
    decided, evidence = is_underspecified(
        [], "Does this animal have antlers?", moose, fake_context(clarify=True)
    )
    assert decided is True and evidence[0].startswith("orphan: 'this animal'")


SERIES = [
    {
        "document_id": "n",
        "title": "Norman Bates",
        "text": "Norman Bates is a character of the TV series Bates Motel.",
    },
    {
        "document_id": "p",
        "title": "Pride and Prejudice (1995 TV series)",
        "text": "A 1995 TV series by the BBC.",
    },
    {"document_id": "b", "title": "Blackwater (Game of Thrones)", "text": "An episode of the TV series."},
    {
        "document_id": "s",
        "title": "The Shannara Chronicles",
        "text": "An American TV series based on the books.",
    },
]
EARLIER_DOW = [
    {"speaker": "user", "text": "Who created the Dow Jones index?"},
    {"speaker": "agent", "text": "Charles Dow and Edward Jones created it."},
]


def test_a_phrase_whose_head_several_things_carry_and_none_is_singled_out_is_asked_about():
    question = "I do not seem to recollect the author of the book the TV series is based on, could you help?"
    found = underspecified.several_named(EARLIER_DOW, question, SERIES)
    assert found is not None and found[0] == "the TV series" and found[1] == "series" and len(found[2]) == 4
    decided, evidence = is_underspecified(EARLIER_DOW, question, SERIES, fake_context(clarify=True))
    assert decided is True and evidence[0].startswith("several: 'the TV series' carried by 4 things")
    state = {"history": EARLIER_DOW, "question": question, "passages": SERIES}
    asked = clarifying_question(state, fake_context(clarify=True), decided_by="several")
    assert asked.startswith("Which series do you mean: Norman Bates, Pride and Prejudice")
    # decided by another signal, the question follows that one: the passages' titles here, of the kind
    # the user's noun the embedder puts nearest them (``kind_of_options``; this fake embedder hashes words)
    other = clarifying_question(state, fake_context(clarify=True), decided_by="definite")
    kind = other.removeprefix("Which ").split(" do you mean:")[0]
    assert kind in ("author", "book", "series") and "Blackwater (Game of Thrones)" in other


def test_a_word_only_one_title_has_singles_that_thing_out():
    question = "Who wrote the book the TV series Shannara is based on?"  # "shannara": one title's
    assert underspecified.several_named(EARLIER_DOW, question, SERIES) is None
    # two carriers are no choice: one is often the answer, the other an incidental passage
    assert underspecified.several_named(EARLIER_DOW, "Who wrote the TV series?", SERIES[:2]) is None
    # a ranking reads every one of the kind, a time is no thing
    assert underspecified.several_named(EARLIER_DOW, "Which is the best TV series?", SERIES) is None
    without = fake_context(
        clarify=True, clarify_signals=("rule", "pronoun", "passages", "person", "definite")
    )
    assert is_underspecified(EARLIER_DOW, "Who wrote the TV series?", SERIES, without)[0] is False


CLINICS = [
    {
        "document_id": "a",
        "title": "Hibbing VA Clinic | VA Minneapolis",
        "text": "Hibbing VA Clinic offers labs.",
    },
    {
        "document_id": "b",
        "title": "Hayward VA Clinic | VA Minneapolis",
        "text": "Hayward VA Clinic offers care.",
    },
]


def test_the_definite_noun_with_several_things_of_that_kind_in_the_passages_is_clarified():
    task = make_task(
        ["When are night courts held?", "On Wednesdays.", "What services does the clinic provide?"]
    )
    task["contexts"] = CLINICS
    state = GRAPH.invoke({"task": task}, context=fake_context(clarify=True, clarify_model=judge()))
    assert state["answer"] == "Which clinic do you mean: Hibbing VA Clinic or Hayward VA Clinic?"
    assert state["clarification"]["evidence"].startswith("passages: 'the clinic' with 2 of that kind")


def test_the_definite_noun_named_in_the_last_exchange_is_not_clarified():
    history = [{"speaker": "user", "text": "Tell me about the Hibbing clinic."},
               {"speaker": "agent", "text": "The Hibbing clinic offers labs."}]  # fmt: skip
    decided, _ = is_underspecified(history, "What services does the clinic provide?", CLINICS, fake_context())
    assert decided is False


def test_a_model_question_that_restates_the_users_is_replaced_by_the_fallback():

    question = "Does this outpatient clinic provide mental health services to veterans in Minneapolis?"
    assert restates("Does this outpatient clinic provide mental health services to veterans?", question)
    assert not restates("Do you mean the Causeway clinic or the Hibbing clinic?", question)
    context = fake_context(clarify_model=judge("Do outpatient clinics provide mental health services?"))
    # no referring phrase to ask about and passages about one thing: the model writes the question
    asked = "Do outpatient clinics provide mental health services to veterans in Minneapolis?"
    state = {"history": [], "question": asked, "passages": [{"title": "VA clinics", "text": LIBRARIES[0]}]}
    assert clarifying_question(state, context) == clarify_prompts.FALLBACK


def test_a_first_turn_pronoun_is_unresolved_unless_the_question_names_someone():

    assert unresolved_reference([], "How many film adaptations of it are there?") == "it"
    assert unresolved_reference([], "Were Shakespeare's plays popular when he was alive?") is None


def test_a_clear_turn_goes_on_to_the_usual_answer():
    context = fake_context(
        clarify=True, clarify_model=judge(), generate=["The Alameda library opens at 9 am."]
    )
    task = make_task(["When does the Alameda library open?"], LIBRARIES)
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["clarification"] == {"asked": False}
    assert state["answer"] == "The Alameda library opens at 9 am."


def test_a_clear_turn_without_passages_still_abstains():
    context = fake_context(clarify=True, clarify_model=judge())
    state = GRAPH.invoke({"task": make_task(["When does the Alameda library open?"], [])}, context=context)
    assert state["abstain_reason"] == "no_evidence"


def test_in_chat_mode_the_reply_resumes_the_graph_with_the_disambiguated_question():
    graph = build_graph(checkpointer=InMemorySaver(), output="state")
    context = fake_context(clarify=True, clarify_model=judge(), clarify_interrupt=True,
                           generate=["The Alameda library opens at 9 am."])  # fmt: skip
    config = {"configurable": {"thread_id": "c1"}}
    paused = graph.invoke(
        {"task": titled(make_task(["When does this library open?"], LIBRARIES))}, config, context=context
    )
    assert paused["__interrupt__"][0].value["clarifying_question"] == QUESTION_ASKED
    assert state_question_is_unchanged(graph, config)
    assert context.generate_model.calls == []
    state = graph.invoke(Command(resume="the Alameda one"), config, context=context)
    assert state["question"] == "When does this library open? (the Alameda one)"
    assert state["clarification"]["reply"] == "the Alameda one"
    assert state["answer"] == "The Alameda library opens at 9 am."


def state_question_is_unchanged(graph, config) -> bool:
    return graph.get_state(config).values["question"] == "When does this library open?"


def test_clarify_is_on_by_default_and_off_when_the_context_says_so():
    assert Context().clarify
    model = judge()
    state = GRAPH.invoke(
        {"task": titled(make_task(["When does this library open?"], LIBRARIES))},
        context=fake_context(clarify_model=model, clarify=False),
    )
    assert model.calls == [] and not state.get("clarification")


UNRELATED = [{"speaker": "user", "text": "How do I renew a passport?"},
             {"speaker": "agent", "text": "Fill in form DS-82 and mail it."}]  # fmt: skip


def test_a_later_turn_pronoun_is_clarified_when_the_conversation_names_none_of_the_passages_things():
    decided, evidence = is_underspecified(
        UNRELATED, "What services does it provide?", CLINICS, fake_context()
    )
    assert decided is True and evidence[-1].startswith("pronoun: 'it'")


def test_a_later_turn_pronoun_is_resolved_by_a_thing_the_conversation_named():
    history = [{"speaker": "user", "text": "Is there a clinic in Hibbing?"},
               {"speaker": "agent", "text": "Yes, there is one."}]  # fmt: skip
    assert is_underspecified(history, "What services does it provide?", CLINICS, fake_context())[0] is False


def test_a_later_turn_pronoun_is_not_asked_about_over_untitled_passages():
    # an untitled post's most used name is often incidental: no sign that "it" is one of several things
    untitled = [{**passage, "title": ""} for passage in CLINICS]
    assert (
        is_underspecified(UNRELATED, "What services does it provide?", untitled, fake_context())[0] is False
    )


def test_a_noun_named_earlier_than_the_last_exchange_still_resolves_the_reference():
    history = [{"speaker": "user", "text": "Tell me about the novel Carrie."},
               {"speaker": "agent", "text": "It is a horror book."}, *UNRELATED]  # fmt: skip
    assert unresolved_reference(history, "Briefly narrate the story of this novel.") is None


def test_a_demonstrative_of_time_is_no_reference_to_a_thing():
    assert unresolved_reference([], "Where do the cardinals play this week") is None
    assert unresolved_reference([], "Where do the cardinals play this stadium") == "this stadium"


def test_a_definite_noun_whose_alternative_the_user_names_in_full_is_not_clarified():
    walls = [{"document_id": "a", "title": "Great Wall of China", "text": "The Great Wall of China is long."},
             {"document_id": "b", "title": "Badaling", "text": "The Badaling Great Wall is near Beijing."}]  # fmt: skip
    decided, _ = is_underspecified([], "what is the great wall of china built out of", walls, fake_context())
    assert decided is False
    decided, evidence = is_underspecified([], "how old is the great wall", walls, fake_context())
    assert decided is True and evidence[-1].startswith("passages: 'the great'")


def test_an_untitled_passage_is_named_by_the_name_it_uses_most():
    post = (
        "In the US, gift tax applies. A Roth IRA grows tax free, and a Roth IRA can hold stocks at Vanguard."
    )
    assert untitled_name(post) == "Roth IRA"
    assert untitled_name("it is correct, in my view, to pay it off.") == ""


def test_the_question_names_untitled_passages_by_their_names_not_their_first_words():
    posts = [{"document_id": "a", "title": "", "text": "In the US, you can open a Roth IRA. A Roth IRA is taxed once."},
             {"document_id": "b", "title": "", "text": "It is correct: buy a Vanguard fund. Vanguard funds are cheap."}]  # fmt: skip
    assert passage_things(posts) == ["Roth IRA", "Vanguard"]
    question = clarifying_question(
        {"history": [], "question": "How is it taxed?", "passages": posts}, fake_context()
    )
    assert question == "Which one do you mean: Roth IRA or Vanguard?"


def test_a_dummy_it_on_a_first_turn_is_no_reference():
    assert unresolved_reference([], "Is it worth having a web chat widget on my website?") is None
    assert unresolved_reference([], "Why is it so important to have good credit?") is None
    assert unresolved_reference([], "How is it transmitted?") == "it"


def test_they_after_a_plural_noun_of_the_same_turn_is_resolved_by_it():
    question = "Do common stocks and preferred stocks differ in the share of the company they represent?"
    assert unresolved_reference([], question) is None
    assert unresolved_reference([], "Do they represent a share of the company?") == "they"


ASTRONAUTS = [
    {
        "document_id": "a",
        "title": "Ellen Ochoa - NASA",
        "text": "Ellen Ochoa flew in 1993. She led a center.",
    },
    {
        "document_id": "b",
        "title": "Kalpana Chawla - NASA",
        "text": "Kalpana Chawla flew in 1997. She died in 2003.",
    },
]
# the conversation names a word of the titles ("NASA"), so the pronoun signal is silent
INSTRUMENT = [{"speaker": "user", "text": "How does NASA's MOXIE make oxygen?"},
              {"speaker": "agent", "text": "It splits carbon dioxide in a heated cell."}]  # fmt: skip


def test_a_later_turn_she_with_nobody_of_that_gender_in_the_conversation_is_clarified():
    question = "I am reading about women NASA astronauts. Can you tell me more about her?"
    decided, evidence = is_underspecified(INSTRUMENT, question, ASTRONAUTS, fake_context())
    assert decided is True and evidence[-1].startswith("person: 'her'")


def test_she_is_resolved_by_a_feminine_pronoun_in_the_conversation_or_a_name_before_it():
    history = [{"speaker": "user", "text": "Who led the NASA Johnson center?"},
               {"speaker": "agent", "text": "She was its first Hispanic director."}]  # fmt: skip
    assert is_underspecified(history, "What awards has she won?", ASTRONAUTS, fake_context())[0] is False
    named = "I like Ellen Ochoa. What awards has she won?"
    assert is_underspecified(INSTRUMENT, named, ASTRONAUTS, fake_context())[0] is False


def test_a_signal_left_out_of_clarify_signals_decides_nothing():
    only_rule = fake_context(clarify_signals=("rule",))
    assert is_underspecified(UNRELATED, "What services does it provide?", CLINICS, only_rule)[0] is False
    assert is_underspecified(UNRELATED, "What services does it provide?", CLINICS, fake_context())[0] is True


def test_an_unknown_signal_is_an_error_naming_the_field():
    try:
        is_underspecified([], "What is it?", CLINICS, fake_context(clarify_signals=("rule", "vibes")))
    except ValueError as error:
        assert "clarify_signals" in str(error) and "vibes" in str(error)
    else:
        raise AssertionError("an unknown signal was accepted")


COUNTRIES = [
    {"document_id": "a", "title": "Israel", "text": "Israel has about 9 million people."},
    {"document_id": "b", "title": "History of the Jews in Egypt", "text": "Few Jews live in Egypt today."},
]


def test_the_definite_noun_over_titled_things_the_conversation_never_names_is_clarified():
    history = [{"speaker": "user", "text": "When was Cahokia abandoned?"},
               {"speaker": "agent", "text": "Around 1300."}]  # fmt: skip
    question = "What is the Jewish population in the country?"
    decided, evidence = is_underspecified(history, question, COUNTRIES, fake_context())
    assert decided is True and evidence[-1].startswith("definite: 'the country'")
    without = fake_context(clarify_signals=("rule", "pronoun", "passages", "person"))
    assert is_underspecified(history, question, COUNTRIES, without)[0] is False
    # a conversation that names one of the passages' things resolves it
    named = [{"speaker": "user", "text": "Tell me about Israel."}, {"speaker": "agent", "text": "A country."}]
    assert is_underspecified(named, question, COUNTRIES, fake_context())[0] is False


def test_the_reference_noun_inside_a_title_does_not_name_that_thing():
    plays = [{"document_id": "a", "title": "Richard III (play)", "text": "A history play by Shakespeare."},
             {"document_id": "b", "title": "Guinea pig", "text": "A rodent kept as a pet."}]  # fmt: skip
    decided, evidence = is_underspecified([], "Is the play historically accurate?", plays, fake_context())
    assert decided is True and evidence[-1].startswith("definite: 'the play'")


def test_the_definite_noun_after_a_ranking_adjective_is_the_next_word():
    assert underspecified.unresolved_definite([], "which sport awards the oldest trophy") == ["trophy"]


POSTS = [
    {"document_id": "a", "title": "", "text": "Open a Roth IRA. A Roth IRA grows. Then a Roth IRA pays out."},
    {"document_id": "b", "title": "", "text": "Buy at Vanguard. Fees at Vanguard are low; Vanguard is big."},
]


def test_a_later_pronoun_over_given_posts_that_each_name_one_thing_often_is_clarified():
    question = "How much does it pay annually?"
    decided, evidence = is_underspecified(UNRELATED, question, POSTS, fake_context())
    assert decided is True and evidence[-1].startswith("pronoun: 'it'")
    # retrieved posts: a post's names are too often incidental to count
    assert is_underspecified(UNRELATED, question, POSTS, fake_context(), retrieved=True)[0] is False
    # a post that names its thing only once or twice does not count
    once = [{**p, "text": p["text"].split(".")[0] + "."} for p in POSTS]
    assert is_underspecified(UNRELATED, question, once, fake_context())[0] is False


def test_a_reference_whose_noun_names_one_of_the_documents_is_not_asked_about():
    passages = [
        {"document_id": "README.md#chunk=1", "title": "README", "text": "Benchmarks of zstd 1.5.1 ..."},
        {"document_id": "README.md#chunk=2", "title": "README", "text": "zstd -1 reaches 2.896 ..."},
        {
            "document_id": "CONTRIBUTING.md#chunk=1",
            "title": "Contributing to Zstandard",
            "text": "Pull requests ...",
        },
        {
            "document_id": "CONTRIBUTING.md#chunk=2",
            "title": "Contributing to Zstandard",
            "text": "Run the tests ...",
        },
    ]
    question = "In the README's benchmark table, what compression ratio does zstd reach?"
    decision, evidence = is_underspecified([], question, passages, Context(), retrieved=True)
    assert decision is False, evidence


def test_pages_of_one_manual_are_one_thing_not_rival_referents():
    history = [
        {"speaker": "user", "text": "What does the REST API do?"},
        {"speaker": "agent", "text": "It serves the state."},
    ]
    passages = [
        {
            "document_id": "docs/intro.html#chunk=1",
            "title": "Introduction",
            "text": "Patroni runs a REST API.",
        },
        {
            "document_id": "docs/env.html#chunk=3",
            "title": "Environment Configuration Settings",
            "text": "PATRONI_RESTAPI_LISTEN: 8008.",
        },
    ]
    decision, evidence = is_underspecified(
        history, "Which port does it listen on in the examples?", passages, Context(), retrieved=True
    )
    assert decision is False, evidence


def test_over_documents_a_definite_noun_with_one_referent_is_not_asked_about():
    passages = document_passages(
        ("README.md#chunk=1", "README", "The format is documented in RFC 8878."),
        ("README.md#chunk=2", "README", "zstd -1 reaches 2.896 ..."),
        ("CONTRIBUTING.md#chunk=1", "Contributing to Zstandard", "Pull requests ..."),
        ("CONTRIBUTING.md#chunk=2", "Contributing to Zstandard", "Run the tests ..."),
    )
    decision, evidence = is_underspecified(
        [],
        "In which year was the RFC that documents the zstd format published?",
        passages,
        Context(),
        retrieved=True,
    )
    assert decision is False, evidence


def test_over_documents_a_noun_with_names_in_two_documents_is_asked_about():
    passages = document_passages(
        ("a/guide.pdf#page=2&chunk=1", "Guide A", "The Patroni Server listens on 8008."),
        ("a/guide.pdf#page=3&chunk=2", "Guide A", "More about it."),
        ("b/manual.pdf#page=5&chunk=9", "Manual B", "The Backup Server listens on 9000."),
        ("b/manual.pdf#page=6&chunk=10", "Manual B", "More about that."),
    )
    decision, evidence = is_underspecified(
        [], "Which port does this server listen on?", passages, Context(), retrieved=True
    )
    assert decision is True, evidence


def document_passages(*rows: tuple[str, str, str]) -> list[dict[str, str]]:
    """Passages cut from a user's documents: (document_id, title, text) each."""
    return [{"document_id": doc_id, "title": title, "text": text} for doc_id, title, text in rows]


CHARGES = [
    "Are there different types of charges?",
    "The types of charges are Fixed, Metered, Tiered, and Reserved.",
]


def test_a_turn_pointing_at_one_of_several_things_the_last_answer_named_is_a_rival_reference():
    history = [{"speaker": s, "text": t} for s, t in zip(("user", "agent"), CHARGES, strict=True)]
    assert underspecified.rival_reference(history, "How is this type of charge calculated?") == "charge"
    # "one of them" is any of them: "Can I restore one of them to a different region?"
    assert underspecified.rival_reference(history, "Can I cancel one of them?") is None
    # its twin names the one it means; a name after the demonstrative is one; a time is no thing
    assert underspecified.rival_reference(history, "How is a tiered charge calculated?") is None
    assert underspecified.rival_reference(history, "Is this Tiered charge monthly?") is None
    assert underspecified.rival_reference(history, "Will the charges rise this year?") is None
    # "the" is left out: on MTRAG's reference turns it fired only on things the conversation had settled
    assert underspecified.rival_reference(history, "How is the charge calculated?") is None
    # an answer that names one of that kind, or no answer yet
    one = [
        {"speaker": "user", "text": "Any charge?"},
        {"speaker": "agent", "text": "There is a fixed charge."},
    ]
    assert underspecified.rival_reference(one, "How is this charge calculated?") is None
    assert underspecified.rival_reference([], "How is this charge calculated?") is None


def test_a_rival_reference_without_passages_is_asked_back_by_its_kind():
    task = make_task([*CHARGES, "How is this type of charge calculated?"], [])
    state = GRAPH.invoke({"task": task}, context=fake_context(clarify=True, clarify_model=judge()))
    assert state["clarification"]["asked"] is True
    assert state["answer"] == "Which charge do you mean?"
    assert state["clarification"]["evidence"].startswith("rivals: 'charge'")
    signals = tuple(s for s in Context().clarify_signals if s != "rivals")
    off = fake_context(clarify=True, clarify_model=judge(), clarify_signals=signals)
    assert GRAPH.invoke({"task": task}, context=off)["clarification"]["asked"] is False


ECLIPSES = [
    "When can I see an eclipse?",
    "A lunar eclipse is seen at night from half the Earth; a solar eclipse only along a narrow path.",
]


def test_the_noun_after_an_answer_that_named_several_kinds_of_it_is_a_rival_kind():
    history = [{"speaker": s, "text": t} for s, t in zip(("user", "agent"), ECLIPSES, strict=True)]
    kinds = underspecified.rival_kinds
    assert kinds(history, "How long does the eclipse last?") == ("eclipse", ["lunar", "solar"])
    # the twin names its kind; a phrase the conversation says that goes on after the noun is another thing
    assert kinds(history, "How long does the lunar eclipse last?") is None
    seasons = [*history, {"speaker": "user", "text": "And the eclipse season?"}]
    assert kinds(seasons, "When does the eclipse season start?") is None
    assert kinds(seasons, "When does the eclipse start?") == ("eclipse", ["lunar", "solar"])
    assert kinds(history, "How long does the eclipse's shadow last?") is None
    assert kinds(history, "How are the eclipses predicted?") is None  # a plural: all of them
    # an answer that names one kind, a name ("the Moon"), no conversation
    one = [{"speaker": "user", "text": "Eclipses?"}, {"speaker": "agent", "text": "A lunar eclipse is red."}]
    assert kinds(one, "How long does the eclipse last?") is None
    assert kinds(history, "How far is the Moon?") is None
    assert kinds([], "How long does the eclipse last?") is None
    # words that count or rank are no kinds ("several SDKs", "other SDKs")
    counted = [{"speaker": "user", "text": "SDKs?"},
               {"speaker": "agent", "text": "There are several SDKs and other SDKs."}]  # fmt: skip
    assert kinds(counted, "Where do I get the SDK?") is None


def test_a_rival_kind_without_passages_is_asked_back_naming_the_kinds():
    task = make_task([*ECLIPSES, "How long does the eclipse last?"], [])
    state = GRAPH.invoke({"task": task}, context=fake_context(clarify=True, clarify_model=judge()))
    assert state["clarification"]["asked"] is True
    assert state["answer"] == "Which eclipse do you mean: lunar eclipse or solar eclipse?"
    assert state["clarification"]["evidence"].startswith("kinds: 'the eclipse'")
    signals = tuple(s for s in Context().clarify_signals if s != "kinds")
    off = fake_context(clarify=True, clarify_model=judge(), clarify_signals=signals)
    assert GRAPH.invoke({"task": task}, context=off)["clarification"]["asked"] is False


def test_a_first_turn_too_bare_to_answer_is_found_by_its_words():
    bare = underspecified.bare_first_turn
    assert bare([], "What are the steps?") == ["steps"]
    assert bare([], "Is there a cure?") == ["cure"]
    assert bare([], "When did the movie come out?") == ["movie", "come"]
    assert bare([], "Why do bees dance?") is None  # a plural without a determiner names the subject
    assert bare([], "Why does ice float?") is None  # no determiner-led noun: nothing left open
    assert bare([], "When does this library open?") is None  # a pointer: the other signals weigh it
    assert bare([], "How tall is it?") is None
    assert bare([], "What are the steps in IBM Cloud?") is None  # a name
    assert bare([], "What is the limit for 2024?") is None  # a number
    assert bare([], "What is the best diet for the heart and the lungs?") is None  # three content words
    assert bare([], "hi, can you help me") is None  # conversational: no content word
    assert bare([{"speaker": "user", "text": "How do I sort a list?"}], "What are the steps?") is None


def test_a_first_turns_pointer_with_nothing_to_point_at_is_found():
    orphan = underspecified.orphan_first_turn
    assert orphan([], "When was it enacted in California?") == "it"
    assert orphan([], "Briefly narrate the story of this novel.") == "this novel"
    assert orphan([], "Who was he?") == "he"
    assert orphan([], "What is it used for?") == "it"
    assert orphan([], "where does it snow the most in north carolina?") is None  # the weather's "it"
    assert orphan([], "Is it possible to freeze bread?") is None  # a dummy "it"
    assert orphan([], "Why do some states report more cases, and where are these states?") is None
    assert orphan([], "where is bone marrow found what does it do for the body") is None  # named before
    assert orphan([], "Did Lincoln free them?") is None  # a name the pronoun may stand beside
    assert orphan([], "What should I do this week?") is None  # a time, not a thing
    assert orphan([{"speaker": "user", "text": "Tell me about the Alamo."}], "When was it built?") is None


def _asked_by_the_signal_alone(task: dict, signal: str, question: str, evidence: str) -> None:
    """The turn is asked ``question`` with ``evidence`` from ``signal``, and not asked without that signal
    (nor the no-passage model behind it)."""
    state = GRAPH.invoke({"task": task}, context=fake_context(clarify=True, clarify_model=judge()))
    assert state["clarification"]["asked"] is True
    assert state["answer"] == question
    assert state["clarification"]["evidence"].startswith(evidence)
    without = tuple(s for s in underspecified.SIGNALS if s != signal)
    off = fake_context(clarify=True, clarify_model=judge(), clarify_signals=without, clarify_no_passages=None)
    assert GRAPH.invoke({"task": task}, context=off)["clarification"]["asked"] is False


def test_a_first_turn_pointing_at_nothing_without_passages_asks_what_it_means():
    task = make_task(["When was it enacted?"], [])
    _asked_by_the_signal_alone(task, "orphan", "What do you mean by 'it'?", "orphan: 'it' on a first turn")


def test_a_bare_first_turn_without_passages_is_asked_back_and_with_passages_left_to_the_signals():
    task = make_task(["What are the steps?"], [])
    state = GRAPH.invoke({"task": task}, context=fake_context(clarify=True, clarify_model=judge()))
    assert state["clarification"]["asked"] is True
    assert state["answer"] == "Which steps do you mean?"
    assert state["clarification"]["evidence"].startswith("bare: a first turn with only 'steps'")
    off = fake_context(clarify=True, clarify_model=judge(), clarify_signals=("rule", "pronoun"))
    assert GRAPH.invoke({"task": task}, context=off)["clarification"]["asked"] is False
    # over one library's pages the definite noun is resolved: the signals decide, not the bare rule
    context = fake_context(clarify=True, clarify_model=judge(), generate=["It lends books."])
    one = titled(make_task(["What does the library offer?"], LIBRARIES[:1]))
    assert GRAPH.invoke({"task": one}, context=context)["clarification"] == {"asked": False}


def test_a_later_turns_pointer_at_a_kind_never_named_is_found():
    pointer = underspecified.untied_pointer
    clinic = [
        {"speaker": "user", "text": "What does the Hayward clinic offer?"},
        {"speaker": "agent", "text": "It offers lab tests and mental health care."},
    ]
    assert pointer(clinic, "What hours does this library keep?") == "this library"
    assert pointer(clinic, "Who runs the museum's shop?") == "the museum's"
    assert pointer(clinic, "Does this clinic take walk-ins?") is None  # named
    assert pointer(clinic, "Are these lab tests free?") is None  # the noun was said
    assert pointer(clinic, "Is it open this week?") is None  # a time
    assert pointer(clinic, "this sounds useful, is it free?") is None  # a verb after "this"
    assert pointer(clinic, "are these regionally funded?") is None  # an adverb
    assert (
        pointer(clinic, "I keep reading the word Medicaid, what does this term mean?") is None
    )  # named in the turn
    assert pointer([], "What hours does this library keep?") is None  # a first turn: orphan_first_turn


def test_a_later_turn_pointing_at_a_kind_never_named_without_passages_asks_which():
    task = make_task(
        ["What does the Hayward clinic offer?", "It offers lab tests.", "What hours does this library keep?"],
        [],
    )
    _asked_by_the_signal_alone(task, "pointer", "Which library do you mean?", "pointer: 'this library'")


def test_without_passages_the_question_asks_which_thing_the_noun_means():
    state = {"history": [], "question": "What services does the clinic provide?", "passages": None}
    assert clarifying_question(state, fake_context()) == "Which clinic do you mean?"


def test_without_passages_the_question_asks_what_the_pronoun_means():
    state = {"history": [], "question": "How can we enhance its performance?", "passages": None}
    assert clarifying_question(state, fake_context()) == "What do you mean by 'it'?"


def test_a_question_pointing_at_nothing_has_no_referring_phrase():
    assert underspecified.referring_phrase([], "How do bees communicate?") is None


def test_a_turn_without_passages_costs_no_language_model_call():
    model = judge()
    history = [
        {"speaker": "user", "text": "What is the capital of Peru?"},
        {"speaker": "agent", "text": "Lima."},
    ]
    decided, _ = is_underspecified(history, "How tall is it?", None, fake_context(clarify_model=model))
    assert decided is False and model.calls == []
