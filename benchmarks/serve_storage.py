"""Storage of a served thread as it grows: bytes per turn, SQLite and PostgreSQL.

    python -m benchmarks.serve_storage -o /tmp/serve_storage.md

Starts, all on 127.0.0.1: the stand-in endpoint (``mtrag_graph.testing.standin``, no latency), and for
each checkpointer one ``mtrag-graph serve`` process over a passages file of about ``--passages-kb`` KB
(the first passages of the MTRAG ``corpora/mini`` domain ``--domain``, from ``MTRAG_DATA``; written to a
temporary folder, never into the repository), ``--no-clarify``. One thread gets ``--turns`` messages of
about ``--message-chars`` characters (MTRAG user questions joined), each answered to its ``done`` event.
After each turn it measures: the database's bytes (SQLite: the file and its write-ahead log;
PostgreSQL: the checkpoint tables and ``mtrag_threads``, ``pg_total_relation_size``), their growth by
this turn and since the thread began, and the thread's own rows (their count and bytes).

``--source DIR`` serves another checkout's ``mtrag_graph`` (for example an earlier commit, unpacked
with ``git archive``), to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from mtrag_graph import settings
from mtrag_graph.testing.standin import StandInServer

REPO = Path(__file__).resolve().parents[1]
START_S = 90.0
TURN_S = 120.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def passages_file(folder: Path, domain: str, kilobytes: int) -> tuple[Path, int]:
    """The first passages of ``corpora/mini/DOMAIN.jsonl`` up to ``kilobytes``; the file and its rows."""
    source = settings.data_dir() / "corpora" / "mini" / f"{domain}.jsonl"
    if not source.exists():
        raise SystemExit(f"no passages at {source} (set MTRAG_DATA to the shared/data/mtrag folder)")
    lines, size = [], 0
    with open(source, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            out = json.dumps({"document_id": row["_id"], "title": row.get("title") or "", "text": row["text"],
                              **({"url": row["url"]} if row.get("url") else {})}) + "\n"  # fmt: skip
            if size + len(out.encode()) > kilobytes * 1000:
                break
            lines.append(out)
            size += len(out.encode())
    path = folder / "passages.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path, len(lines)


def messages(count: int, chars: int) -> list[str]:
    """``count`` messages of about ``chars`` characters: MTRAG user questions joined, each from another start."""
    questions: list[str] = []
    with open(settings.data_dir() / "tasks" / "mtragun_dev.jsonl", encoding="utf-8") as handle:
        for line in handle:
            for turn in json.loads(line)["input"]:
                if turn["speaker"] == "user" and turn["text"].strip() not in questions:
                    questions.append(turn["text"].strip())
    found = []
    for number in range(count):
        text, index = f"({number + 1}) ", number * 7
        while len(text) < chars - 200:
            text += questions[index % len(questions)] + " "
            index += 1
        found.append(text[:chars].strip())
    return found


def database_bytes(checkpointer: str) -> int:
    if checkpointer.startswith("postgresql://"):
        import psycopg

        tables = "'checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'mtrag_threads'"
        with psycopg.connect(checkpointer) as connection:
            found = connection.execute(
                f"SELECT sum(pg_total_relation_size(t)) FROM unnest(ARRAY[{tables}]) AS t"
            )
            return int(found.fetchone()[0])  # type: ignore[index]
    return sum(os.path.getsize(p) for p in (checkpointer, f"{checkpointer}-wal") if os.path.exists(p))


def thread_rows(checkpointer: str, thread_id: str) -> tuple[int, int]:
    """The thread's checkpoint rows and their bytes (checkpoints, pending writes, blobs)."""
    if checkpointer.startswith("postgresql://"):
        import psycopg

        queries = (
            "SELECT count(*), coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0) "
            "FROM checkpoints WHERE thread_id = %s",
            "SELECT count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %s",
            "SELECT count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE thread_id = %s",
        )
        with psycopg.connect(checkpointer) as connection:
            counts = [connection.execute(q, (thread_id,)).fetchone() for q in queries]
        return sum(int(c[0]) for c in counts if c), sum(int(c[1]) for c in counts if c)
    import sqlite3

    connection = sqlite3.connect(checkpointer)
    try:
        checkpoints = connection.execute(
            "SELECT count(*), coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints "
            "WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        writes = connection.execute(
            "SELECT count(*), coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?", (thread_id,)
        ).fetchone()
    finally:
        connection.close()
    return checkpoints[0] + writes[0], checkpoints[1] + writes[1]


