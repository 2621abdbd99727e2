"""The typer application object; command modules attach their commands to it."""

from __future__ import annotations

import typer

from topoopt.cli.common import EXIT_CODES_HELP

app = typer.Typer(
    name="topoopt",
    help="Exact GPU-cluster design: GPUs, nodes, interconnect, switches, cables, racks and storage. "
    + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
