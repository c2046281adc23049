"""Index files and folders of documents, incrementally: only added or changed files are embedded.

``ingest(paths, out_dir)`` walks the paths (folders recursively, hidden entries left out), hashes each
file's content, and compares with the index's ``files.json``:

- a file whose hash is in the index is unchanged: its passages and vectors are kept as they are;
- a new or changed file is read (``extract``), cut into passages (``chunk``) and embedded; its passages
  and vectors go to a journal folder beside the index (``.<name>.journal/<key>.jsonl`` and ``.f32``,
  each renamed into place when the file is done), so an interrupted run picks up where it stopped;
- a file gone from the paths has its passages removed;
- a file that cannot be read gets one line with the reason; the others go on (a file that was indexed
  before and now fails keeps its old passages).

Then ``retrieval.backend.commit_documents`` commits the new state through the backend's writer (the
built-in index writes a new folder and swaps it in; Milvus deletes and inserts rows) and the journal is
removed.
JSON-lines passage files (``{_id, title, text}``) are taken as they are, ids kept.

Embedding is the cost: passages of many small files are embedded together in batches of
``EMBED_BATCH`` (the model runs on all cores), and a big file is embedded and written as it is read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from mtrag_graph import settings
from mtrag_graph.ingest.chunk import CHUNK_OVERLAP, CHUNK_TOKENS, chunk_sections
from mtrag_graph.ingest.extract import PASSAGE_SUFFIXES, SUFFIXES, ExtractError, NotContent, read_document
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.retrieval import index as builtin
from mtrag_graph.retrieval.backend import commit_documents, read_manifest
from mtrag_graph.retrieval.corpus import file_checksum, passage_text
from mtrag_graph.retrieval.registry import BACKENDS
from mtrag_graph.tasks import read_jsonl

log = logging.getLogger(__name__)

FILES = "files.json"
EMBED_BATCH = 256
# What a file's passages are made by: raise it when reading or chunking changes the passages a file
# gives (2: PDFium with the run-together guard, clean HTML headings, headings carried into each
# passage; 3: a PDF's list bullets that its font left unmapped; 4: HTML headings wrapped in a named
# anchor kept, a page read as it stands when the article reader drops its headings), so that an index
# built before is read again rather than kept with the old passages.
PASSAGES_VERSION = 4
TEXT_LIMIT = 60_000  # characters of one JSON-lines passage kept (Milvus' VARCHAR holds 65,535 bytes)


@dataclass
class SourceFile:
    path: Path
    name: str  # how passages cite it: the path relative to the folder given (the file name for a file)
    sha256: str = ""


@dataclass
class Skipped:
    name: str
    reason: str


@dataclass
class IngestReport:
    path: Path
    files_read: int = 0  # added or changed files embedded in this run
    files_resumed: int = 0  # embedded by an interrupted run (journal), not embedded again
    files_unchanged: int = 0
    files_removed: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    passages_added: int = 0
    passages_removed: int = 0
    passages_unchanged: int = 0
    passages_total: int = 0
    embedded: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    added_files: list[str] = field(default_factory=list)  # embedded for the first time
    changed_files: list[str] = field(default_factory=list)  # indexed before with other content
    left_out: list[Skipped] = field(default_factory=list)  # readable, but no content (navigation pages)
    other_types: Counter[str] = field(default_factory=Counter)  # files in the folders that are not documents
    read_again: str = ""  # why every file was read again (the index was made with other settings)

    @property
    def passages_per_second(self) -> float:
        return self.embedded / self.embed_seconds if self.embed_seconds > 0 else float("nan")

    def summary(self) -> str:
        lines = [
            f"{self.path}: {self.passages_total} passages from "
            f"{self.files_read + self.files_resumed + self.files_unchanged} files",
            f"  files: {len(self.added_files)} added, {len(self.changed_files)} changed, {self.files_resumed} resumed, "
            f"{self.files_unchanged} unchanged, {self.files_removed} removed, {len(self.skipped)} skipped"
            + (f", {len(self.left_out)} left out" if self.left_out else ""),
            f"  passages: {self.passages_added} added, {self.passages_removed} removed, "
            f"{self.passages_unchanged} unchanged",
            (
                f"  embedded {self.embedded} passages in {self.embed_seconds:.1f}s "
                f"({self.passages_per_second:.1f} passages/s); {self.seconds:.1f}s in all"
                if self.embedded
                else f"  nothing embedded; {self.seconds:.1f}s in all"
            ),
        ]
        if self.read_again:
            lines.append(f"  every file read again: {self.read_again}")
        lines += _listed("skipped", [f"{item.name}: {item.reason}" for item in self.skipped])
        lines += _listed("left out", [f"{item.name}: {item.reason}" for item in self.left_out])
        if self.other_types:
            kinds = ", ".join(f"{suffix} {n}" for suffix, n in self.other_types.most_common(8))
            lines.append(f"  not documents: {sum(self.other_types.values())} files in the folders ({kinds})")
        lines += _listed("added", self.added_files)
        lines += _listed("re-embedded (changed)", self.changed_files)
        return "\n".join(lines)


def _listed(label: str, names: list[str], limit: int = 20) -> list[str]:
    lines = [f"  {label}: {name}" for name in names[:limit]]
    if len(names) > limit:
        lines.append(f"  ... and {len(names) - limit} more {label.split(' ')[0]}")
    return lines


# -- finding the files -------------------------------------------------------------------------------


def collect_files(
    paths: Sequence[str | Path], exclude: Path | None = None
) -> tuple[list[SourceFile], list[Skipped], Counter[str]]:
    """The files under ``paths`` (folders recursively, hidden files and folders left out, and the index
    folder ``exclude`` when it lies inside one), by name; the paths that cannot be taken, with the reason;
    and how many files in the folders are of types that are not documents (a site's scripts and images),
    by suffix: counted, not named one by one."""
    inside = exclude.resolve() if exclude is not None else None
    found: dict[str, SourceFile] = {}
    skipped: list[Skipped] = []
    other_types: Counter[str] = Counter()
    for given in map(Path, paths):
        if given.is_dir():
            entries = sorted(
                p
                for p in given.rglob("*")
                if not any(part.startswith(".") for part in p.relative_to(given).parts)
                and p.is_file()
                and not (inside is not None and p.resolve().is_relative_to(inside))
            )
            pairs = [(p, p.relative_to(given).as_posix()) for p in entries]
        elif given.exists():
            pairs = [(given, given.name)]
        else:
            skipped.append(Skipped(str(given), "no such file or folder"))
            continue
        for path, name in pairs:
            if path.suffix.lower() not in SUFFIXES:
                if given.is_dir():
                    other_types[path.suffix.lower() or "(no suffix)"] += 1
                else:
                    skipped.append(Skipped(str(path), f"unsupported file type '{path.suffix or path.name}'"))
                continue
            if name in found and found[name].path.resolve() != path.resolve():
                name = str(path)  # two folders hold the same relative name: the full path tells them apart
            found[name] = SourceFile(path, name)
    return list(found.values()), skipped, other_types


# -- the journal: one entry per embedded file ---------------------------------------------------------


def entry_key(sha256: str, embedder: str, chunk_tokens: int, overlap: int) -> str:
    """Which journal entry holds a file's passages: its content and every setting that shapes them."""
    made = f"{sha256}|{embedder}|{chunk_tokens}|{overlap}|{PASSAGES_VERSION}"
    return hashlib.sha256(made.encode()).hexdigest()[:32]


def journal_dir(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.journal"


class EntryWriter:
    """Writes one file's passages and vectors under temporary names; ``close`` renames them into place."""

    def __init__(self, journal: Path, key: str, dim: int):
        self.rows_path, self.vectors_path = journal / f"{key}.jsonl", journal / f"{key}.f32"
        self._rows = open(self.rows_path.with_suffix(".jsonl.part"), "w", encoding="utf-8")
        self._vectors = open(self.vectors_path.with_suffix(".f32.part"), "wb")
        self.dim, self.count = dim, 0

    def write(self, rows: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        for row in rows:
            self._rows.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._vectors.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        self.count += len(rows)

    def close(self) -> None:
        for handle in (self._rows, self._vectors):
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        os.replace(self._vectors.name, self.vectors_path)
        os.replace(self._rows.name, self.rows_path)  # the rows file last: its presence means done

    def abort(self) -> None:
        for handle in (self._rows, self._vectors):
            handle.close()
            Path(handle.name).unlink(missing_ok=True)


def read_entry(journal: Path, key: str, dim: int) -> tuple[list[dict[str, Any]], np.ndarray] | None:
    rows_path, vectors_path = journal / f"{key}.jsonl", journal / f"{key}.f32"
    if not rows_path.exists() or not vectors_path.exists():
        return None
    with open(rows_path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    vectors = np.memmap(vectors_path, dtype=np.float32, mode="r").reshape(-1, dim)
    return (rows, vectors) if len(vectors) == len(rows) else None


# -- reading a file into passages ---------------------------------------------------------------------


def passage_rows(source: SourceFile, chunk_tokens: int, overlap: int) -> Iterator[dict[str, Any]]:
    """The passages of one file as index rows; ``ExtractError`` when it has none or cannot be read."""
    if source.path.suffix.lower() in PASSAGE_SUFFIXES:
        yield from _jsonl_rows(source)
        return
    document = read_document(source.path)
    count = 0
    for count, chunk in enumerate(chunk_sections(document.sections, chunk_tokens, overlap), start=1):
        anchor = f"page={chunk.page}&" if chunk.page else ""
        yield {
            "_id": f"{source.name}#{anchor}chunk={count}",
            "title": document.title,
            "text": chunk.text,
            "source": source.name,
            "page": chunk.page,
            "section": chunk.heading,
            "file": source.name,
        }
    if count == 0:
        raise ExtractError("no text found")


def _jsonl_rows(source: SourceFile) -> Iterator[dict[str, Any]]:
    good = 0
    for _, row, error in read_jsonl(source.path):
        if error is not None or not isinstance(row, dict):
            continue
        doc_id, text = row.get("_id", row.get("document_id")), row.get("text")
        if not isinstance(text, str) or not text.strip() or doc_id is None:
            continue
        good += 1
        title = row["title"] if isinstance(row.get("title"), str) else ""
        yield {
            "_id": str(doc_id),
            "title": title.strip(),
            "text": text.strip()[:TEXT_LIMIT],
            "source": row.get("url") or source.name,
            "page": None,
            "section": None,
            "file": source.name,
        }
    if not good:
        raise ExtractError("no valid passages ({_id, title, text} JSON lines)")


class _Embedding:
    """Embeds passages of several files together in batches; writes each file's entry when it is done."""

    def __init__(self, embedder: str, report: IngestReport):
        self.spec, self.report = embedder, report
        self.pending: list[tuple[EntryWriter, dict[str, Any]]] = []
        self.closing: list[EntryWriter] = []

    def add(self, writer: EntryWriter, row: dict[str, Any]) -> None:
        self.pending.append((writer, row))
        if len(self.pending) >= EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            started = time.perf_counter()
            texts = [passage_text(r["title"], r["text"]) for _, r in self.pending]
            vectors = builtin.embed_by_length(get_embedder(self.spec), texts)
            self.report.embed_seconds += time.perf_counter() - started
            self.report.embedded += len(self.pending)
            start = 0
            while start < len(self.pending):
                writer = self.pending[start][0]
                end = start
                while end < len(self.pending) and self.pending[end][0] is writer:
                    end += 1
                writer.write([r for _, r in self.pending[start:end]], vectors[start:end])
                start = end
            self.pending = []
        for writer in self.closing:
            writer.close()
        self.closing = []


# -- the run -------------------------------------------------------------------------------------------


def read_files_record(out_dir: Path) -> dict[str, dict[str, Any]]:
    try:
        with open(out_dir / FILES, encoding="utf-8") as handle:
            return dict(json.load(handle))
    except (OSError, json.JSONDecodeError):
        return {}


def ingest(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    embedder: str = settings.DEFAULT_EMBEDDER,
    backend: str = "faiss",
    chunk_tokens: int = CHUNK_TOKENS,
    overlap: int = CHUNK_OVERLAP,
    faiss_kind: str = "flat",
    show_progress: bool = True,
    on_skip: Callable[[Skipped], None] | None = None,
) -> IngestReport:
    """Bring the index in ``out_dir`` up to date with the files under ``paths`` (see the module's text).
    ``backend``: a name in ``retrieval.registry.BACKENDS`` (``faiss``: the built-in index, ``milvus``)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown index backend '{backend}': use one of {', '.join(BACKENDS)}")
    started = time.perf_counter()
    out_dir = Path(out_dir)
    report = IngestReport(out_dir)
    skip = on_skip or (lambda item: log.warning("%s: %s (skipped)", item.name, item.reason))

    def skipped(item: Skipped) -> None:
        report.skipped.append(item)
        skip(item)

    files, not_taken, report.other_types = collect_files(paths, exclude=out_dir)
    for item in not_taken:
        skipped(item)
    # the backends keep "chunk" in the index's manifest as it is: the passages' version rides in it
    chunk = {"tokens": chunk_tokens, "overlap": overlap, "passages_version": PASSAGES_VERSION}
    settings_now = {"embedder": embedder, "chunk": chunk}
    manifest = read_manifest(out_dir) or {}
    same_settings = (
        all(manifest.get(k) == v for k, v in settings_now.items())
        and manifest.get("backend", "faiss") == backend
    )
    old = read_files_record(out_dir) if same_settings else {}
    if manifest and not same_settings:
        changed = [k for k, v in settings_now.items() if manifest.get(k) != v] or ["backend"]
        report.read_again = f"the index was made with other {' and '.join(changed)} settings"

    journal = journal_dir(out_dir)
    journal.mkdir(parents=True, exist_ok=True)
    embedding = _Embedding(embedder, report)
    new_record: dict[str, dict[str, Any]] = {}
    fresh: list[tuple[str, str]] = []  # (file name, journal key) of files whose passages are new
    bar = tqdm(files, desc="indexing", unit="file", disable=not show_progress)
    for source in bar:
        try:
            source.sha256 = file_checksum(source.path)
        except OSError as error:
            skipped(Skipped(source.name, f"cannot read: {error.strerror or error}"))
            if source.name in old:
                new_record[source.name] = old[source.name]
            continue
        previous = old.get(source.name)
        if previous and previous.get("sha256") == source.sha256:
            new_record[source.name] = previous
            report.files_unchanged += 1
            report.passages_unchanged += int(previous["passages"])
            continue
        key = entry_key(source.sha256, embedder, chunk_tokens, overlap)
        model_dim = get_embedder(embedder).dim  # loaded once, when the first file needs it
        done = read_entry(journal, key, model_dim)
        if done is not None:
            report.files_resumed += 1
            new_record[source.name] = {"sha256": source.sha256, "passages": len(done[0]), "key": key}
            fresh.append((source.name, key))
            continue
        writer = EntryWriter(journal, key, model_dim)
        count = 0
        try:
            for row in passage_rows(source, chunk_tokens, overlap):
                embedding.add(writer, row)
                count += 1
            embedding.closing.append(writer)
            if len(embedding.pending) >= EMBED_BATCH // 4 or len(embedding.closing) > 64:
                embedding.flush()
        except (ExtractError, OSError, UnicodeError) as error:
            embedding.pending = [(w, r) for w, r in embedding.pending if w is not writer]
            writer.abort()
            if isinstance(error, NotContent):  # a navigation page: said in the summary, not warned about
                report.left_out.append(Skipped(source.name, str(error)))
                continue
            reason = str(error) if isinstance(error, ExtractError) else f"cannot read: {error}"
            skipped(Skipped(source.name, reason))
            if source.name in old:  # indexed before, unreadable now: its old passages stay
                new_record[source.name] = old[source.name]
            continue
        report.files_read += 1
        (report.changed_files if source.name in old else report.added_files).append(source.name)
        new_record[source.name] = {"sha256": source.sha256, "passages": count, "key": key}
        fresh.append((source.name, key))
        if report.embed_seconds > 0:
            bar.set_postfix(passages_s=f"{report.embedded / report.embed_seconds:.0f}", refresh=False)
    embedding.flush()
    bar.close()

    removed = [name for name in old if name not in new_record]
    changed = [name for name, _ in fresh if name in old]
    report.files_removed = len(removed)
    report.passages_removed = sum(int(old[n]["passages"]) for n in removed + changed)
    report.passages_added = sum(int(new_record[n]["passages"]) for n, _ in fresh)
    report.passages_total = sum(int(r["passages"]) for r in new_record.values())
    if not new_record:
        shutil.rmtree(journal, ignore_errors=True)
        raise ValueError(f"nothing to index in {', '.join(map(str, paths))}")
    if fresh or removed or not same_settings or not (out_dir / FILES).exists():
        model_dim = get_embedder(embedder).dim

        def parts() -> Iterator[tuple[list[dict[str, Any]], np.ndarray]]:
            for name, key in fresh:
                entry = read_entry(journal, key, model_dim)
                if entry is None:
                    raise RuntimeError(f"{name}: its journal entry went missing during the run")
                yield entry

        commit_documents(
            BACKENDS[backend],
            out_dir,
            record=new_record,
            parts=parts,
            drop=set(removed + changed),
            dim=model_dim,
            manifest={**settings_now, "faiss_kind": faiss_kind},
            rebuild=not same_settings,
        )
    shutil.rmtree(journal, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    return report
