"""Every clarifying question a run asked, beside the user's turn, and how many name something the user
or the conversation said. Reads a run's output; no model call.

    mtrag-graph answer $MTRAG_DATA/tasks/mtragun_tuning.jsonl -o runs/tuning-B.jsonl
    python -m research.clarify_questions runs/tuning-B.jsonl [more runs] [--tasks TASKS.jsonl] [-o FILE.md]

A run is either of: the predictions ``mtrag-graph answer ... -o FILE`` writes (each task with its
``route.clarification``: ``asked``, ``question``, ``evidence``); the per-item results of ``mtrag-graph
decisions`` (``results/clarify-*.jsonl``: ``clarify``, ``question_asked``). The last hold no
conversation: ``--tasks`` gives the task files to find it in, by task id (without, the turn is looked up
nowhere and shows as "?").

**Names something from the user's turn or the conversation**: a content word of what the question names
(the thing asked about, "Which **sitcom** do you mean?", its options, "... : **lunar eclipse** or **solar
eclipse**?", the quoted word of "What do you mean by '**it**'?"; for any other question its content words
beyond the asking words) is, stemmed, a word of the user's turn or of an earlier turn. The fallback ("Could
you say more precisely ...?") names nothing. Printed per run: a Markdown table (task, class, the user's
turn, the question, the words found) and the count.

**Options about something else** (``--embedder minilm``, the clarify node's check): each option of a
question of the alternatives form, with its cosine with the user's turn below
``judging.clarify_options.OPTION_MIN_SIMILARITY``; one embedding call per question (MiniLM loads once).
Without ``--embedder`` that column is left out.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.judging.clarify_options import OPTION_MIN_SIMILARITY, Embed, option_similarities
from mtrag_graph.prompts import clarify as prompts
from mtrag_graph.tasks import answerability_of, read_jsonl
from mtrag_graph.text import STOPWORDS, stem, words

# words of the questions' templates and of asking, which name nothing the user said
ASKING = frozenset(
    "which what who mean meant do you by could say more precisely asking about one refer referring clarify "
    "specify specific".split()
)
_QUOTED = re.compile(r"'([^']+)'")
_OPTION_SEPARATOR = re.compile(r",\s+(?:or\s+)?|\s+or\s+")


def asked_question(record: Mapping[str, Any]) -> str | None:
    """The clarifying question the record asked, or None: a prediction's ``route.clarification``, or a
    decision result's ``question_asked`` when it asked (``clarify``)."""
    clarification = (record.get("route") or {}).get("clarification")
    if isinstance(clarification, Mapping):
        asked, question = clarification.get("asked"), clarification.get("question")
    else:
        asked, question = record.get("clarify"), record.get("question_asked")
    return str(question) if asked and question else None


def conversation_of(
    record: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, str]]:
    """The turns up to the user's, from the record (a prediction holds its task's ``input``) or from the
    task files by task id; else the record's ``question`` alone, else []."""
    turns = record.get("input") or (tasks.get(str(record.get("task_id"))) or {}).get("input")
    if not turns:
        turns = [{"speaker": "user", "text": record["question"]}] if record.get("question") else []
    return [{"speaker": str(t.get("speaker")), "text": str(t.get("text") or "")} for t in turns]


def named_words(question: str) -> list[str]:
    """The content words of what the question names: the thing asked about and the options of the
    clarify node's templates, the quoted word of its pronoun question, else the question's content
    words beyond the asking words; none for the fallback question."""
    if question.strip() == prompts.FALLBACK:
        return []
    quoted = _QUOTED.findall(question)
    if quoted and question == prompts.WHICH_PRONOUN.format(pronoun=quoted[0]):
        return words(quoted[0])
    return [w for w in words(question) if w not in STOPWORDS and w not in ASKING]


def options_of(question: str) -> list[str]:
    """The options of a question of the alternatives form ("Which eclipse do you mean: lunar eclipse or
    solar eclipse?" -> ["lunar eclipse", "solar eclipse"]); [] for any other. A comma inside brackets
    ("Veterans Resources (Sierra County, CA)") separates nothing."""
    before, _, after = prompts.WHICH_OPTION.partition("{options}")
    head = re.escape(before).replace(re.escape("{kind}"), ".+?")
    found = re.fullmatch(rf"{head}(.+){re.escape(after)}", question.strip())
    if found is None:
        return []
    text, options, start = found.group(1), [], 0
    for match in _OPTION_SEPARATOR.finditer(text):
        if text.count("(", 0, match.start()) == text.count(")", 0, match.start()):
            options.append(text[start : match.start()])
            start = match.end()
    return [o.strip() for o in [*options, text[start:]] if o.strip()]


