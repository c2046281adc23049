"""Underspecified turns: ask a clarifying question instead of answering (or saying "I don't know").

Does the user's turn point at one specific thing ("this library", "her") that the conversation never
named? If so, a short clarifying question naming the options found. In batch mode that question is
the answer; in a conversation (``asks_the_user``) the question is stored and ``nodes/ask_user.py``
interrupts the graph with it; the user's reply, passed back with ``Command(resume=reply)``, is added to
the question the rest of the graph answers.

Switched on with ``Context.clarify`` (the ``full`` preset, ``answer --clarify``, the chat). It runs
right after ``load_task`` when the passages are given (see ``mtrag_graph.graph``), because it must also
see turns without passages, which ``evidence_precheck`` would otherwise turn into "I don't know" before
anything else runs. With retrieval (full RAG, the chat over an index) it runs after ``rerank`` on the
kept passages, the ones the turn would be answered from; a reply in the chat then retrieves again.

The decision and its heuristics are in ``judging/underspecified.py``, what the question names (the user's
own noun, options about what the user asked) in ``judging/clarify_options.py``; this node only calls them,
builds the question and stores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.clarify_options import kind_of_options, sensible_options
from mtrag_graph.judging.underspecified import (
    is_underspecified,
    kind_and_names,
    kind_options,
    referring_phrase,
    restates,
    rival_kinds,
    rival_reference,
)
from mtrag_graph.models import get_chat_model, get_embedder, invoke_text
from mtrag_graph.nodekit.replies import question_message
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts import clarify as prompts
from mtrag_graph.prompts.build import clarify_messages
from mtrag_graph.state import State

MAX_OPTIONS = 3
QUESTION_MAX_TOKENS = 60  # a model-written clarifying question is one short sentence


def _options(names: Sequence[str]) -> str:
    shown = list(names)[:MAX_OPTIONS]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def question_options(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    context: Context,
    *,
    decided_by: str | None = None,
) -> tuple[str, list[str]] | None:
    """What a clarifying question may name before the option check: the kind and its kinds that an
    earlier answer named, without passages ("SDK", ["Server-side SDK", ...]: ``rival_kinds``); else the
    reference's noun and the names of that kind in the passages ("clinic", [...]), or "one" and the
    passages' titles (``kind_and_names``). None without two."""
    kinds = rival_kinds(history, question) if not passages and "kinds" in context.clarify_signals else None
    if kinds is not None:
        return kinds[0], kind_options(kinds)
    kind, names = kind_and_names(history, question, passages, several=decided_by == "several")
    # a kind without options (the ``several`` things' titles alike) is asked plainly in the user's word
    return (kind, names) if len(names) >= 2 or kind != "one" else None


def signal_of(evidence: Sequence[str]) -> str:
    """The signal that decided, from the decision's evidence ("several: 'the TV series' ..." -> "several")."""
    return evidence[-1].split(":", 1)[0] if evidence else ""


def clarifying_question(state: Mapping[str, Any], context: Context, decided_by: str | None = None) -> str:
    """Which one? Naming the readings the conversation or the passages offer when at least two are about
    what the user asked (``question_options``, checked by ``clarify_options.sensible_options``: one
    embedding call, no model call): "Which clinic do you mean: Hibbing VA Clinic, ...?". With fewer, the
    thing asked about in the user's words ("Which program do you mean?", "What do you mean by 'it'?");
    without a referring phrase either, the model writes the question from the passages (none:
    ``prompts.clarify.FALLBACK``), and one that only restates the user's question is replaced
    by the fallback too."""
    history, question, passages = state.get("history", []), state["question"], _passages(state)
    offered = question_options(history, question, passages, context, decided_by=decided_by)
    if offered is not None:
        kind, options = offered
        kept = sensible_options(options, question, get_embedder(context.embedder).embed)
        if len(kept) >= 2:  # "Which SDK do you mean: Server-side SDK, Client-side SDK or Admin SDK?"
            if kind == "one":  # titles, no kind from the signals: the user's noun they are of, if any
                kind = kind_of_options(question, kept, get_embedder(context.embedder).embed) or kind
            return prompts.WHICH_OPTION.format(kind=kind, options=_options(kept))
        if kind != "one":  # the readings are about something else: asked plainly, in the user's word
            return prompts.WHICH_NOUN.format(noun=kind)
    reference = referring_phrase(history, question)
    if reference is not None:
        form, word = reference
        if form == "noun":
            return prompts.WHICH_NOUN.format(noun=word)
        return prompts.WHICH_PRONOUN.format(pronoun=word)
    if not passages:  # nothing for the model to name the readings from
        rival = rival_reference(history, question) if "rivals" in context.clarify_signals else None
        if rival is not None:  # "Which charge do you mean?"
            return prompts.WHICH_NOUN.format(noun=rival)
        return prompts.FALLBACK
    messages = clarify_messages(prompts.ASK, history, question, passages)
    reply = invoke_text(get_chat_model(context.clarify_model), messages, max_tokens=QUESTION_MAX_TOKENS)
    text = " ".join(str(reply.content).split()).strip("\"' ")
    if not text.endswith("?") or restates(text, question):
        return prompts.FALLBACK
    return text


def _passages(state: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The passages the turn would be answered from: given with the task, or (full RAG, clarify runs
    after rerank) the kept retrieved ones."""
    kept = state.get("kept_passages")
    return kept if kept is not None else state.get("passages")


def asks_the_user(state: Mapping[str, Any], context: Context) -> bool:
    """Whether the user is asked (``ask_user``: an interrupt, resumed with the reply) rather than given
    the question as the answer: ``Context.clarify_interrupt``, or when it is ``None`` (the default)
    whenever the run answers a conversation (``messages``, a served thread) rather than a benchmark task."""
    if context.clarify_interrupt is not None:
        return bool(context.clarify_interrupt)
    return bool(state.get("from_messages"))


@guarded
def clarify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide whether to ask back, and store the question: ``ask_user`` asks it (so a resumed run asks
    the stored question, never one computed again), or it is the run's answer."""
    context = runtime.context
    decision, evidence = is_underspecified(
        state.get("history", []),
        state["question"],
        _passages(state),
        context,
        retrieved=state.get("kept_passages") is not None,
    )
    if not decision:
        return {"clarification": {"asked": False}}
    asked = clarifying_question(state, context, decided_by=signal_of(evidence))
    clarification = {"asked": True, "question": asked, "evidence": evidence[-1]}
    if asks_the_user(state, context):  # nodes/ask_user.py asks it
        return {"clarification": clarification, "messages": [question_message(asked, state)]}
    return {"clarification": clarification, "answer": asked}
