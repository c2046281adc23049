"""Stream an answer token by token, then show which passage backs which sentence.

python examples/stream_answer.py            # the bundled local models
python examples/stream_answer.py --fake     # scripted models: no model file needed
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mtrag_graph import Context, build_graph
from mtrag_graph.citations import answer_citations, cited_answer
from mtrag_graph.testing import fake_context

task = json.loads((Path(__file__).parent / "conversations.jsonl").read_text().splitlines()[0])
if "--fake" in sys.argv:  # a scripted "model" that answers with the first sentence of the first passage
    context = fake_context(generate=[task["contexts"][0]["text"].split(". ")[0] + "."])
else:
    context = Context()

state: dict = {}
for mode, chunk in build_graph().stream({"task": task}, context=context, stream_mode=["messages", "values"]):
    if mode == "values":
        state = chunk  # the whole state after each step; the last one is the final state
        continue
    token, metadata = chunk
    # only the answer (generate) streams; filter by node all the same
    if metadata["langgraph_node"] == "generate":
        print(token.content, end="", flush=True)
print()

# the draft streamed; check_answer may have cleaned it, or the run abstained: the final answer is here
text, numbered = cited_answer(answer_citations(state))
print("answer:", text or state["answer"])
for number, index in enumerate(numbered, start=1):
    passage = state["kept_passages"][index]
    print(f"  [{number}] {passage.get('title') or passage['document_id']}")
