"""Runtime configuration: every tunable of the graph, with defaults and environment fallbacks."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from mtrag_graph import settings
from mtrag_graph.candidates import Candidate, load_candidates
from mtrag_graph.judging.grounding import DEFAULT_MIN_SUPPORT
from mtrag_graph.models.calls import PARSE_RETRIES
from mtrag_graph.models.factory import ModelSpec
from mtrag_graph.presets import DEFAULT_PRESET, load_preset
from mtrag_graph.prompts import answer_variants, candidate_judge, grounded, rewrite
from mtrag_graph.prompts import clarify as clarify_prompts  # the module; `clarify` is also a field

# Words whose presence means the question leans on the previous exchange.
DEFAULT_PRONOUNS = (
    "it", "its", "it's", "this", "that", "these", "those", "they", "them", "their", "theirs",
    "he", "him", "his", "she", "her", "hers", "there", "such", "former", "latter", "same",
    "one", "ones", "above", "aforementioned", "then",
)  # fmt: skip


# Selection score = sum of weight x signal; "declined" is subtracted (see nodes/judge_candidates.py).
DEFAULT_JUDGE_WEIGHTS = {"faithfulness": 0.5, "completeness": 0.3, "support": 0.2, "declined": 1.0}


@dataclass(kw_only=True)
class Context:
    """Models, thresholds and prompt text for one run of the graph.

    Model fields take a spec string (see ``mtrag_graph.models.factory``) or a chat model instance.
    Defaults that come from the environment (``MTRAG_SMALL_MODEL``, ``MTRAG_LARGE_MODEL``,
    ``MTRAG_EMBEDDER``, ``MTRAG_RERANKER``, ``MTRAG_INDEX_DIR``, ``MTRAG_N_CTX``) are read in
    ``mtrag_graph.settings``, the one place that reads ``MTRAG_*`` variables.
    """

    rewrite_model: ModelSpec = field(default_factory=settings.small_model)
    # the 0.5B model answers "no" to nearly every relation question; the 1.5B judges them sensibly
    classify_model: ModelSpec = field(default_factory=settings.large_model)
    gate_model: ModelSpec = field(default_factory=settings.large_model)
    generate_model: ModelSpec = field(default_factory=settings.large_model)
    clarify_model: ModelSpec = field(default_factory=settings.large_model)
    embedder: str = field(default_factory=settings.embedder)
    reranker: str = field(default_factory=settings.reranker)

    # pipeline switches (presets turn stages off to reproduce published pipelines)
    rewrite_question: bool = True
    classify_history: bool = True
    history_pairs_without_classifier: int = 3  # exchanges kept when classify_history is off
    use_gate: bool = True
    check_answers: bool = True

    top_k: int = 5
    history_walk_cap: int = 3
    pronouns: tuple[str, ...] = DEFAULT_PRONOUNS
    idk_answer: str = "I don't know the answer based on the provided documents."
    gate_fallback: str = "yes"  # used when the gate's reply never parses (recorded in `fallbacks`)
    parse_retries: int = PARSE_RETRIES
    answer_max_tokens: int = 220
    rewrite_max_tokens: int = 64
    local_rewrite_max_tokens: int = 160
    min_answer_words: int = 3
    max_generate_retries: int = 1
    retry_declines: bool = True  # a decline after a gate "yes" is retried once, asking for the supported part
    # the same with retrieved passages (full RAG), decided apart: off would decline far more UNANSWERABLE
    # turns but loses ANSWERABLE ones beyond the interval (benchmarks/results/trust.md), so it stays on
    retry_declines_retrieved: bool = True
    # grounding check after the answer (nodes/ground_answer.py): "facts" drops sentences whose numbers
    # or names the passages and conversation do not hold, or whose content-word support is below
    # grounding_min_support (chosen on the tuning split, benchmarks/results/trust.md); "off": no check
    grounding: str = "facts"
    # "direct": answer at once; "evidence_first": copy the answering passage sentences, then answer from
    # them (a quote the passages do not hold, or none, is a decline); measured in results/trust.md
    answer_mode: str = "direct"
    grounding_min_support: float = DEFAULT_MIN_SUPPORT
    # an answer written only by the decline retry (no "I don't know" escape) is kept only when the model,
    # asked yes/no whether the documents state it, gives "yes" a probability >= verify_threshold
    # (nodes/ground_answer.py); "off", "retrieved" (only with retrieved passages) or "always"
    verify_retried_answers: str = "off"
    verify_threshold: float = 0.5
    passage_max_chars: int = 2000  # each passage is cut to this many characters in prompts
    # prompts are fitted to this window before each call (see mtrag_graph.budget); the default is the
    # window the local models are built with (settings.n_ctx), so the two agree
    context_window_tokens: int = field(default_factory=settings.n_ctx)

    # full-RAG retrieval
    index_dir: str | None = field(default_factory=settings.index_dir)
    retrieval_top_k: int = 20
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60

    # clarify node (when switched on, right after load_task with given passages, after rerank with
    # retrieved ones): chat asks the user with interrupt();
    # batch answers with the clarifying question
    clarify: bool = False
    clarify_interrupt: bool = False
    clarify_max_tokens: int = 60
    clarify_fallback_question: str = "Could you say more precisely what you are asking about?"
    # the question when the passages hold alternatives: {kind} (the reference's noun, or "one"), {options}
    clarify_alternatives_question: str = "Which {kind} do you mean: {options}?"
    # with a value, clarify also asks the model and calls a turn underspecified when its "unclear"
    # probability reaches it (calibrated on the tuning split: 0.723 keeps false clarifications under 3%);
    # None (default): the model-free rule alone (benchmarks/results/decisions.md)
    clarify_threshold: float | None = None
    # the passages must speak of at least this many different things (titles; for "the <noun>", names
    # of that kind) before a reference the conversation does not resolve is asked about
    clarify_min_things: int = 2
    # the model-free signals that may call a turn underspecified (mtrag_graph.nodes.clarify.SIGNALS);
    # drop one to switch it off (each one's tuning numbers: benchmarks/results/clarify.md)
    clarify_signals: tuple[str, ...] = ("rule", "pronoun", "passages", "person", "definite")
    # answerability gate: a classifier file ("default": the one shipped in mtrag_graph/data, model-free:
    # no LLM call), or (gate_classifier=None) a threshold on the model's "yes" probability; neither:
    # the model's yes/no reply decides. Measured in benchmarks/results/decisions.md.
    gate_classifier: str | None = "default"
    gate_threshold: float | None = None
    # compute every gate feature, asking the gate model for its yes-probability even when the rule
    # needs fewer (the decision benchmark records them to fit a classifier; they land in gate_evidence)
    gate_all_features: bool = False

    # prompt text: every prompt the graph sends, overridable per run (defaults in mtrag_graph/prompts/,
    # filled in by mtrag_graph/messages.py). Large model: gate, answers and candidate judge share the
    # system text and the documents-and-conversation prefix.
    grounded_system_prompt: str = grounded.SYSTEM
    grounded_context_template: str = grounded.CONTEXT
    no_conversation_text: str = grounded.NO_CONVERSATION
    gate_instruction: str = grounded.GATE
    generate_instruction: str = grounded.GENERATE
    strict_generate_instruction: str = grounded.GENERATE_STRICT
    evidence_first_instruction: str = grounded.GENERATE_EVIDENCE_FIRST
    # the retry after a decline that followed a gate "yes" ("" = the strict instruction above)
    decline_retry_instruction: str = grounded.GENERATE_AFTER_DECLINE
    verify_instruction: str = grounded.VERIFY_ANSWER
    extractive_instruction: str = answer_variants.EXTRACTIVE
    fewshot_instruction: str = answer_variants.FEWSHOT
    fewshot_rules_instruction: str = answer_variants.FEWSHOT_BASE
    fewshot_example_template: str = answer_variants.EXAMPLE
    citation_instruction: str = answer_variants.CITATION
    # small model: rewriting and relation judgements share the system text
    rewrite_system_prompt: str = rewrite.SYSTEM
    global_rewrite_instruction: str = rewrite.GLOBAL_REWRITE
    local_rewrite_instruction: str = rewrite.LOCAL_REWRITE
    related_to_question_instruction: str = rewrite.RELATED_TO_QUESTION
    related_to_answer_instruction: str = rewrite.RELATED_TO_ANSWER
    # clarify
    clarify_system_prompt: str = clarify_prompts.SYSTEM
    clarify_instruction: str = clarify_prompts.UNCLEAR
    clarify_question_instruction: str = clarify_prompts.ASK
    no_passages_text: str = clarify_prompts.NO_PASSAGES

    # answer ensemble (docs/ensemble.md): two or more candidates fan out after the gate and a judge picks
    # one; empty (the default) or one candidate keeps the single generate node. A preset name or a
    # JSON file path is accepted too and loaded here.
    candidates: tuple[Candidate, ...] = ()  # a preset name or a JSON file path is accepted too
    # "answer": the fitted answer judge of mtrag_graph/judging (passage support, consensus, declining;
    # no model call); "llm": judge_model's verdicts combined with judge_weights
    judge_method: str = "answer"
    answer_judge: Any = None  # the answer judge: a model file path, an AnswerJudge, or None (the shipped one)
    judge_model: ModelSpec = field(default_factory=settings.large_model)
    judge_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_JUDGE_WEIGHTS))
    judge_seed: int = 0  # seeds the per-task shuffle of the candidates shown to the judge
    judge_max_tokens: int = 320
    candidate_judge_instruction: str = candidate_judge.JUDGE
    candidate_judge_answer_template: str = candidate_judge.ANSWER
    candidate_timeout_s: float | None = None  # a candidate slower than this is dropped (None: no limit)
    citation_markers: str = "strip"  # citation variant: "strip" or "keep" the [Passage N] markers
    exemplars_file: str | None = None  # few-shot exemplars (None: the file shipped in the package)

    def __post_init__(self) -> None:
        if isinstance(self.candidates, str):
            self.candidates = load_candidates(self.candidates)
        else:
            self.candidates = tuple(Candidate.coerce(c) for c in self.candidates)
        if self.citation_markers not in ("strip", "keep"):
            raise ValueError(f"citation_markers must be 'strip' or 'keep', not '{self.citation_markers}'")
        if self.grounding not in ("facts", "off"):
            raise ValueError(f"grounding must be 'facts' or 'off', not '{self.grounding}'")
        if self.verify_retried_answers not in ("off", "retrieved", "always"):
            raise ValueError(
                f"verify_retried_answers must be 'off', 'retrieved' or 'always', not '{self.verify_retried_answers}'"
            )
        if self.answer_mode not in ("direct", "evidence_first"):
            raise ValueError(f"answer_mode must be 'direct' or 'evidence_first', not '{self.answer_mode}'")
        if self.judge_method not in ("answer", "llm"):
            raise ValueError(f"judge_method must be 'answer' or 'llm', not '{self.judge_method}'")
        unknown = set(self.judge_weights) - set(DEFAULT_JUDGE_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown judge weights {sorted(unknown)}: use {sorted(DEFAULT_JUDGE_WEIGHTS)}")
        self.judge_weights = {**DEFAULT_JUDGE_WEIGHTS, **self.judge_weights}

    @classmethod
    def from_preset(cls, name_or_path: str | None = None, **overrides: Any) -> Context:
        """A Context with a preset's settings (default ``ncl``), then ``overrides`` (None values ignored)."""
        settings = dict(load_preset(name_or_path or DEFAULT_PRESET)["context"])
        settings.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_overrides(**settings)

    @classmethod
    def from_overrides(cls, **overrides: Any) -> Context:
        """A Context from keyword overrides, ignoring ``None`` values (CLI flags left unset)."""
        names = {f.name for f in fields(cls)}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"unknown Context fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in overrides.items() if v is not None})
