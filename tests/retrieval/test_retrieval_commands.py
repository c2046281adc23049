from __future__ import annotations

import json
from pathlib import Path

from mtrag_graph.cli import main


def _queries(path: Path) -> Path:
    rows = [
        {"_id": "c<::>1", "text": "|user|: Cloudant JSON database"},
        {"_id": "c<::>2", "text": "mortgage loan"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_index_command_builds_one_sub_index_per_corpus(tmp_path: Path, corpus_file: Path, fake_embedder: str):
    other = tmp_path / "fiqa.jsonl"
    other.write_text(corpus_file.read_text())
    assert (
        main(
            ["index", str(corpus_file), str(other), "-o", str(tmp_path / "idx"), "--embedder", fake_embedder]
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["cloud", "fiqa"]


def test_retrieve_command_writes_the_benchmark_run_format(tmp_path: Path, tiny_index: Path):
    run = tmp_path / "run.jsonl"
    assert (
        main(["retrieve", str(_queries(tmp_path / "q.jsonl")), "--index", str(tiny_index), "-o", str(run)])
        == 0
    )
    first = json.loads(run.read_text().splitlines()[0])
    assert first["task_id"] == "c<::>1"
    assert first["Collection"] == "mt-rag-ibmcloud-elser-512-100-20240502"
    assert first["contexts"][0]["document_id"] == "p-cloudant"
    assert {"document_id", "score", "title", "text"} <= set(first["contexts"][0])


def test_eval_retrieval_command_prints_per_domain_and_overall(tmp_path: Path, tiny_index: Path, capsys):
    run = tmp_path / "run.jsonl"
    main(
        [
            "retrieve",
            str(_queries(tmp_path / "q.jsonl")),
            "--index",
            str(tiny_index),
            "-o",
            str(run),
            "--top",
            "3",
        ]
    )
    qrels = tmp_path / "cloud_qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nc<::>1\tp-cloudant\t1\nc<::>2\tp-mortgage\t1\n")
    capsys.readouterr()
    assert main(["eval-retrieval", str(run), "--qrels", str(qrels)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[:3] == ["cloud", "2", "1.0000"] and lines[3].split()[:2] == ["all", "2"]
