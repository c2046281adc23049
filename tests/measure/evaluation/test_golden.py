"""The official per-task values of the golden file (159 tasks x 3 systems), recomputed by our code."""

from __future__ import annotations

from mtrag_graph.measure.evaluation.metrics import condition, rb_alg, rouge_l


def _idk_from_conditional(row: dict) -> int:
    """The IDK verdict implied by the stored ``conditional_idk`` (1 = the IDK behaviour was right)."""
    right = row["values"]["conditional_idk"]
    return right if row["answerability"] in ("UNANSWERABLE", "CONVERSATIONAL") else 1 - right


def test_golden_file_has_477_rows(golden_rows):
    assert len(golden_rows) == 477


def test_rouge_l_matches_every_stored_value(golden_rows):
    mismatches = [
        (row["id"], row["values"]["RougeL"], rouge_l(row["response"], row["target"]))
        for row in golden_rows
        if abs(rouge_l(row["response"], row["target"]) - row["values"]["RougeL"]) > 1e-9
    ]
    assert mismatches == []


def test_rb_alg_from_stored_parts_matches_stored_rb_agg_exactly(golden_rows):
    mismatches = []
    for row in golden_rows:
        v = row["values"]
        kprec = v["Bert-KPrec"] if row["n_passages"] else None
        raw = rb_alg(v["Bert-Rec"], v["RougeL"], kprec)
        conditioned = condition(raw, row["answerability"], _idk_from_conditional(row))
        if conditioned != v["rb_agg"]:
            mismatches.append((row["id"], v["rb_agg"], conditioned))
    assert mismatches == []


def test_unanswerable_and_conversational_judge_metrics_equal_the_idk_outcome(golden_rows):
    rows = [r for r in golden_rows if r["answerability"] in ("UNANSWERABLE", "CONVERSATIONAL")]
    assert rows
    for row in rows:
        idk = _idk_from_conditional(row)
        for name in ("rb_llm", "rl_f", "rb_agg"):
            assert condition(0.37, row["answerability"], idk) == row["values"][name], (row["id"], name)


def test_answerable_rows_that_say_idk_are_zeroed(golden_rows):
    rows = [r for r in golden_rows if r["answerability"] in ("ANSWERABLE", "PARTIAL")]
    zeroed = [r for r in rows if _idk_from_conditional(r) == 1]
    assert zeroed, "the golden file holds answerable rows judged IDK"
    for row in zeroed:
        for name in ("rb_llm", "rl_f", "rb_agg"):
            assert condition(0.37, row["answerability"], 1) == row["values"][name] == 0, (row["id"], name)


def test_answerable_rows_that_answer_keep_the_raw_judge_values(golden_rows):
    answered = [
        r
        for r in golden_rows
        if r["answerability"] in ("ANSWERABLE", "PARTIAL") and _idk_from_conditional(r) == 0
    ]
    assert answered, "the golden file holds answerable rows that answer"
    for name in ("rb_llm", "rl_f"):
        # the stored values are the raw judge values, not zeroed (as answerable rows judged IDK are) ...
        assert any(r["values"][name] > 0 for r in answered), name
    for row in answered:
        # ... and conditioning leaves a value of such a row unchanged
        assert condition(0.37, row["answerability"], 0) == 0.37, row["id"]
