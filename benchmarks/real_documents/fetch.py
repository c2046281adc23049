"""Fetch the set's documents from Debian's archive into a cache folder and check them against their hashes.

Each document's package is downloaded at its pinned version (``apt-get download NAME=VERSION``, into
``CACHE/debs``, kept for the next run), unpacked with ``dpkg-deb -x``, and the manifest's files are
copied (``.gz`` ones decompressed) to ``CACHE/documents/SPLIT/DOCUMENT/NAME``. A file already there
with the right hash is not fetched again. Nothing here is committed to the repository.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchmarks.real_documents.data import Document

DEFAULT_CACHE = Path.home() / ".cache" / "mtrag-graph" / "real-documents"


class FetchError(RuntimeError):
    """A document that could not be fetched or does not match its hash; the message names it."""


def cache_dir(given: str | Path | None = None) -> Path:
    """``given``, else ``MTRAG_REAL_DOCUMENTS_CACHE``, else ``~/.cache/mtrag-graph/real-documents``."""
    if given:
        return Path(given).expanduser()
    return Path(os.environ.get("MTRAG_REAL_DOCUMENTS_CACHE") or DEFAULT_CACHE).expanduser()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def document_dir(cache: Path, document: Document) -> Path:
    return cache / "documents" / document.split / document.name


def deb_name(document: Document) -> str:
    """The file name ``apt-get download`` gives the package (an epoch's ``:`` is written ``%3a``)."""
    return f"{document.package}_{document.version.replace(':', '%3a')}_{document.architecture}.deb"


def download_deb(document: Document, debs: Path) -> Path:
    """The package's .deb at its pinned version, from ``debs`` or downloaded there."""
    target = debs / deb_name(document)
    if target.exists():
        return target
    debs.mkdir(parents=True, exist_ok=True)
    if shutil.which("apt-get") is None:
        raise FetchError(f"document {document.name}: apt-get is not installed: cannot download {target.name}")
    spec = f"{document.package}={document.version}"
    if document.architecture != "all":
        spec = f"{document.package}:{document.architecture}={document.version}"
    result = subprocess.run(
        ["apt-get", "download", spec], cwd=debs, capture_output=True, text=True, check=False
    )
    if result.returncode != 0 or not target.exists():
        said = (result.stderr or result.stdout).strip().splitlines()
        reason = said[-1] if said else f"exit status {result.returncode}"
        raise FetchError(
            f"document {document.name}: package {document.package} version {document.version} could not be "
            f"downloaded ({reason}). If that version is no longer in the archive (run `apt-get update` "
            f"first), it is kept at https://snapshot.debian.org/package/{document.package}/{document.version}/ "
            f"- put {target.name} in {debs}"
        )
    return target


def fetch_document(document: Document, cache: Path) -> Path:
    """The document's files in ``CACHE/documents/SPLIT/NAME/``, each checked against its SHA-256."""
    folder = document_dir(cache, document)
    missing = [
        f
        for f in document.files
        if not (folder / f.name).exists() or file_sha256(folder / f.name) != f.sha256
    ]
    if not missing:
        return folder
    deb = download_deb(document, cache / "debs")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mtrag-real-documents-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True, capture_output=True)
        for entry in missing:
            source = Path(tmp) / entry.path.lstrip("/")
            if not source.is_file():
                raise FetchError(
                    f"document {document.name}: {entry.path} is not in {deb.name} (has the package moved it?)"
                )
            staged = folder / f".{entry.name}.part"
            if source.suffix == ".gz":
                with gzip.open(source, "rb") as packed, open(staged, "wb") as out:
                    shutil.copyfileobj(packed, out)
            else:
                shutil.copyfile(source, staged)
            found = file_sha256(staged)
            if found != entry.sha256:
                staged.unlink()
                raise FetchError(
                    f"document {document.name}: {entry.name} from {deb.name} has SHA-256 {found}, the manifest "
                    f"pins {entry.sha256}"
                )
            staged.replace(folder / entry.name)
    return folder


def fetch_split(documents: list[Document], cache: Path) -> Path:
    """Every document of a split, fetched and checked; the folder that holds them all and nothing else
    (a file the manifest no longer names is removed from it, so the index never holds it)."""
    for document in documents:
        fetch_document(document, cache)
    folder = cache / "documents" / documents[0].split
    wanted = {document_dir(cache, d) / f.name for d in documents for f in d.files}
    for path in sorted(folder.rglob("*"), reverse=True):  # files before their folders
        if path.is_file() and path not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return folder
