"""Prompt text, one module per stage. Nodes that share a model share an identical prompt prefix."""
