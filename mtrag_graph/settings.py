"""Defaults and the ``MTRAG_*`` environment: every variable is read here, and only here.

Read at call time (not at import), so a test or a command can set a variable before the first use.

| variable | what it sets | default |
|---|---|---|
| ``MTRAG_SMALL_MODEL`` | the rewrite model | ``SMALL_MODEL`` |
| ``MTRAG_LARGE_MODEL`` | classify, gate, generate, clarify and candidate-judge models | ``LARGE_MODEL`` |
| ``MTRAG_EMBEDDER`` | the embedder (reranking, indexing) | ``DEFAULT_EMBEDDER`` |
| ``MTRAG_RERANKER`` | the reranker | ``DEFAULT_RERANKER`` |
| ``MTRAG_INDEX_DIR`` | the index folder for full-RAG tasks | none |
| ``MTRAG_MILVUS_URI`` / ``MTRAG_MILVUS_TOKEN`` | a Milvus server for Milvus indexes (``retrieval/milvus.py``) | the index folder's Milvus Lite file |
| ``MTRAG_N_CTX`` | the llama.cpp context window, and the window prompts are fitted to | ``DEFAULT_N_CTX`` |
| ``MTRAG_N_THREADS`` | llama.cpp threads | all cores |
| ``MTRAG_JSON_GRAMMAR`` | constrain JSON replies with a llama.cpp grammar (slow) | off |
| ``MTRAG_EMBED_MERGE`` | merge concurrent tasks' embedding requests into shared batches | off |
| ``MTRAG_INJECT_FAULTS`` / ``MTRAG_FAULT_SEED`` | share of model calls made to fail, and its seed | 0 / 0 |
| ``MTRAG_LLM_CACHE`` | a SQLite file of model replies reused for identical calls (``models.reply_cache``) | off |
| ``MTRAG_GRAPH_CACHE`` | where the joined GGUF files live | ``~/.cache/mtrag-graph`` |
| ``MTRAG_OTEL`` | export OpenTelemetry spans over OTLP | off |
| ``MTRAG_TRACE_FILE`` | the served graph's trace file (``runtime/served.py``; ``answer`` and ``chat`` take ``--trace-file``) | none |
| ``MTRAG_CHECKPOINTER`` | the chat's checkpointer (SQLite file or ``postgresql://``) | ``~/.mtrag-graph/chat.sqlite`` |
| ``MTRAG_DATA`` | the MTRAG benchmark data folder (tests, benchmarks) | ``../shared/data/mtrag`` |
"""

from __future__ import annotations

import os
from pathlib import Path

SMALL_MODEL = "qwen2.5-coder-0.5b"
LARGE_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_EMBEDDER = "minilm"
DEFAULT_RERANKER = "embedding"
DEFAULT_N_CTX = 8192
DEFAULT_CHECKPOINTER = os.path.join("~", ".mtrag-graph", "chat.sqlite")
REPO = Path(__file__).resolve().parents[1]


def _text(name: str) -> str | None:
    return os.environ.get(name) or None


def _flag(name: str) -> bool:
    return (os.environ.get(name) or "").lower() in ("1", "true", "yes")


def llm_cache() -> str | None:
    return _text("MTRAG_LLM_CACHE")


def small_model() -> str:
    return _text("MTRAG_SMALL_MODEL") or SMALL_MODEL


def large_model() -> str:
    return _text("MTRAG_LARGE_MODEL") or LARGE_MODEL


def embedder() -> str:
    return _text("MTRAG_EMBEDDER") or DEFAULT_EMBEDDER


def reranker() -> str:
    return _text("MTRAG_RERANKER") or DEFAULT_RERANKER


def index_dir() -> str | None:
    return _text("MTRAG_INDEX_DIR")


def milvus_uri() -> str | None:
    return _text("MTRAG_MILVUS_URI")


def milvus_token() -> str | None:
    return _text("MTRAG_MILVUS_TOKEN")


def n_ctx() -> int:
    return int(_text("MTRAG_N_CTX") or DEFAULT_N_CTX)


def n_threads() -> int:
    # llama-cpp-python defaults to half the cores; use them all unless told otherwise
    return int(_text("MTRAG_N_THREADS") or os.cpu_count() or 1)


def json_grammar() -> bool:
    return _flag("MTRAG_JSON_GRAMMAR")


def embed_merge() -> bool:
    return _flag("MTRAG_EMBED_MERGE")


def fault_rate() -> float:
    return float(_text("MTRAG_INJECT_FAULTS") or 0)


def fault_seed() -> int:
    return int(_text("MTRAG_FAULT_SEED") or 0)


def graph_cache() -> Path:
    default = Path(_text("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")) / "mtrag-graph"
    return Path(_text("MTRAG_GRAPH_CACHE") or default)


def otel_enabled() -> bool:
    return _flag("MTRAG_OTEL")


def trace_file() -> str | None:
    return _text("MTRAG_TRACE_FILE")


def checkpointer() -> str:
    return _text("MTRAG_CHECKPOINTER") or DEFAULT_CHECKPOINTER


def data_dir() -> Path:
    return Path(_text("MTRAG_DATA") or REPO.parent / "shared" / "data" / "mtrag")


def data_dir_is_set() -> bool:
    return _text("MTRAG_DATA") is not None
