"""Where each ``Context`` setting is set to something other than its default, and whether the product
reads it: the table the pruning of ``Context`` (issue 73: at most 70 settings, none that only
``research/`` switches on) was chosen by. No model call; it reads the checkout.

    python -m research.settings_audit [--stage gate rerank ...] [--only nowhere tests research]

A setting is set by

- a CLI flag: declared with ``setting(..., flag=True)`` (``answer``, ``chat`` and ``bench`` offer it);
- a preset: a key of the ``context`` of ``mtrag_graph/presets/*.json`` (``preset ragu``), of a research
  preset ``research/data/*preset*.json`` (``research-preset best-last``), or a name in a candidate preset
  (``mtrag_graph/presets/candidates``, which hold candidates, not settings);
- a module of the package outside the stage declarations (``package``), by a keyword of a context call or
  an assignment, as below;
- a Python file of ``research/``, ``benchmarks/``, ``tests/``, ``examples/`` or ``scripts/`` that names it
  as a keyword of a call whose callee names a context or a replace (``Context(top_k=3)``,
  ``fake_context(top_k=3)``, ``dataclasses.replace(context, top_k=3)``), as a dict key or a string
  (``{"top_k": 3}``, ``overrides["top_k"]``), or assigns it (``context.top_k = 3``);
- a text file (Markdown, shell, the Makefile) that shows its flag (``--top-k``) or ``--set top_k=``.

``docs`` lists the pages of ``docs/`` and the README that name it (its flag, ``Context.top_k``, or the
name in backticks), ``reads`` the product modules (``mtrag_graph/``) that read it (``x.top_k``,
``getattr(x, "top_k")``). A dict key or a string that happens to equal a setting's name is counted too:
the table says where to look, a reader decides. ``class`` sums it up, first that holds: ``shipped`` (a
flag or a shipped preset), ``documented`` (the docs name it), ``package`` (a command of the package sets
it: ``Context(answer_judge=...)``, ``replace(context, ...)``), ``benchmarks``, ``research`` (a research
script or preset), ``tests`` (only tests) or ``nowhere``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.stages import stage_of

REPO = settings.REPO
PYTHON_TREES = ("research", "benchmarks", "tests", "examples", "scripts")
TEXT_SUFFIXES = (".md", ".sh", ".txt")
CALLEE = re.compile(r"context|replace|from_preset|from_overrides", re.IGNORECASE)
CLASSES = ("shipped", "documented", "package", "benchmarks", "research", "tests", "nowhere")


@dataclasses.dataclass
class Uses:
    """Where one setting is set, named, and read."""

    flag: str = ""
    presets: set[str] = dataclasses.field(default_factory=set)
    research_presets: set[str] = dataclasses.field(default_factory=set)
    files: dict[str, set[str]] = dataclasses.field(default_factory=lambda: defaultdict(set))  # tree: files
    docs: set[str] = dataclasses.field(default_factory=set)
    reads: set[str] = dataclasses.field(default_factory=set)

    def kind(self) -> str:
        if self.flag or self.presets:
            return "shipped"
        if self.docs:
            return "documented"
        if self.files.get("package"):
            return "package"
        if self.files.get("benchmarks"):
            return "benchmarks"
        if self.research_presets or self.files.get("research"):
            return "research"
        if self.files.get("tests"):
            return "tests"
        return "nowhere"

    def set_by(self) -> str:
        parts = [self.flag] if self.flag else []
        parts += [f"preset {name}" for name in sorted(self.presets)]
        parts += [f"research-preset {name}" for name in sorted(self.research_presets)]
        for tree in ("package", *PYTHON_TREES, "results", "other"):
            found = sorted(self.files.get(tree, ()))
            if found:
                shown = ", ".join(found) if len(found) <= 3 else f"{', '.join(found[:3])} +{len(found) - 3}"
                parts.append(f"{tree}: {shown}")
        return "; ".join(parts) or "-"


def flag_of(field: dataclasses.Field) -> str:
    flag = field.metadata.get("flag")
    if not flag:
        return ""
    return flag if isinstance(flag, str) else "--" + field.name.replace("_", "-")


def preset_keys(path: Path) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    context = data.get("context", data) if isinstance(data, dict) else {}
    return set(context) if isinstance(context, dict) else set()


def python_names(path: Path) -> tuple[set[str], set[str], set[str]]:
    """What a Python file names: keywords of context calls and assigned attributes (it sets those),
    strings and dict keys (it may set or read those), attributes it reads."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    sets: set[str] = set()
    strings: set[str] = set()
    reads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func
            name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if CALLEE.search(name):
                sets.update(k.arg for k in node.keywords if k.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
        elif isinstance(node, ast.Attribute):
            (sets if isinstance(node.ctx, ast.Store) else reads).add(node.attr)
    return sets, strings, reads


def python_files(tree: str) -> Iterator[Path]:
    yield from sorted(p for p in (REPO / tree).rglob("*.py") if ".venv" not in p.parts)


def text_files() -> Iterator[Path]:
    for path in sorted(REPO.rglob("*")):
        if path.is_file() and ".venv" not in path.parts and ".git" not in path.parts:
            if path.suffix in TEXT_SUFFIXES or path.name == "Makefile":
                yield path


def label(path: Path) -> str:
    return path.stem if path.suffix == ".py" else path.name


def audit(fields: Iterable[dataclasses.Field]) -> dict[str, Uses]:
    fields = list(fields)
    uses = {f.name: Uses(flag=flag_of(f)) for f in fields}
    names = set(uses)
    for path in sorted((REPO / "mtrag_graph" / "presets").glob("*.json")):
        for name in preset_keys(path) & names:
            uses[name].presets.add(path.stem)
    for path in sorted((REPO / "mtrag_graph" / "presets" / "candidates").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        for name in names:
            if f'"{name}"' in text:
                uses[name].presets.add(f"candidates/{path.stem}")
    for path in sorted((REPO / "research" / "data").glob("*preset*.json")):
        for name in preset_keys(path) & names:
            uses[name].research_presets.add(path.stem.removesuffix("-preset"))
    for tree in PYTHON_TREES:
        for path in python_files(tree):
            if path.resolve() == Path(__file__).resolve():
                continue
            sets, strings, _ = python_names(path)
            for name in (sets | strings) & names:
                uses[name].files[tree].add(label(path))
    for path in python_files("mtrag_graph"):
        module = str(path.relative_to(REPO / "mtrag_graph")).removesuffix(".py")
        sets, strings, reads = python_names(path)
        for name in (reads | strings) & names:
            uses[name].reads.add(module)
        if path.parent.name != "stages" and path.name != "context.py":  # declarations, not uses
            for name in sets & names:
                uses[name].files["package"].add(module)
    patterns = {f.name: re.compile(shown_pattern(f)) for f in fields}
    for path in text_files():
        relative = path.relative_to(REPO)
        text = path.read_text(encoding="utf-8", errors="replace")
        is_docs = relative.parts[0] == "docs" or relative.name == "README.md" and len(relative.parts) == 1
        for name, pattern in patterns.items():
            if not pattern.search(text):
                continue
            if is_docs:
                uses[name].docs.add(str(relative))
            elif relative.parts[:2] == ("benchmarks", "results"):
                uses[name].files["results"].add(relative.name)
            elif relative.parts[0] not in ("mtrag_graph",):
                uses[name].files["other"].add(str(relative))
    return uses


def shown_pattern(field: dataclasses.Field) -> str:
    """A text shows a setting with its flag, ``--set NAME=``, ``Context.NAME`` or the name in backticks."""
    shown = [rf"--set[ =]{field.name}=", rf"`{field.name}\b", rf"\bContext\.{field.name}\b"]
    flag = flag_of(field) or "--" + field.name.replace("_", "-")
    shown.append(re.escape(flag) + r"(?![\w-])")
    return "|".join(shown)


def table(uses: dict[str, Uses], stages: dict[str, str]) -> Iterator[str]:
    yield "| setting | stage | class | set by | docs | read by (mtrag_graph/) |"
    yield "|---|---|---|---|---|---|"
    for name, use in uses.items():
        docs = ", ".join(sorted(Path(d).name for d in use.docs)) or "-"
        reads = ", ".join(sorted(use.reads)) or "**nothing**"
        yield f"| `{name}` | {stages[name]} | {use.kind()} | {use.set_by()} | {docs} | {reads} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage", nargs="+", help="only these stages' settings (default: all)")
    parser.add_argument("--only", nargs="+", choices=CLASSES, help="only settings of these classes")
    args = parser.parse_args(argv)
    fields = [f for f in dataclasses.fields(Context) if not args.stage or stage_of(f) in args.stage]
    if not fields:
        print(f"no settings in stages {args.stage}", file=sys.stderr)
        return 2
    uses = audit(fields)
    if args.only:
        uses = {name: use for name, use in uses.items() if use.kind() in args.only}
    stages = {f.name: stage_of(f) for f in fields}
    for line in table(uses, stages):
        print(line)
    counts: dict[str, int] = defaultdict(int)
    for use in uses.values():
        counts[use.kind()] += 1
    print()
    print(f"{len(uses)} settings: " + ", ".join(f"{counts[c]} {c}" for c in CLASSES if counts[c]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
