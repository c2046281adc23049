"""A passage: the one shape of a text the graph answers from, from the reader to the citation.

``Passage`` is plain data (a ``TypedDict``), so a checkpointer stores it as it is: the task's and the
retriever's passages, the reranker's kept ones, and the sources a reply cites (``state.ReplyMetadata``)
are all this shape. Its id is ``document_id`` everywhere in the code. The formats on disk keep their
own spelling and are converted here, at the edge (``passage``): corpora and index rows say ``_id``,
an index of documents says where a passage comes from as ``source`` (a file name or a URL); MTRAG's
tasks and predictions say ``document_id`` in ``contexts`` (``as_context`` writes that shape back).

Where a passage comes from, when it says (``ORIGIN``): the ``file`` it was read from (a document, a
passages file), its ``page`` and ``section`` in that file, its ``url``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import (
    Any,
    NotRequired,  # pydantic's JSON schemas need it on Python < 3.12
)

from typing_extensions import TypedDict


class Passage(TypedDict):
    document_id: str
    title: str
    text: str
    score: NotRequired[float]  # the retriever's or the reranker's, once ranked
    file: NotRequired[str]  # the file it was read from: a document, a passages file
    page: NotRequired[int | str]
    section: NotRequired[str]
    url: NotRequired[str]


ORIGIN = (
    "file",
    "page",
    "section",
    "url",
)  # where a passage comes from, kept when given (see the module's docstring)


def passage(row: Mapping[str, Any], number: int = 0) -> Passage:
    """The passage of a row in any of the formats it is stored in: ``document_id`` or ``_id`` (else
    ``passage-{number}``), ``title``, ``text``, ``score``, the origin fields, and an index's ``source``
    (a URL, or the file a document passage was cut from). Empty origin fields are left out."""
    doc_id = row.get("document_id", row.get("_id"))
    title = row.get("title")
    found: Passage = {
        "document_id": f"passage-{number}" if doc_id is None else str(doc_id),
        "title": title if isinstance(title, str) else "",
        "text": str(row.get("text") or ""),
    }
    if row.get("score") is not None:
        found["score"] = row["score"]
    origin = {key: row[key] for key in ORIGIN if row.get(key) not in (None, "", 0)}
    source = str(row.get("source") or "")
    if source and "://" in source:
        origin.setdefault("url", source)
    elif source:
        origin.setdefault("file", source)
    found.update(origin)  # type: ignore[typeddict-item]
    return found


def origin(item: Mapping[str, Any]) -> dict[str, Any]:
    """A passage's id, title and origin, without its text or score."""
    return {
        "document_id": item.get("document_id"),
        "title": item.get("title") or "",
        **{key: item[key] for key in ORIGIN if item.get(key)},
    }


def as_context(item: Mapping[str, Any]) -> dict[str, Any]:
    """The passage as an MTRAG task's or prediction's ``contexts`` entry: id, title, text, score."""
    return {key: item[key] for key in ("document_id", "title", "text", "score") if key in item}


def as_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """The passage as a corpus or index row stores it (``_id`` for its id)."""
    return {"_id": item["document_id"], **{k: v for k, v in item.items() if k != "document_id"}}


def read_passages(path: str | Path) -> list[Passage]:
    """Passages from a JSON-lines file, one ``{"document_id" | "_id", "title", "text", origin...}`` a
    line (a passage that names no origin is labelled by its title and id: ``source_label``)."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise ValueError(f"{path}, line {number}: expected an object with a 'text' string")
            found.append(passage(row, number))
    return found


# The id of a passage cut from a document (ingest/build.py): ``guide.pdf#page=2&chunk=5``, ``notes.md#chunk=3``
_DOCUMENT_ID = re.compile(r"^(?P<source>.+?)#(?:page=(?P<page>\d+)&)?chunk=\d+$")


def document_source(document_id: str) -> tuple[str, str | None] | None:
    """The file and page (None off a PDF) a document passage's id names (``guide.pdf#page=2&chunk=5``);
    None for an id that is not a document passage's (a corpus passage)."""
    match = _DOCUMENT_ID.match(document_id)
    return None if match is None else (match["source"], match["page"])


def source_label(item: Mapping[str, Any]) -> str:
    """Where a passage comes from, for a reader: ``guide.pdf, p. 2``, ``notes.md, Install``, a URL, or
    for a benchmark passage its title and id (``Cloudant (doc-12)``).

    Reads the passage's origin, else its id when that is a document passage's id.
    """
    name, page, section = item.get("url") or item.get("file"), item.get("page"), item.get("section")
    if not name:
        found = document_source(str(item.get("document_id") or ""))
        if found is None:
            return f"{item.get('title') or '(untitled)'} ({item.get('document_id')})"
        name, page = found
    name = str(name) if "://" in str(name) else PurePosixPath(str(name)).name
    if page:
        return f"{name}, p. {page}"
    return f"{name}, {section}" if section else name
