"""Does the fabrication measure and the grounding check agree with people? (golden file, model-free)

For each of the golden file's answering responses (three systems x 159 tasks, with the annotators'
faithfulness ratings), the fabrication flag of ``evaluate`` (a number or name in neither passages nor
conversation) and the grounding check at the shipped threshold (every claim unsupported: the graph
would abstain; some claim unsupported: it would cut a sentence). Nothing is fitted on this file.

    python -m research.fabrication_golden $MTRAG_DATA/eval/reference_subset_with_human_evaluations.json
"""

from __future__ import annotations

import statistics
import sys

from mtrag_graph.context import Context
from mtrag_graph.judging.grounding import sentence_support
from mtrag_graph.measure.evaluation.golden import load_golden
from mtrag_graph.measure.evaluation.runner import fabrication


def main(path: str) -> int:
    threshold = Context().grounding_min_support
    groups: dict[str, list[float]] = {}
    for response in load_golden(path):
        item = response.item
        flag = fabrication(item)
        if flag is None:  # the response declines
            continue
        said = "\n".join(text for _, text in item.history)
        support = sentence_support(item.response, item.passages, said, threshold, question=item.question)
        claims = [s for s in support if s.claim]
        supported = sum(s.supported for s in claims)
        check = "abstain" if claims and not supported else "cut" if supported < len(claims) else "keep"
        faithful = response.human["faithfulness"]
        groups.setdefault(f"fabrication flag {int(flag)}", []).append(faithful)
        groups.setdefault(f"grounding check: {check}", []).append(faithful)
        groups.setdefault("all answering responses", []).append(faithful)
    print(f"grounding_min_support = {threshold}\n")
    print("| group | responses | mean human faithfulness | share rated below 3 of 4 |")
    print("|---|---|---|---|")
    for name in sorted(groups):
        values = groups[name]
        low = sum(v < 3 for v in values) / len(values)
        print(f"| {name} | {len(values)} | {statistics.mean(values):.2f} | {100 * low:.1f}% |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
