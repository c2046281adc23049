"""The real path of the kind twins: the bundled 1.5B names the kind of a name in a tuning-split passage."""

from __future__ import annotations

import pytest

from mtrag_graph.models import get_chat_model
from research.twins import build_twins, model_kinds

pytestmark = pytest.mark.slow


def test_the_bundled_model_names_a_country_as_a_country():
    task = {
        "task_id": "k1<::>1",
        "conversation_id": "k1",
        "Collection": "mt-rag-clapnq-elser-512-1-20240503",
        "input": [{"speaker": "user", "text": "What is the population of Israel?"}],
        "contexts": [{"document_id": "p", "title": "Israel", "text": "Israel is a country in Western Asia."}],
        "answerability": ["ANSWERABLE"],
        "targets": [{"speaker": "agent", "text": "About 9 million."}],
    }
    kinds = model_kinds([task], get_chat_model("qwen2.5-coder-1.5b"))
    assert kinds == {"Israel": "country"}
    twin = [
        t
        for t in build_twins([task], seed=0, kinds=kinds)
        if t["task_id"].startswith("twin-underspecified-kind")
    ]
    assert twin[0]["input"][-1]["text"] == "What is the population of the country?"
