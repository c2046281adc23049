"""Pick one of the answer candidates: score each for faithfulness, completeness and declining.

By default (``Context.judge_method = "answer"``) the candidates are scored by the fitted answer judge
of ``mtrag_graph.judging`` (claim-level passage support, consensus between candidates, declining; no
model call), the judging layer the evaluation harness also uses; ``"llm"`` asks the judge model as
described below.

Signals per candidate (each 0-1):
- faithfulness: the judge model's share of the candidate's claims that the documents support;
- completeness: the judge model's rating of how fully and directly it answers the user's question;
- support: a lexical check, independent of the judge, of the share of its sentences whose content
  words occur in the documents (it catches padding and unsupported additions a small judge misses);
- declined: it declines although the gate said the documents suffice (the judge's flag, or our
  refusal pattern).
Score = w_f * faithfulness + w_c * completeness + w_s * support - w_d * declined (``Context.judge_weights``);
ties go to the prior (configured) order. Candidates are shown anonymised (letters) in an order shuffled
with a seed fixed per task, and the judge is told that length is not merit. A judge reply that never
validates falls back to the prior order, recorded in ``fallbacks``.
"""

from __future__ import annotations

import random
import string
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from mtrag_graph.context import Context
from mtrag_graph.judging import answer_judge_of
from mtrag_graph.models import ask_json, get_chat_model, model_name
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.build import candidate_judge_messages, question_for_answering
from mtrag_graph.state import AbstainReason, State
from mtrag_graph.text import content_stems, declines, sentences

SUPPORTED_SHARE = 0.6  # a sentence is supported when this share of its content words is in the documents
REPLY_EXCERPT_CHARS = 200  # of a judge reply that failed, recorded in the reason
JUDGE_MAX_TOKENS = 320  # the llm judge's verdicts (JSON, one per candidate)
JUDGE_SEED = 0  # seeds the per-task shuffle of the candidates shown to the llm judge


class Verdict(BaseModel):
    label: str
    claims: int = Field(ge=0)
    supported: int = Field(ge=0)
    completeness: float = Field(ge=0, le=5)
    declines: bool


class JudgeReply(BaseModel):
    verdicts: list[Verdict]


def lexical_support(answer: str, passages: list[dict[str, Any]]) -> float:
    """Share of the answer's sentences whose content words mostly occur in the passages."""
    known = set(content_stems(" ".join(str(p.get("text", "")) for p in passages)))
    counted = supported = 0
    for sentence in sentences(answer):
        stems = content_stems(sentence)
        if not stems:
            continue
        counted += 1
        supported += sum(s in known for s in stems) / len(stems) >= SUPPORTED_SHARE
    return supported / counted if counted else 1.0


def shown_order(entries: list[dict[str, Any]], task_id: str | None) -> list[dict[str, Any]]:
    """The candidates in the order the judge sees them: shuffled, reproducibly per task."""
    order = sorted(entries, key=lambda e: e["index"])
    random.Random(f"{JUDGE_SEED}:{task_id}").shuffle(order)
    return order


def _verdicts(reply: JudgeReply | None, labels: list[str]) -> dict[str, Verdict] | None:
    if reply is None:
        return None
    by_label = {v.label.strip().strip("[]()").upper(): v for v in reply.verdicts}
    return by_label if sorted(by_label) == sorted(labels) else None


def _judge(state, context, shown, labels) -> tuple[dict[str, Verdict] | None, str | None]:
    """The judge model's verdicts by label, or None and why not."""
    labelled = [(label, entry["text"]) for label, entry in zip(labels, shown, strict=True)]
    try:
        reply, raws = ask_json(
            get_chat_model(context.judge_model),
            candidate_judge_messages(state, context, labelled),
            JudgeReply,
            retries=context.parse_retries,
            max_tokens=JUDGE_MAX_TOKENS,
        )
    except Exception as error:  # noqa: BLE001 - a failing judge falls back to the prior order
        return None, f"{type(error).__name__}: {error}"
    verdicts = _verdicts(reply, labels)
    if verdicts is None:
        why = "no valid verdict for every candidate" if reply is not None else "unparseable reply"
        return None, f"{why}: {raws[-1][:REPLY_EXCERPT_CHARS]!r}"
    return verdicts, None


