"""The evidence the answering prompts see: sentences of the kept passages that bear on the question."""

from __future__ import annotations

import numpy as np

from mtrag_graph.prompts.excerpts import (
    Options,
    Sentence,
    choose_evidence,
    estimate_tokens,
    evidence_spans,
    score_sentences,
    select_evidence,
)

BEES = {
    "title": "Honey bees",
    "text": (
        "Honey bees live in colonies. A colony has one queen. Foragers share where food is with a dance. "
        "It is called the waggle dance. The angle of the run gives the direction of the flowers. "
        "Drones do not forage. Beeswax is made by workers."
    ),
}
FILLER = {"title": "Weather", "text": " ".join(f"Cloud type {i} brings rain in spring." for i in range(40))}


def test_whole_passages_when_they_fit_the_budget():
    assert select_evidence("what is the waggle dance", [BEES], budget_tokens=400) == [BEES["text"]]


def test_the_sentence_that_answers_is_kept_and_the_rest_cut():
    excerpts = select_evidence("how do bees tell where the flowers are", [BEES, FILLER], budget_tokens=40)
    assert "direction of the flowers" in excerpts[0]
    assert "Beeswax" not in excerpts[0]
    assert sum(len(e) for e in excerpts) < len(BEES["text"]) + len(FILLER["text"])


def test_a_sentence_opening_with_a_reference_brings_the_one_before_it():
    excerpts = select_evidence("what is the waggle dance called", [BEES, FILLER], budget_tokens=30)
    assert "It is called the waggle dance." in excerpts[0]
    assert "Foragers share where food is with a dance. It is called" in excerpts[0]


def test_a_line_ending_with_a_colon_brings_the_lines_after_it():
    how_to = {
        "text": "Failsafe mode is off by default.\nTo turn it on, run:\nctl failsafe enable\nThen restart."
    }
    filler = {"text": " ".join(f"Mode {i} is described elsewhere." for i in range(60))}
    excerpts = select_evidence("how do I turn on failsafe mode", [how_to, filler], budget_tokens=20)
    assert "To turn it on, run:\nctl failsafe enable" in excerpts[0]


def test_gaps_are_marked_and_unchosen_passages_are_empty():
    excerpts = select_evidence("waggle dance direction flowers", [BEES, FILLER], budget_tokens=25)
    assert excerpts[0].startswith("...")
    assert excerpts[1] == ""


def test_the_embedder_scores_a_paraphrase_the_words_miss():
    passages = [{"text": "The hive is warm. Bees perform a round dance when food is near the hive. " * 1},
                {"text": "Bees sting once. " * 30}]  # fmt: skip

    def embed(texts):
        # a stand-in embedder: the question and the round-dance sentence point the same way
        return np.array([[1.0, 0.0] if ("close" in t or "round" in t) else [0.0, 1.0] for t in texts])

    scored = score_sentences("what do bees do when flowers are very close", passages, embed)
    best = max((s for sents in scored for s in sents), key=lambda s: s.score)
    assert "round dance" in best.text
    assert choose_evidence(scored, budget_tokens=20)[0] == [1]


def test_a_table_row_brings_the_table_header():
    table = {"text": "Benchmarks.\n| Compressor | Ratio | Compression | Decompression |\n|---|---|---|---|\n"
             "| zstd 1.5.1 -1 | 2.887 | 530 MB/s | 1700 MB/s |\n| lz4 1.9.3 | 2.101 | 740 MB/s | 4500 MB/s |"}  # fmt: skip
    filler = {"text": " ".join(f"Mode {i} is described elsewhere." for i in range(60))}
    excerpts = select_evidence(
        "what ratio does zstd 1.5.1 reach at level -1", [table, filler], budget_tokens=30
    )
    assert "| Compressor | Ratio |" in excerpts[0] and "| zstd 1.5.1 -1 | 2.887 |" in excerpts[0]


def test_lines_stay_lines_and_list_items_keep_their_bullets():
    # a table flattened onto one line could not be read by column: "the ratio of zstd at -1 is 530 MB/s"
    table = {"text": "| Compressor   | Ratio | Compression |\n|---|---|---|\n| zstd 1.5.1 -1 | 2.887 | 530 MB/s |\n"
             "| brotli 1.0.9 -0 | 2.702 | 395 MB/s |\n| lz4 1.9.3 | 2.101 | 740 MB/s |\n\nSteps:\n- install it\n- run it"}  # fmt: skip
    filler = {"text": " ".join(f"Mode {i} is described elsewhere." for i in range(60))}
    excerpt = select_evidence("what ratio does zstd 1.5.1 reach at -1", [table, filler], budget_tokens=30)[0]
    assert excerpt.splitlines()[:4] == ["| Compressor | Ratio | Compression |", "|---|---|---|",
                                        "| zstd 1.5.1 -1 | 2.887 | 530 MB/s |", "..."]  # fmt: skip
    listed = select_evidence("what are the steps to install it", [table, filler], budget_tokens=12)[0]
    assert "Steps:\n- install it" in listed


def test_a_list_item_title_brings_the_command_under_it():
    how_to = {"text": "Dictionary compression How To:\n1. Create the dictionary\n"
              "zstd --train FullPathToTrainingSet/* -o dictionaryName\n2. Compress with dictionary\n"
              "zstd -D dictionaryName FILE"}  # fmt: skip
    filler = {"text": " ".join(f"Build {i} is described elsewhere." for i in range(60))}
    excerpts = select_evidence("How do I create a dictionary with zstd?", [how_to, filler], budget_tokens=25)
    assert "1. Create the dictionary\nzstd --train FullPathToTrainingSet/* -o dictionaryName" in excerpts[0]


