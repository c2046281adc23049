"""Question rewriting: a global rewrite of the last turn, and a local one from the selected history."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator

from mtrag_graph.context import Context
from mtrag_graph.models import ask_json, get_chat_model, get_reranker, invoke_text
from mtrag_graph.models.calls import timed_model_call
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.budget import cut
from mtrag_graph.prompts.build import (
    GLOBAL_REWRITE_PROMPT,
    LOCAL_REWRITE_MAX_TOKENS,
    QUESTION_CHARS,
    global_rewrite_messages,
    local_rewrite_messages,
)
from mtrag_graph.state import State
from mtrag_graph.tasks import pairs_to_turns, user_and_agent_pairs
from mtrag_graph.text import content_stems, content_words, words
from mtrag_graph.text.answers import YES_NO_OPENERS
from mtrag_graph.text.ellipsis import Resolution, is_fragment, resolve_fragment

_WORDS = re.compile(r"[A-Za-z']+")
_LABEL = re.compile(r"^\s*(rewritten|standalone)?\s*(question)?\s*:\s*", re.IGNORECASE)
# Words whose presence means the question leans on the previous exchange.
PRONOUNS = (
    "it", "its", "it's", "this", "that", "these", "those", "they", "them", "their", "theirs",
    "he", "him", "his", "she", "her", "hers", "there", "such", "former", "latter", "same",
    "one", "ones", "above", "aforementioned", "then",
)  # fmt: skip
REWRITE_MAX_TOKENS = 64  # the global rewrite's token limit: one question


def mentions_earlier_turn(question: str) -> bool:
    """Does the question use a pronoun or reference word (``PRONOUNS``) that points back into the
    conversation?"""
    words = {w.lower() for w in _WORDS.findall(question)}
    return any(p in words for p in PRONOUNS)


def clean_rewrite(text: str, question: str) -> str | None:
    """The rewritten question, or None when the reply is not a plausible rewrite of ``question``."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'`").strip()
    if not line:
        return None
    if len(line.split()) > max(3 * len(question.split()), 40):
        return None
    # a rewrite that keeps none of the question's content words is answering another question (the
    # small model sometimes copies the previous exchange instead); whole words, not stems: "camping" in
    # a rewrite does not keep "camp facilities" (the bench's before/after run of the rewrite prompt)
    asked = content_words(question)
    if asked and not asked & content_words(line):
        return None
    return line


# the words a question opens with after a leading "And", "So", ...: an auxiliary asks yes or no
# (``text.answers.YES_NO_OPENERS``), a wh-word asks what, which, who ...
_OPENERS = frozenset({"and", "so", "but", "also", "then", "ok", "okay", "well", "oh", "now"})
_AUXILIARIES = frozenset(YES_NO_OPENERS)
_WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "why", "how"})


def _opening_word(text: str) -> str:
    tokens = words(text)
    while tokens and tokens[0] in _OPENERS:
        tokens = tokens[1:]
    return tokens[0] if tokens else ""


YES_NO_LOST = "a yes/no question turned into a wh-question"


def turns_yes_no_into_wh(rewritten: str, question: str) -> bool:
    """Does the rewrite ask "what"/"which"/... where the user asked yes or no ("Does it suggest the
    correct spelling ...?" -> "What does the correct spelling ...?")?"""
    return _opening_word(question) in _AUXILIARIES and _opening_word(rewritten) in _WH_WORDS


def rewrite_doubts(rewritten: str | None, question: str) -> list[str]:
    """Why a global or local rewrite may not ask what the user asked; empty when nothing is in doubt.

    - unusable: no rewrite at all;
    - still points back: the question pointed back to the conversation with a pronoun and the rewrite
      still does ("And how do I list all archives in it?" given back as it was);
    - keeps under three quarters of what was asked: "And which option makes it skip my private and
      system initialization files?" -> "How can I prevent gnuplot from closing my private and system
      initialization files?" (kept 4 of 7 content stems; under half, "Does deleting an archive free disk
      space?" -> "How do I initialize a borg repository?", was the only test before);
    - a yes/no question turned into a wh-question: "Does that show up for the subcommands' help too?"
      -> "What does the addHelpText position show up for ...?";
    - adds nothing: a question that points back (a pronoun, or an opening "And"/"So") whose rewrite
      adds no content word ("Does that setting change ...?" -> "Does the setting change ...?").

    The small rewrite model's misses on the real-documents tuning and fresh splits. What the final
    rewrite still has is recorded (the state's ``rewrite_doubts``; ``Context.answer_question``
    "doubtful" reads it); with ``Context.rewrite_retry_on`` "doubts" every reason sends the question to
    the retry model, whose rewrite is taken when it has fewer."""
    if rewritten is None:
        return ["unusable"]
    doubts = []
    points_back = mentions_earlier_turn(question)
    if points_back and mentions_earlier_turn(rewritten):
        doubts.append("still points back")
    asked, given = set(content_stems(question)), set(content_stems(rewritten))
    if asked and len(asked & given) * 4 < len(asked) * 3:
        doubts.append("keeps under three quarters of what was asked")
    if turns_yes_no_into_wh(rewritten, question):
        doubts.append(YES_NO_LOST)
    opens_elliptic = any(word in _OPENERS for word in words(question)[:1])  # "And ...", "So ..."
    if (points_back or opens_elliptic) and not given - asked:
        doubts.append("adds nothing")
    return doubts


