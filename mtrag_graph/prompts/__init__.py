"""Prompt text, one module per stage (nodes that share a model share an identical prompt prefix); the
few-shot exemplars (``exemplars``) and the fitting of a prompt to the model's window (``budget``)."""
