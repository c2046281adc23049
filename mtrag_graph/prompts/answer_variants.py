"""Prompt variants of the answer candidates.

Every variant is an instruction *tail* after the shared prefix (system text, documents, conversation;
see ``mtrag_graph/prompts/build.py``), so all candidates on one llama.cpp model, the gate and the judge reuse
the cached prefix and only the tail is evaluated again. The "extractive system prompt" of the design
therefore lives at the end of the prompt, where the small models also follow it more closely.
"""

EXTRACTIVE = (
    "Question: {question}\n\n"
    "Answering rules:\n"
    "- Use only the documents above, even for facts you think are common knowledge.\n"
    "- Reuse the documents' own phrases and technical terms instead of paraphrasing them.\n"
    "- When a document speaks in the first person (I, we, my), state its content as neutral facts.\n"
    '- Answer directly: no filler, and never write "according to the text" or mention the documents.\n'
    '- Only if the question can be answered with yes or no, begin with "Yes" or "No", then give the '
    "facts behind it in a full sentence; never reply with a bare Yes or No.\n"
    "- Keep lists, steps, numbers and technical details that the documents give for this question.\n"
    "If the documents do not contain the answer, reply exactly: {idk}\n\n"
    "Answer:"
)

FEWSHOT_BASE = (
    "Answer the user's last question from the documents only, in a few complete sentences, the way the "
    "examples do. If the documents do not hold the answer, reply exactly: {idk}"
)

# {examples} are the rendered exemplars; the question comes last so the examples stay in the cache.
FEWSHOT = (
    "Examples of good answers. Each example has its own documents and conversation; they are not part "
    "of this conversation and are not sources for this answer.\n\n{examples}\n\n"
    "Now the real question, about the documents above.\n"
    "{base}\n\n"
    "Question: {question}\n"
    "Answer:"
)

EXAMPLE = (
    "### Example {n}\nDocuments: {documents}\nConversation: {conversation}\nQuestion: {question}\n"
    "Answer: {answer}"
)

CITATION = (
    "Question: {question}\n\n"
    "Answer in one to three complete sentences using only facts stated in the documents above. End every "
    "sentence with a marker naming the document it comes from, such as [Passage 2] for Document 2. Start "
    "with the answer itself. If the documents do not contain the answer, reply exactly: {idk}"
)

# what an exemplar without passages or without earlier turns shows instead
EXAMPLE_NO_DOCUMENTS = "(none)"
EXAMPLE_FIRST_TURN = "(first turn)"
