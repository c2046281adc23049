"""Endpoints that refuse constrained output, remembered for the rest of the process.

OpenAI and vLLM accept ``response_format: {"type": "json_schema", ...}`` (and vLLM its own
``structured_outputs``); other OpenAI-compatible servers do not (llama-cpp-python's own server answers
500 to a ``json_schema``: it knows only ``text`` and ``json_object``). When an endpoint rejects the
constraint, the call is asked again without it: the reply is parsed strictly anyway (and retried with the error shown when it does not parse), and the
rejected attempt stays in the node's ``model_calls`` (the route's ``model_errors``). Later calls to
that endpoint send no constraint at all.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from mtrag_graph.models.endpoints import endpoint_of

logger = logging.getLogger("mtrag_graph")

_REFUSED: set[str] = set()
_LOCK = threading.Lock()
_REJECTION_STATUS = {400, 422, 500, 501}
CONSTRAINT_KEYS = ("response_format", "structured_outputs")  # the request fields that constrain a reply


def refuses_constraints(model: Any) -> bool:
    """Whether ``model``'s endpoint already rejected a ``response_format`` in this process."""
    endpoint = endpoint_of(model)
    with _LOCK:
        return endpoint is not None and endpoint in _REFUSED


def rejects_constraint(status: object, message: str) -> bool:
    """Whether an HTTP error (its status and text) is the endpoint refusing a constraint field."""
    return status in _REJECTION_STATUS and any(key in message for key in CONSTRAINT_KEYS)


def drop_refused_constraint(model: Any, error: BaseException, options: dict[str, Any]) -> bool:
    """If ``error`` is the endpoint rejecting the constraint in ``options`` (``response_format`` or
    ``structured_outputs``): drop it, remember the endpoint, and return True (ask again); else False."""
    endpoint = endpoint_of(model)
    keys = [key for key in CONSTRAINT_KEYS if key in options]
    if endpoint is None or not keys:
        return False
    status = getattr(error, "status_code", None)
    if not rejects_constraint(status, str(error)):
        return False
    for key in keys:
        options.pop(key)
    with _LOCK:
        first = endpoint not in _REFUSED
        _REFUSED.add(endpoint)
    if first:
        logger.warning("%s rejects %s (%s): asking without constraints", endpoint, keys[0], status)
    return True
