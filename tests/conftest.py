"""Shared test helpers: the benchmark data, with one policy when it is missing.

The scripted fakes live in the package (``mtrag_graph.testing``) so the docs can use them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mtrag_graph import settings

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
