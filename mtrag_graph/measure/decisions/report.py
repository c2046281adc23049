"""Markdown tables of the decision scores."""

from __future__ import annotations

from typing import Any


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def gate_table(report: dict[str, Any]) -> str:
    rows = [
        "| scope | pos | neg | balanced acc. | gate-only bal. acc. | positives lost | gate no | declined "
        "| negatives declined | unanswerable (retrieved) | other conversation | fabrication (answered positives) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    scopes = [("all", report["overall"]), *report["by_domain"].items()]
    for scope, s in scopes:
        kinds = s["negatives_declined_by_kind"]
        rows.append(
            f"| {scope} | {s['positives']} | {s['negatives']} | {_num(s['balanced_accuracy'])} "
            f"| {_num(s['gate_balanced_accuracy'])} | {_pct(s['positives_lost'])} "
            f"| {_pct(s['positives_gate_no'])} | {_pct(s['positives_declined'])} "
            f"| {_pct(s['negatives_declined'])} | {_pct(kinds.get('unanswerable_retrieved'))} "
            f"| {_pct(kinds.get('other_conversation'))} | {_pct(s.get('fabrication_positives'))} |"
        )
    rows.append(f"\nmean seconds per item (gate + generation): {_num(report['mean_seconds'], 1)}")
    return "\n".join(rows)


def clarify_table(report: dict[str, Any]) -> str:
    false = report["false_clarification"]
    return "\n".join(
        [
            "| underspecified | others | recall | precision | false on ANSWERABLE | false on PARTIAL | s/item |",
            "|---|---|---|---|---|---|---|",
            f"| {report['underspecified']} | {report['others']} | {_pct(report['recall'])} "
            f"| {_pct(report['precision'])} | {_pct(false.get('ANSWERABLE'))} | {_pct(false.get('PARTIAL'))} "
            f"| {_num(report['mean_seconds'], 1)} |",
            "\nANSWERABLE + PARTIAL clarified: "
            + _pct(report.get("false_on_answered"))
            + "; clarifications by signal: "
            + (", ".join(f"{k} {_pct(v)}" for k, v in report.get("signal_share", {}).items()) or "none"),
        ]
        + (
            [
                f"\nthreshold on the 'unclear' probability for at most 3% / 5% false clarifications on these "
                f"answerable turns: {_num(report['threshold_false_0.03'])} / {_num(report['threshold_false_0.05'])}"
            ]
            if report.get("threshold_false_0.03") is not None
            else []
        )
    )


def relation_table(report: dict[str, Any]) -> str:
    rows = [
        "| MTRAG Multi-Turn | turns | class 1 | class 2 | class 3 | class 4 |",
        "|---|---|---|---|---|---|",
    ]
    for label, counts in report["distribution"].items():
        total = sum(counts.values())
        cells = " | ".join(_pct(counts.get(str(c), 0) / total) for c in (1, 2, 3, 4))
        rows.append(f"| {label} | {total} | {cells} |")
    rows.append(
        f"\nstand-alone (N/A) turns classified 'new topic': {_pct(report['stand_alone_agreement'])} "
        f"of {report['stand_alone_turns']}; mean seconds per turn: {_num(report['mean_seconds'], 1)}"
    )
    return "\n".join(rows)


def evidence_table(report: dict[str, Any]) -> str:
    features = sorted({f for row in report.values() for f in row if f != "items"})
    rows = ["| kind | items | " + " | ".join(features) + " |", "|---|---|" + "---|" * len(features)]
    for kind, row in report.items():
        rows.append(f"| {kind} | {row['items']} | " + " | ".join(_num(row[f]) for f in features) + " |")
    return "\n".join(rows)


TABLES = {
    "gate": gate_table,
    "evidence": evidence_table,
    "clarify": clarify_table,
    "relation": relation_table,
}


def fitted_line(fitted: dict[str, Any]) -> str:
    return (
        f"\nFitted gate classifier -> {fitted['path']} (on the {fitted['fitted_on']} results): "
        f"{fitted['positives']} positives, {fitted['negatives']} negatives, threshold {fitted['threshold']:.3f}, "
        f"cross-validated balanced accuracy {fitted['cv_balanced_accuracy']:.3f} "
        f"(at most {fitted['max_positive_loss']:.0%} of positives turned away)\n"
    )


def render(reports: dict[str, dict[str, Any]], header: str) -> str:
    parts = [header]
    for name, report in reports.items():
        parts.append(f"\n## {name}\n\n{TABLES[name](report)}")
    return "\n".join(parts) + "\n"
