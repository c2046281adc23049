"""research/rewrite_retrieval.py: its variants are the two prompt layouts, and its table."""

from __future__ import annotations

from mtrag_graph.context import Context
from mtrag_graph.prompts import rewrite
from mtrag_graph.prompts.build import global_rewrite_messages
from mtrag_graph.tasks import domain_of
from research.rewrite_retrieval import VARIANTS, table

TURNS = [
    {"speaker": "user", "text": "How do I create a borg repository?"},
    {"speaker": "agent", "text": "Run borg init."},
]


def test_the_variants_move_only_the_rules_and_rules_after_is_the_default():
    question = "And how do I list its archives?"
    before = global_rewrite_messages(TURNS, question, Context(), VARIANTS["rules after"])
    assert [m.content for m in before] == [
        m.content for m in global_rewrite_messages(TURNS, question, Context())
    ]
    assert before[0].content == rewrite.SYSTEM
    assert str(before[1].content).endswith(
        f"Last user question: {question}\n\n{rewrite.GLOBAL_REWRITE_RULES}"
    )
    for name, tail in (("rules in system", ""), ("rules in system, cue after", "\n\nRewritten question:")):
        moved = global_rewrite_messages(TURNS, question, Context(), VARIANTS[name])
        assert str(moved[0].content).endswith(rewrite.GLOBAL_REWRITE_RULES)
        assert str(moved[1].content) == str(before[1].content).split("\n\nRewrite the last")[0] + tail


def test_collections_map_to_the_mini_corpora_domains():
    assert domain_of("mt-rag-ibmcloud-elser-512-100-20240502") == "cloud"
    assert domain_of("mt-rag-clapnq-elser-512-100-20240503") == "clapnq"


def test_the_table_averages_each_domain_and_all(capsys):
    rows = {
        "rules after": [{"domain": "a", "holds": 1.0, "fallbacks": ["rewrite retry model"]},
                        {"domain": "b", "holds": 0.0, "fallbacks": []}],
        "last turn only": [{"domain": "a", "holds": 0.0}, {"domain": "b", "holds": 0.0}],
    }  # fmt: skip
    table(rows)
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| rules after (n=2) | 1.000 | 0.000 | 0.500 | 1 |"
    assert lines[3] == "| last turn only (n=2) | 0.000 | 0.000 | 0.000 | - |"
