"""``topoopt render DESIGN_JSON INSTANCE --out DIR``: the installation files of a solved design."""

from __future__ import annotations

from pathlib import Path

import typer

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_CODES_HELP, check_out_dir, load_or_exit, write_fabric_files


@app.command(help="Write the bill of materials, cable schedule, rack plan, GraphML, Slurm topology.conf, "
                  "NetBox CSVs and the drawing (DOT, SVG; PNG with --png) of DESIGN_JSON (a design.json "
                  "from 'topoopt solve', or a bare design) into DIR: the compute fabric, the storage network and "
                  "the management network (Slurm's topology covers the compute fabric only). The SVG needs "
                  "Graphviz 'dot' (or "
                  "$TOPOOPT_DOT); without it the DOT file is written and a warning printed. " + EXIT_CODES_HELP)
def render(
    design_file: Path = typer.Argument(..., metavar="DESIGN_JSON", help="design.json written by 'topoopt solve'."),
    file: str = typer.Argument(..., metavar="INSTANCE", help="The instance the design was solved for ('-' = stdin)."),
    out: str = typer.Option(
        ..., "--out", metavar="DIR",
        help="Directory for the output set (created if missing; an earlier set is replaced atomically)."),
    png: bool = typer.Option(False, "--png", help="Also draw fabric.png."),
) -> None:
    from topoopt.cli.check import read_design
    from topoopt.models.design import ObjectiveValue, SolveResult

    loaded = load_or_exit(file)
    check_out_dir(out)
    design, cost, performance = read_design(design_file)
    result = SolveResult(
        status="feasible",
        objective=ObjectiveValue(kind=loaded.instance.goal.objective, value=None, bound=None, gap=None),
        design=design,
        cost=cost,
        performance=performance,
    )
    outputs = write_fabric_files(result, loaded.instance, out, source=str(design_file), png=png)
    for path in outputs.files:
        typer.echo(str(path))
