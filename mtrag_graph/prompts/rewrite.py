"""Prompts of the small model: question rewriting and relation classification.

All share the system text; the variable parts come last.
"""

SYSTEM = (
    "You help a question-answering assistant understand a conversation between a user and an agent. "
    "Follow the task instruction exactly and never answer the user's question yourself."
)

# The global rewrite's rules end its system text (the same on every follow-up, so llama.cpp keeps them
# computed: models/llama.PrefixStates); the conversation and the question follow.
GLOBAL_REWRITE_RULES = (
    "Task: rewrite the last user question so that it can be understood without the conversation: replace "
    "pronouns and vague references with what they refer to. Do not answer it and do not add facts. "
    "Reply with only the rewritten question."
)
GLOBAL_REWRITE = "Conversation:\n{conversation}\n\nLast user question: {question}\n\nRewritten question:"

# The relation judgements' rules end their system text (the same on every turn, so llama.cpp keeps
# them computed: models/llama.PrefixStates); only the two texts and a short question follow.
RELATED_TO_QUESTION_RULES = (
    "Task: tell whether a new question is a follow-up on the same subject as an earlier question. "
    "Reply with only yes or no."
)
RELATED_TO_QUESTION = "Earlier question: {previous_question}\nNew question: {question}\n\nSame subject?"

RELATED_TO_ANSWER_RULES = (
    "Task: tell whether a question asks about something mentioned in a text. Reply with only yes or no."
)
RELATED_TO_ANSWER = "Text: {previous_answer}\nQuestion: {question}\n\nAsks about something in the text?"

LOCAL_REWRITE = (
    "Conversation:\n{conversation}\n\n"
    "Last user question: {question}\n\n"
    'Reply with a JSON object with three fields: "summary" (one sentence summarising the conversation), '
    '"intent" (what the user wants to know now), "standalone_question" (the last question rewritten '
    "so it can be understood without the conversation; do not answer it and do not add facts)."
)

NO_ANSWER = "(no answer)"  # the previous turn had no agent answer
