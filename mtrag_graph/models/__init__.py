"""Model factory, bundled offline models, embedders and the scripted fake."""

from mtrag_graph.models.calls import CallLog, ask_choice, ask_json, invoke_text
from mtrag_graph.models.embeddings import get_embedder, get_reranker
from mtrag_graph.models.factory import ModelSpec, get_chat_model, model_name

__all__ = [
    "CallLog",
    "ModelSpec",
    "ask_choice",
    "ask_json",
    "get_chat_model",
    "get_embedder",
    "get_reranker",
    "invoke_text",
    "model_name",
]
