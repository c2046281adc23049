"""Who owns which conversation, and when it was last used: a small table beside the checkpointer's.

The checkpointer keeps each thread's conversation; it has no notion of an owner and no cheap way to
list threads or find old ones. ``ThreadStore`` keeps one row per thread (owner, title, created, last
used) in the same database: a SQLite file or PostgreSQL, so every instance behind a load balancer sees
the same rows. Retention deletes a thread's row and its checkpoints together (``delete_thread``).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TITLE_CHARS = 80

SCHEMA = """
CREATE TABLE IF NOT EXISTS mtrag_threads (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
)
"""
INDEX = "CREATE INDEX IF NOT EXISTS mtrag_threads_owner ON mtrag_threads (owner, updated_at)"


def is_postgres(target: str) -> bool:
    return target.startswith(("postgres://", "postgresql://"))


class ThreadStore:
    """Thread rows in SQLite (a file, with a lock: one connection) or PostgreSQL (a connection pool)."""

    def __init__(self, target: str, pool: Any = None) -> None:
        self.postgres = is_postgres(target)
        self._pool = pool
        self._lock = threading.Lock()
        self._sqlite: sqlite3.Connection | None = None
        if not self.postgres:
            path = Path(target).expanduser()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._sqlite = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        with self._cursor() as cursor:
            cursor.execute(SCHEMA)
            cursor.execute(INDEX)

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        if self._sqlite is not None:
            with self._lock:
                cursor = self._sqlite.cursor()
                try:
                    yield cursor
                finally:
                    cursor.close()
        else:
            with self._pool.connection() as connection, connection.cursor() as cursor:
                yield cursor

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    def create(self, thread_id: str, owner: str, title: str = "") -> dict[str, Any]:
        now = time.time()
        with self._cursor() as cursor:
            cursor.execute(
                self._sql("INSERT INTO mtrag_threads VALUES (?, ?, ?, ?, ?)"),
                (thread_id, owner, title[:TITLE_CHARS], now, now),
            )
        return {"thread_id": thread_id, "title": title[:TITLE_CHARS], "created_at": now, "updated_at": now}

    def get(self, thread_id: str) -> dict[str, Any] | None:
        with self._cursor() as cursor:
            cursor.execute(
                self._sql(
                    "SELECT thread_id, owner, title, created_at, updated_at FROM mtrag_threads WHERE thread_id = ?"
                ),
                (thread_id,),
            )
            row = cursor.fetchone()
        if row is None:
            return None
        keys = ("thread_id", "owner", "title", "created_at", "updated_at")
        return dict(zip(keys, row.values() if isinstance(row, dict) else row, strict=True))

    def owned_by(self, owner: str, limit: int = 100) -> list[dict[str, Any]]:
        with self._cursor() as cursor:
            cursor.execute(
                self._sql(
                    "SELECT thread_id, title, created_at, updated_at FROM mtrag_threads WHERE owner = ? "
                    "ORDER BY updated_at DESC LIMIT ?"
                ),
                (owner, limit),
            )
            rows = cursor.fetchall()
        keys = ("thread_id", "title", "created_at", "updated_at")
        return [dict(zip(keys, r.values() if isinstance(r, dict) else r, strict=True)) for r in rows]

    def touch(self, thread_id: str, title: str | None = None) -> None:
        """Mark the thread used now (and give it a title when it has none)."""
        with self._cursor() as cursor:
            cursor.execute(
                self._sql(
                    "UPDATE mtrag_threads SET updated_at = ?, "
                    "title = CASE WHEN title = '' THEN ? ELSE title END WHERE thread_id = ?"
                ),
                (time.time(), (title or "")[:TITLE_CHARS], thread_id),
            )

    def delete(self, thread_id: str) -> None:
        with self._cursor() as cursor:
            cursor.execute(self._sql("DELETE FROM mtrag_threads WHERE thread_id = ?"), (thread_id,))

    def unused_since(self, cutoff: float) -> list[str]:
        """Threads last used before ``cutoff`` (seconds since the epoch)."""
        with self._cursor() as cursor:
            cursor.execute(self._sql("SELECT thread_id FROM mtrag_threads WHERE updated_at < ?"), (cutoff,))
            rows = cursor.fetchall()
        return [next(iter(r.values())) if isinstance(r, dict) else r[0] for r in rows]

    def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()


class ThreadLocks:
    """One turn at a time per thread, across every process and instance sharing the checkpointer.

    PostgreSQL: a session-level advisory lock per thread, held on one connection of the process (the
    server releases a dead process's locks when its connection drops, so a killed instance blocks
    nothing). SQLite: an exclusive ``flock`` on a file per thread beside the database (one machine;
    the kernel releases it when the process dies).
    """

    def __init__(self, target: str) -> None:
        self._mutex = threading.Lock()
        self._held: dict[str, Any] = {}
        self._connection: Any = None
        self._target = target
        self._folder: Path | None = None
        if not is_postgres(target):
            self._folder = Path(f"{Path(target).expanduser()}.locks")
            self._folder.mkdir(parents=True, exist_ok=True)

    def _pg(self) -> Any:
        if self._connection is None or self._connection.closed:
            import psycopg  # noqa: PLC0415 - optional (the postgres extra)

            self._connection = psycopg.connect(self._target, autocommit=True)
        return self._connection

    def acquire(self, thread_id: str) -> bool:
        with self._mutex:
            if thread_id in self._held:
                return False
            if self._folder is None:
                row = self._pg().execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (thread_id,))
                if not row.fetchone()[0]:
                    return False
                self._held[thread_id] = True
                return True
            descriptor = os.open(self._folder / thread_id, os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                return False
            self._held[thread_id] = descriptor
            return True

    def release(self, thread_id: str) -> None:
        with self._mutex:
            held = self._held.pop(thread_id, None)
            if held is None:
                return
            if self._folder is None:
                self._pg().execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (thread_id,))
            else:
                fcntl.flock(held, fcntl.LOCK_UN)
                os.close(held)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
