"""One judging layer for the evaluation harness and the graph's candidate judge.

Both ask the same questions of an answer: is it supported by the passages, is it the answer people
would prefer among the candidates, does it decline? Here they are answered from the passages without
an LLM call: claim-level (per-sentence) support, lexical and by embedding (``support``), agreement
between candidates (``consensus``), the refusal recogniser (``mtrag_graph.text.declines``), combined by small linear models
fitted on the tuning half of the golden file with human ratings (``answer_judge``, trained by
``python -m research.fit_answer_judge``).
"""

from mtrag_graph.judging.answer_judge import AnswerJudge, AnswerScore, answer_judge_of, load_answer_judge

__all__ = [
    "AnswerJudge",
    "AnswerScore",
    "answer_judge_of",
    "load_answer_judge",
]
