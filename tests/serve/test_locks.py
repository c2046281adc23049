"""One turn at a time per thread across processes and instances: a second holder is refused until the
first lets go, or dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from mtrag_graph.serve.threads import ThreadLocks

HOLD_AND_DIE = textwrap.dedent(
    """
    import os, sys
    from mtrag_graph.serve.threads import ThreadLocks
    locks = ThreadLocks(sys.argv[1])
    assert locks.acquire("t1")
    print("held", flush=True)
    sys.stdin.readline()
    os._exit(0)
    """
)


def check_exclusive(target: str) -> None:
    first, second = ThreadLocks(target), ThreadLocks(target)
    assert first.acquire("t1") and not second.acquire("t1")
    assert not first.acquire("t1")  # the same process too
    assert second.acquire("t2")
    first.release("t1")
    assert second.acquire("t1")
    # a process that holds a lock and dies holds nothing
    second.release("t1")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_DIE, target], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    assert not first.acquire("t1")
    holder.kill()
    holder.wait()
    for _ in range(50):
        if first.acquire("t1"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the dead process's lock was not released")
    first.close()
    second.close()


def test_a_thread_lock_on_sqlite_is_exclusive_across_processes(tmp_path):
    check_exclusive(str(tmp_path / "chat.sqlite"))


def test_a_thread_lock_on_postgresql_is_exclusive_across_instances(postgres_url):
    pytest.importorskip("psycopg")
    check_exclusive(postgres_url)
