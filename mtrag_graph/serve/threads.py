"""Who owns which conversation, and when it was last used: a small table beside the checkpointer's.

The checkpointer keeps each thread's conversation; it has no notion of an owner and no cheap way to
list threads or find old ones. ``ThreadStore`` keeps one row per thread (owner, title, created, last
used) in the same database: a SQLite file or PostgreSQL, so every instance behind a load balancer sees
the same rows. A deleted thread's row goes at once; its checkpoints go when no turn of it runs (a
row in ``mtrag_deleted_threads`` remembers them until then).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TITLE_CHARS = 80

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS mtrag_threads (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS mtrag_threads_owner ON mtrag_threads (owner, updated_at)",
    # a thread deleted while a turn of it ran (here or on another instance): its checkpoints are deleted
    # when that turn stops, or by the next sweep when the instance running it died
    """CREATE TABLE IF NOT EXISTS mtrag_deleted_threads (
    thread_id TEXT PRIMARY KEY,
    deleted_at DOUBLE PRECISION NOT NULL
)""",
    # the deployment's secret: API keys are stored as HMACs under it (owner_id)
    "CREATE TABLE IF NOT EXISTS mtrag_secrets (name TEXT PRIMARY KEY, secret TEXT NOT NULL)",
)


# The write-ahead log (SQLite's WAL, which the checkpointer turns on) is copied into the database every
# 256 pages (1 MiB; SQLite's default is 4 MiB) and cut back to 1 MiB after: left alone it stays at its
# largest size, more than a thread's whole conversation.
SQLITE_PRAGMAS = ("PRAGMA wal_autocheckpoint = 256", "PRAGMA journal_size_limit = 1048576")


class ThreadLimit(Exception):
    """The owner has as many threads as a deployment allows."""


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
            for pragma in SQLITE_PRAGMAS:
                self._sqlite.execute(pragma)
        with self._cursor() as cursor:
            for statement in SCHEMA:
                cursor.execute(statement)

    @contextmanager
    def _cursor(self, transaction: bool = False) -> Iterator[Any]:
        if self._sqlite is not None:
            with self._lock:
                cursor = self._sqlite.cursor()
                try:
                    if not transaction:
                        yield cursor
                        return
                    cursor.execute("BEGIN IMMEDIATE")  # other processes on the file wait for this one
                    try:
                        yield cursor
                    except BaseException:
                        cursor.execute("ROLLBACK")
                        raise
                    cursor.execute("COMMIT")
                finally:
                    cursor.close()
        else:
            with self._pool.connection() as connection:
                if not transaction:
                    with connection.cursor() as cursor:
                        yield cursor
                    return
                with connection.transaction(), connection.cursor() as cursor:
                    yield cursor

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    @staticmethod
    def _first(row: Any) -> Any:
        return next(iter(row.values())) if isinstance(row, dict) else row[0]

    def secret(self, name: str) -> str:
        """The deployment's secret ``name``: made by the first instance, the same for every instance."""
        with self._cursor() as cursor:
            cursor.execute(
                self._sql("INSERT INTO mtrag_secrets VALUES (?, ?) ON CONFLICT (name) DO NOTHING"),
                (name, secrets.token_hex(32)),
            )
            cursor.execute(self._sql("SELECT secret FROM mtrag_secrets WHERE name = ?"), (name,))
            return str(self._first(cursor.fetchone()))

    def create(self, thread_id: str, owner: str, title: str = "", limit: int | None = None) -> dict[str, Any]:
        """A new thread row; ``ThreadLimit`` when ``owner`` has ``limit`` threads already."""
        now = time.time()
        with self._cursor(transaction=True) as cursor:
            if limit is not None:
                if self.postgres:  # one creation at a time per owner, across instances
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (owner,))
                cursor.execute(self._sql("SELECT COUNT(*) FROM mtrag_threads WHERE owner = ?"), (owner,))
                if int(self._first(cursor.fetchone())) >= limit:
                    raise ThreadLimit(limit)
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

    def rename_owner(self, old: str, new: str) -> None:
        """Give ``old``'s threads to ``new`` (an owner id from before the ids were salted)."""
        with self._cursor() as cursor:
            cursor.execute(self._sql("UPDATE mtrag_threads SET owner = ? WHERE owner = ?"), (new, old))

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
        """Remove the thread's row and mark it deleted (its checkpoints go when no turn of it runs)."""
        with self._cursor(transaction=True) as cursor:
            cursor.execute(
                self._sql(
                    "INSERT INTO mtrag_deleted_threads VALUES (?, ?) ON CONFLICT (thread_id) DO NOTHING"
                ),
                (thread_id, time.time()),
            )
            cursor.execute(self._sql("DELETE FROM mtrag_threads WHERE thread_id = ?"), (thread_id,))

    def deleted(self) -> list[str]:
        """Threads deleted whose checkpoints may still be there."""
        with self._cursor() as cursor:
            cursor.execute("SELECT thread_id FROM mtrag_deleted_threads")
            return [str(self._first(r)) for r in cursor.fetchall()]

    def forget(self, thread_id: str) -> None:
        """The deleted thread's checkpoints are gone: nothing is left to delete."""
        with self._cursor() as cursor:
            cursor.execute(self._sql("DELETE FROM mtrag_deleted_threads WHERE thread_id = ?"), (thread_id,))

    def unused_since(self, cutoff: float) -> list[str]:
        """Threads last used before ``cutoff`` (seconds since the epoch)."""
        with self._cursor() as cursor:
            cursor.execute(self._sql("SELECT thread_id FROM mtrag_threads WHERE updated_at < ?"), (cutoff,))
            rows = cursor.fetchall()
        return [str(self._first(r)) for r in rows]

    def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()


