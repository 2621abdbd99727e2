"""The bundled examples in ``instances/``, each solved and its outputs written once per test session.

Export tests of every consumer (Slurm, NetBox, spreadsheets, simulators) read the same written
sets, so the examples are solved once however many tests read them. The infeasible example has no
design and is left out (:data:`FEASIBLE`).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from topoopt.fabric import Fabric, build_fabric, write_outputs
from topoopt.loader import load_instance
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.solver import solve

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "instances").glob("*.yaml"))
INFEASIBLE = {"infeasible-budget.yaml"}
FEASIBLE = [path.name for path in EXAMPLES if path.name not in INFEASIBLE]


@dataclass(frozen=True)
class Written:
    """One solved example: its instance, result, built installation and output directory."""

    instance: Instance
    result: SolveResult
    fabric: Fabric
    out: Path


@functools.cache
def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="topoopt-examples-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@functools.cache
def written_example(name: str) -> Written:
    """Solve ``instances/<name>`` and write its outputs (once per session)."""
    instance = load_instance(REPO / "instances" / name).instance
    result = solve(instance, explain=False)
    assert result.status == "optimal", (name, result.status)
    out = _root() / Path(name).stem
    write_outputs(result, instance, out)
    return Written(instance, result, build_fabric(result.design, instance), out)
