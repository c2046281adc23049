"""Prompt of the optional LLM listwise reranker: order numbered passages by usefulness for a question."""

SYSTEM = (
    "You rank passages for a question-answering assistant. Judge only how useful each passage is for "
    "answering the question; never answer the question yourself."
)

RANK = (
    "Question: {question}\n\n"
    "Passages:\n{passages}\n\n"
    "Order the passages from most to least useful for answering the question. Reply with only a JSON "
    'object: {{"ranking": [passage numbers, most useful first]}}, listing each number once.'
)
