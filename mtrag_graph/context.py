"""Runtime configuration: every tunable of the graph, with defaults and environment fallbacks."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any

from pydantic import WithJsonSchema

from mtrag_graph import settings
from mtrag_graph.candidates import Candidate, load_candidates
from mtrag_graph.judging.grounding import DEFAULT_MIN_SUPPORT
from mtrag_graph.models.calls import PARSE_RETRIES
from mtrag_graph.models.factory import ModelSpec
from mtrag_graph.presets import DEFAULT_PRESET, load_preset
from mtrag_graph.prompts import answer_variants, candidate_judge, grounded, rewrite
from mtrag_graph.prompts import clarify as clarify_prompts  # the module; `clarify` is also a field
from mtrag_graph.stages import setting

# In the context schema (LangGraph Studio, the server's assistant schema) a model is its spec string; in
# Python a chat model instance is accepted too.
ModelSetting = Annotated[
    ModelSpec,
    WithJsonSchema({"type": "string", "description": "model spec, e.g. qwen2.5-coder-1.5b, vllm:MODEL@URL"}),
]
CandidatesSetting = Annotated[
    tuple[Candidate, ...],
    WithJsonSchema({"anyOf": [
        {"type": "string", "description": "a candidate preset name or a JSON file path"},
        {"type": "array", "items": {"type": "object", "properties": {
            "model": {"type": "string"}, "variant": {"type": "string"}, "name": {"type": "string"}}}},
    ]}),
]  # fmt: skip

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
    """Models, thresholds and prompt text for one run of the graph: ``Context()`` is the default pipeline.

    The default is the pipeline every published figure describes (the ``ncl`` preset, which names no
    difference from it); presets are named differences (``Context.from_preset``). Each setting belongs to
    the stage that reads it (``mtrag_graph.stages``) and carries a description that LangGraph Studio and
    ``--help`` show. Model settings take a spec string (``mtrag_graph.models.factory``) or a chat model
    instance. Defaults from the environment (``MTRAG_SMALL_MODEL``, ``MTRAG_LARGE_MODEL``,
    ``MTRAG_EMBEDDER``, ``MTRAG_RERANKER``, ``MTRAG_INDEX_DIR``, ``MTRAG_N_CTX``) are read in
    ``mtrag_graph.settings``, the one place that reads ``MTRAG_*`` variables.
    """

    # common: what several stages share
    idk_answer: str = setting(
        "I don't know the answer based on the provided documents.",
        stage="common",
        flag=True,
        description="The answer given when the run abstains (no evidence, gate 'no', failed retry, ...).",
    )
    parse_retries: int = setting(
        PARSE_RETRIES,
        stage="common",
        description="Re-asks after a yes/no or JSON reply that does not parse, before the recorded safe default.",
    )
    passage_max_chars: int = setting(
        2000, stage="common", description="Each passage is cut to this many characters in prompts."
    )
    context_window_tokens: int = setting(
        factory=settings.n_ctx,
        stage="common",
        description="Prompts are fitted to this many tokens before each call (default: MTRAG_N_CTX, the "
        "window the local models are built with).",
    )
    grounded_system_prompt: str = setting(
        grounded.SYSTEM,
        stage="common",
        description="System text of the large model's gate, answer and judge prompts (they share it).",
    )
    grounded_context_template: str = setting(
        grounded.CONTEXT,
        stage="common",
        description="The documents-and-conversation prefix those prompts share ({documents}, {conversation}).",
    )
    no_conversation_text: str = setting(
        grounded.NO_CONVERSATION,
        stage="common",
        description="What the prompts say in place of the conversation on a first turn.",
    )
    embedder: str = setting(
        factory=settings.embedder,
        stage="common",
        flag=True,
        description="Embedder spec (minilm, st:/path, flag:/path, bge-m3:/path): dense retrieval, the "
        "embedding reranker and the gate's similarity features.",
    )

    # clarify: ask back when the turn is underspecified
    clarify: bool = setting(
        True,
        stage="clarify",
        description="Ask a clarifying question when the turn is underspecified (an unresolved reference "
        "and passages about several things). Runs after load_task with given passages, after rerank with "
        "retrieved ones.",
    )
    clarify_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="clarify",
        model=True,
        flag=True,
        description="Model that writes a clarifying question the passages' alternatives cannot (and judges "
        "'unclear' when clarify_threshold is set).",
    )
    clarify_interrupt: bool | None = setting(
        None,
        stage="clarify",
        description="Ask the user with interrupt() and resume with the reply; off: the clarifying question "
        "is the answer; None: ask when the run answers a conversation (messages), answer with it for a task.",
    )
    clarify_max_tokens: int = setting(
        60, stage="clarify", description="Token limit of a model-written clarifying question."
    )
    clarify_fallback_question: str = setting(
        "Could you say more precisely what you are asking about?",
        stage="clarify",
        description="The question asked when no better one can be written.",
    )
    clarify_alternatives_question: str = setting(
        "Which {kind} do you mean: {options}?",
        stage="clarify",
        description="The question when the passages hold alternatives: {kind} (the reference's noun, or "
        "'one'), {options}.",
    )
    clarify_threshold: float | None = setting(
        None,
        stage="clarify",
        description="With a value, also ask the model and call a turn underspecified when its 'unclear' "
        "probability reaches it; None: the model-free signals alone (docs/clarify.md).",
    )
    clarify_min_things: int = setting(
        2,
        stage="clarify",
        description="How many different things (titles; for 'the <noun>', names of that kind) the passages "
        "must speak of before an unresolved reference is asked about.",
    )
    clarify_signals: tuple[str, ...] = setting(
        ("rule", "pronoun", "passages", "person", "definite"),
        stage="clarify",
        description="The model-free signals that may call a turn underspecified "
        "(mtrag_graph.nodes.clarify.SIGNALS); drop one to switch it off.",
    )
    clarify_system_prompt: str = setting(
        clarify_prompts.SYSTEM, stage="clarify", description="System text of the clarify prompts."
    )
    clarify_instruction: str = setting(
        clarify_prompts.UNCLEAR,
        stage="clarify",
        description="Asks the model whether the turn is unclear (yes/no).",
    )
    clarify_question_instruction: str = setting(
        clarify_prompts.ASK, stage="clarify", description="Asks the model for one clarifying question."
    )
    no_passages_text: str = setting(
        clarify_prompts.NO_PASSAGES,
        stage="clarify",
        description="What the clarify prompts say when there are no passages.",
    )

    # rewrite: standalone rewrites of the last question
    rewrite_model: ModelSetting = setting(
        factory=settings.small_model,
        stage="rewrite",
        model=True,
        flag=True,
        description="Model for the global and local rewrites (default: MTRAG_SMALL_MODEL).",
    )
    rewrite_question: bool = setting(
        True,
        stage="rewrite",
        description="Rewrite the last question into a standalone one before retrieval and answering.",
    )
    pronouns: tuple[str, ...] = setting(
        DEFAULT_PRONOUNS,
        stage="rewrite",
        description="Words whose presence means the question leans on the previous exchange (the global "
        "rewrite then sees only that exchange; clarify looks for what they refer to).",
    )
    rewrite_max_tokens: int = setting(64, stage="rewrite", description="Token limit of the global rewrite.")
    local_rewrite_max_tokens: int = setting(
        160, stage="rewrite", description="Token limit of the local rewrite (JSON)."
    )
    rewrite_system_prompt: str = setting(
        rewrite.SYSTEM,
        stage="rewrite",
        description="System text of the small model's rewrite and relation prompts.",
    )
    global_rewrite_instruction: str = setting(
        rewrite.GLOBAL_REWRITE, stage="rewrite", description="Asks for a standalone rewrite of the question."
    )
    local_rewrite_instruction: str = setting(
        rewrite.LOCAL_REWRITE,
        stage="rewrite",
        description="Asks for a summary, intent and standalone question from the selected history (JSON).",
    )

    # relation: how the question relates to the previous exchange
    classify_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="relation",
        model=True,
        flag=True,
        description="Model for the two yes/no relation judgements (related to Q(t-1)? to A(t-1)?).",
    )
    classify_history: bool = setting(
        True,
        stage="relation",
        description="Classify the relation to pick the history by class; off: keep the last "
        "history_pairs_without_classifier exchanges.",
    )
    related_to_question_instruction: str = setting(
        rewrite.RELATED_TO_QUESTION,
        stage="relation",
        description="Asks whether the question relates to Q(t-1).",
    )
    related_to_answer_instruction: str = setting(
        rewrite.RELATED_TO_ANSWER,
        stage="relation",
        description="Asks whether the question relates to A(t-1).",
    )

    # history: the history the answer may lean on
    history_walk_cap: int = setting(
        3,
        stage="history",
        description="Class 1: at most this many earlier exchanges while they still classify as continuations.",
    )
    history_pairs_without_classifier: int = setting(
        3, stage="history", description="Exchanges kept when classify_history is off."
    )

    # retrieval: full RAG
    index_dir: str | None = setting(
        factory=settings.index_dir,
        stage="retrieval",
        flag="--index",
        description="Index folder for full-RAG tasks (no contexts, or retrieve: true); default MTRAG_INDEX_DIR.",
    )
    retrieval_top_k: int = setting(
        20, stage="retrieval", description="Passages each query retrieves before reranking."
    )
    bm25_weight: float = setting(
        1.0, stage="retrieval", description="Weight of the BM25 ranking in the fusion."
    )
    dense_weight: float = setting(
        1.0, stage="retrieval", description="Weight of the dense ranking in the fusion."
    )
    rrf_k: int = setting(60, stage="retrieval", description="The k of reciprocal-rank fusion.")

    # rerank: keep the top k passages
    reranker: str = setting(
        factory=settings.reranker,
        stage="rerank",
        flag=True,
        description="Reranker spec: embedding (MiniLM cosine), cross-encoder:/path, or lexical (no model).",
    )
    top_k: int = setting(5, stage="rerank", flag=True, description="Passages kept after reranking.")

    # gate: do the kept passages hold the answer?
    gate_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="gate",
        model=True,
        flag=True,
        description="Model asked when the gate uses its yes-probability or reply (gate_classifier None).",
    )
    use_gate: bool = setting(True, stage="gate", description="Gate on answerability before generating.")
    gate_classifier: str | None = setting(
        "default",
        stage="gate",
        description="A classifier file ('default': the one shipped in mtrag_graph/data, no model call); "
        "None: gate_threshold on the model's yes-probability, or its yes/no reply.",
    )
    gate_threshold: float | None = setting(
        None,
        stage="gate",
        description="With gate_classifier None: 'yes' when the model's yes-probability reaches it.",
    )
    gate_fallback: str = setting(
        "yes",
        stage="gate",
        description="The verdict used when the gate's reply never parses (recorded in fallbacks).",
    )
    gate_all_features: bool = setting(
        False,
        stage="gate",
        description="Compute every gate feature, asking the model even when the rule needs fewer (the "
        "decision benchmark records them to fit a classifier).",
    )
    gate_instruction: str = setting(
        grounded.GATE, stage="gate", description="Asks whether the documents hold the answer (yes/no)."
    )

    # generate: the answer
    generate_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="generate",
        model=True,
        flag=True,
        description="Model that writes the answer (default: MTRAG_LARGE_MODEL).",
    )
    answer_max_tokens: int = setting(220, stage="generate", description="Token limit of an answer.")
    answer_mode: str = setting(
        "direct",
        stage="generate",
        description="'direct': answer at once; 'evidence_first': quote the answering passage sentences, "
        "then answer from them (a quote the passages do not hold makes it a decline).",
    )
    generate_instruction: str = setting(
        grounded.GENERATE, stage="generate", description="Asks for the answer."
    )
    strict_generate_instruction: str = setting(
        grounded.GENERATE_STRICT,
        stage="generate",
        description="Asks again after a draft with problems ({problems}).",
    )
    evidence_first_instruction: str = setting(
        grounded.GENERATE_EVIDENCE_FIRST,
        stage="generate",
        description="The answer_mode 'evidence_first' instruction.",
    )
    decline_retry_instruction: str = setting(
        grounded.GENERATE_AFTER_DECLINE,
        stage="generate",
        description="Asks again after a decline that followed a gate 'yes' ('': the strict instruction).",
    )
    extractive_instruction: str = setting(
        answer_variants.EXTRACTIVE,
        stage="generate",
        description="The 'extractive' prompt variant of a candidate.",
    )
    fewshot_instruction: str = setting(
        answer_variants.FEWSHOT, stage="generate", description="The 'fewshot' prompt variant of a candidate."
    )
    fewshot_rules_instruction: str = setting(
        answer_variants.FEWSHOT_BASE, stage="generate", description="The rules before the few-shot examples."
    )
    fewshot_example_template: str = setting(
        answer_variants.EXAMPLE, stage="generate", description="How one few-shot example is shown."
    )
    citation_instruction: str = setting(
        answer_variants.CITATION,
        stage="generate",
        description="The 'citation' prompt variant of a candidate.",
    )
    citation_markers: str = setting(
        "strip",
        stage="generate",
        description="The citation variant's [Passage N] markers: 'strip' or 'keep'.",
    )
    exemplars_file: str | None = setting(
        None, stage="generate", description="Few-shot exemplars (None: the file shipped in the package)."
    )

    # check: reject bad answers
    check_answers: bool = setting(
        True,
        stage="check",
        description="Reject bad answers (empty, too short, restates the question, cut off, ...) and retry.",
    )
    min_answer_words: int = setting(
        3, stage="check", description="An answer shorter than this (not yes/no) is a problem."
    )
    max_generate_retries: int = setting(
        1, stage="check", description="Drafts asked again after a rejected one."
    )
    retry_declines: bool = setting(
        True,
        stage="check",
        description="With given passages, a whole-answer decline after a gate 'yes' is retried once, "
        "asking for the part the documents support.",
    )
    retry_declines_retrieved: bool = setting(
        True,
        stage="check",
        description="The same with retrieved passages (full RAG); decided apart (benchmarks/results/trust.md).",
    )

    # ground: drop what the passages do not back
    grounding: str = setting(
        "facts",
        stage="ground",
        description="'facts': drop answer sentences whose numbers or names the passages and conversation do "
        "not hold, or whose content-word support is below grounding_min_support; 'off': no check.",
    )
    grounding_min_support: float = setting(
        DEFAULT_MIN_SUPPORT, stage="ground", description="Content-word support a sentence needs (0-1)."
    )
    verify_retried_answers: str = setting(
        "off",
        stage="ground",
        description="Ask the model to confirm an answer written only by the decline retry: 'off', "
        "'retrieved' (retrieved passages only) or 'always'.",
    )
    verify_threshold: float = setting(
        0.5, stage="ground", description="The yes-probability a verified answer needs."
    )
    verify_instruction: str = setting(
        grounded.VERIFY_ANSWER,
        stage="ground",
        description="Asks whether the documents state the answer (yes/no).",
    )

    # candidates: the answer ensemble (docs/ensemble.md)
    candidates: CandidatesSetting = setting(
        (),
        stage="candidates",
        flag=True,
        description="Answer candidates (model, prompt variant): two or more fan out after the gate and a "
        "judge picks one; a preset name (e.g. ensemble-local) or a JSON file path is accepted too.",
    )
    judge_method: str = setting(
        "answer",
        stage="candidates",
        description="'answer': the fitted answer judge (no model call); 'llm': judge_model's verdicts "
        "combined with judge_weights.",
    )
    answer_judge: Any = setting(
        None,
        stage="candidates",
        description="The answer judge: a model file path, an AnswerJudge, or None (the shipped one).",
    )
    judge_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="candidates",
        model=True,
        description="Model of the 'llm' candidate judge.",
    )
    judge_weights: dict[str, float] = setting(
        factory=lambda: dict(DEFAULT_JUDGE_WEIGHTS),
        stage="candidates",
        description="Weights of the llm judge's signals (faithfulness, completeness, support; declined is subtracted).",
    )
    judge_seed: int = setting(
        0, stage="candidates", description="Seeds the per-task shuffle of the candidates shown to the judge."
    )
    judge_max_tokens: int = setting(
        320, stage="candidates", description="Token limit of the llm judge's verdict."
    )
    candidate_judge_instruction: str = setting(
        candidate_judge.JUDGE, stage="candidates", description="Asks the llm judge for its verdicts."
    )
    candidate_judge_answer_template: str = setting(
        candidate_judge.ANSWER, stage="candidates", description="How one candidate is shown to the llm judge."
    )
    candidate_timeout_s: float | None = setting(
        None,
        stage="candidates",
        description="A candidate slower than this many seconds is dropped (None: no limit).",
    )

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
        """A Context with a preset's differences from the default (``ncl`` names none), then ``overrides`` (None values ignored)."""
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
