"""A minimal conflict: a set of families that cannot all hold, each member necessary.

Every family's assumption literal is passed to a pure feasibility solve; the core CP-SAT returns
is treated as a hint and shrunk by deletion to a minimal set that is verified infeasible.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.solver.model import new_model
from topoopt.solver.model.core import DesignModel
from topoopt.solver.run import OK, Settings, Stats, run


def _infeasible(dm: DesignModel, families, settings: Settings, stats: Stats) -> bool | None:
    """Is the model infeasible with exactly ``families`` enforced (the others relaxed)? None when
    CP-SAT gives no answer within the time limit.

    The literals are fixed in a copy rather than passed as assumptions: presolve can then use
    them, which makes these proofs one to two orders of magnitude faster.
    """
    model = dm.model.clone()
    for family in families:
        model.add(model.get_bool_var_from_proto_index(dm.assumption[family].index) == 1)
    status, _ = run(model, replace(settings, workers=1, log=False), stats)
    return True if status == cp_model.INFEASIBLE else False if status in OK else None


def _core(dm: DesignModel, families: list[str], settings: Settings, stats: Stats) -> list[str] | None:
    """A subset of ``families`` that CP-SAT proves cannot all hold (its core of assumption
    literals); ``families`` itself when no answer came within the time limit; None when
    ``families`` can all hold. Not necessarily minimal."""
    model = dm.model.clone()
    literals = {dm.assumption[f].index: f for f in families}
    model.add_assumptions([model.get_bool_var_from_proto_index(i) for i in literals])
    status, solver = run(model, replace(settings, workers=1, log=False), stats)
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
        if self.settings.remaining_s() == 0.0:
            self.unanswered += 1
            return False
        answer = _infeasible(dm if isinstance(dm, DesignModel) else dm(), families, self.settings, self.stats)
        self.unanswered += answer is None
        return bool(answer)


def explanation_model(problem: Problem) -> DesignModel:
    """The model the deletion filter runs on: every family enforced by its literal alone."""
    problem = problem.without_pinned_nodes_shortcut()
    return new_model(problem)


def minimal_conflict(problem: Problem, settings: Settings, stats: Stats,
                     shown_necessary: Callable[[str], bool] = lambda family: False,
                     dm: DesignModel | None = None) -> Conflict:
    """A minimal set of families that cannot all hold, verified: the set is infeasible and
    dropping any one member makes it feasible. ``shown_necessary(family)``: True when a design
    is known that meets every family but that one, so no subset without it is infeasible (its
    deletion trial is skipped).

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
    kept = _deletion_filter(dm, kept, [], shown_necessary, trials)
    # Prefiltered families matter beyond ``kept`` only if they removed an option.
    everything = problem.unfiltered()
    held = [f for f in FAMILIES if f in problem.prefilter and f not in kept and removes_options(everything, f)]
    if held and not _infeasible_with_every_option(everything, kept, trials):
        for family in list(held):
            trial = [f for f in held if f != family]
            if trials.infeasible(lambda: explanation_model(problem.prefiltering(frozenset(trial))), kept + trial):
                held = trial
        # With the held families enforced (exclusions and literals), some of ``kept`` may have
        # become redundant: shrink it again. The held families stay necessary, since a smaller
        # ``kept`` only loosens the rest.
        final = functools.cache(lambda: explanation_model(problem.prefiltering(frozenset(held))))
        kept = _deletion_filter(final, kept, held, shown_necessary, trials)
    else:
        held = []
    named = [f for f in every_family() if f in kept or f in held]  # a trial cut short may have kept a structural one
    return Conflict(named, minimal=trials.unanswered == 0)


def _deletion_filter(dm: DesignModel | Callable[[], DesignModel], kept: list[str], held: list[str], shown_necessary: Callable[[str], bool],
                     trials: Trials) -> list[str]:
    """Drop each member of ``kept`` whose removal leaves ``kept + held`` infeasible."""
    for family in list(kept):
        trial = [f for f in kept if f != family]
        if not shown_necessary(family) and trials.infeasible(dm, trial + held):
            kept = trial
    return kept


def _infeasible_with_every_option(everything: Problem, families: list[str], trials: Trials) -> bool:
    """Are ``families`` infeasible with no option prefiltered? Tried first with the deadline
    bounds known without new performance-model evaluations (a relaxation, so its infeasibility
    is a proof): restoring options adds fabric classes, and asking the deadline question for
    each of them is most of the work of building the model."""
    return (trials.infeasible(lambda: explanation_model(everything.with_known_deadline_bounds_only()), families)
            or trials.infeasible(lambda: explanation_model(everything), families))


def removes_options(problem: Problem, family: str) -> bool:
    """Does ``family`` rule out any option of this (unfiltered) problem on its own?"""
    o = problem.options
    groups = [o.node_configs, o.fabrics, o.racks, o.storage, *o.parts.values(), o.storage_nets, o.cold, o.management]
    return any(family in option.violations for options in groups for option in options)
