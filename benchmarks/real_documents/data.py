"""The real-documents set: the manifest (which file of which Debian package, its hash, kind and split)
and the questions (conversations written by reading the documents), read and checked at the boundary.

``manifest.json``::

    {"documents": [{"name": "zstd-readme", "kind": "markdown", "split": "tuning",
                    "package": "zstd", "version": "1.5.4+dfsg2-5", "architecture": "amd64",
                    "files": [{"path": "usr/share/doc/zstd/README.md.gz", "name": "README.md",
                               "sha256": "..."}]}]}

``path`` is the file inside the package; a ``.gz`` path is decompressed into ``name``; ``sha256`` is the
hash of the file as indexed (after decompression).

``questions.jsonl``: one conversation a line::

    {"conversation_id": "zstd-2", "document": "zstd-readme", "turns": [
        {"question": "How do I create a dictionary with zstd?", "answer": "zstd --train ...",
         "key_facts": [["--train"]], "howto": true,
         "where": {"file": "README.md", "section": "Dictionary compression How To:"}},
        {"question": "Can it run on ten threads?", "answerable": false, "answer": "..."}]}

``key_facts``: every fact a right answer must hold, each a list of accepted spellings. ``where``: the
file, and the page (PDF) or the section heading (HTML, Markdown) that holds the facts. ``answer``: the
reference answer, which the later turns of the conversation carry as the agent's turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "real_documents"
MANIFEST = DATA / "manifest.json"
QUESTIONS = DATA / "questions.jsonl"
SPLITS = ("tuning", "report", "fresh", "held")  # held: written 2026-12-04, read once
KINDS = (
    "pdf-latex",
    "pdf-dblatex",
    "pdf-office",
    "html-sphinx",
    "html-mkdocs",
    "html-other",
    "markdown",
    "docx",
)


class SetError(ValueError):
    """A manifest or question entry that cannot be used: ``item`` names it, ``field`` the bad field."""

    def __init__(self, item: str, field_name: str, message: str):
        self.item, self.field, self.message = item, field_name, message
        super().__init__(f"{item}: field '{field_name}': {message}")


@dataclass(frozen=True)
class DocumentFile:
    path: str  # inside the package
    name: str  # as indexed (and cited)
    sha256: str


@dataclass(frozen=True)
class Document:
    name: str
    kind: str
    split: str
    package: str
    version: str
    architecture: str
    files: tuple[DocumentFile, ...]


@dataclass(frozen=True)
class Where:
    file: str
    page: int | None = None
    section: str | None = None


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str
    answerable: bool
    key_facts: tuple[tuple[str, ...], ...]
    where: Where | None
    howto: bool = False


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    document: str
    turns: tuple[Turn, ...]


@dataclass
class QuestionSet:
    documents: dict[str, Document]
    conversations: list[Conversation] = field(default_factory=list)

    def split_documents(self, split: str) -> list[Document]:
        return [d for d in self.documents.values() if d.split == split]

    def split_conversations(self, split: str) -> list[Conversation]:
        return [c for c in self.conversations if self.documents[c.document].split == split]


def _string(raw: dict[str, Any], key: str, item: str, *, optional: bool = False) -> str:
    value = raw.get(key)
    if value is None and optional:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise SetError(item, key, f"must be a non-empty string, got {value!r}")
    return value


def parse_document(raw: Any, index: int) -> Document:
    item = f"manifest documents[{index}]"
    if not isinstance(raw, dict):
        raise SetError(item, "<document>", f"expected an object, got {type(raw).__name__}")
    name = _string(raw, "name", item)
    item = f"document {name}"
    kind, split = _string(raw, "kind", item), _string(raw, "split", item)
    if kind not in KINDS:
        raise SetError(item, "kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    if split not in SPLITS:
        raise SetError(item, "split", f"must be one of {', '.join(SPLITS)}, got {split!r}")
    files = raw.get("files")
    if not isinstance(files, list) or not files:
        raise SetError(item, "files", "must be a non-empty list of {path, name, sha256}")
    parsed = []
    for i, entry in enumerate(files):
        where = f"files[{i}]"
        if not isinstance(entry, dict):
            raise SetError(item, where, f"expected an object, got {type(entry).__name__}")
        sha = _string(entry, "sha256", f"{item} {where}")
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise SetError(item, f"{where}.sha256", f"must be 64 lowercase hex digits, got {sha!r}")
        name_in_index = _string(entry, "name", f"{item} {where}")
        if "/" in name_in_index or name_in_index.startswith("."):
            raise SetError(item, f"{where}.name", f"must be a plain file name, got {name_in_index!r}")
        parsed.append(
            DocumentFile(path=_string(entry, "path", f"{item} {where}"), name=name_in_index, sha256=sha)
        )
    if len({f.name for f in parsed}) != len(parsed):
        raise SetError(item, "files", "two files share one name")
    return Document(
        name=name,
        kind=kind,
        split=split,
        package=_string(raw, "package", item),
        version=_string(raw, "version", item),
        architecture=_string(raw, "architecture", item),
        files=tuple(parsed),
    )


def load_manifest(path: Path = MANIFEST) -> dict[str, Document]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise SetError(str(path), "<file>", f"not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("documents"), list):
        raise SetError(str(path), "documents", "the manifest must be an object with a list of documents")
    documents: dict[str, Document] = {}
    for index, entry in enumerate(raw["documents"]):
        document = parse_document(entry, index)
        if document.name in documents:
            raise SetError(f"document {document.name}", "name", "named twice in the manifest")
        documents[document.name] = document
    return documents


def _key_facts(raw: Any, item: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(raw, list) or not raw:
        raise SetError(item, "key_facts", "an answerable turn needs a non-empty list of facts")
    facts = []
    for i, fact in enumerate(raw):
        spellings = [fact] if isinstance(fact, str) else fact
        if (
            not isinstance(spellings, list)
            or not spellings
            or not all(isinstance(s, str) and s.strip() for s in spellings)
        ):
            raise SetError(
                item, f"key_facts[{i}]", "must be a string or a non-empty list of non-empty strings"
            )
        facts.append(tuple(spellings))
    return tuple(facts)


def _where(raw: Any, item: str, document: Document) -> Where:
    if not isinstance(raw, dict):
        raise SetError(item, "where", "an answerable turn names where its facts are: {file, page | section}")
    file = _string(raw, "file", item)
    if file not in {f.name for f in document.files}:
        raise SetError(item, "where.file", f"{file!r} is not a file of document {document.name}")
    page, section = raw.get("page"), raw.get("section")
    if page is not None and (not isinstance(page, int) or isinstance(page, bool) or page < 1):
        raise SetError(item, "where.page", f"must be a page number from 1, got {page!r}")
    if section is not None and (not isinstance(section, str) or not section.strip()):
        raise SetError(item, "where.section", f"must be a non-empty string, got {section!r}")
    if file.lower().endswith(".pdf") and page is None:
        raise SetError(item, "where.page", "a fact in a PDF names its page")
    return Where(file=file, page=page, section=section)


def parse_conversation(raw: Any, line: int, documents: dict[str, Document]) -> Conversation:
    item = f"questions line {line}"
    if not isinstance(raw, dict):
        raise SetError(item, "<conversation>", f"expected an object, got {type(raw).__name__}")
    conversation_id = _string(raw, "conversation_id", item)
    item = f"conversation {conversation_id}"
    document_name = _string(raw, "document", item)
    if document_name not in documents:
        raise SetError(item, "document", f"{document_name!r} is not in the manifest")
    document = documents[document_name]
    turns_raw = raw.get("turns")
    if not isinstance(turns_raw, list) or not 1 <= len(turns_raw) <= 3:
        raise SetError(item, "turns", "must be a list of 1 to 3 turns")
    turns = []
    for i, turn in enumerate(turns_raw):
        where = f"{item} turn {i + 1}"
        if not isinstance(turn, dict):
            raise SetError(where, "<turn>", f"expected an object, got {type(turn).__name__}")
        answerable = turn.get("answerable", True)
        if not isinstance(answerable, bool):
            raise SetError(where, "answerable", f"must be true or false, got {answerable!r}")
        howto = turn.get("howto", False)
        if not isinstance(howto, bool):
            raise SetError(where, "howto", f"must be true or false, got {howto!r}")
        if not answerable and turn.get("key_facts"):
            raise SetError(where, "key_facts", "an unanswerable turn has no key facts")
        turns.append(
            Turn(
                question=_string(turn, "question", where),
                answer=_string(turn, "answer", where),
                answerable=answerable,
                key_facts=_key_facts(turn.get("key_facts"), where) if answerable else (),
                where=_where(turn.get("where"), where, document) if answerable else None,
                howto=howto,
            )
        )
    return Conversation(conversation_id=conversation_id, document=document_name, turns=tuple(turns))


def load_set(manifest: Path = MANIFEST, questions: Path = QUESTIONS) -> QuestionSet:
    """The manifest and the questions, checked; a bad entry raises ``SetError`` naming it and its field."""
    documents = load_manifest(manifest)
    result = QuestionSet(documents=documents)
    seen: set[str] = set()
    with open(questions, encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as error:
                raise SetError(f"questions line {line}", "<line>", f"not valid JSON ({error.msg})") from None
            conversation = parse_conversation(raw, line, documents)
            if conversation.conversation_id in seen:
                raise SetError(
                    f"conversation {conversation.conversation_id}", "conversation_id", "used twice"
                )
            seen.add(conversation.conversation_id)
            result.conversations.append(conversation)
    return result


def task_id(conversation: Conversation, turn: int) -> str:
    """MTRAG's task id shape: the conversation and the 1-based turn."""
    return f"{conversation.conversation_id}<::>{turn}"


