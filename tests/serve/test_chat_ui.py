"""A LangGraph chat UI in a real browser: the page of examples/chat_ui (``@langchain/langgraph-sdk``'s
``useStream`` from npm, bundled with esbuild) in headless Chromium against ``langgraph dev`` serving
langgraph.json's graph. A streamed answer, a second turn on the thread, a clarifying question answered,
and, where the grounding check withdraws a sentence (``grounding: "facts"``, sent as the run's context),
nothing withdrawn ever on the screen; under the default (``whole``) the answer is shown as written.

Needs ``npm`` (the page is built from the npm registry on first use: ``npm ci`` and ``npm run build`` in
examples/chat_ui) and Chromium with its driver (scripts/setup.sh); a missing one fails the test, as the
served page's browser test does (``MTRAG_SKIP_BROWSER=1`` leaves both out).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import urllib.parse
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES
from tests.serve.test_browser import browser, wait_for  # noqa: F401 - the fixture, used by name
from tests.serve.test_langgraph_server import langgraph_dev
from tests.servers import free_port, stop, wait_until_up

PAGE = REPO / "examples" / "chat_ui"
PASSAGES = [
    {"document_id": "bees-1", "title": "Bees", "text": "Bees dance to show where flowers are."},
    {"document_id": "bees-2", "title": "Waggle dance", "text": "The waggle dance points at food."},
    *({"document_id": f"lib-{i}", "title": title, "text": text}
      for i, (text, title) in enumerate(zip(LIBRARIES, TITLES, strict=True))),
]  # fmt: skip
# every answer the scripted model writes has a second sentence the passages do not back
DRAFT = "Bees dance to show where flowers are. The Moon landing in 1969 used 42 rockets."
FACTS = "&" + urllib.parse.urlencode({"context": json.dumps({"grounding": "facts"})})
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def built_page() -> Path:
    if os.environ.get("MTRAG_SKIP_BROWSER") == "1":
        pytest.skip("MTRAG_SKIP_BROWSER=1")
    npm = "npm"
    for step in ([npm, "ci", "--no-audit", "--no-fund"], [npm, "run", "build"]):
        if step[1] == "ci" and (PAGE / "node_modules").exists():
            continue
        done = subprocess.run(step, cwd=PAGE, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{' '.join(step)} failed: {done.stderr[-2000:]}"
    return PAGE


@pytest.fixture(scope="module")
def served(tmp_path_factory, built_page) -> Iterator[str]:
    """``langgraph dev`` with scripted models, and the page on a static server; yields the page's URL."""
    folder = tmp_path_factory.mktemp("chat-ui")
    env = {**os.environ, "PYTHONPATH": str(REPO), "LANGSMITH_TRACING": "false",
           "MTRAG_SMALL_MODEL": "scripted:How do bees talk?", "MTRAG_LARGE_MODEL": f"scripted:{DRAFT}",
           "MTRAG_RERANKER": "lexical", "MTRAG_EMBEDDER": "hashing:64"}  # fmt: skip
    port, log = free_port(), folder / "server.log"
    with open(log, "w") as handle:
        process = subprocess.Popen(langgraph_dev(folder, port), cwd=folder, env=env, stdout=handle,
                                   stderr=subprocess.STDOUT)  # fmt: skip
    pages = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietFiles, directory=str(built_page)))
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    try:
        problem = wait_until_up(f"http://127.0.0.1:{port}/info", process, log)
        assert problem is None, problem
        query = urllib.parse.urlencode({"api": f"http://127.0.0.1:{port}", "contexts": json.dumps(PASSAGES)})
        yield f"http://127.0.0.1:{pages.server_address[1]}/index.html?{query}"
    finally:
        pages.shutdown()
        stop(process)


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def say(driver, text: str) -> None:
    driver.find_element("id", "say").send_keys(text)
    driver.find_element("id", "send").click()


def settled(driver, count: int, status: str = "ready") -> list[str]:
    """The message list once it has ``count`` messages and the run has ended (``status``)."""
    script = (
        "const items = [...document.querySelectorAll('#messages li')];"
        f"return items.length >= {count} && document.getElementById('status').textContent === '{status}'"
        " ? items.map(i => i.className + ': ' + i.textContent) : null;"
    )
    return wait_for(driver, script)


def test_a_chat_ui_on_use_stream_shows_the_answers_asks_back_and_never_shows_withdrawn_text(
    served,
    browser,  # noqa: F811 - the fixture of tests/serve/test_browser.py
):
    browser.get(served + FACTS)
    wait_for(browser, "return document.getElementById('status')?.textContent === 'ready'")
    say(browser, "How do bees talk?")
    assert settled(browser, 2) == ["human: How do bees talk?", "ai: Bees dance to show where flowers are."]

    say(browser, "Why do they dance?")  # the thread keeps the conversation: only the new message is sent
    messages = settled(browser, 4)
    assert messages[2:] == ["human: Why do they dance?", "ai: Bees dance to show where flowers are."]

    say(browser, "When does this library open?")
    assert wait_for(browser, "return document.getElementById('asked')?.textContent") == QUESTION_ASKED
    assert settled(browser, 6, "waiting for your reply")[-1] == f"ai: {QUESTION_ASKED}"
    say(browser, "the Alameda one")
    messages = settled(browser, 8)
    assert messages[6] == "human: the Alameda one" and messages[7].startswith("ai: ")

    shown = browser.execute_script("return window.shownTexts")
    assert shown and not [text for text in shown if "Moon" in text or "42 rockets" in text]


def test_under_the_default_grounding_the_chat_ui_shows_the_answer_as_written(
    served,
    browser,  # noqa: F811 - the fixture of tests/serve/test_browser.py
):
    browser.get(served)
    wait_for(browser, "return document.getElementById('status')?.textContent === 'ready'")
    say(browser, "How do bees talk?")
    assert settled(browser, 2) == ["human: How do bees talk?", f"ai: {DRAFT}"]
    answers = [text.removeprefix("ai: ") for text in browser.execute_script("return window.shownTexts")
               if text.startswith("ai: ")]  # fmt: skip
    assert answers and all(text in DRAFT for text in answers)
