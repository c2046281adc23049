"""Speed benchmark: run presets over the same tasks and report where the time goes.

Per preset: seconds per task (mean, p50, p95), model seconds per node, model calls per task, prompt
tokens submitted / processed / unique (processed < submitted is KV-cache reuse; unique is what an
ideal prefix cache would still process), generated tokens, orchestration overhead (wall time outside
model and embedder calls, as a share), peak resident memory, and tasks per second of wall time
(``concurrency`` tasks in flight).

Presets run one after another in one process, so the per-preset counters are started afresh before
each: the "unique" count forgets the prompts of earlier presets, and peak memory is the peak resident
set during the preset (Linux: ``/proc/self/clear_refs``; models an earlier preset loaded stay resident
and count). Where the peak cannot be reset it is the process's peak so far, and marked so.
"""

from __future__ import annotations

import json
import resource
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.models.factory import get_chat_model
from mtrag_graph.models.llama import ChatLlamaCpp
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.stages import model_settings


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(int(round(q * (len(ordered) - 1))), len(ordered) - 1)
    return ordered[index]


def preset_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate the routes of one preset's predictions."""
    ok = [r for r in records if r.get("status") == "ok"]
    if not ok:
        return {"tasks": 0, "failed": len(records)}
    seconds = [r["route"]["seconds"] for r in ok]
    node_seconds: Counter = Counter()
    for r in ok:
        node_seconds.update(r["route"].get("model_seconds", {}))
    model_total = sum(node_seconds.values())
    n = len(ok)

    def mean(key: str) -> float:
        return sum(float(r["route"].get(key) or 0) for r in ok) / n

    processed, unique = mean("prompt_tokens_processed"), mean("prompt_tokens_unique")
    return {
        "tasks": n,
        "failed": len(records) - n,
        "seconds_mean": statistics.mean(seconds),
        "seconds_p50": percentile(seconds, 0.5),
        "seconds_p95": percentile(seconds, 0.95),
        "model_seconds_per_node": {k: v / n for k, v in node_seconds.most_common()},
        "model_calls_per_task": mean("model_calls"),
        "prompt_tokens_submitted": mean("prompt_tokens"),
        "prompt_tokens_processed": processed,
        "prompt_tokens_unique": unique,
        "processed_over_unique": processed / unique if unique else None,
        "generated_tokens": mean("completion_tokens"),
        "overhead_share": max(sum(seconds) - model_total, 0.0) / sum(seconds),
        "abstentions": sum(1 for r in ok if r["route"].get("abstain_reason")),
        **first_token_stats(ok),
    }


def first_token_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Seconds from the start of a task to the model's first draft token and to the first answer text
    shown (only text that stands is shown: ``mtrag_graph.nodekit.release``), p50 and p95 over the tasks
    that streamed a draft, the delay between the two on each of them, and the retractions seen."""
    routes = [r["route"] for r in records if r["route"].get("first_token_seconds") is not None]
    stats: dict[str, Any] = {"first_token_tasks": len(routes)}
    shown = [r for r in routes if r.get("first_shown_seconds") is not None]
    series = {
        "first_token": [r["first_token_seconds"] for r in routes],
        "first_shown": [r["first_shown_seconds"] for r in shown],
        "shown_delay": [r["first_shown_seconds"] - r["first_token_seconds"] for r in shown],
    }
    for name, values in series.items():
        if values:
            stats[f"{name}_p50"] = percentile(values, 0.5)
            stats[f"{name}_p95"] = percentile(values, 0.95)
    stats["retracted_tasks"] = sum(1 for r in records if r["route"].get("stream_retracts"))
    # what a stream of the raw draft tokens would have shown and the final answer does not keep
    stats["draft_withdrawn_tasks"] = sum(1 for r in records if r["route"].get("draft_withdrawn"))
    # text shown in two or more pieces: the first came before the end of the run
    stats["early_shown_tasks"] = sum(1 for r in records if (r["route"].get("stream_chunks") or 0) >= 2)
    return stats


def calls_before_shown(route: dict[str, Any]) -> list[dict[str, Any]]:
    """The model calls a person waited for: those that started before the first text was shown (all of
    them when nothing was shown before the end). Both times are rounded to the millisecond, and with a
    fast model the draft that is shown can start in the same millisecond: a call that starts then counts."""
    shown = route.get("first_shown_seconds")
    calls = route.get("calls") or []
    return [c for c in calls if shown is None or c["start"] <= shown]


def calls_by_node(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per node, over the tasks: calls, prompt tokens processed and reused, completion tokens and
    seconds spent before the first shown text, each a mean per task."""
    ok = [r for r in records if r.get("status") == "ok"]
    totals: dict[str, dict[str, float]] = {}
    for record in ok:
        for call in calls_before_shown(record["route"]):
            submitted = int(call.get("prompt_tokens") or 0)
            processed = int(call.get("prompt_tokens_processed") or 0)
            values = {"calls": 1.0, "processed": processed, "reused": max(submitted - processed, 0),
                      "completion": int(call.get("completion_tokens") or 0), "seconds": float(call.get("seconds") or 0.0)}  # fmt: skip
            total = totals.setdefault(str(call["node"]), dict.fromkeys(values, 0.0))
            for key, value in values.items():
                total[key] += value
    n = len(ok) or 1
    return {node: {k: v / n for k, v in total.items()} for node, total in totals.items()}


