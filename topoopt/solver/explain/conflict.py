"""A minimal conflict: a set of families that cannot all hold, each member necessary.

Every family's assumption literal is passed to a pure feasibility solve; the core CP-SAT returns
is treated as a hint and shrunk by deletion to a minimal set that is verified infeasible.
"""

from __future__ import annotations

from collections.abc import Callable

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.solver.model import new_model
from topoopt.solver.model.core import DesignModel
from topoopt.solver.run import Settings, Stats, run


def _infeasible(dm: DesignModel, families, settings: Settings, stats: Stats) -> bool:
    """Is the model infeasible with exactly ``families`` enforced (the others relaxed)?

    The literals are fixed in a copy rather than passed as assumptions: presolve can then use
    them, which makes these proofs one to two orders of magnitude faster.
    """
    model = dm.m.clone()
    for family in families:
        model.add(model.get_bool_var_from_proto_index(dm.assumption[family].index) == 1)
    status, _ = run(model, Settings(workers=1, seed=settings.seed, time_limit_s=settings.time_limit_s), stats)
    return status == cp_model.INFEASIBLE


def _core(dm: DesignModel, families: list[str], settings: Settings, stats: Stats) -> list[str] | None:
    """A subset of ``families`` that CP-SAT proves cannot all hold (its core of assumption
    literals), or None when ``families`` can all hold. Not necessarily minimal."""
    model = dm.m.clone()
    literals = {dm.assumption[f].index: f for f in families}
    model.add_assumptions([model.get_bool_var_from_proto_index(i) for i in literals])
    status, solver = run(model, Settings(workers=1, seed=settings.seed, time_limit_s=settings.time_limit_s), stats)
    if status != cp_model.INFEASIBLE:
        return None
    core = set(solver.sufficient_assumptions_for_infeasibility())
    return [f for i, f in literals.items() if i in core]


def explanation_model(problem: Problem) -> DesignModel:
    """The model the deletion filter runs on: every family enforced by its literal alone."""
    problem = problem.without_pinned_nodes_shortcut()
    return new_model(problem)


def minimal_conflict(problem: Problem, settings: Settings, stats: Stats,
                     shown_necessary: Callable[[str], bool] = lambda family: False,
                     dm: DesignModel | None = None) -> list[str]:
    """A minimal set of families that cannot all hold, verified: the set is infeasible and
    dropping any one member makes it feasible. ``shown_necessary(family)``: True when a design
    is known that meets every family but that one, so no subset without it is infeasible (its
    deletion trial is skipped).

    First CP-SAT's core of assumption literals, verified infeasible (else every family), shrunk by
    a deletion filter in the prefiltered model (where the prefiltered families' option exclusions
    hold throughout); then, for prefiltered families that excluded
    options, a deletion filter over those exclusions, each tried by rebuilding the model with the
    options kept, and a last deletion filter over the first set given the held exclusions. Every
    member of the result is necessary given the others. ``dm``: :func:`explanation_model` of ``problem``,
    when already built.
    """
    dm = dm or explanation_model(problem)
    kept = _core(dm, list(FAMILIES), settings, stats)
    if kept is None:
        return []
    if not _infeasible(dm, kept, settings, stats):  # a core is a hint until verified
        kept = list(FAMILIES)
    for family in list(kept):
        trial = [f for f in kept if f != family]
        if not shown_necessary(family) and _infeasible(dm, trial, settings, stats):
            kept = trial
    # Prefiltered families matter beyond ``kept`` only if they removed an option.
    everything = problem.unfiltered()
    held = [f for f in FAMILIES if f in problem.prefilter and f not in kept and removes_options(everything, f)]
    if held and not _infeasible_with_every_option(everything, kept, settings, stats):
        for family in list(held):
            trial = [f for f in held if f != family]
            relaxed = problem.prefiltering(frozenset(trial))
            if _infeasible(explanation_model(relaxed), kept + trial, settings, stats):
                held = trial
        # With the held families enforced (exclusions and literals), some of ``kept`` may have
        # become redundant: shrink it again. The held families stay necessary, since a smaller
        # ``kept`` only loosens the rest.
        final = explanation_model(problem.prefiltering(frozenset(held)))
        for family in list(kept):
            trial = [f for f in kept if f != family]
            if not shown_necessary(family) and _infeasible(final, trial + held, settings, stats):
                kept = trial
    else:
        held = []
    return [f for f in FAMILIES if f in kept or f in held]


def _infeasible_with_every_option(everything: Problem, families: list[str], settings: Settings,
                                  stats: Stats) -> bool:
    """Are ``families`` infeasible with no option prefiltered? Tried first with the deadline
    bounds known without new performance-model evaluations (a relaxation, so its infeasibility
    is a proof): restoring options adds fabric classes, and asking the deadline question for
    each of them is most of the work of building the model."""
    return (_infeasible(explanation_model(everything.with_known_deadline_bounds_only()), families, settings, stats)
            or _infeasible(explanation_model(everything), families, settings, stats))


def removes_options(problem: Problem, family: str) -> bool:
    """Does ``family`` rule out any option of this (unfiltered) problem on its own?"""
    o = problem.options
    groups = [o.node_configs, o.fabrics, o.racks, o.storage, *o.parts.values(), o.storage_nets, o.cold, o.management]
    return any(family in option.violations for options in groups for option in options)
