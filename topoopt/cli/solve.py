"""``topoopt solve INSTANCE``: design the cluster, print the summary, write design.json and exports."""

from __future__ import annotations

import typer

from topoopt.cli.app import app
from topoopt.cli.common import (
    EXIT_INFEASIBLE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NO_SOLUTION,
    NotWritten,
    check_out_dir,
    err,
    fit_to_terminal,
    load_or_exit,
    publish,
)
from topoopt.limits import EXPLAIN_TIME_S


@app.command(help="Design the cluster for INSTANCE ('-' = stdin).")
def solve(
    file: str = typer.Argument(..., metavar="INSTANCE", help="Instance YAML file, or '-' for standard input."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON (design.json) on stdout."),
    out: str | None = typer.Option(
        None, "--out", metavar="DIR",
        help="Write design.json, BOM, cables, racks, exports and drawings here as one output set with a "
             "manifest.json, replacing an earlier set atomically (DIR must be new, empty or an earlier set)."),
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
    if out is not None:
        check_out_dir(out)
    from topoopt.cli.running import Interrupted, solve_reporting
    from topoopt.solver import UnsupportedObjective

    def proven(result) -> None:
        """Infeasibility is known before the explanation: write it down at once, and say so."""
        if out is not None:
            try:
                write_result(locate_sources(result, loaded), loaded.instance, out, source=str(loaded.file))
            except NotWritten as exc:  # the final write reports it again
                err(str(exc))
        err("topoopt: proven infeasible; explaining why (Ctrl-C prints what is known, --no-explain skips it)")

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
    not_written = None
    if out is not None:
        try:
            write_result(result, loaded.instance, out, source=str(loaded.file))
        except NotWritten as exc:
            not_written = str(exc)
    if violations:
        for violation in violations:
            err(f"checker: {violation}")
        err("internal error: the independent checker rejects the solver's design (a bug; please report it)")
        raise typer.Exit(EXIT_INTERNAL)
    print_result(result, loaded.instance, json_out)
    if not_written is not None:  # the answer is printed; the files are what failed
        err(not_written)
        raise typer.Exit(EXIT_INPUT)
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

    typer.echo(fit_to_terminal(
        infeasible_summary(result, name) if result.status == "infeasible" else
        solved_summary(result, name) + job_cost_line(result, instance) if result.design else
        f"topoopt · {name} · {result.status.upper()}: no design found within the limits"))


def interrupted(stop, loaded, json_out: bool) -> None:
    """Ctrl-C: print what is known and leave at once (the solve's thread is still in CP-SAT, so
    the process ends with ``os._exit`` after flushing). Infeasibility already proven exits 3 with
    the status (design.json was written when it was proven); otherwise 130."""
    import os
    import sys

    from topoopt.fabric.output_set import finish_or_discard_unfinished

    finish_or_discard_unfinished()  # the solve's thread may be publishing the proven status
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


def write_result(result, instance, out: str, *, source: str) -> None:
    """Publish the output set of ``result``: design.json always, the fabric exports and drawings
    when a design exists, the manifest last; the fabric's warnings go to stderr as 'topoopt render'
    prints them. Raises :class:`~topoopt.cli.common.NotWritten`."""
    outputs = publish(result, instance, out, source=source, design_json=True)
    err(f"wrote {len(outputs.files)} files to {out}/")