class ThreadLocks:
    """One turn at a time per thread, across every process and instance sharing the checkpointer.

    PostgreSQL: a session-level advisory lock per thread, held on one connection of the process (the
    server releases a dead process's locks when its connection drops, so a killed instance blocks
    nothing). SQLite: an exclusive ``flock`` on a file per thread beside the database (one machine;
    the kernel releases it when the process dies); the file goes with its thread (``release(remove=True)``).
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

    def path(self, thread_id: str) -> Path | None:
        """The thread's lock file (SQLite), or None (PostgreSQL)."""
        return None if self._folder is None else self._folder / thread_id

    def acquire(self, thread_id: str) -> bool:
        with self._mutex:
            if thread_id in self._held:
                return False
            path = self.path(thread_id)
            if path is None:
                row = self._pg().execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (thread_id,))
                if not row.fetchone()[0]:
                    return False
                self._held[thread_id] = True
                return True
            while True:
                descriptor = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(descriptor)
                    return False
                if _same_file(descriptor, path):
                    self._held[thread_id] = descriptor
                    return True
                # the holder removed the file (its thread was deleted) after we opened it: a lock on
                # that file excludes nobody; take the path's file instead
                os.close(descriptor)

    def wait(self, thread_id: str, timeout_s: float) -> bool:
        """Acquire, waiting up to ``timeout_s`` for the holder (a running turn) to let go."""
        deadline = time.monotonic() + timeout_s
        while not self.acquire(thread_id):
            if time.monotonic() >= deadline:
                return False
            time.sleep(LOCK_POLL_S)
        return True

    def release(self, thread_id: str, remove: bool = False) -> None:
        """Let go of the thread; ``remove``: its lock file too (the thread is deleted)."""
        with self._mutex:
            held = self._held.pop(thread_id, None)
            if held is None:
                return
            path = self.path(thread_id)
            if path is None:
                self._pg().execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (thread_id,))
                return
            if remove:
                path.unlink(missing_ok=True)  # while still held, so no one takes the file being removed
            fcntl.flock(held, fcntl.LOCK_UN)
            os.close(held)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()


LOCK_POLL_S = 0.05


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (found.st_dev, found.st_ino) == (opened.st_dev, opened.st_ino)
