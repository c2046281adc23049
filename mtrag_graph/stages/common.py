"""The settings several stages share: the abstention text, parse retries, the prompt budget, the
grounded prompts' frame, the embedder; and the type of a model setting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

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
    passage_max_chars: int = setting(
        2000, stage="common", description="Each passage is cut to this many characters in prompts."
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
    grounded_context_template: str = setting(
        grounded.CONTEXT,
        stage="common",
        description="The documents-and-conversation prefix those prompts share ({documents}, {conversation}).",
    )
    follow_up_context_template: str | None = setting(
        None,
        stage="common",
        description="The prefix of those prompts on a turn whose conversation they show ({documents}, "
        "{conversation}; None: grounded_context_template). The conversation before the documents lost "
        "follow-ups on the real-documents fresh split (9 -> 7 of 21; benchmarks/results/follow-ups.md).",
    )
    passage_order: Literal["rank", "best_last"] = setting(
        "rank",
        stage="common",
        description="The order of the documents in those prompts: 'rank' (the best passage first) or "
        "'best_last' (the best passage last, next to the conversation and the question; documents keep "
        "their numbers). 'best_last' lost on both real-documents splits (tuning 42 -> 38 of 51, fresh 23 -> 21 "
        "of 43; benchmarks/results/rereading.md).",
    )
    no_conversation_text: str = setting(
        grounded.NO_CONVERSATION,
        stage="common",
        description="What the prompts say in place of the conversation on a first turn.",
    )
    embedder: str = setting(
        factory=settings.embedder,
        stage="common",
        flag=True,
        description="Embedder spec (minilm, st:/path, flag:/path, bge-m3:/path): dense retrieval, the "
        "embedding reranker and the gate's similarity features.",
    )
