"""A LangChain chat model over llama.cpp (``llama-cpp-python``), with constrained decoding.

One ``Llama`` instance per (model file, context size) per process. llama.cpp keeps the tokens of the
last call and re-evaluates only what differs, so calls that share a prompt prefix are cheap; the
number of prompt tokens actually processed is reported in ``response_metadata``.

One model often serves calls with different system texts in turn (on a follow-up the 1.5B model judges
the turn's relation, then writes the answer): each call would find the other's tokens in the context
and process its whole prompt again. So the context's state after a call is kept per system text
(``PrefixStates``, a few of them, only the cells in use), and a call whose system text differs from the
one the context holds starts from its own saved state instead: the answer's system text and the start
of its documents are not processed again on every turn.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from mtrag_graph.models.capabilities import LLAMA_CPP, Capabilities
from mtrag_graph.models.chunks import whole_reply

_INSTANCES: dict[tuple[str, int], Any] = {}
_RECENT_PROMPTS = 32  # prompts remembered per model to count tokens no earlier prompt shared
_LOCKS: dict[tuple[str, int], threading.Lock] = {}
_STATES: dict[tuple[str, int], PrefixStates] = {}
_REGISTRY_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    # Free the models while the interpreter is whole: llama-cpp-python's __del__ at shutdown finds its
    # C bindings already torn down and prints a TypeError traceback per model.
    with _REGISTRY_LOCK:
        for llama in _INSTANCES.values():
            llama.close()
        _INSTANCES.clear()


def load_llama(model_path: str, n_ctx: int, n_threads: int | None) -> tuple[Any, threading.Lock]:
    """The process-wide ``Llama`` for this file and context size, loaded once."""
    key = (model_path, n_ctx)
    with _REGISTRY_LOCK:
        if key not in _INSTANCES:
            from llama_cpp import Llama  # noqa: PLC0415 - the native llama.cpp library: loaded when a local model is first called

            _INSTANCES[key] = Llama(
                model_path=model_path, n_ctx=n_ctx, n_threads=n_threads, verbose=False, seed=0
            )
            _LOCKS[key] = threading.Lock()
        return _INSTANCES[key], _LOCKS[key]


def prefix_states(model_path: str, n_ctx: int) -> PrefixStates:
    """The saved states of the process-wide ``Llama`` for this file and context size (``load_llama``)."""
    with _REGISTRY_LOCK:
        return _STATES.setdefault((model_path, n_ctx), PrefixStates())


class PrefixStates:
    """Saved llama.cpp context states of one ``Llama``, keyed by the system text of the call that left
    them (least recently used dropped past ``capacity``), and the key of what the context holds now."""

    def __init__(self, capacity: int = 3):
        self.capacity = capacity
        self.saved: OrderedDict[str, tuple[np.ndarray, int, bytes]] = OrderedDict()
        self.holding: str | None = None

    def restore(self, llama: Any, key: str) -> None:
        """Before a call with system text ``key``: load its saved state unless the context holds it."""
        if self.holding == key or key not in self.saved:
            return
        from llama_cpp import llama_state_set_data  # noqa: PLC0415 - as in load_llama

        ids, n_tokens, data = self.saved[key]
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_state_set_data(llama._ctx.ctx, buffer, len(data)) != len(data):
            llama.reset()  # a state that did not load whole: start afresh rather than from half of it
            self.holding = None
            return
        llama.input_ids[:n_tokens] = ids
        llama.n_tokens = n_tokens
        self.saved.move_to_end(key)
        self.holding = key

    def save(self, llama: Any, key: str) -> None:
        """After a call with system text ``key``: keep the context's state (its used cells) for it."""
        from llama_cpp import llama_state_get_data, llama_state_get_size  # noqa: PLC0415 - as in load_llama

        size = int(llama_state_get_size(llama._ctx.ctx))
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_state_get_data(llama._ctx.ctx, buffer, size))
        # string_at copies the bytes at C speed; slicing a ctypes array builds a list of ints first (0.19 s
        # against 0.005 s for the 15 MB state of a 500-token 1.5B context)
        state = ctypes.string_at(buffer, written)
        self.saved[key] = (llama.input_ids[: llama.n_tokens].copy(), llama.n_tokens, state)
        self.saved.move_to_end(key)
        while len(self.saved) > self.capacity:
            self.saved.popitem(last=False)
        self.holding = key

    def forget(self) -> None:
        self.saved.clear()
        self.holding = None


def choice_grammar(choices: Sequence[str]) -> str:
    """GBNF that admits exactly one of ``choices``."""
    alternatives = " | ".join('"' + c.replace("\\", "\\\\").replace('"', '\\"') + '"' for c in choices)
    return f"root ::= {alternatives}\n"


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "system": "system"}.get(message.type, "user")


class ChatLlamaCpp(BaseChatModel):
    """Chat model over a local GGUF file.

    Extra call options: ``choices`` (a list of strings: the output is exactly one of them, via a
    grammar), ``json_schema`` (a JSON schema the output must follow), ``max_tokens``.
    """

    model_path: str
    model_name: str = "gguf"
    n_ctx: int = 4096
    n_threads: int | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    reuse_prefix: bool = True  # False: re-evaluate every prompt from scratch (for measuring the cache)
    # keep the context's state per system text (PrefixStates) and start a call from its own; False: only
    # the last call's tokens are reused
    keep_prefix_states: bool = True
    # JSON-schema grammars make llama.cpp check the whole 151k-token Qwen vocabulary at every step:
    # measured here at minutes per call. Off by default: replies are parsed and validated strictly and
    # retried instead. Choice grammars (yes/no) stay on: they are one or two tokens.
    json_grammar: bool = False
    capabilities: ClassVar[Capabilities] = LLAMA_CPP

    model_config = ConfigDict(protected_namespaces=())
    _llama: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default=None)
    _recent: list = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "n_ctx": self.n_ctx}

    def forget_recent_prompts(self) -> None:
        """Count ``prompt_tokens_unique`` afresh from here (the bench: one count per preset)."""
        self._recent = []

    def _ensure_loaded(self) -> None:
        if self._llama is None:
            self._llama, self._lock = load_llama(self.model_path, self.n_ctx, self.n_threads)

    def _prepare(self, chat: list[dict[str, str]]) -> str:
        """With the lock held, before a call: reset (no reuse), or the saved state of its system text."""
        key = chat[0]["content"] if chat and chat[0]["role"] == "system" else ""
        states = prefix_states(self.model_path, self.n_ctx)
        if not self.reuse_prefix:
            self._llama.reset()
            states.forget()
        elif self.keep_prefix_states:
            states.restore(self._llama, key)
        states.holding = None  # until the call ends whole (_keep): a call cut short leaves no known state
        return key

    def _keep(self, key: str) -> None:
        """With the lock held, after a call: save the context's state for its system text."""
        if self.reuse_prefix and self.keep_prefix_states:  # else _prepare left nothing held
            prefix_states(self.model_path, self.n_ctx).save(self._llama, key)

    def _first_token_logprobs(self, chat: list[dict[str, str]], options: dict[str, Any], top: int) -> dict:
        """The model's own distribution over the reply's first token (before any grammar), OpenAI format.

        llama-cpp-python computes log-probabilities only for models loaded with ``logits_all`` (logits
        of every prompt token: gigabytes at this context size). A one-token completion instead leaves
        the logits of the last prompt position in the context; the full call that follows reuses the
        evaluated prompt, so this costs about one token.
        """
        self._llama.create_chat_completion(messages=chat, **{**options, "max_tokens": 1})
        logits = np.ctypeslib.as_array(self._llama._ctx.get_logits(), shape=(self._llama.n_vocab(),))
        logits = logits.astype(np.float64)
        logprobs = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        best = np.argsort(-logprobs)[:top]

        def entry(token_id: int) -> dict[str, Any]:
            text = self._llama.detokenize([int(token_id)]).decode("utf-8", errors="ignore")
            return {"token": text, "logprob": float(logprobs[token_id])}

        return {**entry(int(best[0])), "top_logprobs": [entry(int(t)) for t in best]}

    def _options(self, stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        from llama_cpp import LlamaGrammar  # noqa: PLC0415 - as in load_llama

        options: dict[str, Any] = {
            "temperature": float(kwargs.get("temperature", self.temperature)),  # a call may sample
            "max_tokens": int(kwargs.get("max_tokens") or self.max_tokens),
            "stop": stop,
        }
        if kwargs.get("choices"):
            options["grammar"] = LlamaGrammar.from_string(choice_grammar(kwargs["choices"]), verbose=False)
        elif kwargs.get("json_schema") and self.json_grammar:
            options["response_format"] = {"type": "json_object", "schema": kwargs["json_schema"]}
        return options

    def _token_metadata(
        self, before: list[int], prompt_tokens: int, completion_tokens: int, finish_reason: str | None
    ) -> dict[str, Any]:
        """The reply's response metadata; call with the model's lock held, right after the call."""
        after = list(self._llama._input_ids[:prompt_tokens])
        # tokens no recent prompt started with: what an ideal prefix cache would still process
        shared = max((_common_prefix(p, after) for p in self._recent), default=0)
        self._recent = [after, *self._recent[: _RECENT_PROMPTS - 1]]
        # llama.cpp re-evaluates at least the last prompt token even on a full prefix match
        reused = min(_common_prefix(before, after), max(prompt_tokens - 1, 0))
        return {
            "model_name": self.model_name,
            "finish_reason": finish_reason,
            "prompt_tokens": prompt_tokens,
            "prompt_tokens_processed": prompt_tokens - reused,
            "prompt_tokens_unique": prompt_tokens - min(shared, max(prompt_tokens - 1, 0)),
            "completion_tokens": completion_tokens,
        }

    @staticmethod
    def _usage(metadata: dict[str, Any]) -> dict[str, int]:
        prompt, completion = metadata["prompt_tokens"], metadata["completion_tokens"]
        return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._ensure_loaded()
        options = self._options(stop, kwargs)
        chat = [{"role": _role(m), "content": str(m.content)} for m in messages]
        with self._lock:
            key = self._prepare(chat)
            before = list(self._llama._input_ids)
            first_token = None
            if kwargs.get("logprobs"):
                first_token = self._first_token_logprobs(chat, options, int(kwargs.get("top_logprobs") or 5))
            out = self._llama.create_chat_completion(messages=chat, **options)
            choice = out["choices"][0]
            metadata = self._token_metadata(
                before,
                int(out["usage"]["prompt_tokens"]),
                int(out["usage"]["completion_tokens"]),
                choice.get("finish_reason"),
            )
            self._keep(key)
        if first_token is not None:
            metadata["logprobs"] = {"content": [first_token]}
        message = AIMessage(
            content=choice["message"]["content"] or "",
            response_metadata=metadata,
            usage_metadata=self._usage(metadata),  # type: ignore[arg-type]
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply token by token (LangChain calls this when the caller streams); the metadata comes last.

        Constrained calls (choices, JSON) and calls asking for log-probabilities are not worth
        streaming: they come as one chunk from ``_generate``, exactly as when not streamed.
        """
        if kwargs.get("choices") or kwargs.get("json_schema") or kwargs.get("logprobs"):
            yield whole_reply(self._generate(messages, stop, None, **kwargs), run_manager)
            return
        self._ensure_loaded()
        options = self._options(stop, kwargs)
        chat = [{"role": _role(m), "content": str(m.content)} for m in messages]
        with self._lock:
            key = self._prepare(chat)
            before = list(self._llama._input_ids)
            prompt_sizes: list[int] = []
            evaluate = self._llama.generate

            def counting_generate(tokens: Sequence[int], *args: Any, **options: Any) -> Any:
                # llama-cpp-python reports no usage when streaming: the prompt's size is seen here
                prompt_sizes.append(len(tokens))
                return evaluate(tokens, *args, **options)

            self._llama.generate = counting_generate
            finish_reason = None
            try:
                for part in self._llama.create_chat_completion(messages=chat, stream=True, **options):
                    choice = part["choices"][0]
                    finish_reason = choice.get("finish_reason") or finish_reason
                    if text := (choice.get("delta") or {}).get("content"):
                        chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                        if run_manager:
                            run_manager.on_llm_new_token(text, chunk=chunk)
                        yield chunk
            finally:
                del self._llama.generate  # the class's method again
            prompt_tokens = prompt_sizes[0]
            # the context now holds the prompt and the generated tokens, except the last one of a reply
            # cut at max_tokens (sampled, never evaluated)
            generated = len(self._llama._input_ids) - prompt_tokens + (finish_reason == "length")
            metadata = self._token_metadata(before, prompt_tokens, generated, finish_reason)
            self._keep(key)
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                response_metadata=metadata,
                usage_metadata=self._usage(metadata),  # type: ignore[arg-type]
            )
        )
