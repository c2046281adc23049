"""Every third-party module the package imports belongs to a distribution that pyproject.toml declares
(a core dependency or an extra): a packager's install gets what the code imports. The slower check
that a fresh environment imports the whole package is ``scripts/check_clean_install.sh``."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import REPO

PACKAGE = REPO / "mtrag_graph"


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    # a requirement's name ends where its extras, version, marker or a space begin
    return {normalised(re.split(r"[\[<>=!~;\s]", r, maxsplit=1)[0]) for r in requirements}


def imported_modules() -> dict[str, str]:
    """Top-level names of the third-party modules the package imports, each with one file importing it."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "mtrag_graph":
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_imported_library_is_declared():
    declared = declared_distributions()
    installed = packages_distributions()
    undeclared = {}
    for module, where in imported_modules().items():
        # an installed module names its distribution (yaml -> PyYAML); one not installed here (an extra
        # `make setup` leaves out) is looked up by its own name
        distributions = {normalised(d) for d in installed.get(module, [module])}
        if not distributions & declared:
            undeclared[module] = (where, sorted(distributions))
    assert undeclared == {}


def test_the_dev_extra_takes_the_other_extras_by_reference_not_by_copy():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    dev = set(extras["dev"])
    for name, requirements in extras.items():
        if name != "dev":
            assert not dev & set(requirements), name
    assert any(r.startswith("mtrag-graph[") for r in dev)
