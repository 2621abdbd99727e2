"""``topoopt render INSTANCE DESIGN_JSON --out DIR``: the installation files of a solved design."""

from __future__ import annotations

from pathlib import Path

import typer

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_INFEASIBLE, EXIT_INPUT, check_out_dir, err, load_or_exit, write_fabric_files


@app.command(short_help="Write the BOM, cables, racks, exports and drawings of a solved design.",
             help="Write the bill of materials (CSV and xlsx), cable schedule, rack plan, GraphML, Slurm "
                  "topology.conf and topology.yaml, NetBox import files, for InfiniBand an ibdiagnet topology, "
                  "ASTRA-sim and SimAI inputs and the drawing (DOT, SVG, draw.io; PNG with --png) of DESIGN_JSON "
                  "(a design.json from 'topoopt solve', or a bare design) for INSTANCE into DIR, as one output "
                  "set: the compute fabric, the storage network and the management network (Slurm's topology "
                  "covers the compute fabric only). The independent checker runs first: a design it rejects is "
                  "not rendered (exit 3) unless --unchecked. The SVG needs Graphviz 'dot' (or $TOPOOPT_DOT); "
                  "without it the DOT file is written and a warning printed.")
def render(
    file: str = typer.Argument(..., metavar="INSTANCE", help="The instance the design was solved for ('-' = stdin)."),
    design_file: Path = typer.Argument(..., metavar="DESIGN_JSON", help="design.json written by 'topoopt solve'."),
    out: str = typer.Option(
        ..., "--out", metavar="DIR",
        help="Directory for the output set (created if missing; an earlier set is replaced atomically)."),
    png: bool = typer.Option(False, "--png", help="Also draw fabric.png."),
    unchecked: bool = typer.Option(
        False, "--unchecked",
        help="Render a design the checker rejects (a hand-edited what-if); the violations become warnings."),
) -> None:
    from topoopt.catalog import CatalogError
    from topoopt.checker import check_design
    from topoopt.cli.design_file import read_design
    from topoopt.models.design import ObjectiveValue, SolveResult

    if file.endswith(".json") and str(design_file).endswith((".yaml", ".yml")):
        err(f"render: the arguments are INSTANCE DESIGN_JSON (as for 'topoopt check'); got the design "
            f"{file!r} first. Try: topoopt render {design_file} {file} --out {out}")
        raise typer.Exit(EXIT_INPUT)
    loaded = load_or_exit(file)
    check_out_dir(out)
    design, cost, performance = read_design(design_file)
    try:
        violations = check_design(loaded.instance, design, cost, performance)
    except CatalogError as exc:
        err(f"{loaded.file}: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    for violation in violations:
        err(f"{'warning' if unchecked else 'checker'}: {violation}")
    if violations and not unchecked:
        err(f"{design_file}: the checker rejects the design ({len(violations)} violation(s)); not rendered "
            f"(--unchecked renders it anyway)")
        raise typer.Exit(EXIT_INFEASIBLE)
    if not violations:
        err("checked: the independent checker accepts the design")
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