def found_in(named: Iterable[str], turns: Sequence[Mapping[str, str]]) -> list[str]:
    """The named words that the user's turn or an earlier turn says (compared by stem), each once."""
    said = {stem(w) for turn in turns for w in words(turn["text"])}
    return list(dict.fromkeys(w for w in named if stem(w) in said))


def rows_of(
    records: Iterable[Mapping[str, Any]],
    tasks: Mapping[str, Mapping[str, Any]],
    embed: Embed | None = None,
) -> list[dict[str, Any]]:
    """One row per question asked: task id, class, the user's turn, the question, the words of it found
    in the user's turn or the conversation; with ``embed``, the options far from the user's turn
    (``far``: option and cosine)."""
    rows = []
    for record in records:
        question = asked_question(record)
        if question is None:
            continue
        turns = conversation_of(record, tasks)
        task = tasks.get(str(record.get("task_id"))) or record
        user = turns[-1]["text"] if turns else "?"
        row: dict[str, Any] = {
            "task_id": str(record.get("task_id") or record.get("item_id") or "?"),
            "class": answerability_of(dict(task)) or str(record.get("label") or "?"),
            "turn": user,
            "question": question,
            "found": found_in(named_words(question), turns),
        }
        if embed is not None:
            options = options_of(question)
            cosines = option_similarities(options, user, embed)
            row["far"] = [(o, c) for o, c in zip(options, cosines, strict=True) if c < OPTION_MIN_SIMILARITY]
        rows.append(row)
    return rows


def _cell(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The questions as a Markdown table, then the count of those naming something said (and, with the
    embedder's column, of those offering an option far from the user's turn)."""
    checked = any("far" in row for row in rows)
    head = "| task | class | the user's turn | the question asked | from the turn or the conversation |"
    lines = [
        head + (" options far from the turn |" if checked else ""),
        "|---|---|---|---|---|" + "---|" * checked,
    ]
    for row in rows:
        cells = [
            _cell(row["task_id"], 60),
            row["class"],
            _cell(row["turn"]),
            _cell(row["question"]),
            ", ".join(row["found"]) or "**nothing**",
        ]
        if checked:
            cells.append(", ".join(f"{_cell(o, 60)} ({c:.2f})" for o, c in row.get("far", [])) or "none")
        lines.append("| " + " | ".join(cells) + " |")
    naming = sum(bool(row["found"]) for row in rows)
    lines.append(
        f"\n{naming} of {len(rows)} questions name something from the user's turn or the conversation."
    )
    if checked:
        far = sum(bool(row.get("far")) for row in rows)
        lines.append(
            f"{far} of {len(rows)} offer an option whose cosine with the user's turn is below "
            f"{OPTION_MIN_SIMILARITY} (judging.clarify_options.OPTION_MIN_SIMILARITY)."
        )
    return "\n".join(lines)


def read_records(path: Path) -> list[dict[str, Any]]:
    """A run's JSON lines; a bad line raises, naming the file and line."""
    records = []
    for line, raw, error in read_jsonl(path):
        if error is not None or not isinstance(raw, dict):
            raise ValueError(f"{path}: line {line}: {error or 'not a JSON object'}")
        records.append(raw)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_questions", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("runs", nargs="+", type=Path, help="predictions or decision results (JSON lines)")
    parser.add_argument(
        "--tasks", nargs="*", type=Path, default=[], help="task files holding the conversations"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the Markdown here (default: stdout)")
    parser.add_argument("--embedder", help="check each option against the user's turn (e.g. minilm)")
    args = parser.parse_args(argv)
    missing = [str(p) for p in [*args.runs, *args.tasks] if not p.is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    tasks = {str(t.get("task_id")): t for path in args.tasks for t in read_records(path)}
    embed = None
    if args.embedder:
        from mtrag_graph.models import get_embedder

        embed = get_embedder(args.embedder).embed
    sections = []
    for run in args.runs:
        rows = rows_of(read_records(run), tasks, embed)
        sections.append(f"## {run}: {len(rows)} clarifying questions\n\n{table(rows)}")
    text = "\n\n".join(sections) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
