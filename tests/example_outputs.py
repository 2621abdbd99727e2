"""The bundled examples in ``instances/``, each solved and its outputs written once per test session.

Export tests of every consumer (Slurm, NetBox, spreadsheets, simulators) read the same written
sets, so the examples are solved once however many tests read them: once per test run, as the
pytest-xdist workers share the run's directory (:func:`share_across_workers`), the first to ask
solving under a lock and the others reading its result. The infeasible example has no design and
is left out (:data:`FEASIBLE`).
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
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
    warnings: list[str]
    """The output set's warnings."""


_ROOT: list[Path] = []
"""The directory the examples are written to (set once per process)."""


def share_across_workers(base_temp: Path, worker: bool) -> None:
    """Write the examples under ``base_temp`` (pytest's base directory of this process): for an
    xdist worker its parent, the run's directory every worker of the run shares."""
    root = (base_temp.parent if worker else base_temp) / "examples"
    root.mkdir(exist_ok=True)
    _ROOT[:] = [root]


def _root() -> Path:
    if not _ROOT:  # outside pytest: a directory of this process
        root = Path(tempfile.mkdtemp(prefix="topoopt-examples-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _ROOT.append(root)
    return _ROOT[0]


@functools.cache
def written_example(name: str) -> Written:
    """``instances/<name>`` solved and its outputs written, once per run: the first process to
    ask solves it under a lock and leaves the result beside the outputs; the others read it."""
    instance = load_instance(REPO / "instances" / name).instance
    out = _root() / Path(name).stem
    done = out.with_suffix(".json")
    with open(out.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            saved = json.loads(done.read_text(encoding="utf-8"))
            result, warnings = SolveResult.model_validate(saved["result"]), saved["warnings"]
        else:
            result = solve(instance, explain=False)
            assert result.status == "optimal", (name, result.status)
            warnings = write_outputs(result, instance, out).warnings
            partial = done.with_suffix(".partial")
            partial.write_text(json.dumps({"result": result.model_dump(mode="json"), "warnings": warnings}),
                               encoding="utf-8")
            partial.replace(done)
    return Written(instance, result, build_fabric(result.design, instance), out, warnings)
