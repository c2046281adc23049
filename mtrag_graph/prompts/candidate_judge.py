"""The candidate judge's instruction tail (after the shared documents-and-conversation prefix)."""

JUDGE = (
    "Question: {question}\n\n"
    "Several candidate answers to this question follow, labelled {labels}. They are shown in a random "
    "order; the order and the labels say nothing about quality.\n\n{answers}\n\n"
    "Judge each candidate against the documents above:\n"
    "- claims: how many separate factual claims the candidate makes;\n"
    "- supported: how many of those claims the documents state or directly imply;\n"
    "- completeness: 0 to 5, how fully and directly it answers what the user actually asked "
    "(5 = everything asked, nothing beside the point);\n"
    "- declines: true if it refuses or says the information is not available.\n"
    "Length is not merit: a longer answer is not better, and padding, repetition or claims beside the "
    "question must lower completeness.\n"
    'Reply with only JSON: {{"verdicts": [{{"label": "A", "claims": 2, "supported": 2, "completeness": 4, '
    '"declines": false}}, ...]}} with one verdict per candidate.'
)

ANSWER = "Candidate {label}:\n{text}"
