"""Judge prompts of ``mtrag-graph evaluate`` (plain format-string templates), beside the judges that use them.

Short on purpose: the default judge is a 1.5B model on a CPU. Every prompt that reads the passages
starts with the same system message and the same ``Documents:`` block, so llama.cpp reuses that
prefix across the RB_llm and RL_F calls of a task. Bump ``JUDGE_PROMPT_VERSION`` whenever a template
changes: it is part of the verdict cache key.
"""

JUDGE_PROMPT_VERSION = "judges-v3"

JUDGE_SYSTEM = "You are a strict, impartial judge of answers given by a document-grounded assistant."

DOCUMENTS_BLOCK = "Documents:\n{passages}\n\n"

NO_DOCUMENTS = "(no documents)"

RB_LLM = (
    DOCUMENTS_BLOCK + "Previous conversation:\n{history}\n\n"
    "User question: {question}\n\n"
    "Reference answer: {reference}\n\n"
    "Assistant response: {response}\n\n"
    "Rate the assistant response from 1 to 10 for faithfulness to the documents, appropriateness, and "
    "completeness compared with the reference answer (1 = wrong or unsupported, 5 = partly right, "
    "10 = as good as the reference). Reply only with: Rating: [[n]]"
)

RL_F_VERDICT = (
    DOCUMENTS_BLOCK + "Statement: {statement}\n\n"
    "Can the statement be directly inferred from the documents? Answer yes or no."
)

RL_F_STATEMENTS = (
    "Question: {question}\n"
    "Answer: {response}\n\n"
    "List the factual claims the answer makes, at most {max_statements}, one short self-contained "
    "sentence per line, numbered 1., 2., ... Use only what the answer says; add nothing."
)

# Named labels rather than yes/no/partial: the 1.5B judge answered "partial" to every response when
# asked "does it say it does not know? yes, no or partial", and classifies these labels correctly.
IDK = (
    "User question: {question}\n\n"
    "Assistant response: {response}\n\n"
    "Classify the response. Reply with one word:\n"
    "answers - it gives an answer to the question\n"
    "declines - it only says it does not know or cannot answer\n"
    "partial - it answers part of the question and says it cannot answer the rest"
)

CLARIFY = (
    "User question: {question}\n\n"
    "Assistant response: {response}\n\n"
    "Does the response ask the user a question to clarify what they meant, instead of answering? "
    "A response that answers, or says it cannot answer, is no. Answer yes or no."
)
