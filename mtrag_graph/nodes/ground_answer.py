"""Check every sentence of the answer against the passages; drop what they do not back.

A sentence is backed when its facts (numbers, names) are found in the passages or the conversation and
enough of its content words are (``mtrag_graph.judging.grounding``). Unsupported sentences are cut;
an answer whose claims are all unsupported becomes the abstention (one without a claim, "Yes.", stands) (``AbstainReason.UNGROUNDED``). The
per-sentence support, with the passages that back each sentence, stays in ``grounding``: the raw
material of citations.

An answer written only by the decline retry (the model first said "I don't know", the retry took that
way out away) is also checked by the model itself when ``Context.verify_retried_answers`` says so: asked
yes/no whether the documents state it, a "yes" probability under ``verify_threshold`` makes it the
abstention (``AbstainReason.UNVERIFIED``); the probability is kept in ``grounding["verify"]``.

A yes/no question's answer is first settled on the sentence that decides it, quoted
(``Context.yes_no_quote``, ``judging.yes_no``); the grounding check then cites the quote's passage.

With ``Context.verifier_threshold`` set, the trained verifier (``judging.verifier``) scores the standalone
question against each passage the kept answer cites; a best score under the threshold makes the answer
the abstention (``AbstainReason.NOT_STATED``), before any sample is drawn; the score is kept in
``grounding["verifier"]``.

A how-to question's kept answer then gets the passage line holding its draft's command, quoted after it
(``Context.howto_quote``, ``judging.commands``), grounded again so that the quote cites its passage.

The decisions are in ``judging.answer_check`` (what the stream shows of a draft reads them too).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.answer_check import (
    check_against_samples,
    check_with_verifier,
    ground,
    quote_command,
    quote_yes_no,
    quotes_yes_no,
    samples_checked,
    verifier_checked,
    verifies,
    verify_answer,
)
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import AbstainReason, State


@guarded
def ground_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    answer = state.get("answer") or ""
    if context.grounding == "off" or not answer:
        return {}
    settled, quoted = None, answer
    if quotes_yes_no(state, context, answer):
        quoted, settled = quote_yes_no(state, context, answer)
    kept, grounding = ground(quoted, state, context)
    if settled is not None:
        grounding["yes_no"] = settled
    if kept is None:
        return {"grounding": grounding, "abstain_reason": AbstainReason.UNGROUNDED}
    if verifies(state, context):
        grounding["verify"] = verified = verify_answer(state, context, kept)
        if not verified["kept"]:
            return {"grounding": grounding, "abstain_reason": AbstainReason.UNVERIFIED}
    if verifier_checked(context):
        grounding["verifier"] = scored = check_with_verifier(state, context, grounding)
        if not scored["kept"]:
            return {"grounding": grounding, "abstain_reason": AbstainReason.NOT_STATED}
    if samples_checked(state, context):
        grounding["samples"] = checked = check_against_samples(state, context, kept)
        if not checked["kept"]:
            return {"grounding": grounding, "abstain_reason": AbstainReason.MODEL_UNSURE}
    if context.howto_quote:
        kept, grounding = quote_command(state, context, answer, kept, grounding)
    if kept != answer:
        return {"grounding": grounding, "answer": kept}
    return {"grounding": grounding}
