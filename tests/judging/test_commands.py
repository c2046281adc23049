"""A how-to answer quotes the command line its passage gives (judging/commands.py)."""

from __future__ import annotations

import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.judging import commands
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.testing import fake_context, make_task

# the shapes of the real-documents fresh split's passages: a Markdown README with code blocks, a PDF page
README = (
    "### Display help after errors\n\n"
    "The default behaviour for usage errors is to just display a short error message.\n"
    "You can change the behaviour to show the full help or a custom help message after an error.\n\n"
    "```js\nprogram.showHelpAfterError();\n// or\n"
    "program.showHelpAfterError('(add --help for additional information)');\n```\n"
)
VERSION = (
    "The default option flags are `-V` and `--version`, and when present the command prints the version "
    "number and exits.\n\n"
    "```js\nprogram.version('0.0.1');\n```\n\n"
    "You may change the flags and description by passing additional parameters to the `version` method.\n\n"
    "```js\nprogram.version('0.0.1', '-v, --vers', 'output the current version');\n```\n"
)
MANUAL = (
    "gnuplot 5.4 117\nThe format string\nspecifies comma- rather than space-separated columns. The same "
    "result could be achieved by specifying set\ndatafile separator comma.\nplot 'file' using 1:($2+$3) "
    "'%lf,%lf,%lf'\n"
)


@pytest.mark.parametrize(
    ("question", "how"),
    [
        ("How do I get the full help shown after a usage error?", True),
        ("And how can I make it -v, --vers instead?", True),
        ("What command lists the archives?", True),
        ("Which option makes it skip the initialization files?", True),
        ("How to list archives?", True),
        ("How many archives does prune keep?", False),
        ("Does it suggest the correct spelling?", False),
        ("How does the dance work?", False),
    ],
)
def test_how_to_questions_are_told_apart(question, how):
    assert commands.asks_how(question) is how


def test_the_code_line_holding_the_drafts_command_is_quoted():
    draft = "You can use the `showHelpAfterError` method provided in the `Commander.js` library."
    quote = commands.command_quote(
        "How do I get the full help shown after a usage error?", draft, "This method shows the help.",
        [{"text": VERSION}, {"text": README}],
    )  # fmt: skip
    assert quote is not None
    assert (quote.passage, quote.text, quote.tokens) == (
        1,
        "program.showHelpAfterError();",
        ("showHelpAfterError",),
    )
    assert commands.with_quote("This method shows the help.", quote) == (
        "This method shows the help.\n\nThe document says: \u201cprogram.showHelpAfterError();\u201d"
    )


def test_a_code_line_wins_over_a_sentence_and_the_questions_options_count():
    # the draft named the wrong method; the question's flags find the line that sets them
    draft = "Use the `.helpOption` method with the flags `-v` and `--vers`, overriding `-V` and `--version`."
    quote = commands.command_quote(
        "How do I change the default flags to -v, --vers?", draft, draft, [{"text": VERSION}]
    )
    assert (
        quote is not None
        and quote.text == "program.version('0.0.1', '-v, --vers', 'output the current version');"
    )


SYNOPSIS = (
    'Syntax:\nset datafile separator {whitespace | tab | comma | "chars"}\n'
    "See set datafile separator (p.\n120).\n"
)


def test_a_wrapped_pdf_sentence_is_quoted_whole_before_a_synopsis_or_a_cut_cross_reference():
    draft = "You can use the `set datafile separator` command in gnuplot."
    quote = commands.command_quote(
        "How do I read a CSV file?", draft, draft, [{"text": SYNOPSIS}, {"text": MANUAL}]
    )
    assert quote is not None
    assert quote.text == "The same result could be achieved by specifying set datafile separator comma."
    # with no such sentence, the synopsis is still the line that names the values; never "... (p."
    alone = commands.command_quote("How do I read a CSV file?", draft, draft, [{"text": SYNOPSIS}])
    assert alone is not None and alone.text.startswith("set datafile separator {whitespace")


@pytest.mark.parametrize(
    ("question", "draft", "answer"),
    [
        # not a how-to question
        ("Why does the version option exit?", "The `--version` flag exits.", "The `--version` flag exits."),
        # no token a passage holds; a one-letter option says too little to find its line
        ("How do I check the speed?", "Use the `--benchmark` option.", "Use the `--benchmark` option."),
        ("How do I check the speed?", "Use the `-b` option.", "Use the `-b` option."),
        # the answer says the line already
        ("How do I show help after errors?", "Call `program.showHelpAfterError();`.",
         "Call `program.showHelpAfterError();`."),
    ],
)  # fmt: skip
def test_nothing_is_quoted_without_a_line_to_add(question, draft, answer):
    passages = [{"text": README}, {"text": VERSION + "\n\ngit checkout -b <branch-name>\n"}]
    assert commands.command_quote(question, draft, answer, passages) is None


def test_a_lead_in_or_a_cut_sentence_is_no_quote():
    text = "To do so you might add the following line to your `.gitignore` file:\n\nSpecifying `hidden: true` will"
    draft = "Add `site/` to your `.gitignore` file and set `hidden: true`."
    assert (
        commands.command_quote("How do I keep the site out of git?", draft, draft, [{"text": text}]) is None
    )


def test_the_graph_quotes_the_command_and_cites_its_passage():
    question = "How do I get the full help shown after a usage error?"
    draft = "To get the full help shown after a usage error, call the `showHelpAfterError` method."
    model = ScriptedChatModel(responses=[draft])
    context = fake_context(generate_model=model, grounding="facts", rewrite=[question])
    task = make_task([question], [VERSION, README])
    out = build_graph(output="state").invoke({"task": task}, context=context)
    assert out["answer"] == f"{draft}\n\nThe document says: \u201cprogram.showHelpAfterError();\u201d"
    where = out["grounding"]["command_quote"]["passage"]  # an index into the kept passages
    assert out["kept_passages"][where]["text"] == README
    quote = [s for s in out["grounding"]["sentences"] if "program.showHelpAfterError();" in s["text"]]
    assert quote and quote[0]["supported"] and where in quote[0]["passages"]
    off = build_graph(output="state").invoke(
        {"task": task}, context=fake_context(generate_model=ScriptedChatModel(responses=[draft]),
                                             grounding="facts", rewrite=[question], howto_quote=False)
    )  # fmt: skip
    assert off["answer"] == draft and "command_quote" not in off["grounding"]


def test_a_person_is_shown_the_answer_and_then_the_quote():
    from tests.runtime.test_streaming import shown  # noqa: PLC0415 - the streaming tests' helper

    question = "How do I get the full help shown after a usage error?"
    draft = "To get the full help shown after a usage error, call the `showHelpAfterError` method."
    seen, state = shown(
        make_task([question], [VERSION, README]),
        fake_context(generate=[draft], grounding="facts", rewrite=[question]),
    )
    assert (
        "".join(seen)
        == state["answer"]
        == f"{draft}\n\nThe document says: \u201cprogram.showHelpAfterError();\u201d"
    )
    assert "<retract>" not in seen
