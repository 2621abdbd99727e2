"""``topoopt solve INSTANCE``: design the cluster, print the summary, write design.json and exports."""

from __future__ import annotations

from pathlib import Path

import typer

from topoopt.cli.app import app
from topoopt.cli.common import (
    EXIT_CODES_HELP,
    EXIT_INFEASIBLE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NO_SOLUTION,
    err,
    load_or_exit,
    write_fabric_files,
)
from topoopt.limits import EXPLAIN_TIME_S


@app.command(help="Design the cluster for INSTANCE ('-' = stdin). " + EXIT_CODES_HELP)
def solve(
    file: str = typer.Argument(..., metavar="INSTANCE", help="Instance YAML file, or '-' for standard input."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON (design.json) on stdout."),
    out: Path | None = typer.Option(None, "--out", help="Write design.json, BOM, cables, racks and drawings here."),
    time_limit_s: float | None = typer.Option(
        None, "--time-limit-s", min=0.01,
        help="Wall-clock limit on the whole solve, explanation included (not reproducible); past it the answer "
             "is what was found, labelled: a design with its gap, or exit 4."),
    explain: bool = typer.Option(
        True, "--explain/--no-explain",
        help="When no design exists, explain why: a minimal conflict and what would make it feasible."),
    explain_time_s: float = typer.Option(
        EXPLAIN_TIME_S, "--explain-time-s", min=0.01,
        help="Wall-clock limit on the explanation; what it has not proven by then is labelled "
             "(a conflict not shown minimal, a change not shown the least)."),
    workers: int = typer.Option(
        1, "--workers", min=1, max=64,
        help="CP-SAT workers for the main solves, at most the machine's cores (the same design for any count; one "
             "is fastest on the bundled examples with 2 cores)."),
    seed: int = typer.Option(0, "--seed", help="CP-SAT random seed."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Solver log on stderr."),
) -> None:
    from topoopt.catalog import CatalogError
    loaded = load_or_exit(file)
    from topoopt.cli.running import Interrupted, solve_reporting
    from topoopt.solver import UnsupportedObjective

    def proven(result) -> None:
        """Infeasibility is known before the explanation: say so, and write it down at once."""
        err("topoopt: proven infeasible; explaining why (Ctrl-C prints what is known, --no-explain skips it)")
        if out is not None:
            write_result(locate_sources(result, loaded), loaded.instance, out, source=str(loaded.file))

    try:
        result = solve_reporting(loaded.instance, on_proven=proven, workers=workers, seed=seed,
                                 time_limit_s=time_limit_s, explain=explain, explain_time_s=explain_time_s,
                                 log=verbose)
    except (CatalogError, UnsupportedObjective) as exc:
        err(f"{loaded.file}: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    except Interrupted as stop:
        interrupted(stop, loaded, json_out)
    result = locate_sources(result, loaded)
    violations = independent_check(result, loaded.instance)
    if out is not None:
        write_result(result, loaded.instance, out, source=str(loaded.file))
    if violations:
        for violation in violations:
            err(f"checker: {violation}")
        err("internal error: the independent checker rejects the solver's design (a bug; please report it)")
        raise typer.Exit(EXIT_INTERNAL)
    print_result(result, loaded.instance, json_out)
    if result.status == "infeasible":
        raise typer.Exit(EXIT_INFEASIBLE)
    if result.status == "unknown":
        raise typer.Exit(EXIT_NO_SOLUTION)


def print_result(result, instance, json_out: bool) -> None:
    name = instance.name
    if json_out:
        typer.echo(result.model_dump_json(indent=2, by_alias=True))
        return
    from topoopt.cli.summary import infeasible_summary, solved_summary

    typer.echo(infeasible_summary(result, name) if result.status == "infeasible" else
               solved_summary(result, name) + job_cost_line(result, instance) if result.design else
               f"topoopt · {name} · {result.status.upper()}: no design found within the limits")


def interrupted(stop, loaded, json_out: bool) -> None:
    """Ctrl-C: print what is known and leave at once (the solve's thread is still in CP-SAT, so
    the process ends with ``os._exit`` after flushing). Infeasibility already proven exits 3 with
    the status (design.json was written when it was proven); otherwise 130."""
    import os
    import sys

    if stop.proven is not None:
        err(f"topoopt: interrupted while {stop.stage}; infeasibility was already proven")
        print_result(locate_sources(stop.proven, loaded), loaded.instance, json_out)
        code = EXIT_INFEASIBLE
    else:
        err(f"topoopt: interrupted while {stop.stage}, before an answer")
        code = EXIT_INTERRUPTED
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def job_cost_line(result, instance) -> str:
    """The whole job or the whole ownership spelled out: for a rented design, rent per month ×
    months billed under the book's terms (the objective of min_job_cost; otherwise what the chosen
    design's job rents for); for a bought one with ``site.operation``, its ownership figure."""
    cost = result.cost
    if cost is None or (cost.rental is None and cost.ownership is None):
        return ""
    from topoopt.cli.price_notes import ownership_line, rental_line
    from topoopt.cli.summary import CURRENCY_SIGN

    sign = CURRENCY_SIGN.get(cost.currency, cost.currency + " ")
    if cost.ownership is not None:
        return "\n" + ownership_line(cost, sign, instance.site.operation)
    head = "Job cost     " if result.objective.kind == "min_job_cost" else "Job rent     "
    return "\n" + rental_line(cost, sign, head)


def independent_check(result, instance) -> list:
    """Every design is re-verified by the checker, which shares no code with the solver."""
    if result.design is None:
        return []
    from topoopt.checker import check_design

    violations = check_design(instance, result.design, result.cost, result.performance)
    if not violations:
        err("checked: the independent checker accepts the design")
    return violations


def locate_sources(result, loaded):
    """Turn explanation field paths into ``file:line:col (field)`` locations."""
    if result.explanation is None:
        return result
    conflict = [
        item.model_copy(update={"source": f"{loaded.where(item.source)} {item.source}" if item.source else loaded.file})
        for item in result.explanation.conflict
    ]
    explanation = result.explanation.model_copy(update={"conflict": conflict})
    return result.model_copy(update={"explanation": explanation})


def write_result(result, instance, out: Path, *, source: str) -> None:
    """design.json always; the fabric exports and drawings when a design exists, with the
    fabric's warnings on stderr as 'topoopt render' prints them."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "design.json").write_text(result.model_dump_json(indent=2, by_alias=True) + "\n", encoding="utf-8")
    if result.design is None:
        return
    try:
        import topoopt.fabric  # noqa: F401
    except ImportError:
        err("warning: fabric exports are not available in this build; wrote design.json only")
        return
    write_fabric_files(result, instance, out, source=source)
    err(f"wrote {out}/")
