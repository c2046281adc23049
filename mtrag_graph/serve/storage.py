"""What a served thread keeps: its latest checkpoint, not the history of every turn.

A turn runs with ``durability="exit"`` (one checkpoint when it ends or waits on a clarifying reply,
instead of one per step of the answering graph, each carrying the passages), and when it ends the
thread's superseded checkpoints are deleted (``prune``): the conversation is in the latest one, and
the service never reads an older one. So a thread's storage grows with its conversation, not with the
number of its turns times the passage material (``benchmarks/results/serving.md``).

PostgreSQL: ``PostgresSaver.prune(strategy="keep_latest")``. SQLite: the saver has no ``prune``; the
same deletions here, on its two tables (a checkpoint row holds its whole state there, so nothing else
refers to a deleted one).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any


def can_prune(graph: Any) -> bool:
    """Whether keeping only the latest checkpoint keeps the whole state of ``graph``'s threads (not so
    for a ``DeltaChannel``, which rebuilds its value from older checkpoints; newer LangGraph releases)."""
    try:
        from langgraph.channels.delta import DeltaChannel  # noqa: PLC0415
    except ImportError:  # an older LangGraph: no such channel
        return True
    channels = getattr(graph, "channels", {}) or {}
    return not any(isinstance(c, DeltaChannel) for c in channels.values())


def prune(saver: Any, thread_id: str, *, waiting: bool) -> None:
    """Delete ``thread_id``'s superseded checkpoints and their writes.

    The latest checkpoint of the thread stays, with its pending writes; checkpoints in namespaces
    under the thread's (a subgraph's; those a thread stored before issue 48 left, ``runtime/checkpoints``)
    stay only while the thread is ``waiting`` on a clarifying reply.
    """
    if hasattr(saver, "conn") and hasattr(saver, "cursor"):  # SqliteSaver
        _prune_sqlite(saver, thread_id, waiting=waiting)
        return
    saver.prune([thread_id], strategy="keep_latest")
    if not waiting:
        pool = saver.conn  # the PostgresSaver's pool (or connection)
        with pool.connection() if hasattr(pool, "connection") else nullcontext(pool) as connection:
            for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                connection.execute(
                    f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns <> ''", (thread_id,)
                )


def _prune_sqlite(saver: Any, thread_id: str, *, waiting: bool) -> None:
    with saver.cursor(transaction=True) as cursor:
        cursor.execute(
            "SELECT checkpoint_ns, MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns",
            (thread_id,),
        )
        heads = dict(cursor.fetchall())
        if not waiting:
            heads = {ns: head for ns, head in heads.items() if ns == ""}
            for table in ("checkpoints", "writes"):
                cursor.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns <> ''", (thread_id,)
                )
        for ns, head in heads.items():
            for table in ("checkpoints", "writes"):
                cursor.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id <> ?",
                    (thread_id, ns, head),
                )
            cursor.execute(
                "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread_id, ns),
            )
