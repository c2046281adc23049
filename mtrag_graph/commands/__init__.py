"""CLI subcommands: each module defines ``register(subparsers)``; modules starting with ``_`` are helpers."""