def test_a_question_in_a_passage_brings_its_answer():
    # an FAQ's question is the sentence closest to the user's; the answer is the one after it (the
    # real-documents fresh split's Asymptote FAQ lost "C's Answer to MetaPost" this way)
    faq = {"text": "## Question 1.5. In the source code, what does the name camp refer to?\n\n"
           "That was our original name, which stood for \"C's Answer to MetaPost\". We later chose "
           "another name.\n## Question 1.6. Is it a compiler?\n\nIt compiles to its own code."}  # fmt: skip
    filler = {"text": " ".join(f"Name {i} is described elsewhere." for i in range(60))}
    question = "What does the name camp in the source code refer to?"
    excerpt = select_evidence(question, [faq, filler], 30, options=Options(after_questions=True))[0]
    assert "what does the name camp refer to?" in excerpt
    assert "C's Answer to MetaPost" in excerpt
    assert "C's Answer to MetaPost" not in select_evidence(question, [faq, filler], 30)[0]  # off by default


def test_a_sentence_two_passages_share_is_shown_once_and_paid_once():
    # overlapping windows of one page: the question and its first answer sentence are in both passages;
    # shown once, they leave room for the sentence that decides (MTRAG-UN dev, "How many copies of my
    # backup can I create in other regions?": "Only one copy ... can exist in each region")
    faq = "How many copies of my backup can I create in other regions?\nYou can copy a snapshot to another region."
    first = {"text": "Backups run hourly. " + faq}
    second = {"text": faq + " Only one copy of the snapshot can exist in each region."}
    question, passages = (
        "How many copies of my backup can I create in other regions?",
        [first, second, FILLER],
    )
    shown = "\n".join(select_evidence(question, passages, 40, options=Options(shown_once=True)))
    assert shown.count("How many copies of my backup") == 1
    assert shown.count("You can copy a snapshot to another region.") == 1
    assert "Only one copy of the snapshot can exist in each region." in shown
    by_default = "\n".join(select_evidence(question, passages, 40))
    assert by_default.count("How many copies of my backup") == 2


def test_a_sentence_a_pdf_line_break_wraps_is_chosen_whole():
    page = {"text": "1.1.2 Specifying a linear system in 4ti2\nThere is no particular difference in 4ti2 between "
            "a linear system and an integer\nlinear system. The matrix A goes in the file\nproject.mat and the "
            "right-hand side in\nproject.rhs.\n- one item\n- two items"}  # fmt: skip
    assert [page["text"][s:e] for s, e in evidence_spans(page["text"])] == [
        "1.1.2 Specifying a linear system in 4ti2",
        "There is no particular difference in 4ti2 between a linear system and an integer\nlinear system.",
        "The matrix A goes in the file\nproject.mat and the right-hand side in\nproject.rhs.",
        "one item", "two items",
    ]  # fmt: skip
    filler = {"text": " ".join(f"Mode {i} is described elsewhere." for i in range(60))}
    excerpt = select_evidence("which file holds the matrix A", [page, filler], budget_tokens=25)[0]
    assert "The matrix A goes in the file\nproject.mat and the right-hand side in\nproject.rhs." in excerpt


def test_a_wrapped_sentence_whose_next_line_opens_with_a_quote_or_code_span_is_chosen_whole():
    # an FAQ's answer hard-wrapped before a quote or a code span: the two halves are one sentence (the half
    # that holds the fact, cut off, scored low and was left out of the excerpt)
    faq = ("That was our original tentative name for this project, which stood for\n \"C's Answer to MetaPost\" "
           "(the language that inspired\nAsymptote).\n\nThe backslash is an escape character here, so\n`\\\"` is "
           "interpreted as a verbatim quotation mark.")  # fmt: skip
    assert [faq[s:e] for s, e in evidence_spans(faq)] == [
        "That was our original tentative name for this project, which stood for\n \"C's Answer to MetaPost\" "
        "(the language that inspired",
        "Asymptote).",
        "The backslash is an escape character here, so\n`\\\"` is interpreted as a verbatim quotation mark.",
    ]  # fmt: skip
    # a title, or a line of code or data, before a quote stays apart
    for text in ('Sea Level Rise is Accelerating\n\u201cThis is almost certainly a conservative estimate.\u201d',
                 '"ok": true,\n"id": "2",'):  # fmt: skip
        assert len(evidence_spans(text)) == 2


def test_the_neighbour_weight_brings_the_value_beside_the_sentence_that_names_the_option():
    # the sentence naming what is asked scores best, the value sits in the next one and scores low; with
    # Options.neighbour_weight it is ranked above another passage's loosely related sentence
    manual = ["Snapshots are written in the background.", "Set the snapshot interval with --interval.",
              "Default: 60 seconds between two snapshots."]  # fmt: skip
    other = "Hosts copy them."
    scored = [
        [
            Sentence(0, k, text, score)
            for k, (text, score) in enumerate(zip(manual, (0.1, 0.9, 0.3), strict=True))
        ],
        [Sentence(1, 0, other, 0.5)],
    ]
    budget = estimate_tokens(manual[1]) + estimate_tokens(manual[2]) + 1
    assert choose_evidence(scored, budget) == [[1], [0]]
    assert choose_evidence(scored, budget, Options(neighbour_weight=0.3)) == [[1, 2], []]


def test_the_budget_counts_digits_as_the_tokens_they_cost():
    # Qwen's tokenizer gives each digit a token: a row of numbers costs about one token a character,
    # prose about one per four letters
    assert estimate_tokens("1234567890") == 10
    assert 3 < estimate_tokens("Bees dance to show where flowers are") < 10
    assert estimate_tokens("| 2.887 | 530 MB/s |") > len("| 2.887 | 530 MB/s |") / 4 * 2
