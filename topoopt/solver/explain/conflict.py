"""A minimal conflict: a set of families that cannot all hold, each member necessary.

Every family's assumption literal is passed to a pure feasibility solve; the core CP-SAT returns
is treated as a hint and shrunk by deletion to a minimal set that is verified infeasible.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.solver.bounds.nodes import optimistic_nodes
from topoopt.solver.model import new_model
from topoopt.solver.model.core import DesignModel
from topoopt.solver.run import OK, Settings, Stats, run


def _infeasible(dm: DesignModel, families, settings: Settings, stats: Stats,
                witness: Callable[[DesignModel, cp_model.CpSolver], bool] | None = None) -> bool | None:
    """Is the model infeasible with exactly ``families`` enforced (the others relaxed)? None when
    CP-SAT gives no answer within the time limit, or when the design it finds fails ``witness``
    (for a relaxed model: whether that design meets the exact rules too; the design sought is
    then one with the most nodes, the likeliest to train in time).

    The literals are fixed in a copy rather than passed as assumptions: presolve can then use
    them, which makes these proofs one to two orders of magnitude faster.
    """
    model = dm.model.clone()
    for family in families:
        model.add(model.get_bool_var_from_proto_index(dm.assumption[family].index) == 1)
    if witness is not None:
        model.maximize(model.get_int_var_from_proto_index(dm.vars.nodes.index))
    status, solver = run(model, replace(settings, workers=1, log=False, linear_relaxation=True), stats)
    if status == cp_model.INFEASIBLE:
        return True
    return False if status in OK and (witness is None or witness(dm, solver)) else None


def _core(dm: DesignModel, families: list[str], settings: Settings, stats: Stats) -> list[str] | None:
    """A subset of ``families`` that CP-SAT proves cannot all hold (its core of assumption
    literals); ``families`` itself when no answer came within the time limit; None when
    ``families`` can all hold. Not necessarily minimal."""
    model = dm.model.clone()
    literals = {dm.assumption[f].index: f for f in families}
    model.add_assumptions([model.get_bool_var_from_proto_index(i) for i in literals])
    status, solver = run(model, replace(settings, workers=1, log=False, linear_relaxation=True), stats)
    if status in OK:
        return None
    if status != cp_model.INFEASIBLE:
        return list(families)
    core = set(solver.sufficient_assumptions_for_infeasibility())
    return [f for i, f in literals.items() if i in core]


def every_family() -> list[str]:
    """Every family a conflict may name: all but the structural ones, which the option tables
    enforce by construction (relaxing one changes nothing, so together the others are
    infeasible whenever all are)."""
    return [f for f, family in FAMILIES.items() if not family.structural]


@dataclass
class Conflict:
    """Families that cannot all hold, proven; ``minimal``: each proven necessary (False when a
    trial found no answer within the time limit, and its family was kept)."""

    families: list[str]
    minimal: bool = True


@dataclass
class Trials:
    """Infeasibility trials where no answer counts as feasible: the family under trial is kept,
    which leaves the set proven infeasible but perhaps not minimal."""

    settings: Settings
    stats: Stats
    unanswered: int = 0

    def infeasible(self, dm: DesignModel | Callable[[], DesignModel], families) -> bool:
        """``dm``: the model, or how to build it — not built once the time limit has passed."""
        answer = self.settled(dm, families)
        self.unanswered += answer is None
        return bool(answer)

    def settled(self, dm: DesignModel | Callable[[], DesignModel], families, witness=None) -> bool | None:
        """:func:`_infeasible`, not counted as unanswered; None also once the time limit has passed."""
        if self.settings.remaining_s() == 0.0:
            return None
        return _infeasible(dm if isinstance(dm, DesignModel) else dm(), families, self.settings, self.stats, witness)


def explanation_model(problem: Problem, families: Collection[str] | None = None) -> DesignModel:
    """The model the deletion filter runs on: every family (or those of ``families``, the others
    left out: :func:`new_model`) enforced by its literal alone."""
    problem = problem.without_pinned_nodes_shortcut()
    return new_model(problem, families)


def minimal_conflict(problem: Problem, settings: Settings, stats: Stats,
                     shown_necessary: Callable[[str], bool] = lambda family: False,
                     dm: DesignModel | None = None) -> Conflict:
    """A minimal set of families that cannot all hold, verified: the set is infeasible and
    dropping any one member makes it feasible. ``shown_necessary(family)``: True when a design
    is known that meets every family but that one, so no subset without it is infeasible (its
    deletion trial is skipped: some such trials are hard proofs for CP-SAT).

    First CP-SAT's core of assumption literals, verified infeasible (else every family), shrunk by
    a deletion filter in the prefiltered model (where the prefiltered families' option exclusions
    hold throughout); then, for prefiltered families that excluded options, a deletion filter over
    those exclusions, each tried by rebuilding the model with the options kept, and a last
    deletion filter over the first set given the held exclusions. Every member of the result is
    necessary given the others, unless a trial had no answer within the time limit (then its
    family stays and the conflict is not called minimal). ``dm``: :func:`explanation_model` of
    ``problem``, when already built.
    """
    dm = dm or explanation_model(problem)
    trials = Trials(settings, stats)
    kept = _core(dm, list(FAMILIES), settings, stats)
    if kept is None:
        return Conflict([])
    if not trials.infeasible(dm, kept):  # a core is a hint until verified
        kept = every_family()
    kept = _deletion_filter(kept, [], shown_necessary, lambda families: trials.infeasible(dm, families))
    # Prefiltered families matter beyond ``kept`` only if they removed an option.
    everything = problem.unfiltered()
    held = [f for f in FAMILIES if f in problem.prefilter and f not in kept and removes_options(everything, f)]
    if held and not _infeasible_rebuilt(everything, kept, trials):
        for family in list(held):
            trial = [f for f in held if f != family]
            if _infeasible_rebuilt(problem.prefiltering(frozenset(trial)), kept + trial, trials):
                held = trial
        # With the held families enforced (exclusions and literals), some of ``kept`` may have
        # become redundant: shrink it again. The held families stay necessary, since a smaller
        # ``kept`` only loosens the rest.
        final = functools.cache(lambda: explanation_model(problem.prefiltering(frozenset(held))))
        kept = _deletion_filter(kept, held, shown_necessary, lambda families: trials.infeasible(final, families))
    else:
        held = []
    named = [f for f in every_family() if f in kept or f in held]  # a trial cut short may have kept a structural one
    return Conflict(named, minimal=trials.unanswered == 0)


def _deletion_filter(kept: list[str], held: list[str], shown_necessary: Callable[[str], bool],
                     infeasible: Callable[[list[str]], bool]) -> list[str]:
    """Drop each member of ``kept`` whose removal leaves ``kept + held`` infeasible."""
    for family in list(kept):
        trial = [f for f in kept if f != family]
        if not shown_necessary(family) and infeasible(trial + held):
            kept = trial
    return kept


def _infeasible_rebuilt(problem: Problem, families: list[str], trials: Trials) -> bool:
    """Are ``families`` infeasible in ``problem``'s model (options restored, so rebuilt, with only
    ``families``' rules)?

    With the deadline among them, tried first with its bounds searched only up to the most nodes
    ``families`` allow each configuration (:func:`optimistic_nodes`): a relaxation, so its
    "infeasible" is a proof, and so is "feasible" when the design it finds trains in time
    (:func:`_in_time`). Restoring options adds configurations and fabric classes, and searching
    each one's fewest nodes in time is most of the work of building the model (measured on
    benchmarks/impossible: llama3-70b-7d-8-racks, 9 s of model building against 1 s with the
    ceiling; mpt-30b-tcp-7d, 16 s against 0.5 s).
    """
    if "deadline_met" in families and problem.time_limit_s is not None:
        relaxed = frozenset(FAMILIES) - set(families)
        ceiling = problem.with_deadline_ceiling(lambda config: optimistic_nodes(problem, config, None, relaxed))
        for _ in range(CEILING_ROUNDS):
            answer = trials.settled(lambda: explanation_model(ceiling, families), families, _in_time)
            if answer is not None:
                return answer
    return trials.infeasible(lambda: explanation_model(problem, families), families)


CEILING_ROUNDS = 3
"""Rounds of the ceiling relaxation before the exact model is built: each that finds a design
late learns that design's exact bound (:func:`_in_time`), which the next round's model uses."""


def _in_time(dm: DesignModel, solver: cp_model.CpSolver) -> bool:
    """Does the design ``solver`` found train within the model's time limit (exactly, at its
    node count, on its configuration, fabric class and storage network mode)? When it does not,
    its configuration's exact fewest nodes on every class and mode are searched, so that a model
    built next uses them."""
    v, problem = dm.vars, dm.problem
    config = next(c for c in dm.options.node_configs if solver.value(v.use_config[c.index]))
    perf_class = next(cls for cls, lit in v.use_class.items() if solver.value(lit))
    seconds, converged = problem.time_limit_s, bool(solver.value(dm.net.converged))
    if problem.answers.in_time(config, perf_class, solver.value(v.nodes), seconds, converged, None):
        return True
    for cls in v.use_class:
        for mode in (False, True):
            problem.answers.min_nodes_for_time(config, cls, seconds, mode)
    return False


def removes_options(problem: Problem, family: str) -> bool:
    """Does ``family`` rule out any option of this (unfiltered) problem on its own?"""
    o = problem.options
    groups = [o.node_configs, o.fabrics, o.racks, o.storage, *o.parts.values(), o.storage_nets, o.cold, o.management]
    return any(family in option.violations for options in groups for option in options)
