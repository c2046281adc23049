"""The page in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``, installed
by scripts/setup.sh) driven by Selenium against the real HTTP server (uvicorn) and SQLite checkpointer,
with scripted models.

A missing browser fails this test (it does not skip): set ``MTRAG_SKIP_BROWSER=1`` to leave it out on a
machine where Chromium cannot be installed. ``MTRAG_SCREENSHOT=PATH`` saves the page as the README shows it.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn

from mtrag_graph.serve.app import create_app
from tests.serve.client import serve_config
from tests.serve.fakes import ANSWERS, HOSTILE, LISTING, serve_context

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WAIT_S = 20
pytestmark = pytest.mark.browser


@contextmanager
def running_server(checkpointer: str, **overrides) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(serve_config(checkpointer, **overrides), serve_context())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    runner = threading.Thread(target=server.run, daemon=True)
    runner.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        runner.join(timeout=10)


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    with running_server(str(tmp_path / "chat.sqlite")) as url:
        yield url


@pytest.fixture
def browser():
    if os.environ.get("MTRAG_SKIP_BROWSER") == "1":
        pytest.skip("MTRAG_SKIP_BROWSER=1")
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    if missing:
        pytest.fail(
            f"no browser for the page's test: {missing} missing; `apt-get install chromium chromium-driver` "
            "(scripts/setup.sh does it as root), or MTRAG_SKIP_BROWSER=1 to leave this test out"
        )
    from selenium import webdriver  # noqa: PLC0415 - the dev extra; only this test drives a browser
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415 - as above

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,800",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(WAIT_S)
    yield driver
    driver.quit()


def wait_for(driver, script: str, *args):
    """Wait until ``script`` (JavaScript returning a value) returns something truthy; return it."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = driver.execute_script(script, *args)
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for: {script}")


# Records every status line and every state of the streamed answer, as the person saw them.
WATCH = """
window.seen = {steps: [], texts: []};
new MutationObserver(() => {
  const step = document.getElementById('step');
  if (!step.hidden && step.textContent) window.seen.steps.push(step.textContent);
  const bots = document.querySelectorAll('.msg.bot');
  if (bots.length) window.seen.texts.push(bots[bots.length - 1].textContent);
}).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
"""
LAST_BOT = "const b = document.querySelectorAll('.msg.bot'); return b.length ? b[b.length - 1] : null;"


def ask(driver, text: str) -> None:
    box = driver.find_element("id", "input")
    box.send_keys(text)
    driver.find_element("id", "send").click()


def answered(driver, count: int):
    """The bot message once ``count`` answers (cited or not) are on the page and the turn has ended."""
    wait_for(
        driver,
        f"return document.querySelectorAll('.msg.bot').length >= {count} && !document.getElementById('send').disabled",
    )
    return driver.execute_script(LAST_BOT)


def test_a_person_asks_follows_a_citation_answers_a_question_back_and_finds_the_thread_after_a_reload(
    server, browser
):
    browser.get(server + "/")
    browser.execute_script(WATCH)

    # the answer streams in (two chunks, the first shown alone), under the step indicator
    ask(browser, "Why do bees dance?")
    bees = answered(browser, 1)
    wait_for(browser, "return arguments[0].querySelector('.cite')", bees)
    seen = browser.execute_script("return window.seen")
    assert {"rewriting the question", "checking the passages", "writing the answer"} <= set(seen["steps"])
    first_sentence = ANSWERS["bees"].split(". ")[0] + "."
    assert first_sentence in seen["texts"]  # the first sentence was on the page before the second came
    assert bees.get_attribute("data-chunks") == "2"

    # a citation marker opens the quoted passage with its source
    bees.find_element("css selector", ".cite").click()
    wait_for(browser, "return !document.getElementById('source-panel').hidden")
    assert browser.find_element("id", "source-title").text == "Honey bee dances"
    assert "https://example.org/bees" in browser.find_element("id", "source-origin").text
    assert "page 12" in browser.find_element("id", "source-origin").text
    assert browser.find_element("id", "source-quote").text.startswith("Honey bees dance to show")

    # a clarifying question comes with a reply box; the reply gets the answer
    ask(browser, "When does this library open?")
    question = wait_for(browser, "return document.querySelector('.msg.clarify .reply input')")
    assert "Alameda Free Library" in browser.find_element("css selector", ".msg.clarify").text
    question.send_keys("the Alameda one")
    browser.find_element("css selector", ".msg.clarify .reply button").click()
    library = answered(browser, 3)
    wait_for(browser, "return arguments[0].querySelector('.cite')", library)
    assert "9 am" in library.text
    library.find_element("css selector", ".cite").click()
    wait_for(browser, "return document.getElementById('source-title').textContent === 'Alameda Free Library'")
    assert "libraries.pdf, page 3" in browser.find_element("id", "source-origin").text
    if os.environ.get("MTRAG_SCREENSHOT"):
        browser.save_screenshot(os.environ["MTRAG_SCREENSHOT"])

    # "I don't know" is shown as such, not as an error
    ask(browser, "Do unicorns exist?")
    idk = answered(browser, 4)
    wait_for(browser, "return arguments[0].classList.contains('idk')", idk)
    assert "No answer in these documents" in idk.text and "error" not in idk.get_attribute("class")

    # reload: the conversation is still there, in the list and on the page
    thread_id = browser.execute_script("return location.hash.slice(1)")
    browser.refresh()
    wait_for(browser, "return document.querySelectorAll('.msg.bot').length === 4")
    # the thread list comes from its own request: under load it can land after the messages
    wait_for(
        browser, "return document.querySelector(arguments[0])", f"#threads li[data-thread='{thread_id}']"
    )
    assert browser.find_element("css selector", f"#threads li[data-thread='{thread_id}']").text.startswith(
        "Why do bees dance?"
    )
    texts = [m.text for m in browser.find_elements("css selector", ".msg")]
    assert texts[0] == "Why do bees dance?" and "9 am" in " ".join(texts)


