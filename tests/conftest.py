"""Shared test helpers: the benchmark data, with one policy when it is missing, and a PostgreSQL server.

The tests mirror the package: ``tests/<part>/`` tests ``mtrag_graph/<part>/``; the files at this root test
the top-level modules (``graph.py``, ``tasks.py``, ...) and what holds for the whole package.

The scripted fakes live in the package (``mtrag_graph.testing``) so the docs can use them too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mtrag_graph import settings
from mtrag_graph.measure.evaluation import bertscore
from mtrag_graph.models import embeddings

REPO = settings.REPO


def mtrag_data_path(relative: str = "") -> Path:
    """A path in the benchmark data (``MTRAG_DATA``), or the test stops.

    One policy: missing data fails the test when ``MTRAG_DATA`` was set (CI says where the data is),
    and skips it with the reason otherwise (a checkout without the shared data).
    """
    path = settings.data_dir() / relative
    if not path.exists():
        if settings.data_dir_is_set():
            pytest.fail(f"MTRAG_DATA is set but {path} does not exist")
        pytest.skip(f"benchmark data not found at {path} (set MTRAG_DATA to the shared/data/mtrag folder)")
    return path


@pytest.fixture(scope="session")
def mtrag_data() -> Path:
    return mtrag_data_path()


@pytest.fixture(autouse=True)
def fast_tests_load_no_minilm(request, monkeypatch):
    """A test not marked ``slow`` may not load the bundled MiniLM (seconds of torch per process): it is
    marked slow, or it uses the model-free ``hashing:DIM`` embedder."""
    if request.node.get_closest_marker("slow") is not None:
        return

    def refuse() -> Path:
        raise AssertionError(
            "this test loads MiniLM: mark it @pytest.mark.slow, or use embedder='hashing:64'"
        )

    monkeypatch.setattr(embeddings, "minilm_path", refuse)
    monkeypatch.setattr(bertscore, "minilm_path", refuse)


def postgres_server() -> str:
    """A PostgreSQL server's connection string: ``MTRAG_POSTGRES_URL``, else one started by
    ``scripts/ci_postgres.sh``; the test skips, saying why, when none can be started."""
    url = os.environ.get("MTRAG_POSTGRES_URL")
    if url:
        return url
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "ci_postgres.sh")], capture_output=True, text=True
    )
    if started.returncode != 0:
        reason = f"no PostgreSQL server could be started: {started.stderr.strip().splitlines()[-1:]}"
        print(reason)
        pytest.skip(reason)
    return started.stdout.strip()


@pytest.fixture(scope="module")
def postgres_url() -> str:
    """``postgres_server()`` once per module."""
    return postgres_server()
