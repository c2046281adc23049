"""The prompt layer: every message the graph sends a model is built here.

Prompt *text* lives in the modules beside this one; the text a preset changes (the grounded system text,
the gate's and the answer's instructions, ...) reaches it through ``Context`` fields, the rest is read
from those modules here. This module fills it in: the conversation (one formatter, speakers "User" and
"Agent", as MTRAG names them), the passages (one formatter), and the context-window budget
(``mtrag_graph.prompts.budget``). Nodes call one function here per prompt and then the model.

The gate, the generator (every answer variant) and the candidate judge share one prefix (system
text, documents, conversation) and differ only in the instruction after it, so llama.cpp reuses its
KV cache between those calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.prompts import answer_variants, candidate_judge, clarify, grounded, rewrite
from mtrag_graph.prompts.budget import (
    HISTORY_SHARE,
    PASSAGE_MAX_CHARS,
    cut,
    fit_passages,
    prompt_char_budget,
    trim_history,
)
from mtrag_graph.prompts.exemplars import load_exemplars
from mtrag_graph.state import RetryReason
from mtrag_graph.text import words
from mtrag_graph.text.answers import REPEATS_PREVIOUS

AGENT_TURN_CHARS = 600  # an agent turn is cut to this in the small model's prompts
LOCAL_REWRITE_MAX_TOKENS = 160  # the local rewrite's token limit (its JSON), kept free of its prompt
# the global rewrite's system text and instruction ({conversation}, {question})
GLOBAL_REWRITE_PROMPT = (rewrite.SYSTEM, rewrite.GLOBAL_REWRITE)
QUESTION_CHARS = 2000  # a question longer than this is cut in prompts
# The clarify check runs on every turn, so its prompt is kept small: the start of a passage is enough
# to tell referents apart.
CLARIFY_PASSAGE_CHARS = 120
# the verdict's problem for a decline after a gate "yes" (its retry_reason is RetryReason.DECLINED,
# and answer_messages asks with Context.decline_retry_instruction; without one, this is the problem the
# strict retry names)
DECLINED_DESPITE_EVIDENCE = (
    "it said it does not know, but the documents were judged to hold at least part of the answer: "
    "give the part they state"
)
CLARIFY_MAX_PASSAGES = 4
CLARIFY_HISTORY_TURNS = 4
CLARIFY_AGENT_CHARS = 200

Turn = Mapping[str, str]


class PromptSettings(Protocol):
    """The settings the builders fill prompts with: ``Context`` has them all (its stages declare them,
    each with its description). Named here rather than imported, so the prompt layer sits below the
    stages whose defaults are its text; mypy holds every caller's ``Context`` to these types."""

    context_window_tokens: int
    answer_max_tokens: int
    first_draft: Literal["may_decline", "answer"]
    answer_question: Literal["rewrite", "both", "doubtful"]
    answer_conversation: Literal["selected", "questions", "none"]
    idk_answer: str
    grounded_system_prompt: str
    gate_instruction: str
    sample_instruction: str
    generate_instruction: str
    strict_generate_instruction: str
    decline_retry_instruction: str


class AnswerVariant(Protocol):
    """An answer candidate, as its prompt sees it (``stages.candidates.Candidate``): its variant."""

    @property
    def variant(self) -> str: ...


# ---- the two formatters ----------------------------------------------------------------------------


def format_conversation(turns: Sequence[Turn], agent_chars: int | None = None) -> str:
    """``User: ...`` / ``Agent: ...`` lines, whitespace collapsed; agent turns cut to ``agent_chars``."""
    lines = []
    for turn in turns:
        text = (
            turn["text"]
            if agent_chars is None or turn["speaker"] == "user"
            else cut(turn["text"], agent_chars)
        )
        lines.append(f"{'User' if turn['speaker'] == 'user' else 'Agent'}: {' '.join(text.split())}")
    return "\n".join(lines)


