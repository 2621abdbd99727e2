"""Command-line interface: thin typer commands over the public API.

Each command lives in its own module and registers itself on :data:`topoopt.cli.app.app`.
Heavy imports (ortools, networkx) happen inside the commands, so ``topoopt --help`` is fast.
"""

from __future__ import annotations

import signal
import sys
from importlib import import_module

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_INTERNAL, EXIT_INTERRUPTED, err

COMMAND_MODULES = ("validate", "catalog_cmd", "estimate", "solve", "check", "render")

for _name in COMMAND_MODULES:
    import_module(f"topoopt.cli.{_name}")


def main() -> None:
    """Console entry point: run the app; unexpected errors exit 1 with a short message.

    ``--debug`` anywhere on the command line shows the full traceback instead.
    """
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, _interrupt)
    debug = "--debug" in sys.argv
    if debug:
        sys.argv.remove("--debug")
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        err("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if _INTERRUPTED and not debug:  # e.g. an extension module's import cut short by Ctrl-C
            err("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        if debug:
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        sys.exit(EXIT_INTERNAL)


_INTERRUPTED: list[int] = []
"""The interrupting signals received (an interrupted import surfaces as ImportError, not as
KeyboardInterrupt)."""


def _interrupt(signum, frame) -> None:
    """Ctrl-C and SIGTERM alike raise KeyboardInterrupt: an output set being written is dropped (the
    published one stays) and the command exits 130."""
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt
