"""The settings several stages share: the abstention text, parse retries, the prompt budget, the
grounded prompts' frame, the embedder; and the type of a model setting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import WithJsonSchema

from mtrag_graph import settings
from mtrag_graph.models.calls import PARSE_RETRIES
from mtrag_graph.models.factory import ModelSpec
from mtrag_graph.prompts import grounded
from mtrag_graph.stages import Stage, register, setting

# In the context schema (LangGraph Studio, the server's assistant schema) a model is its spec string; in
# Python a chat model instance is accepted too.
ModelSetting = Annotated[
    ModelSpec,
    WithJsonSchema({"type": "string", "description": "model spec, e.g. qwen2.5-coder-1.5b, vllm:MODEL@URL"}),
]

register(
    Stage("common", "Shared by several stages: the abstention text, the grounded prompt's frame, "
          "parse retries, the prompt budget, the embedder.", nodes=("load_task", "evidence_precheck", "abstain", "finish"))
)  # fmt: skip


@dataclass(kw_only=True)
class CommonSettings:
    idk_answer: str = setting(
        "I don't know the answer based on the provided documents.",
        stage="common",
        flag=True,
        description="The answer given when the run abstains (no evidence, gate 'no', failed retry, ...).",
    )
    parse_retries: int = setting(
        PARSE_RETRIES,
        stage="common",
        description="Re-asks after a yes/no or JSON reply that does not parse, before the recorded safe default.",
    )
    context_window_tokens: int = setting(
        factory=settings.n_ctx,
        stage="common",
        description="Prompts are fitted to this many tokens before each call (default: MTRAG_N_CTX, the "
        "window the local models are built with).",
    )
    grounded_system_prompt: str = setting(
        grounded.SYSTEM,
        stage="common",
        description="System text of the large model's gate, answer and judge prompts (they share it).",
    )
    embedder: str = setting(
        factory=settings.embedder,
        stage="common",
        flag=True,
        description="Embedder spec (minilm, st:/path, flag:/path, bge-m3:/path): dense retrieval, the "
        "embedding reranker and the gate's similarity features.",
    )