def format_passages(passages: Sequence[Mapping[str, Any]], max_chars: int, *, numbered: bool = True) -> str:
    """Passages as prompt text, each cut to ``max_chars`` at a word boundary.

    ``numbered``: delimited ``[Document i] title`` blocks (the grounded prompt, where answers and
    citations refer to documents by number). Otherwise one ``- title: text`` line each (the clarify
    prompt, which only needs the start of each passage).
    """
    if not numbered:
        lines = []
        for passage in passages:
            title, text = passage.get("title") or "", passage.get("text", "")
            lines.append(f"- {cut(f'{title}: {text}' if title else text, max_chars)}")
        return "\n".join(lines)
    blocks = []
    for i, passage in enumerate(passages, start=1):
        # the excerpt the rerank stage chose (prompts.excerpts), else the passage; "" when none of the
        # passage's sentences bore on the question: the document is left out, the others keep their numbers
        body = cut(passage["evidence"] if "evidence" in passage else passage.get("text", ""), max_chars,
                   keep_lines=True)  # fmt: skip
        if not body:
            continue
        heading = " - ".join(str(x) for x in (passage.get("title"), passage.get("section")) if x)
        header = f"[Document {i}]" + (f" {heading}" if heading else "")
        blocks.append(f"{header}\n{body}\n[End of document {i}]")
    return "\n\n".join(blocks)


