"""Prompt text, one module per stage (nodes that share a model share an identical prompt prefix); the
few-shot exemplars (``exemplars``), the excerpts of each passage a prompt shows (``excerpts``), the
fitting of a prompt to the model's window (``budget``) and the builders that fill the text in and make
every message a model is sent (``build``)."""
