"""Fault injection: a chat model wrapper that makes a share of calls fail, for reliability tests.

Faults: ``transient`` (a retryable error), ``timeout`` (a ``TimeoutError``), ``garbage`` (an empty
reply, truncated JSON, or a yes/no answer that is neither). Deterministic for a given seed.
Enable it on any run with ``MTRAG_INJECT_FAULTS=0.3`` (share of calls) and optionally
``MTRAG_FAULT_SEED``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from mtrag_graph.models.capabilities import Capabilities, capabilities_of

GARBAGE = ("", '{"summary": "cut', "perhaps", "<|im_end|>")
FAULT_KINDS = ("transient", "timeout", "garbage")


class TransientModelError(RuntimeError):
    """A model failure worth retrying (``models.calls.TRANSIENT_ERRORS``), as the injected ``transient``."""


class FaultInjectingChatModel(BaseChatModel):
    inner: BaseChatModel
    rate: float = 0.3
    seed: int = 0
    kinds: tuple[str, ...] = FAULT_KINDS
    _random: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _injected: Counter = PrivateAttr(default_factory=Counter)

    @property
    def _llm_type(self) -> str:
        return f"faulty-{self.inner._llm_type}"

    @property
    def capabilities(self) -> Capabilities:
        """The inner model's: the wrapper calls it with the same options."""
        return capabilities_of(self.inner)

    @property
    def model_name(self) -> str:
        return f"faulty({getattr(self.inner, 'model_name', type(self.inner).__name__)})"

    @property
    def injected(self) -> Counter:
        """How many faults of each kind were injected so far."""
        return self._injected

    def _draw(self) -> str | None:
        with self._lock:
            if self._random is None:
                self._random = random.Random(self.seed)
            if self._random.random() >= self.rate:
                return None
            kind = self._random.choice(self.kinds)
            self._injected[kind] += 1
            return kind

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kind = self._draw()
        if kind == "transient":
            raise TransientModelError("injected: 503 service unavailable")
        if kind == "timeout":
            raise TimeoutError("injected: model call timed out")
        if kind == "garbage":
            with self._lock:
                text = self._random.choice(GARBAGE)
            message = AIMessage(
                content=text, response_metadata={"finish_reason": "stop", "injected": "garbage"}
            )
            return ChatResult(generations=[ChatGeneration(message=message)])
        return self.inner._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