def needs_another_rewrite(rewritten: str | None, question: str) -> bool:
    """Is a global rewrite no use (``Context.rewrite_retry_on`` "misses", the default)? None (unusable); a
    question that pointed back to the conversation and still does ("And how do I list all archives in
    it?" given back as it was); or one that keeps under half of what the question asked ("Does deleting
    an archive free disk space?" -> "How do I initialize a borg repository?"): the small model's misses
    on the real-documents tuning split, where the large model's rewrite resolved the reference and kept
    the question."""
    if rewritten is None:
        return True
    if mentions_earlier_turn(question) and mentions_earlier_turn(rewritten):
        return True
    asked = set(content_stems(question))
    return bool(asked) and len(asked & set(content_stems(rewritten))) * 2 < len(asked)


def keeps_less_of_the_question(rewritten: str, other: str, question: str) -> bool:
    """Does ``rewritten`` keep fewer of the question's content words (stems) than ``other``? A local
    rewrite that drops what was asked where the global one kept it ("Does deleting an archive free disk
    space in the repository?" -> "How do I delete an archive from a repository?"; "Yes, what about
    children injury?" -> "What are some special schools for obese children?")."""
    asked = set(content_stems(question))
    return len(asked & set(content_stems(rewritten))) < len(asked & set(content_stems(other)))


class LocalRewrite(BaseModel):
    summary: str = Field(description="one sentence summarising the selected conversation")
    intent: str = Field(description="what the user wants to know now")
    standalone_question: str = Field(description="the question, understandable without the conversation")

    @field_validator("standalone_question")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("standalone_question is empty")
        return value.strip()


def global_rewrite_turns(question: str, history: list[dict[str, str]]) -> list[dict[str, str]]:
    """The turns the global rewrite is written from: the last exchange when the question points back
    with a pronoun, else the whole conversation."""
    if mentions_earlier_turn(question):
        return pairs_to_turns(user_and_agent_pairs(history)[-1:])
    return list(history)


def resolved_fragment(question: str, history: list[dict[str, str]], context: Context) -> Resolution | None:
    """An elliptic turn asked again as the user's previous question (``text.ellipsis``), scored by the
    context's embedder; None for any other turn, or when its place in that question is not sure."""
    if not is_fragment(question):
        return None
    scorer = get_reranker("embedding", context.embedder)  # the embedder's cosine, as the reranker scores

    def similarity(thing: str, spans: Sequence[str]) -> list[float]:
        return timed_model_call(scorer.name, lambda: scorer.score(thing, spans))

    earlier = [turn["text"] for turn in history if turn["speaker"] == "user"]
    return resolve_fragment(question, earlier, similarity)


