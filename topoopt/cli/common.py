"""Exit codes and output helpers shared by every command."""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_NO_SOLUTION = 4
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit codes: 0 solved/valid, 1 internal error, 2 usage error or invalid instance, "
    "3 proven infeasible (or design violations for 'check'), 4 no solution within the limits, "
    "130 interrupted (Ctrl-C) before an answer."
)


def err(message: str) -> None:
    """Print to stderr (progress, warnings, errors); stdout is for results only."""
    print(message, file=sys.stderr)


def load_or_exit(file: str, *, summary: bool = False):
    """Load and validate an instance file; on bad input print every located message and exit 2.

    ``summary`` adds a closing line with the number of problems (``topoopt validate``).
    """
    import typer

    from topoopt.loader import InputError, load_instance

    try:
        return load_instance(file)
    except InputError as exc:
        for message in exc.messages:
            err(message)
        if summary:
            err(f"{len(exc.messages)} problem(s) found; the instance is not valid")
        raise typer.Exit(EXIT_INPUT) from None


def write_fabric_files(result, instance, out, *, source: str, png: bool = False):
    """Write the installation files of ``result``'s design into ``out`` and print the fabric's
    warnings (``warning: …``) to stderr; return the outputs.

    A design the catalog cannot build, or an unwritable ``out``, prints the reason (prefixed by
    ``source``, the file the design came from) and exits 2.
    """
    import typer

    from topoopt.catalog import CatalogError
    from topoopt.fabric import FabricError, write_outputs

    try:
        outputs = write_outputs(result, instance, out, png=png)
    except (CatalogError, FabricError) as exc:
        err(f"{source}: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    except OSError as exc:
        err(f"{out}: cannot write: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    for warning in outputs.warnings:
        err(f"warning: {warning}")
    return outputs
