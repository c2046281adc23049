"""What a chat model backend can do, described once per backend instead of read from its class name.

Each backend class says what it supports in a ``capabilities`` attribute (``ChatLlamaCpp``, the
OpenAI-compatible classes, the fault-injection wrapper passes its inner model's on); callers ask
``capabilities_of(model)``: how to constrain its output, whether it returns log-probabilities,
whether it calls a remote endpoint, whether its calls queue behind each other in this process.
A LangChain OpenAI chat model built elsewhere (``ChatOpenAI``, ``AzureChatOpenAI``) is described as an
OpenAI-compatible endpoint; any other model as an in-process model that takes the call options.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_openai.chat_models.base import BaseChatOpenAI

DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Capabilities:
    """A backend's abilities, as the callers need them.

    ``constraint``: how a choice or a JSON schema is asked for: ``"call_options"`` (``choices=`` /
    ``json_schema=`` keyword options: a llama.cpp grammar, or ignored by a fake),
    ``"response_format"`` (OpenAI-style constrained output: a choice is a one-field JSON object) or
    ``"structured_outputs"`` (vLLM: a choice is the bare word, vLLM's ``structured_outputs.choice``, as
    llama.cpp's grammar gives it; a JSON schema is a ``response_format``). ``logprobs``: the reply can carry the first
    token's log-probabilities (``logprobs=True, top_logprobs=N``). ``endpoint``: the base URL of a
    remote server, None in process. ``serialised``: an in-process model that runs one call at a time
    (llama.cpp: a lock per model file), so concurrent tasks queue on it.
    """

    constraint: Literal["call_options", "response_format", "structured_outputs"] = "call_options"
    logprobs: bool = False
    endpoint: str | None = None
    serialised: bool = False


IN_PROCESS = Capabilities()
LLAMA_CPP = Capabilities(logprobs=True, serialised=True)
OPENAI_COMPATIBLE = Capabilities(constraint="response_format", logprobs=True, endpoint=DEFAULT_OPENAI_BASE)
VLLM = replace(OPENAI_COMPATIBLE, constraint="structured_outputs")


def openai_compatible(base_url: str | None) -> Capabilities:
    """An OpenAI-compatible endpoint at ``base_url`` (OpenAI's own when None)."""
    return replace(OPENAI_COMPATIBLE, endpoint=str(base_url or DEFAULT_OPENAI_BASE))


def vllm_endpoint(base_url: str | None) -> Capabilities:
    """A vLLM server (a ``vllm:`` spec) at ``base_url``: its own structured-output parameters."""
    return replace(VLLM, endpoint=str(base_url or DEFAULT_OPENAI_BASE))


def capabilities_of(model: Any) -> Capabilities:
    """What ``model`` (a chat model instance) supports."""
    declared = getattr(model, "capabilities", None)
    if isinstance(declared, Capabilities):
        return declared
    if isinstance(model, BaseChatOpenAI):
        return openai_compatible(model.openai_api_base)
    return IN_PROCESS