def conversation_tasks(conversation: Conversation, collection: str) -> list[dict[str, Any]]:
    """One task per turn, in the format ``mtrag-graph answer --retrieve`` reads: the earlier turns (with
    their reference answers as the agent's turns) and the turn's question, no contexts."""
    tasks = []
    history: list[dict[str, str]] = []
    for number, turn in enumerate(conversation.turns, start=1):
        tasks.append(
            {
                "task_id": task_id(conversation, number),
                "conversation_id": conversation.conversation_id,
                "turn": number,
                "Collection": collection,
                "input": [*history, {"speaker": "user", "text": turn.question}],
                "answerability": ["ANSWERABLE" if turn.answerable else "UNANSWERABLE"],
                "targets": [{"text": turn.answer}],
            }
        )
        history += [{"speaker": "user", "text": turn.question}, {"speaker": "agent", "text": turn.answer}]
    return tasks


def split_tasks(questions: QuestionSet, split: str) -> list[dict[str, Any]]:
    return [
        task
        for conversation in questions.split_conversations(split)
        for task in conversation_tasks(conversation, f"real-documents-{split}")
    ]


def turn_of(questions: QuestionSet, task: str) -> tuple[Conversation, int, Turn]:
    """The conversation, 1-based turn number and turn of a task id."""
    conversation_id, _, number = task.rpartition("<::>")
    for conversation in questions.conversations:
        if conversation.conversation_id == conversation_id:
            index = int(number)
            if 1 <= index <= len(conversation.turns):
                return conversation, index, conversation.turns[index - 1]
    raise SetError(f"task {task}", "task_id", "names no turn of the question set")
