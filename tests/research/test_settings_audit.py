from __future__ import annotations

import dataclasses

from mtrag_graph.context import Context
from research.settings_audit import audit, python_names


def test_a_file_sets_what_it_passes_to_a_context_call_or_assigns_and_reads_what_it_reads(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(
        "context = fake_context(top_k=3)\nretrieve(rrf_k=60)\ncontext.reranker = 'lexical'\n"
        "overrides = {'embedder': 'minilm'}\nprint(context.idk_answer)\n",
        encoding="utf-8",
    )
    sets, strings, reads = python_names(path)
    assert {"top_k", "reranker"} <= sets and "rrf_k" not in sets  # a retrieval call is no context
    assert "embedder" in strings and "idk_answer" in reads


def test_a_flag_and_a_shipped_preset_make_a_setting_shipped_and_the_product_s_reads_are_listed():
    wanted = {"top_k", "use_gate"}
    uses = audit(f for f in dataclasses.fields(Context) if f.name in wanted)
    assert uses["top_k"].flag == "--top-k" and uses["top_k"].kind() == "shipped"
    assert "ragu" in uses["use_gate"].presets and uses["use_gate"].kind() == "shipped"
    assert "nodes/answerability_gate" in uses["use_gate"].reads