def call_rows(records: list[dict[str, Any]]) -> list[str]:
    """One line per question: each call before its first shown text (node: processed+reused tokens ->
    completion tokens, seconds), then the first shown second."""
    lines = [
        "| task | first shown s | calls before it (node: prompt processed + reused -> completion, seconds) |",
        "|---|---|---|",
    ]
    for record in records:
        if record.get("status") != "ok":
            continue
        route = record["route"]
        calls = "; ".join(
            f"{c['node']}: {c.get('prompt_tokens_processed') or 0}"
            f"+{max(int(c.get('prompt_tokens') or 0) - int(c.get('prompt_tokens_processed') or 0), 0)}"
            f" -> {c.get('completion_tokens') or 0}, {c['seconds']:.1f}"
            for c in calls_before_shown(route)
        )
        shown = route.get("first_shown_seconds")
        lines.append(f"| {record['task_id']} | {'-' if shown is None else f'{shown:.1f}'} | {calls} |")
    return lines


def set_prefix_cache(context: Any, enabled: bool) -> None:
    """Turn llama.cpp prefix reuse on or off for every local model the context uses."""
    for name in model_settings(type(context)):
        model = get_chat_model(getattr(context, name))
        if isinstance(model, ChatLlamaCpp):
            model.reuse_prefix = enabled


def start_preset_counters(context: Any) -> bool:
    """Forget the prompts local models saw in earlier presets (the "unique" tokens count) and reset the
    process's peak resident memory; False when the peak cannot be reset here."""
    for name in model_settings(type(context)):
        model = get_chat_model(getattr(context, name))
        if isinstance(model, ChatLlamaCpp):
            model.forget_recent_prompts()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak resident set
        return True
    except OSError:
        return False


