"""Running CP-SAT reproducibly: fixed workers and seed, logs away from stdout, lexicographic ties."""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field, replace

from ortools.sat.python import cp_model

OK = (cp_model.OPTIMAL, cp_model.FEASIBLE)


@dataclass(frozen=True)
class Settings:
    """Solver settings. The defaults give the same answer on every run and every machine; a
    wall-clock limit is an option, and an answer cut by it says so."""

    workers: int = 1
    seed: int = 0
    time_limit_s: float | None = None
    """Wall-clock limit of one CP-SAT solve."""
    deadline: float | None = None
    """``time.perf_counter()`` by which every solve must have ended (a limit on a whole command
    or on one stage of it, such as the explanation)."""
    log: bool = False
    linear_relaxation: bool = False
    """Keep CP-SAT's LP relaxation on (off by default: see :func:`new_solver`)."""

    def within(self, seconds: float | None) -> Settings:
        """These settings with the deadline brought forward to ``seconds`` from now, if sooner."""
        if seconds is None:
            return self
        deadline = time.perf_counter() + seconds
        return replace(self, deadline=deadline if self.deadline is None else min(self.deadline, deadline))

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (None: no deadline), never negative."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def solve_limit_s(self) -> float | None:
        """The wall-clock limit of the next solve: the per-solve limit or what is left, the smaller."""
        limits = [s for s in (self.time_limit_s, self.remaining_s()) if s is not None]
        return min(limits) if limits else None


@dataclass
class Stats:
    """What a solve has done so far; read from another thread for progress reports."""

    solves: int = 0
    wall_s: float = 0.0
    proven: bool = True
    started: float = field(default_factory=time.perf_counter)
    cut_short: int = 0
    """Solves a time limit stopped before their answer was proven (UNKNOWN, or FEASIBLE without the
    optimum's proof)."""
    stage: str = "starting"
    """What the solve is doing now, in a few words ("explaining: relaxing budget_cap")."""


def new_solver(settings: Settings, *, light: bool = False) -> cp_model.CpSolver:
    """A solver with ``settings``. ``light``: a single presolve pass and no symmetry detection, for
    small models where they take most of the solve — a lexicographic stage after the first, whose
    objective ranks the few designs left at the earlier stages' optima (measured with the LP still
    on: the three tie-break stages of the 7B example 0.93 s -> 0.37 s), and a ``min_job_cost``
    candidate, one pair at a fixed node count (the job-cost example's eight: 0.34 s -> 0.21 s);
    same optima."""
    solver = cp_model.CpSolver()
    params = solver.parameters
    # More workers never pay on the light solves (small models, most of a solve's count), and a
    # portfolio of them on few cores costs more than it finds.
    params.num_workers = 1 if light else min(settings.workers, os.cpu_count() or 1)
    params.random_seed = settings.seed
    params.catch_sigint_signal = False
    # Probing in presolve costs more than it saves on these option-heavy models (measured:
    # 2-5x faster solves on the example instances, same optima).
    params.cp_model_probing_level = 0
    # CP-SAT 9.15's detection of "x >= at least one of" precedences reports some feasible models
    # of ours INFEASIBLE at the root (a known class of presolve/propagation bugs, e.g.
    # google/or-tools#5274); tests/test_solver_run.py pins a model that shows it.
    params.auto_detect_greater_than_at_least_one_of = False
    # SAT inprocessing (clause vivification, probing between restarts) spent most of every solve
    # on these models without shortening the search (measured: the 7B example's first stage
    # 1.12 s -> 0.38 s, 23,168 -> 2,038 branches; same optima).
    params.use_sat_inprocessing = False
    # Nor does the LP relaxation pay for itself: the option literals' big-M rows give it little
    # (measured without it: the catalog x10 with the server pinned 10.7 s -> 6.8 s, x2 with the
    # server free 1.3 s -> 0.8 s, the infeasible example's explanation 5.5 s -> 4.6 s; same optima).
    # The explanation's feasibility trials are the exception: with most families relaxed, finding
    # any design without the LP can take a minute where the LP guides the search to one at once
    # (measured: benchmarks/impossible's llama3-70b-small-files-object-only, its every-option
    # trial 62 s -> 0.8 s), so they ask for it (``linear_relaxation``).
    params.linearization_level = 1 if settings.linear_relaxation else 0
    if light:
        params.max_presolve_iterations = 1
        params.symmetry_level = 0
    limit_s = settings.solve_limit_s()
    if limit_s is not None:
        params.max_time_in_seconds = limit_s
    if settings.log:
        params.log_search_progress = True
        params.log_to_stdout = False
        solver.log_callback = lambda line: print(line, file=sys.stderr)
    return solver


def run(model: cp_model.CpModel, settings: Settings, stats: Stats, *,
        light: bool = False) -> tuple[int, cp_model.CpSolver]:
    """Solve once; record the count, the wall time, whether optimality was proven and whether a
    time limit cut the solve short (past the deadline CP-SAT gets no time: UNKNOWN at once)."""
    solver = new_solver(settings, light=light)
    status = solver.solve(model)
    stats.solves += 1
    if status in (cp_model.UNKNOWN, cp_model.FEASIBLE):
        stats.cut_short += 1
    stats.wall_s += solver.wall_time
    if status == cp_model.FEASIBLE:
        stats.proven = False
    return status, solver


def hint_from(model: cp_model.CpModel, solver: cp_model.CpSolver, variables) -> None:
    """Hint ``variables`` (plain, not negated) at their values in ``solver``'s solution, written
    to the model's proto at once (``add_hint`` per variable took 0.5 s of the demo's 4.5 s)."""
    model.clear_hints()
    solution = solver.response_proto.solution
    indices = [var.index for var in variables]
    hint = model.proto.solution_hint
    hint.vars.extend(indices)
    hint.values.extend([solution[i] for i in indices])


def fix_at(model: cp_model.CpModel, solver: cp_model.CpSolver, variables) -> None:
    """Fix ``variables`` (plain, not negated) at their values in ``solver``'s solution, by
    narrowing their domains (a constraint per variable costs presolve time)."""
    solution = solver.response_proto.solution
    for var in variables:
        domain = model.proto.variables[var.index].domain
        value = solution[var.index]
        domain.clear()
        domain.extend([value, value])


def lexicographic(model: cp_model.CpModel, objectives, settings: Settings, stats: Stats, hint_vars):
    """Minimise each expression in turn, fixing the previous ones at their optimum.

    Returns ``(status, solver, first_value, first_bound)``; the solver holds the final solution.
    """
    first_value = first_bound = None
    status, solver = cp_model.UNKNOWN, None
    for position, expression in enumerate(objectives):
        model.minimize(expression)
        status, solver = run(model, settings, stats, light=position > 0)
        if status not in OK:
            return status, solver, first_value, first_bound
        # The expression's integer value in the solution, exactly: CP-SAT reports the objective as
        # a double, a hair off (1171499.9999999998) or, past 2**53 (GPUs × power range at
        # 131,072 GPUs), off by whole units, which would fix the next stages at a wrong value.
        value = solver.value(expression)
        if position == 0:
            first_value, first_bound = value, math.ceil(solver.best_objective_bound - 1e-6)
        model.add(expression <= value)
        hint_from(model, solver, hint_vars)
    return status, solver, first_value, first_bound