def whole_passages(passages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``passages`` without the excerpts the rerank stage chose (``prompts.excerpts``): a prompt built from
    them shows each passage whole."""
    return [{k: v for k, v in p.items() if k != "evidence"} for p in passages]


def _chat(system: str, body: str) -> list[BaseMessage]:
    return [SystemMessage(content=system), HumanMessage(content=body)]


# ---- the large model: gate, answer variants, retry, candidate judge (one shared prefix) -------------


def question_for_answering(state: Mapping[str, Any]) -> str:
    """The question the answering nodes work on: the standalone rewrite when there is one."""
    question = state.get("standalone_question") or state.get("global_rewrite") or state["question"]
    return cut(question, QUESTION_CHARS)


def prompted_question(state: Mapping[str, Any], context: PromptSettings) -> str:
    """The question as the answering prompts show it (``Context.answer_question``): the standalone
    rewrite, or with "both", on a follow-up the rewrite changed, the user's own words and then the
    rewrite ("doubtful": only where the final rewrite is in doubt, the state's ``rewrite_doubts``). On
    the real-documents fresh split the small rewrite model turned "And which option makes it skip my
    private and system initialization files?" into "How can I prevent gnuplot from closing my private
    and system initialization files?", and the answer followed it."""
    question = question_for_answering(state)
    asked = " ".join(str(state.get("question") or "").split())
    if context.answer_question == "rewrite" or not state.get("history") or not asked:
        return question
    if context.answer_question == "doubtful" and not state.get("rewrite_doubts"):
        return question
    if words(asked) == words(question):
        return question
    return f"{cut(asked, QUESTION_CHARS)} (in full: {question})"


def answering_history(state: Mapping[str, Any], context: PromptSettings) -> list[dict[str, str]]:
    """The conversation the answering prompts show (``Context.answer_conversation``): the history stage's
    turns, only their user turns, or none."""
    turns = list(state.get("selected_history") or [])
    if context.answer_conversation == "none":
        return []
    if context.answer_conversation == "questions":
        return [turn for turn in turns if turn["speaker"] == "user"]
    return turns


def grounded_messages(state: Mapping[str, Any], context: PromptSettings, tail: str) -> list[BaseMessage]:
    """System text, then documents and conversation fitted to the context window, then ``tail``."""
    budget = prompt_char_budget(context.context_window_tokens, context.answer_max_tokens)
    history = trim_history(answering_history(state, context), int(budget * HISTORY_SHARE))
    used = sum(len(turn["text"]) for turn in history) + len(tail) + len(context.grounded_system_prompt)
    passages = fit_passages(state.get("kept_passages") or [], PASSAGE_MAX_CHARS, budget - used)
    prefix = grounded.CONTEXT.format(
        documents=format_passages(passages, PASSAGE_MAX_CHARS),
        conversation=format_conversation(history) or grounded.NO_CONVERSATION,
    )
    return _chat(context.grounded_system_prompt, prefix + tail)


def gate_messages(state: Mapping[str, Any], context: PromptSettings) -> list[BaseMessage]:
    return grounded_messages(
        state, context, context.gate_instruction.format(question=prompted_question(state, context))
    )


def decline_messages(
    state: Mapping[str, Any], context: PromptSettings, instruction: str = grounded.DECLINE_PROBE
) -> list[BaseMessage]:
    """The gate's prefix, then an answer ``instruction`` that offers "I don't know" (the decline
    probability; ``research.decline_samples`` tries other instructions)."""
    tail = instruction.format(question=prompted_question(state, context), idk=context.idk_answer)
    return grounded_messages(state, context, tail)


def sample_messages(state: Mapping[str, Any], context: PromptSettings) -> list[BaseMessage]:
    """The gate's prefix, then the samples' instruction (the answer checked against samples)."""
    tail = context.sample_instruction.format(
        question=prompted_question(state, context), idk=context.idk_answer
    )
    return grounded_messages(state, context, tail)


def _examples(context: PromptSettings) -> str:
    rendered = []
    for n, example in enumerate(load_exemplars(), start=1):
        answer = example["answer"] if example["passage"] else context.idk_answer
        rendered.append(
            answer_variants.EXAMPLE.format(
                n=n,
                documents=example["passage"] or answer_variants.EXAMPLE_NO_DOCUMENTS,
                conversation=format_conversation(example["history"]) or answer_variants.EXAMPLE_FIRST_TURN,
                question=example["question"],
                answer=answer,
            )
        )
    return "\n\n".join(rendered)


def answer_instruction(candidate: AnswerVariant, question: str, context: PromptSettings) -> str:
    """The instruction after the shared prefix for a first answer with ``candidate``'s prompt variant."""
    idk = context.idk_answer
    if candidate.variant == "extractive":
        return answer_variants.EXTRACTIVE.format(question=question, idk=idk)
    if candidate.variant == "fewshot":
        return answer_variants.FEWSHOT.format(
            examples=_examples(context), base=answer_variants.FEWSHOT_BASE.format(idk=idk), question=question
        )
    if candidate.variant == "citation":
        return answer_variants.CITATION.format(question=question, idk=idk)
    return context.generate_instruction.format(question=question, idk=idk)


def offers_decline(
    state: Mapping[str, Any], context: PromptSettings, candidate: AnswerVariant
) -> bool | None:
    """Does the draft's prompt offer "I don't know"? False: it is asked without that way out (the retry
    after a decline that followed a gate "yes", or, with ``first_draft="answer"``, the first draft after
    a gate "yes"); None: a prompt that says nothing either way (a retry after other problems)."""
    if not context.decline_retry_instruction:
        return True if not state.get("answer_problems") else None
    if state.get("retry_reason") == RetryReason.DECLINED:
        return False
    if state.get("answer_problems"):
        return None
    first_answers = (
        context.first_draft == "answer" and state.get("gate") == "yes" and candidate.variant == "default"
    )  # fmt: skip
    return not first_answers


def answer_messages(
    state: Mapping[str, Any], context: PromptSettings, candidate: AnswerVariant
) -> list[BaseMessage]:
    """A first answer with ``candidate``'s variant, or, after rejected drafts, the stricter retry."""
    question = prompted_question(state, context)
    if offers_decline(state, context, candidate) is False:
        tail = context.decline_retry_instruction.format(question=question)
    elif state.get("answer_problems"):
        tail = context.strict_generate_instruction.format(
            question=question, problems="; ".join(state["answer_problems"]), idk=context.idk_answer
        )
        if REPEATS_PREVIOUS in state["answer_problems"]:
            # the draft gave the turn before's answer again: asked once more without the conversation it
            # copied from (the standalone question carries what the follow-up refers to)
            state = {**state, "selected_history": []}
    else:
        tail = answer_instruction(candidate, question, context)
    return grounded_messages(state, context, tail)


def candidate_judge_messages(
    state: Mapping[str, Any], context: PromptSettings, labelled_answers: Sequence[tuple[str, str]]
) -> list[BaseMessage]:
    """The candidate judge's prompt: the labelled answers after the shared prefix."""
    answers = "\n\n".join(
        candidate_judge.ANSWER.format(label=label, text=text) for label, text in labelled_answers
    )
    tail = candidate_judge.JUDGE.format(
        question=prompted_question(state, context),
        labels=", ".join(label for label, _ in labelled_answers),
        answers=answers,
    )
    return grounded_messages(state, context, tail)


# ---- the small model: rewriting and relation judgements (shared system text) -----------------------


def _fit_for_rewrite(turns: Sequence[Turn], context: PromptSettings) -> list[dict[str, str]]:
    """Agent turns cut, then the oldest turns dropped so the conversation fits half the window."""
    short = [
        dict(t) if t["speaker"] == "user" else {**t, "text": cut(t["text"], AGENT_TURN_CHARS)} for t in turns
    ]
    return trim_history(
        short, prompt_char_budget(context.context_window_tokens, LOCAL_REWRITE_MAX_TOKENS) // 2
    )


def _rewrite_messages(
    system: str, instruction: str, turns: Sequence[Turn], question: str, context: PromptSettings
) -> list[BaseMessage]:
    """A rewrite prompt: ``instruction`` filled with the fitted conversation and the (cut) question."""
    body = instruction.format(
        conversation=format_conversation(_fit_for_rewrite(turns, context), AGENT_TURN_CHARS),
        question=cut(question, QUESTION_CHARS),
    )
    return _chat(system, body)


def global_rewrite_messages(
    turns: Sequence[Turn],
    question: str,
    context: PromptSettings,
    prompt: tuple[str, str] = GLOBAL_REWRITE_PROMPT,
) -> list[BaseMessage]:
    """The global rewrite's prompt: ``prompt``'s system text, then its instruction filled in."""
    return _rewrite_messages(*prompt, turns, question, context)


def local_rewrite_messages(
    turns: Sequence[Turn], question: str, context: PromptSettings
) -> list[BaseMessage]:
    return _rewrite_messages(rewrite.SYSTEM, rewrite.LOCAL_REWRITE, turns, question, context)


def relation_messages(
    question: str, pair: tuple[str, str], context: PromptSettings
) -> dict[str, list[BaseMessage]]:
    """The two relation judgements: is ``question`` related to the pair's question, to its answer?"""
    previous_question, previous_answer = cut(pair[0], QUESTION_CHARS), pair[1]
    question = cut(question, QUESTION_CHARS)
    bodies = {
        "question": rewrite.RELATED_TO_QUESTION.format(
            previous_question=previous_question, question=question
        ),
        "answer": rewrite.RELATED_TO_ANSWER.format(
            previous_answer=cut(previous_answer, AGENT_TURN_CHARS) or rewrite.NO_ANSWER, question=question
        ),
    }
    return {target: _chat(rewrite.SYSTEM, body) for target, body in bodies.items()}


# ---- clarify ----------------------------------------------------------------------------------------


def clarify_messages(
    instruction: str,
    history: Sequence[Turn],
    question: str,
    passages: Sequence[Mapping[str, Any]] | None,
) -> list[BaseMessage]:
    """The clarify prompts (``instruction`` is the referent check or the question to ask)."""
    conversation = format_conversation(list(history)[-CLARIFY_HISTORY_TURNS:], CLARIFY_AGENT_CHARS)
    shown = list(passages or [])[:CLARIFY_MAX_PASSAGES]
    body = instruction.format(
        conversation=conversation or grounded.NO_CONVERSATION,
        passages=format_passages(shown, CLARIFY_PASSAGE_CHARS, numbered=False) or clarify.NO_PASSAGES,
        question=" ".join(question.split()),
    )
    return _chat(clarify.SYSTEM, body)
