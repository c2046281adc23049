"""A whole (not streamed) reply as the one chunk of a stream: for backends that stream free text but
answer constrained or log-probability calls whole (``llama.py``, ``openai_compatible.py``)."""

from __future__ import annotations

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult


def whole_reply(result: ChatResult, run_manager: CallbackManagerForLLMRun | None) -> ChatGenerationChunk:
    """The reply of ``result`` as one chunk, reported to ``run_manager`` as one new token."""
    message = result.generations[0].message
    chunk = ChatGenerationChunk(
        message=AIMessageChunk(
            content=message.content,
            response_metadata=message.response_metadata,
            usage_metadata=getattr(message, "usage_metadata", None),
        ),
        generation_info=result.generations[0].generation_info,
    )
    if run_manager:
        run_manager.on_llm_new_token(chunk.text, chunk=chunk)
    return chunk
