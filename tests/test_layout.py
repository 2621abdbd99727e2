"""The code's layout rules (docs/architecture.md), checked on the source.

- ``topoopt.solver`` and ``topoopt.options`` import each other's modules without a cycle, and no
  module of the solver imports upward (a package's ``__init__`` from below it): each module can be
  read knowing only what it imports.
- Imports are at the top of a module: none hides inside a function to dodge a cycle.
- The option tables know no CP-SAT: ``topoopt.options`` imports without ortools.
- The model is assembled from an explicit table of rule functions, one per family.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import topoopt
from topoopt.families import FAMILIES

ROOT = Path(topoopt.__file__).parent
LAYERED = ("solver", "options")
MAX_FUNCTION_LINES = 60


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, ast.Module]:
    found = {}
    for package in LAYERED:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = ast.parse(path.read_text(), str(path))
    return found


def imported(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    """The modules of ``known`` that a module imports (``from package import module`` included)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in known:
                found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names} & known
    return found - {name}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, or None (depth-first search, three colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_a_cycle_is_found_when_there_is_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_solver_and_options_import_without_a_cycle():
    trees = modules()
    graph = {name: imported(name, tree, set(trees)) for name, tree in trees.items()}
    assert cycle(graph) is None


def test_no_module_imports_its_own_package_or_one_above():
    """``topoopt.solver.explain.relax`` may import ``topoopt.solver.model`` (a sibling's package)
    but not ``topoopt.solver`` or ``topoopt.solver.explain``, which import it."""
    trees = modules()
    for name, tree in trees.items():
        above = {".".join(name.split(".")[:i]) for i in range(2, name.count(".") + 1)}
        assert not imported(name, tree, set(trees)) & above, name


@pytest.mark.parametrize("package", LAYERED)
def test_imports_are_at_the_top_of_every_module(package):
    for name, tree in modules().items():
        if not name.startswith(f"topoopt.{package}"):
            continue
        top = {id(node) for node in tree.body}
        hidden = [node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top]
        assert not hidden, f"{name}: imports inside functions at lines {hidden}"


def test_no_function_in_the_solver_is_longer_than_the_limit():
    long = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and name.startswith("topoopt.solver"):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert not long


def test_the_option_tables_import_without_ortools():
    code = ("import sys, topoopt.options.problem; "
            "assert not [m for m in sys.modules if m.startswith('ortools')]")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_model_has_one_rule_function_per_family_and_no_dynamic_lookup():
    from topoopt.solver import model

    assert list(model.RULES) == list(FAMILIES)
    assert all(fn.__name__ == family for family, fn in model.RULES.items())
    for path in (ROOT / "solver").rglob("*.py"):
        assert "globals()" not in path.read_text(), path
