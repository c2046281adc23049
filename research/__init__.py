"""The research tree: what chose the shipped defaults, kept beside the product and out of its wheel.

The product (``mtrag_graph``: the graph, models, retrieval, serving, ``answer`` / ``chat`` / ``index`` /
``retrieve`` / ``trace`` / ``serve``, and the evaluation harness ``evaluate``, ``eval-retrieval``,
``bench``, ``decisions``) never imports this package. Here are the fits whose results the product loads
as data with a card (``fit_gate``, ``fit_answer_judge``, ``grounding_fit``), the clarify twins
(``twins``, ``clarify_twins``), the Task C stand-in (``clarify_standin``) and the one-off analyses
behind the reports in benchmarks/results/. Run a module with ``python -m research.NAME`` from the
repository root; ``make lint`` checks it and ``tests/research`` tests it. Research code calls the
stages' public decision functions, never a private helper (docs/architecture.md, "Product and research").
"""
