"""topoopt: exact GPU-cluster design with CP-SAT.

The public API. Heavy modules (the solver, ortools, networkx) are imported on first use, so
``import topoopt`` and instance validation stay cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_instance": "topoopt.loader",
    "validate_instance": "topoopt.loader",
    "InputError": "topoopt.loader",
    "resolve_catalog": "topoopt.catalog",
    "load_builtin_catalog": "topoopt.catalog",
    "estimate": "topoopt.perf",
    "solve": "topoopt.solver",
    "check_design": "topoopt.checker",
    "fabric_graph": "topoopt.fabric",
    "render": "topoopt.fabric",
    "OutputError": "topoopt.fabric",
    "verify_output_set": "topoopt.fabric.output_set",
    "Instance": "topoopt.models",
    "Design": "topoopt.models",
    "SolveResult": "topoopt.models",
    "Violation": "topoopt.models",
    "Performance": "topoopt.models",
}

__all__ = sorted(_EXPORTS)


def __dir__() -> list[str]:
    """The public API (what :data:`__all__` lists), for ``dir(topoopt)`` and completion."""
    return sorted([*__all__, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'topoopt' has no attribute {name!r}")
    return getattr(import_module(module), name)
