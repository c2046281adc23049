"""The decline retry asked the strict way, applied to a finished run without re-running it.

The default retry after a decline (``Context.decline_retry_instruction``) takes the "I don't know" way
out away; with ``decline_retry_instruction=""`` the retry is the strict one instead
(``GENERATE_STRICT``: "your previous answer was rejected (it said it does not know, but ...) ... if the
documents do not contain the answer, reply exactly: I don't know"). For every task of the run that
the first answer declined (``route.decline_retried``), the state is rebuilt from the record (as
``verify_offline.py`` does) and the generator is asked the strict retry; its reply is kept in
``route.strict_retry``. ``--apply`` writes the run as the strict retry leaves it: the strict reply,
declined when it declines, through the grounding check as this code makes it. (check_answer's other
problems, such as a cut-off reply, are not re-checked.)

    python -m research.strict_retry_offline runs/taskc.jsonl -o runs/taskc-strict.jsonl
    python -m research.strict_retry_offline runs/taskc-strict.jsonl --apply -o runs/taskc-strict-applied.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.models import get_chat_model, invoke_text
from mtrag_graph.nodes.generate import active_candidate
from mtrag_graph.prompts.build import DECLINED_DESPITE_EVIDENCE, answer_messages
from mtrag_graph.text import declines
from research.trust_variants import checked
from research.verify_offline import annotate_run, state_of


def strict_reply(record: dict, context: Context) -> str:
    state = {**state_of(record), "answer_problems": [DECLINED_DESPITE_EVIDENCE]}
    candidate = active_candidate(state, context)
    reply = invoke_text(
        get_chat_model(candidate.model),
        answer_messages(state, context, candidate),
        max_tokens=context.answer_max_tokens,
    )
    return candidate.finish(str(reply.content), context.citation_markers)


def strictly_retried(record: dict, context: Context) -> dict:
    """The record with the strict retry's reply in place of the default retry's answer."""
    route = record.get("route") or {}
    reply = (route.get("strict_retry") or {}).get("answer")
    if not route.get("decline_retried") or reply is None:
        return record
    kept = None if declines(reply) else checked(record, reply, context)[0]
    reason = None if kept is not None else ("generator_declined" if declines(reply) else "ungrounded")
    route = {**route, "abstained": reason is not None, "abstain_reason": reason}
    return {
        **record,
        "predictions": [{"text": kept if kept is not None else context.idk_answer}],
        "route": route,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="the run with route.strict_retry (resumed)"
    )
    parser.add_argument("--apply", action="store_true", help="write the run as the strict retry leaves it")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.run.read_text().splitlines() if line.strip()]
    context = Context(decline_retry_instruction="")
    if args.apply:
        args.output.write_text("".join(json.dumps(strictly_retried(r, context)) + "\n" for r in rows))
        return 0
    retried = annotate_run(
        rows,
        args.output,
        read=lambda r: (r.get("route") or {}).get("strict_retry"),
        wanted=lambda r: r.get("status") == "ok" and bool((r.get("route") or {}).get("decline_retried")),
        compute=lambda r: {"answer": strict_reply(r, context)},
        attach=lambda r, value: {**r, "route": {**r["route"], "strict_retry": value}},
    )
    print(f"{args.output}: {len(rows)} tasks, {retried} declines retried the strict way")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
