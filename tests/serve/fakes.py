"""The served chat over scripted models: passages (one of them hostile markup) and answers chosen by the question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.testing import fake_context

# a PDF manual's code example as its reader gives it: indented, with a fixed-column listing's gaps
# (wider than the page's quote panel, which once stacked the line's words one under the other)
LISTING = [f'greeting{" " * 40}={" " * 40}String("Hello from the manual")', "print(greeting.upper())"]
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
PASSAGES = [
    {"document_id": "bees", "title": "Honey bee dances", "url": "https://example.org/bees", "page": 12,
     "text": "Honey bees dance to show where the flowers are. The waggle dance gives the direction."},
    {"document_id": "alameda", "title": "Alameda Free Library", "file": "libraries.pdf", "page": 3,
     "text": "The Alameda library opens at 9 am."},
    {"document_id": "monterey", "title": "Monterey Public Library", "file": "libraries.pdf", "page": 4,
     "text": "The Monterey library opens at 10 am."},
    {"document_id": "markup", "title": "Markup " + HOSTILE,
     "text": "Ants leave scent trails for other ants. " + HOSTILE},
    {"document_id": "setup", "title": "Setting up", "file": "README.md",
     "text": "## Setup\n\nTo install the tool, run:\n\n```\npip install mtrag-graph\n```\n\n"
             "- index your files with `mtrag-graph index`\n- ask with `mtrag-graph chat`"},
    {"document_id": "manual", "title": "Strings", "file": "manual.pdf", "page": 7,
     "text": "Strings are made with the String constructor.\n\n" + "\n".join("    " + line for line in LISTING)
             + "\n\nThe constructor copies its argument."},
]  # fmt: skip
ANSWERS = {
    "bees": "Honey bees dance to show where the flowers are. The waggle dance gives the direction.",
    "library": "The Alameda library opens at 9 am.",
    "ants": "Ants leave scent trails for other ants, marked " + HOSTILE + " in the source.",
    "string": "Strings are made with the String constructor.",
    "install": "To install the tool, run `pip install mtrag-graph`. Then:\n\n"
               "- index your files with `mtrag-graph index`\n- ask with `mtrag-graph chat`",
}  # fmt: skip
UNANSWERABLE = "unicorn"


def _prompt(messages: list[Any]) -> str:
    return "\n".join(str(m.content) for m in messages).lower()


def _latest(text: str, words: list[str]) -> str | None:
    """The word of ``words`` that occurs last in ``text`` (the question being answered)."""
    found = [(text.rfind(w), w) for w in words if w in text]
    return max(found)[1] if found else None


def gate(messages: list[Any], options: dict[str, Any]) -> str:
    return "no" if _latest(_prompt(messages), [*ANSWERS, UNANSWERABLE]) == UNANSWERABLE else "yes"


def generate(messages: list[Any], options: dict[str, Any]) -> str:
    return ANSWERS.get(_latest(_prompt(messages), list(ANSWERS)) or "bees", ANSWERS["bees"])


def serve_context(**overrides: Any) -> Context:
    scripted = {"gate_model": ScriptedChatModel(responder=gate), "generate_model": ScriptedChatModel(responder=generate),
                "clarify": True}  # fmt: skip
    return fake_context(gate=[], generate=[], **{**scripted, **overrides})


def write_passages(path: Path) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES), encoding="utf-8")
    return path
