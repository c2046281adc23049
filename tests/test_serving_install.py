"""A serving install (``pip install -e '.[models]'``, no ``measure`` extra) answers tasks: the graph, the
batch runner, the thread checkpoints and the CLI import none of the measurement libraries."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO

MEASURE_LIBRARIES = ("bert_score", "matplotlib", "pytrec_eval", "rouge_score", "sklearn")

SERVE_WITHOUT_MEASURE = textwrap.dedent(
    f"""
    import importlib.abc
    import sys

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {MEASURE_LIBRARIES!r}:
                raise ModuleNotFoundError(f"{{name}} is not installed (a serving install)", name=name)
            return None

    sys.meta_path.insert(0, Absent())

    from mtrag_graph.runtime.batch import answer_tasks
    from mtrag_graph.runtime.checkpoints import migrate_thread
    from mtrag_graph.cli import build_parser
    from mtrag_graph.graph import build_graph
    from mtrag_graph.testing import fake_context, make_task

    build_parser()
    assert migrate_thread
    state = build_graph(output="state").invoke(
        {{"task": make_task(["How do bees find flowers?"], ["Bees follow the waggle dance."])}},
        context=fake_context(gate_classifier="default", embedder="hashing:64", grounding="facts"),
    )
    assert state["answer"], state
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {MEASURE_LIBRARIES!r})
    assert not loaded, loaded
    print("served without", {MEASURE_LIBRARIES!r})
    """
)


def test_the_graph_answers_with_the_measurement_libraries_absent():
    run = subprocess.run(
        [sys.executable, "-c", SERVE_WITHOUT_MEASURE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "served without" in run.stdout
