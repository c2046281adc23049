"""research/rewrite_retrieval.py: its variants are the two prompt layouts, and its table."""

from __future__ import annotations

from mtrag_graph.context import Context
from mtrag_graph.messages import global_rewrite_messages
from mtrag_graph.prompts import rewrite
from research.rewrite_retrieval import VARIANTS, domain_of, table

TURNS = [
    {"speaker": "user", "text": "How do I create a borg repository?"},
    {"speaker": "agent", "text": "Run borg init."},
]


def test_rules_after_is_the_prompt_before_issue_35_and_the_default_moves_the_rules_into_the_system_text():
    before = global_rewrite_messages(
        TURNS, "And how do I list its archives?", Context(**VARIANTS["rules after"])
    )
    now = global_rewrite_messages(
        TURNS, "And how do I list its archives?", Context(**VARIANTS["rules in system, cue after"])
    )
    assert before[0].content == rewrite.SYSTEM
    assert str(before[1].content).endswith("Last user question: And how do I list its archives?\n\n"
                                           + rewrite.GLOBAL_REWRITE_RULES)  # fmt: skip
    assert str(now[0].content).endswith(rewrite.GLOBAL_REWRITE_RULES)
    assert str(now[1].content).endswith(
        "Last user question: And how do I list its archives?\n\nRewritten question:"
    )
    # the same conversation and question either way; only where the rules stand differs
    assert str(before[1].content).startswith(str(now[1].content).removesuffix("\n\nRewritten question:"))


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