def test_markup_in_a_passage_or_an_answer_shows_as_text_and_runs_nothing(server, browser):
    browser.get(server + "/")
    ask(browser, "What do ants leave?")
    answer = answered(browser, 1)
    wait_for(browser, "return arguments[0].querySelector('.cite')", answer)
    assert HOSTILE in answer.text  # shown as the characters it is
    answer.find_element("css selector", ".cite").click()
    wait_for(browser, "return !document.getElementById('source-panel').hidden")
    assert HOSTILE in browser.find_element("id", "source-quote").text
    assert HOSTILE in browser.find_element("id", "source-title").text
    time.sleep(0.5)  # an injected image's error handler would have run by now
    assert browser.execute_script("return window.pwned") is None
    assert (
        browser.execute_script("return document.querySelectorAll('main img, aside img, main script').length")
        == 0
    )


def test_with_an_api_key_the_page_asks_for_it_and_then_works(tmp_path, browser):
    with running_server(str(tmp_path / "chat.sqlite"), api_keys=["page-key"]) as url:
        browser.get(url + "/")
        key = wait_for(
            browser,
            "return document.getElementById('key-dialog').open && document.getElementById('key-input')",
        )
        key.send_keys("page-key")
        browser.find_element("css selector", "#key-form button").click()
        ask(browser, "Why do bees dance?")
        answer = answered(browser, 1)
        wait_for(browser, "return arguments[0].querySelector('.cite')", answer)
        assert answer.text.startswith("Honey bees dance")


def test_the_api_documentation_renders_from_the_package_under_the_pages_policy(server, browser):
    browser.get(server + "/docs")
    operations = wait_for(browser, "return document.querySelectorAll('.opblock').length")
    assert operations >= 5  # the routes of /api, listed by Swagger UI
    assert "/api/threads/{thread_id}/messages" in browser.find_element("id", "swagger-ui").text
    scripts = browser.execute_script("return [...document.scripts].map(s => s.src)")
    assert scripts and all(src.startswith(server + "/static/") for src in scripts)


def test_markdown_in_an_answer_and_a_passage_renders_as_code_lists_and_headings(server, browser):
    browser.get(server + "/")
    ask(browser, "How do I install it?")
    answer = answered(browser, 1)
    wait_for(browser, "return arguments[0].querySelector('.cite')", answer)
    codes = [c.text for c in answer.find_elements("css selector", ".markdown code")]
    assert codes == ["pip install mtrag-graph", "mtrag-graph index", "mtrag-graph chat"]
    items = answer.find_elements("css selector", ".markdown ul > li")
    assert [i.text.split("\n")[0].rstrip("0123456789 ") for i in items] == [
        "index your files with mtrag-graph index",
        "ask with mtrag-graph chat",
    ]
    assert "`" not in answer.text and "- index" not in answer.text  # no Markdown shown as characters
    answer.find_element("css selector", ".cite").click()
    wait_for(browser, "return document.getElementById('source-title').textContent === 'Setting up'")
    quote = browser.find_element("id", "source-quote")
    assert quote.find_element("css selector", "h2").text == "Setup"
    assert quote.find_element("css selector", "pre code").text == "pip install mtrag-graph"
    assert len(quote.find_elements("css selector", "ul > li")) == 2 and "##" not in quote.text


# The rows an element's text takes on the page: the distinct tops of its line boxes.
ROWS = """
const range = document.createRange();
range.selectNodeContents(arguments[0]);
return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
"""


def test_a_code_block_from_a_pdf_passage_keeps_its_lines_and_scrolls_sideways(server, browser):
    browser.get(server + "/")
    ask(browser, "How do I make a string?")
    answer = answered(browser, 1)
    wait_for(browser, "return arguments[0].querySelector('.cite')", answer)
    answer.find_element("css selector", ".cite").click()
    wait_for(browser, "return document.getElementById('source-title').textContent === 'Strings'")
    assert "manual.pdf, page 7" in browser.find_element("id", "source-origin").text
    code = browser.find_element("css selector", "#source-quote pre code")
    assert code.get_attribute("textContent") == "\n".join(LISTING) + "\n"  # every line and gap as read
    assert browser.execute_script(ROWS, code) == len(LISTING)  # one row a line: nothing wrapped
    pre = browser.find_element("css selector", "#source-quote pre")
    assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", pre)
    browser.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth", pre)  # the end of the line
    assert browser.execute_script("return arguments[0].scrollLeft", pre) > 0
    panel = browser.find_element("id", "source-panel")
    assert panel.size["width"] == 340  # the panel keeps its width: the block scrolls, not the page
