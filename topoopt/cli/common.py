"""Exit codes and output helpers shared by every command."""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_NO_SOLUTION = 4

EXIT_CODES_HELP = (
    "Exit codes: 0 solved/valid, 1 internal error, 2 usage error or invalid instance, "
    "3 proven infeasible (or design violations for 'check'), 4 no solution within the limits."
)


def err(message: str) -> None:
    """Print to stderr (progress, warnings, errors); stdout is for results only."""
    print(message, file=sys.stderr)
