"""One factory that turns a model spec into a LangChain chat model (loaded once per process).

Specs:
- ``qwen2.5-coder-1.5b`` / ``qwen2.5-coder-0.5b`` (or ``qwen-1.5b`` / ``qwen-0.5b``): the bundled GGUF models.
- ``gguf:/path/model.gguf`` (or a path ending in ``.gguf``): any local GGUF file through llama.cpp.
- ``openai:MODEL``: OpenAI (``OPENAI_API_KEY``); ``openai:MODEL@URL`` any OpenAI-compatible endpoint.
- ``vllm:MODEL@URL``: a vLLM server's OpenAI-compatible API (``VLLM_API_KEY``, default ``EMPTY``);
  structured outputs and choices are then constrained server-side (a choice with vLLM's
  ``structured_outputs``, a JSON schema with ``response_format``). Requests go over plain ``httpx``
  (``mtrag_graph.models.openai_compatible``), not the OpenAI SDK.
- ``scripted:a|b|c``: a scripted fake that replies a, then b, then c (for tests and dry runs).
A ``BaseChatModel`` instance is accepted wherever a spec is, and returned unchanged.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_openai import ChatOpenAI

from mtrag_graph import settings
from mtrag_graph.models.bundled import BUNDLED_GGUF, gguf_path
from mtrag_graph.models.capabilities import (
    IN_PROCESS,
    Capabilities,
    capabilities_of,
    openai_compatible,
    vllm_endpoint,
)
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.faults import FaultInjectingChatModel
from mtrag_graph.models.llama import ChatLlamaCpp
from mtrag_graph.models.openai_compatible import ChatOpenAICompatible, ChatOpenAIStreamingText
from mtrag_graph.models.reply_cache import reply_cache

REMOTE_TIMEOUT_S = 120  # a remote call slower than this fails (and is retried as transient)
ALIASES = {"qwen-1.5b": settings.LARGE_MODEL, "qwen-0.5b": settings.SMALL_MODEL}

_MODELS: dict[str, BaseChatModel] = {}
_LOCK = threading.Lock()

ModelSpec = str | BaseChatModel


def model_name(model: ModelSpec) -> str:
    if isinstance(model, str):
        return model
    return str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)


def _split_url(rest: str) -> tuple[str, str | None]:
    name, sep, url = rest.partition("@")
    return name, (url if sep else None)


def _backend(spec: str) -> tuple[str | None, str]:
    """The backend a spec names (``llama``, ``openai``, ``vllm``, ``scripted``; None: unknown) and the
    rest of the spec (a GGUF path, ``MODEL[@URL]``, the scripted replies)."""
    canonical = ALIASES.get(spec, spec)
    if canonical in BUNDLED_GGUF:
        return "llama", canonical
    kind, _, rest = spec.partition(":")
    if kind == "gguf" or spec.endswith(".gguf"):
        return "llama", rest if kind == "gguf" else spec
    if kind in ("openai", "vllm") and rest:
        return kind, rest
    if kind == "scripted":
        return kind, rest
    return None, spec


def spec_capabilities(spec: ModelSpec) -> Capabilities:
    """What the model of ``spec`` supports (``models.capabilities``), without building it."""
    if not isinstance(spec, str):
        return capabilities_of(spec)
    backend, rest = _backend(spec)
    if backend == "llama":
        return ChatLlamaCpp.capabilities
    if backend == "vllm":
        return vllm_endpoint(_split_url(rest)[1])
    if backend == "openai":
        return openai_compatible(_split_url(rest)[1])
    return IN_PROCESS


def _build(spec: str) -> BaseChatModel:
    n_ctx, n_threads, json_grammar = settings.n_ctx(), settings.n_threads(), settings.json_grammar()
    backend, rest = _backend(spec)
    if backend == "llama":
        if rest in BUNDLED_GGUF:
            path, name = str(gguf_path(rest)), rest
        elif os.path.isfile(rest):
            path, name = rest, os.path.basename(rest)
        else:
            raise ValueError(f"model spec '{spec}': no GGUF file at {rest}")
        return ChatLlamaCpp(
            model_path=path, model_name=name, n_ctx=n_ctx, n_threads=n_threads, json_grammar=json_grammar
        )
    if backend in ("openai", "vllm"):
        name, url = _split_url(rest)
        # max_retries=0: invoke_text is the one retry layer, so every attempt is counted and logged
        options: dict[str, Any] = {
            "model": name,
            "temperature": 0.0,
            "max_retries": 0,
            "timeout": REMOTE_TIMEOUT_S,
        }
        if url:
            options["base_url"] = url
        model: ChatOpenAI
        if backend == "vllm":
            options["api_key"] = settings.vllm_api_key()
            # the OpenAI SDK's per-request CPU caps the throughput of many tasks against a fast server
            model = ChatOpenAICompatible(**options)
        else:
            model = ChatOpenAIStreamingText(**options)
        model.metadata = {**(model.metadata or {}), "backend": backend}
        return model
    if backend == "scripted":
        return ScriptedChatModel(responses=rest.split("|"))
    raise ValueError(
        f"unknown model spec '{spec}': use a bundled name ({', '.join(sorted(BUNDLED_GGUF))}), "
        "'gguf:/path', 'openai:MODEL[@URL]', 'vllm:MODEL@URL' or 'scripted:a|b'"
    )


def get_chat_model(spec: ModelSpec) -> BaseChatModel:
    """The chat model for ``spec``; each spec is built once per process.

    With ``MTRAG_LLM_CACHE`` set (a SQLite file) replies to identical calls come from that cache
    (``mtrag_graph.models.reply_cache``). With ``MTRAG_INJECT_FAULTS`` set (a share of calls, e.g. 0.3) every model is wrapped in
    ``FaultInjectingChatModel`` (see ``mtrag_graph.models.faults``).
    """
    if isinstance(spec, BaseChatModel):
        return spec
    with _LOCK:
        if spec not in _MODELS:
            model = _build(spec)
            if path := settings.llm_cache():
                model.cache = reply_cache(path)
            if rate := settings.fault_rate():
                model = FaultInjectingChatModel(inner=model, rate=rate, seed=settings.fault_seed())
            _MODELS[spec] = model
        return _MODELS[spec]
