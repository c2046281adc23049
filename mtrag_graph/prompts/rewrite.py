"""Prompts of the small model: question rewriting and relation classification.

All share the system text; the variable parts come last.
"""

SYSTEM = (
    "You help a question-answering assistant understand a conversation between a user and an agent. "
    "Follow the task instruction exactly and never answer the user's question yourself."
)

# The rules come after the conversation and the question. Moved to the end of the system text (where
# llama.cpp keeps them computed: about 40 tokens less per rewrite), retrieval with the rewrites was level
# (research/rewrite_retrieval.py) but the 0.5B model gave more statements back unchanged and MTRAG dev
# Task C fell (benchmarks/results/throughput.md, "Tried for the token target": the rewrite's rules).
GLOBAL_REWRITE_RULES = (
    "Rewrite the last user question so that it can be understood without the conversation: replace "
    "pronouns and vague references with what they refer to. Do not answer it and do not add facts. "
    "Reply with only the rewritten question."
)
GLOBAL_REWRITE = "Conversation:\n{conversation}\n\nLast user question: {question}\n\n" + GLOBAL_REWRITE_RULES

# The relation judgements: the texts read, and the question asked about them. By default the question
# ends the system text (Context.relation_rules_in_system), where llama.cpp keeps it computed between
# calls, and the prompt holds the texts alone; otherwise it follows the texts in the prompt.
RELATED_TO_QUESTION = "Earlier question: {previous_question}\nNew question: {question}"
RELATED_TO_QUESTION_RULE = (
    "Is the new question a follow-up on the same subject as the earlier question? Reply with only yes or no."
)
RELATED_TO_ANSWER = "Text: {previous_answer}\nQuestion: {question}"
RELATED_TO_ANSWER_RULE = "Does the question ask about something mentioned in the text? Reply with only yes or no."

LOCAL_REWRITE = (
    "Conversation:\n{conversation}\n\n"
    "Last user question: {question}\n\n"
    'Reply with a JSON object with three fields: "summary" (one sentence summarising the conversation), '
    '"intent" (what the user wants to know now), "standalone_question" (the last question rewritten '
    "so it can be understood without the conversation; do not answer it and do not add facts)."
)

NO_ANSWER = "(no answer)"  # the previous turn had no agent answer