@guarded
def global_rewrite(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context, question, history = runtime.context, state["question"], state.get("history", [])
    if not history or not context.rewrite_question:
        return {"global_rewrite": question, "pronoun_detected": False}
    resolution = resolved_fragment(question, history, context)
    if resolution is not None:
        return {
            "global_rewrite": resolution.question,
            "pronoun_detected": mentions_earlier_turn(question),
            "fragment": resolution.as_dict(),
        }
    rewritten, fallbacks = rewrite_question(question, global_rewrite_turns(question, history), context)
    update: dict[str, Any] = {
        "pronoun_detected": mentions_earlier_turn(question),
        "global_rewrite": rewritten,
    }
    if fallbacks:
        update["fallbacks"] = fallbacks
    return update


def _needs_retry(rewritten: str | None, question: str, context: Context) -> bool:
    if context.rewrite_retry_on == "doubts":
        return bool(rewrite_doubts(rewritten, question))
    if context.rewrite_keep_yes_no and rewritten is not None and turns_yes_no_into_wh(rewritten, question):
        return True
    return needs_another_rewrite(rewritten, question)


def _retry_is_better(second: str, first: str | None, question: str, context: Context) -> bool:
    """Is the retry model's rewrite taken? "misses": when it has none; "doubts": when it has fewer."""
    if context.rewrite_retry_on == "doubts":
        return len(rewrite_doubts(second, question)) < len(rewrite_doubts(first, question))
    if context.rewrite_keep_yes_no and turns_yes_no_into_wh(second, question):
        return False
    return not needs_another_rewrite(second, question)


def rewrite_question(
    question: str,
    turns: list[dict[str, str]],
    context: Context,
    prompt: tuple[str, str] = GLOBAL_REWRITE_PROMPT,
) -> tuple[str, list[dict[str, Any]]]:
    """The global rewrite of ``question`` from ``turns`` (the rewrite model, then the retry model when
    that one's rewrite is no use), and the fallbacks taken; the question itself when neither is usable.
    ``prompt``: the system text and instruction (``research.rewrite_retrieval`` tries other layouts)."""
    question = cut(question, QUESTION_CHARS)
    messages = global_rewrite_messages(turns, question, context, prompt)
    reply = invoke_text(get_chat_model(context.rewrite_model), messages, max_tokens=REWRITE_MAX_TOKENS)
    rewritten = clean_rewrite(str(reply.content), question)
    fallbacks: list[dict[str, Any]] = []
    retry = context.rewrite_retry_model
    if retry != context.rewrite_model and _needs_retry(rewritten, question, context):
        again = invoke_text(get_chat_model(retry), messages, max_tokens=REWRITE_MAX_TOKENS)
        second = clean_rewrite(str(again.content), question)
        if second is not None and _retry_is_better(second, rewritten, question, context):
            fallbacks.append(
                {"node": "global_rewrite", "used": "rewrite retry model", "raw": str(reply.content)}
            )
            rewritten, reply = second, again
    if rewritten is None:
        fallbacks.append({"node": "global_rewrite", "used": "original question", "raw": str(reply.content)})
        return question, fallbacks
    return rewritten, fallbacks


@guarded
def local_rewrite(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context, question = runtime.context, state["question"]
    selected = state.get("selected_history") or []
    global_turns = global_rewrite_turns(question, state.get("history", []))
    if not selected or not context.rewrite_question or selected == global_turns or state.get("fragment"):
        # nothing to add to the global rewrite, which was written from these very turns (or is an elliptic
        # turn asked again as the question before): a second call on a follow-up would only delay the
        # answer (issue 35: three sequential calls before it)
        standalone = state.get("global_rewrite") or question
        rewritten_follow_up = (
            bool(state.get("history")) and context.rewrite_question and not state.get("fragment")
        )
        doubts = rewrite_doubts(standalone, question) if rewritten_follow_up else []
        return {"standalone_question": standalone, "rewrite_doubts": doubts}
    parsed, raws = ask_json(
        get_chat_model(context.rewrite_model),
        local_rewrite_messages(selected, question, context),
        LocalRewrite,
        retries=context.parse_retries,
        max_tokens=LOCAL_REWRITE_MAX_TOKENS,
    )
    rewritten = None if parsed is None else clean_rewrite(parsed.standalone_question, question)
    global_rewrite = state.get("global_rewrite") or question
    if (
        parsed is None
        or rewritten is None
        or _local_gives_way(rewritten, state.get("global_rewrite"), question, context)
    ):
        return {
            "standalone_question": global_rewrite,
            "rewrite_doubts": rewrite_doubts(global_rewrite, question),
            "fallbacks": [
                {"node": "local_rewrite", "used": "global rewrite", "raw": raws[-1] if raws else ""}
            ],
        }
    return {
        "history_summary": parsed.summary,
        "intent": parsed.intent,
        "standalone_question": rewritten,
        "rewrite_doubts": rewrite_doubts(rewritten, question),
    }


def _local_gives_way(rewritten: str, global_rewrite: str | None, question: str, context: Context) -> bool:
    """Does the global rewrite replace the local one? "misses": when the global one is usable and the
    local one is not, or keeps less of the question; when neither is usable, the one that keeps more of
    the question ("Is there also a flag that suppresses the version and copyright banner ...?" is not
    usable for its "there", and its local rewrite, "How do I skip my private and system initialization
    files when an interactive session starts?", asked the turn before's question again); "doubts": when
    the local one has more doubts, or neither has any and the local one keeps less."""
    if context.rewrite_retry_on == "doubts":
        local, other = rewrite_doubts(rewritten, question), rewrite_doubts(global_rewrite, question)
        return len(local) > len(other) or (
            not other and keeps_less_of_the_question(rewritten, str(global_rewrite), question)
        )
    if (
        context.rewrite_keep_yes_no
        and turns_yes_no_into_wh(rewritten, question)
        and global_rewrite is not None
        and not turns_yes_no_into_wh(global_rewrite, question)
        and not needs_another_rewrite(global_rewrite, question)
    ):
        return True  # the global rewrite kept the yes/no question the local one lost
    local_keeps_less = keeps_less_of_the_question(rewritten, str(global_rewrite), question)
    if needs_another_rewrite(global_rewrite, question):
        return needs_another_rewrite(rewritten, question) and local_keeps_less
    return needs_another_rewrite(rewritten, question) or local_keeps_less