def peak_memory_mb(since_reset: bool) -> float:
    """Peak resident memory in MB: since the last reset (VmHWM), or of the whole process (ru_maxrss)."""
    if since_reset:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_bench(
    tasks: str | Path,
    presets: list[str],
    out_dir: str | Path,
    *,
    limit: int | None = None,
    overrides: dict[str, Any] | None = None,
    compare_prefix_cache: bool = False,
    concurrency: int = 1,
    endpoint_concurrency: int | None = None,
) -> dict[str, Any]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [(name, name, True) for name in presets]
    if compare_prefix_cache:
        runs.append((f"{presets[0]}-no-prefix-cache", presets[0], False))
    results: dict[str, Any] = {}
    graph = build_graph(output="state")
    for label, preset, cache in runs:
        context = Context.from_preset(preset, **(overrides or {}))
        set_prefix_cache(context, cache)
        peak_reset = start_preset_counters(context)
        predictions = out_dir / f"{label}.jsonl"
        summary = answer_tasks(
            tasks,
            predictions,
            context,
            limit=limit,
            progress=True,
            graph=graph,
            concurrency=concurrency,
            endpoint_concurrency=endpoint_concurrency,
            stream=True,  # for the time to the answer's first token
        )
        records = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
        stats = preset_stats(records[:limit] if limit else records)
        # wall-clock throughput of the tasks answered by this call (resumed ones took no time now)
        stats["concurrency"] = concurrency
        stats["tasks_per_second"] = summary.answered / summary.wall_seconds if summary.answered else None
        stats["peak_memory_mb"] = peak_memory_mb(since_reset=peak_reset)
        stats["peak_memory_scope"] = "preset" if peak_reset else "process so far"
        stats["predictions"] = str(predictions)
        stats["calls_before_shown"] = calls_by_node(records[:limit] if limit else records)
        (out_dir / f"{label}-calls.md").write_text(
            "\n".join(call_rows(records[:limit] if limit else records)) + "\n", encoding="utf-8"
        )
        results[label] = stats
        set_prefix_cache(context, True)
    (out_dir / "bench.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return results


def _rate(value: float | None) -> str:
    return f"{value:.2f}" if value else "-"


def _peak(stats: dict[str, Any]) -> str:
    scope = stats.get("peak_memory_scope", "preset")
    return f"{stats['peak_memory_mb']:.0f}" + ("" if scope == "preset" else f" ({scope})")


def render(results: dict[str, Any]) -> str:
    header = (
        "| preset | tasks | s/task mean | p50 | p95 | calls/task | prompt tok submitted | processed | unique "
        "| processed/unique | generated | overhead | abstained | peak RSS MB | concurrency | tasks/s |"
    )
    lines = [header, "|" + "---|" * 16]
    for label, s in results.items():
        if not s.get("tasks"):
            lines.append(f"| {label} | 0 |" + " |" * 14)
            continue
        ratio = f"{s['processed_over_unique']:.2f}" if s["processed_over_unique"] else "-"
        lines.append(
            f"| {label} | {s['tasks']} | {s['seconds_mean']:.1f} | {s['seconds_p50']:.1f} | {s['seconds_p95']:.1f} "
            f"| {s['model_calls_per_task']:.1f} | {s['prompt_tokens_submitted']:.0f} | {s['prompt_tokens_processed']:.0f} "
            f"| {s['prompt_tokens_unique']:.0f} | {ratio} | {s['generated_tokens']:.0f} | {100 * s['overhead_share']:.1f}% "
            f"| {s['abstentions']} | {_peak(s)} | {s.get('concurrency', 1)} "
            f"| {_rate(s.get('tasks_per_second'))} |"
        )
    lines.append("")
    lines.extend(first_token_table(results))
    lines.append("")
    lines.extend(calls_table(results))
    lines.append("")
    lines.append("Model seconds per task, by node:")
    nodes = sorted({n for s in results.values() for n in s.get("model_seconds_per_node", {})})
    lines.append("| preset | " + " | ".join(nodes) + " |")
    lines.append("|" + "---|" * (len(nodes) + 1))
    for label, s in results.items():
        per = s.get("model_seconds_per_node", {})
        lines.append(f"| {label} | " + " | ".join(f"{per.get(n, 0):.1f}" for n in nodes) + " |")
    return "\n".join(lines)


def first_token_table(results: dict[str, Any]) -> list[str]:
    """Time to the model's first draft token and to the first answer text shown, beside time per task."""
    lines = [
        "Time to the first draft token (what a stream of raw tokens shows first) and to the first text "
        "shown (only text that stands), over the tasks whose answer was drafted, and the delay between "
        "them on each task (seconds):",
        "| preset | s/task p50 | s/task p95 | first draft token p50 | p95 | first shown p50 | p95 "
        "| delay p50 | p95 | shown before the end | retracted | raw draft stream withdrew text |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, s in results.items():
        if not s.get("tasks"):
            continue
        cells = []
        for name in ("first_token", "first_shown", "shown_delay"):
            cells.append(
                f"{s[name + '_p50']:.2f} | {s[name + '_p95']:.2f}" if name + "_p50" in s else "- | -"
            )
        lines.append(
            f"| {label} | {s['seconds_p50']:.1f} | {s['seconds_p95']:.1f} | {' | '.join(cells)} "
            f"| {s.get('early_shown_tasks', 0)} of {s['tasks']} | {s.get('retracted_tasks', 0)} "
            f"| {s.get('draft_withdrawn_tasks', 0)} |"
        )
    return lines


def calls_table(results: dict[str, Any]) -> list[str]:
    """Where the wait for the first shown text goes: per node, calls and tokens before it (per task)."""
    lines = [
        "Before the first shown text, per task (mean): model calls, prompt tokens processed and reused "
        "from the cache, completion tokens and seconds, by node (per question: PRESET-calls.md):",
        "| preset | node | calls | prompt processed | reused | completion | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, s in results.items():
        for node, v in (s.get("calls_before_shown") or {}).items():
            lines.append(
                f"| {label} | {node} | {v.get('calls', 0):.2f} | {v.get('processed', 0):.0f} "
                f"| {v.get('reused', 0):.0f} | {v.get('completion', 0):.0f} | {v.get('seconds', 0):.1f} |"
            )
    return lines
