"""``topoopt check INSTANCE DESIGN_JSON``: re-verify a design with the independent checker."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_INFEASIBLE, EXIT_INPUT, err, load_or_exit


@app.command(help="Re-verify DESIGN_JSON (a design.json from 'topoopt solve --out', or a bare design) "
                  "against INSTANCE with the independent checker; exit 3 lists every violated rule.")
def check(
    file: str = typer.Argument(..., metavar="INSTANCE", help="Instance YAML file, or '-' for standard input."),
    design_file: Path = typer.Argument(..., metavar="DESIGN_JSON", help="design.json written by 'topoopt solve --out'."),
    json_out: bool = typer.Option(False, "--json", help="Print the verdict as JSON on stdout."),
) -> None:
    from topoopt.catalog import CatalogError
    from topoopt.checker import CHECKER_RULES, check_design
    from topoopt.cli.design_file import read_design

    loaded = load_or_exit(file)
    design, cost, performance = read_design(design_file)
    try:
        violations = check_design(loaded.instance, design, cost, performance)
    except CatalogError as exc:
        err(f"{loaded.file}: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    rules = len(CHECKER_RULES)
    if json_out:
        typer.echo(json.dumps({
            "ok": not violations,
            "rules_checked": rules,
            "violations": [v.model_dump() for v in violations],
        }, indent=2, ensure_ascii=False))
    elif violations:
        typer.echo(f"design violates {len(violations)} rule(s) ({rules} rules checked):")
        for violation in violations:
            typer.echo(f"  {violation}")
    else:
        typer.echo(f"design OK: {rules} rules checked")
    if violations:
        raise typer.Exit(EXIT_INFEASIBLE)

