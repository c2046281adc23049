"""Defaults and the environment: every environment variable the package reads is read here, and only
here (``tests/test_settings.py``), and listed below.

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
| ``MTRAG_DATA`` | the MTRAG benchmark data folder (tests, benchmarks, ``decisions --data``) | ``../shared/data/mtrag`` |
| ``VLLM_API_KEY`` | the key sent to a ``vllm:`` endpoint | ``EMPTY`` |
| ``MTRAG_ENDPOINT_OUTAGE_S`` | how long a ``vllm:`` call waits for an endpoint that answered before and stopped answering (a restarted server) | 120 |
| ``OTEL_SERVICE_NAME`` | the service name of exported OpenTelemetry spans | ``mtrag-graph`` |
| ``XDG_CACHE_HOME`` | where ``MTRAG_GRAPH_CACHE`` defaults to | ``~/.cache`` |
| ``MTRAG_API_KEYS`` | API keys ``mtrag-graph serve`` asks for (comma-separated) | none: no key asked |
| ``MTRAG_SERVE_ARGS`` | set by ``mtrag-graph serve --workers N`` for its workers: its parsed command line, preset and Context overrides (JSON; ``serve/server.py``) | |

Set, not read: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` default to 1 before a Hugging Face library
loads a model (``offline_hub``: nothing downloads weights at run time), and the chat sets
``HF_HUB_DISABLE_PROGRESS_BARS`` (``quiet_hub``); a value the user set stands.
"""

from __future__ import annotations

import os
from importlib import resources
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


def api_keys() -> list[str]:
    return [key.strip() for key in (_text("MTRAG_API_KEYS") or "").split(",") if key.strip()]


def serve_args() -> str | None:
    return _text("MTRAG_SERVE_ARGS")


def set_serve_args(arguments: str) -> None:
    """Hand ``serve --workers N``'s parsed command line to its workers (``MTRAG_SERVE_ARGS``)."""
    os.environ["MTRAG_SERVE_ARGS"] = arguments


def data_dir() -> Path:
    return Path(_text("MTRAG_DATA") or REPO.parent / "shared" / "data" / "mtrag")


def data_dir_is_set() -> bool:
    return _text("MTRAG_DATA") is not None


def data_dir_given() -> str | None:
    """``MTRAG_DATA`` as set, without the default (a command that needs the data says so when unset)."""
    return _text("MTRAG_DATA")


def vllm_api_key() -> str:
    return _text("VLLM_API_KEY") or "EMPTY"


def endpoint_outage_seconds() -> float:
    return float(_text("MTRAG_ENDPOINT_OUTAGE_S") or 120)


def otel_service_name() -> str:
    return _text("OTEL_SERVICE_NAME") or "mtrag-graph"


def offline_hub() -> None:
    """Before a Hugging Face library (sentence-transformers, transformers) loads a model from a folder:
    it must not reach the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def quiet_hub() -> None:
    """No model-loading progress bars (they would write over the chat's status line)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def data_file_text(spec: str, name: str) -> str:
    """The text of a fitted file: ``"default"`` reads ``name`` shipped in the package's ``data``, anything
    else is a path."""
    if spec == "default":
        return (resources.files("mtrag_graph") / "data" / name).read_text(encoding="utf-8")
    return Path(spec).read_text(encoding="utf-8")
