"""A scripted chat model for tests: answers from a list (or a function), records every call.

langchain-core's fake chat models ignore call options; this one accepts the same options as the
real backends (``choices``, ``json_schema``, ``max_tokens``), so every route of the graph can be
driven without a model.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from mtrag_graph.models.capabilities import Capabilities

Reply = str | BaseException
_TOKEN = re.compile(r"\s*\S+|\s+")  # a streamed "token": a word with the spaces before it
Responder = Callable[[list[BaseMessage], dict[str, Any]], Reply]


class ScriptedChatModel(BaseChatModel):
    """Replies with ``responses`` in order (the last one repeats), or with ``responder(messages, options)``.

    A reply that is an exception instance is raised instead of returned.
    """

    responses: list[Any] = []
    responder: Responder | None = None
    model_name: str = "scripted"
    _calls: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self._calls

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The next scripted reply (raised when it is an exception) and its response metadata."""
        with self._lock:
            index = len(self._calls)
            self._calls.append({"messages": messages, "options": kwargs})
        if self.responder is not None:
            reply = self.responder(messages, kwargs)
        elif self.responses:
            reply = self.responses[min(index, len(self.responses) - 1)]
        else:
            raise RuntimeError("ScriptedChatModel has no responses left")
        if isinstance(reply, BaseException):
            raise reply
        prompt_tokens = sum(len(str(m.content).split()) for m in messages)
        metadata = {
            "model_name": self.model_name,
            "finish_reason": "stop",
            "prompt_tokens": prompt_tokens,
            "prompt_tokens_processed": prompt_tokens,
            "completion_tokens": len(str(reply).split()),
        }
        return str(reply), metadata

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text, metadata = self._reply(messages, kwargs)
        message = AIMessage(content=text, response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The same reply word by word (used when the caller streams); the metadata comes last."""
        text, metadata = self._reply(messages, kwargs)
        pieces = [*_TOKEN.findall(text), ""]
        for number, piece in enumerate(pieces):
            last = number == len(pieces) - 1
            chunk = ChatGenerationChunk(
                message=AIMessageChunk(content=piece, response_metadata=metadata if last else {})
            )
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


class FirstTokenModel(ScriptedChatModel):
    """A scripted model that also gives the first reply token's distribution (``first_tokens``: token and
    probability pairs) when log-probabilities are asked for."""

    capabilities: ClassVar[Capabilities] = Capabilities(logprobs=True)
    first_tokens: list[tuple[str, float]] = []

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        text, metadata = super()._reply(messages, kwargs)
        if kwargs.get("logprobs"):
            top = [{"token": t, "logprob": math.log(p)} for t, p in self.first_tokens]
            metadata["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
        return text, metadata