def _score(entry, verdict: Verdict | None, passages, weights, gate_said_yes: bool) -> dict[str, Any]:
    support = lexical_support(entry["text"], passages)
    declined = gate_said_yes and (bool(entry.get("declined")) or declines(entry["text"]))
    row: dict[str, Any] = {"support": round(support, 3), "declined": declined}
    if verdict is not None:
        declined = declined or (gate_said_yes and verdict.declines)
        faithfulness = min(verdict.supported, verdict.claims) / verdict.claims if verdict.claims else 1.0
        completeness = verdict.completeness / 5
        row.update(
            faithfulness=round(faithfulness, 3),
            completeness=round(completeness, 3),
            declined=declined,
            score=round(
                weights["faithfulness"] * faithfulness
                + weights["completeness"] * completeness
                + weights["support"] * support
                - weights["declined"] * declined,
                6,
            ),
        )
    return row


def _pick_by_answer_judge(state, context, usable, judgement: dict[str, Any]) -> dict[str, Any]:
    """Score the candidates with the fitted answer judge; the best selection score wins (prior order on ties)."""
    judge = answer_judge_of(context.answer_judge)
    passages = [str(p.get("text", "")) for p in state.get("kept_passages") or []]
    scored = judge.score(question_for_answering(state), passages, [e["text"] for e in usable])
    selection = judge.selection_scores(scored, gate_said_yes=state.get("gate") == "yes")
    scores = [
        {
            "index": e["index"],
            "name": e["name"],
            "faithfulness": round(s.faithfulness, 3),
            "preference": round(s.preference, 4),
            "declined": s.declines,
            "score": round(value, 6),
        }
        for e, s, value in zip(usable, scored, selection, strict=True)
    ]
    best = min(scores, key=lambda s: (-s["score"], s["index"]))
    margin = best["score"] - max(s["score"] for s in scores if s is not best)
    judgement.update(
        judge=judge.name,
        scores=scores,
        reason=(
            f"{best['name']} scored {best['score']:.3f}, {margin:.3f} above the next"
            f"{' (tie, prior order decides)' if margin == 0 else ''}: faithfulness {best['faithfulness']}, "
            f"declined {best['declined']}"
        ),
    )
    return next(e for e in usable if e["index"] == best["index"])


@guarded
def judge_candidates(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    entries = sorted(state.get("candidate_answers") or [], key=lambda e: e["index"])
    usable = [e for e in entries if not e.get("error")]
    failed = {e["index"]: e["error"] for e in entries if e.get("error")}
    judgement: dict[str, Any] = {"judge": None, "chosen": None, "failed": failed, "shown_order": []}
    judgement["scores"] = []
    if not usable:
        judgement.update(judge="none", reason=f"all {len(entries)} candidates failed")
        return {"judgement": judgement, "abstain_reason": AbstainReason.ERROR}
    update: dict[str, Any] = {}
    if len(usable) == 1:
        chosen = usable[0]
        judgement.update(judge="skipped", reason="the only candidate without an error")
    elif context.judge_method == "answer":
        chosen = _pick_by_answer_judge(state, context, usable, judgement)
    else:
        shown = shown_order(usable, state.get("task_id"))
        labels = list(string.ascii_uppercase[: len(shown)])
        verdicts, problem = _judge(state, context, shown, labels)
        gate_said_yes = state.get("gate") == "yes"
        passages = state.get("kept_passages") or []
        scores = []
        for label, entry in zip(labels, shown, strict=True):
            verdict = verdicts[label] if verdicts else None
            row = _score(entry, verdict, passages, context.judge_weights, gate_said_yes)
            scores.append({"index": entry["index"], "name": entry["name"], "label": label, **row})
        scores.sort(key=lambda s: s["index"])
        judgement.update(shown_order=[e["index"] for e in shown], scores=scores)
        if verdicts is None:
            chosen = usable[0]
            reason = f"judge failed ({problem}); first candidate in prior order"
            judgement.update(judge="prior_order", reason=reason)
            update["fallbacks"] = [{"node": "judge_candidates", "used": "prior_order", "raw": problem}]
        else:
            best = min(scores, key=lambda s: (-s["score"], s["index"]))
            chosen = next(e for e in usable if e["index"] == best["index"])
            runner_up = [s for s in scores if s is not best]
            margin = best["score"] - max(s["score"] for s in runner_up)
            tie = " (tie, prior order decides)" if margin == 0 else ""
            judgement.update(
                judge=model_name(context.judge_model),
                reason=(
                    f"{best['name']} scored {best['score']:.3f}, {margin:.3f} above the next{tie}: "
                    f"faithfulness {best['faithfulness']}, completeness {best['completeness']}, "
                    f"support {best['support']}, declined {best['declined']}"
                ),
            )
    judgement["chosen"] = chosen["index"]
    return {
        **update,
        "judgement": judgement,
        "chosen_candidate": chosen["index"],
        "draft": chosen["text"],
        "draft_finish_reason": chosen.get("finish_reason"),
    }