class Server:
    """One ``mtrag-graph serve`` process."""

    def __init__(self, source: Path, passages: Path, checkpointer: str, endpoint: str) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        spec = f"vllm:stand-in@{endpoint}"
        command = [sys.executable, "-m", "mtrag_graph", "serve", "--passages", str(passages),
                   "--port", self.url.rsplit(":", 1)[1], "--checkpointer", checkpointer, "--no-clarify",
                   "--small-model", spec, "--large-model", spec, "--reranker", "lexical", "--embedder", "hashing:64"]  # fmt: skip
        environment = {**os.environ, "PYTHONPATH": str(source)}
        self.process = subprocess.Popen(command, cwd=source, env=environment, start_new_session=True)
        deadline = time.monotonic() + START_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError("mtrag-graph serve exited")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("mtrag-graph serve did not start")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def answer(url: str, thread_id: str, text: str, after: int) -> dict[str, Any]:
    with httpx.stream("POST", f"{url}/api/threads/{thread_id}/messages", json={"text": text, "after": after},
                      timeout=TURN_S) as response:  # fmt: skip
        response.raise_for_status()
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind in ("done", "error", "interrupt"):
                if kind != "done":
                    raise RuntimeError(f"turn ended with {kind}: {line}")
                return json.loads(line[6:])
    raise RuntimeError("the stream ended without done")


def measure(
    name: str, checkpointer: str, source: Path, passages: Path, endpoint: str, texts: list[str]
) -> list[str]:
    server = Server(source, passages, checkpointer, endpoint)
    rows = []
    try:
        created = httpx.post(server.url + "/api/threads", json={}, timeout=30)
        thread_id = created.json()["thread_id"]
        began = last = database_bytes(checkpointer)
        for number, text in enumerate(texts, start=1):
            done = answer(server.url, thread_id, text, after=2 * (number - 1))
            assert done["turns"] == 2 * number, done
            now = database_bytes(checkpointer)
            count, stored = thread_rows(checkpointer, thread_id)
            rows.append(f"| {name} | {number} | {now - last:,} | {now - began:,} | {count} | {stored:,} |")
            print(rows[-1], flush=True)
            last = now
    finally:
        server.stop()
    return rows


HEADER = (
    "| checkpointer | turn | database bytes added by this turn | database growth since the thread began | "
    "the thread's checkpoint rows | the thread's stored bytes |\n|---|---|---|---|---|---|"
)


def postgres_url() -> str | None:
    url = os.environ.get("MTRAG_POSTGRES_URL")
    if url:
        return url
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "ci_postgres.sh")], capture_output=True, text=True
    )
    return started.stdout.strip() if started.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--message-chars", type=int, default=4000)
    parser.add_argument("--passages-kb", type=int, default=230)
    parser.add_argument("--domain", default="clapnq", help="corpora/mini domain the passages come from")
    parser.add_argument("--source", type=Path, default=REPO, help="the checkout whose mtrag_graph is served")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("-o", "--output", help="write the table here too")
    args = parser.parse_args(argv)
    texts = messages(args.turns, args.message_chars)
    standin = StandInServer(latency_s=0.0, max_requests=args.turns * 40 + 100, idle_exit_s=300).start()
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        passages, count = passages_file(Path(folder), args.domain, args.passages_kb)
        try:
            rows += measure(
                "SQLite", str(Path(folder) / "chat.sqlite"), args.source, passages, standin.base_url, texts
            )
            postgres = None if args.no_postgres else postgres_url()
            if postgres:
                rows += measure("PostgreSQL", postgres, args.source, passages, standin.base_url, texts)
        finally:
            standin.shutdown()
        size = passages.stat().st_size
    command = "python -m benchmarks.serve_storage " + " ".join(argv if argv is not None else sys.argv[1:])
    table = (
        f"Command: `{command}`\n\n{args.turns} messages of {min(map(len, texts))} to {max(map(len, texts))} "
        f"characters over {count} passages ({size:,} bytes, corpora/mini/{args.domain}).\n\n{HEADER}\n"
        + "\n".join(rows)
        + "\n"
    )
    print("\n" + table)
    if args.output:
        Path(args.output).write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
