"""``mtrag-graph chat`` in a real terminal (tmux): the status line, the streamed answer, the citations."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from mtrag_graph.text import sentences
from tests.conftest import REPO

PASSAGES = [
    {"document_id": "eiffel", "title": "Eiffel Tower",
     "text": "The Eiffel Tower opened to the public on 15 May 1889, during the Exposition Universelle in Paris."},
    {"document_id": "liberty", "title": "Statue of Liberty",
     "text": "The Statue of Liberty was dedicated in October 1886 in New York Harbor."},
]  # fmt: skip
STATUSES = ("... rewriting the question", "... reading the conversation", "... checking the passages",
            "... writing the answer")  # fmt: skip


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


@pytest.mark.slow
def test_chat_in_a_terminal_shows_the_step_streams_the_answer_and_cites_it(tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    session = f"mtrag-chat-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "mtrag_graph.cli", "chat", "--passages", str(passages),
               "--checkpointer", str(tmp_path / "chat.sqlite"), "--thread", "tmux", "--no-clarify",
               "--small-model", "qwen2.5-coder-0.5b", "--large-model", "qwen2.5-coder-0.5b"]  # fmt: skip
    tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", str(REPO),
         " ".join(map(str, command)))  # fmt: skip
    try:
        screens = [tmux("capture-pane", "-p", "-t", session)]
        deadline = time.monotonic() + 120
        while "you>" not in screens[-1]:
            assert time.monotonic() < deadline, screens[-1]
            time.sleep(0.2)
            screens.append(tmux("capture-pane", "-p", "-t", session))
        tmux("send-keys", "-t", session, "When did the Eiffel Tower open to the public?", "Enter")
        deadline = time.monotonic() + 600
        while screens[-1].count("you>") < 2:  # the next prompt: the turn is over
            assert time.monotonic() < deadline, screens[-1]
            time.sleep(0.1)
            screens.append(tmux("capture-pane", "-p", "-t", session))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    final = screens[-1]
    print(final.rstrip())
    bot_lines = [line for line in final.splitlines() if line.startswith("bot> ")]
    assert bot_lines, final
    assert len(bot_lines) == 1, final  # no withdrawn draft stays on the screen
    answer = bot_lines[-1][len("bot> ") :]
    seen = "\n".join(screens)
    assert any(status in seen for status in STATUSES), "no status line was ever on the screen"
    # only text that stands was ever on the screen: every streamed piece begins the final answer, and an
    # answer of two or more sentences was there in part before it was complete
    plain = re.sub(r" \[\d+\]", "", answer).strip()
    partial = [line[len("bot> ") :].strip() for screen in screens for line in screen.splitlines()
               if line.startswith("bot> ") and "[" not in line]  # fmt: skip
    assert all(plain.startswith(p) for p in partial), (partial, plain)
    if len(sentences(plain)) >= 2:
        assert any(0 < len(p) < len(plain) for p in partial), partial
    # each supported sentence carries markers, and the cited passages are listed under the answer
    assert "[1]" in answer, final
    assert "     [1] Eiffel Tower (eiffel)" in final
    assert not any(status in final for status in STATUSES)  # the status line is gone
