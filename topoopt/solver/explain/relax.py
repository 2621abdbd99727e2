"""What it would take: for each limit of a conflict, the smallest change that makes the instance
feasible, found by re-optimising with that one family relaxed."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable

from ortools.sat.python import cp_model

from topoopt.models.design import Relaxation
from topoopt.options.problem import SECONDS_PER_DAY, Problem
from topoopt.options.tables import link_lengths_m
from topoopt.solver.explain.conflict import explanation_model
from topoopt.solver.explain.least_cost import least_cost
from topoopt.solver.extract import chosen
from topoopt.solver.model import enforce_all, model_for
from topoopt.solver.model.core import DesignModel
from topoopt.solver.objectives.min_time import fastest_time_s
from topoopt.solver.run import OK, Settings, Stats, run

Base = Callable[[], DesignModel]
"""The explanation's model (:func:`~topoopt.solver.explain.conflict.explanation_model` of the problem), built on first use."""


def relaxation_model(problem: Problem, base: Base, family: str) -> DesignModel:
    """The model with every family enforced but ``family``: ``model_for``'s, copied from the
    explanation's model (same options) unless ``family`` was prefiltered, whose options only a
    rebuild restores."""
    if family in problem.prefilter:
        return model_for(problem, frozenset({family}))
    dm = copy.copy(base())
    dm.model = dm.model.clone()
    return enforce_all(dm, frozenset({family}))


def relax_one(problem: Problem, family: str, settings: Settings, stats: Stats,
              base: Base) -> tuple[Relaxation, int | None]:
    """The smallest change to ``family``'s limit that makes the instance feasible, all else kept,
    and the node count of the design that shows it (None when there is none). The relaxation's
    value is None exactly when relaxing the family alone is not enough — or, when a time limit
    cut a solve short, when none was found in time; a value found then is enough but not proven
    the least (``proven`` False)."""
    if settings.remaining_s() == 0.0:
        return Relaxation(family=family, message=f"no change to {family} worked out within the explanation's "
                          "time limit", proven=False), None
    cut_before = stats.cut_short
    relaxation, nodes = _relax(problem, family, settings, stats, base)
    # A search that reached the deadline may have stopped before its last candidate, even
    # without a solve cut short: then it is not proven either.
    if (stats.cut_short == cut_before and settings.remaining_s() != 0.0) or not relaxation.proven:
        return relaxation, nodes  # proven, or already labelled as not
    if relaxation.value is None:
        return Relaxation(family=family, message=f"no change to {family} found within the explanation's time limit",
                          proven=False), None
    note = " (enough; not proven the least within the explanation's time limit)"
    return relaxation.model_copy(update={"message": relaxation.message + note, "proven": False}), nodes


Relaxed = tuple[Relaxation, int | None]
"""A relaxation and the node count of the design that shows it (None: none, or not needed)."""


def _relax(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    """The family's own way of relaxing its limit (:data:`RELAXATIONS`), else dropping it."""
    return RELAXATIONS.get(family, relax_by_dropping)(problem, family, settings, stats, base)


def not_enough(family: str) -> Relaxed:
    return Relaxation(family=family, message=f"relaxing {family} alone is not enough"), None


def relax_deadline(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    """The smallest deadline any design allows, rounded up to a tenth of a day."""
    seconds = fastest_time_s(problem.with_time_limit(None), settings, stats, frozenset({family}))
    if seconds is None:
        return Relaxation(family=family, message="no deadline makes it feasible: other limits conflict too"), None
    days = math.ceil(seconds / SECONDS_PER_DAY * 10) / 10
    return Relaxation(family=family, message=f"feasible with deadline ≥ {days:g} days", value=days,
                      edits={"goal.deadline_days": days}), None


def relax_budget(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    """The least cost of a design with the budget relaxed (least_cost.py)."""
    cost = least_cost(problem, settings, stats, proves_none=lambda: _proven_infeasible(
        relaxation_model(problem, base, family), settings, stats))
    if cost is None:
        return not_enough(family)
    currency = problem.instance.budget.currency
    return Relaxation(family=family, message=f"feasible with budget ≥ {cost:,} {currency}", value=cost,
                      edits={"budget.max": cost}), None


def relax_site_power(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    """The least provisioned power of a design, rounded up to a tenth of a kW."""
    dm = relaxation_model(problem, base, family)
    dm.model.minimize(dm.vars.power_w["total"])
    status, solver = run(dm.model, settings, stats)
    if status not in OK:
        return not_enough(family)
    kw = math.ceil(solver.value(dm.vars.power_w["total"]) / 100) / 10
    return Relaxation(family=family, message=f"feasible with a site power cap ≥ {kw:g} kW", value=kw,
                      edits={"site.power_cap_kw": kw}), None


def relax_by_dropping(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    """A rule without a number to move: the cheapest design without it, as an example."""
    dm = relaxation_model(problem, base, family)
    dm.model.minimize(dm.vars.total_cost)
    status, solver = run(dm.model, settings, stats)
    if status not in OK:
        return not_enough(family)
    value = int(round(solver.objective_value))  # an integer cost, reported as a double
    pick = chosen(dm, solver.value)
    storage = pick.storage_net.described(bool(solver.value(dm.net.three_tiers)))
    what = f"{pick.config.label}, {pick.fabric.label}, {storage}"
    return Relaxation(family=family, message=f"feasible without {family} (e.g. {what}; cost {value:,.0f})",
                      value=value), solver.value(dm.vars.nodes)


def relax_racks_available(problem: Problem, family: str, settings: Settings, stats: Stats, base: Base) -> Relaxed:
    return relax_racks(problem, settings, stats, base), None


def _proven_infeasible(dm: DesignModel, settings: Settings, stats: Stats) -> bool:
    """One feasibility solve of the whole relaxed model (a copy of the explanation's), which the
    least-cost search asks when its first pairs have no design: when none has, the search would
    solve every one of them to learn it (measured: 16 s and 260 solves on benchmarks/impossible's
    llama3-70b-7d-8-racks, where this one solve proves it)."""
    status, _ = run(dm.model, settings, stats)
    return status == cp_model.INFEASIBLE


def relax_racks(problem: Problem, settings: Settings, stats: Stats, base: Base) -> Relaxation:
    """racks_available limits both the rack count and, with ``site.rack_classes``, the classes.
    The fewest racks with the site's classes kept; when those classes stand in the way too, the
    fewest racks of any class, naming the class to add (and the count, when it must grow)."""
    family, site = "racks_available", problem.instance.site
    found = fewest_racks_on_their_floor(problem, settings, stats, base, site.rack_classes)
    if found is None and site.rack_classes is not None:
        found = fewest_racks_on_their_floor(problem, settings, stats, base, None)
    if found is None:
        return Relaxation(family=family, message=f"relaxing {family} alone is not enough")
    racks, rack_classes, least = found
    edits: dict[str, int | float | list[str]] = {}
    added = [c for c in rack_classes if site.rack_classes is not None and c not in site.rack_classes]
    if added:
        edits["site.rack_classes"] = [*site.rack_classes, *added]
    if racks > site.max_racks:
        edits["site.max_racks"] = racks
    words = {"site.rack_classes": f"rack class {' and '.join(added)} added to site.rack_classes",
             "site.max_racks": f"max_racks ≥ {racks}"}
    # Without any edit the design meets racks_available too; then the instance was feasible and
    # this is not reached, but the message stays well-formed.
    change = " and ".join(words[field] for field in edits) or f"{racks} racks of class {' and '.join(rack_classes)}"
    if not least:
        return Relaxation(family=family, message=f"feasible with {change} (enough; not shown the least)",
                          value=racks, edits=edits, proven=False)
    return Relaxation(family=family, message=f"feasible with {change}", value=racks, edits=edits)


def fewest_racks_on_their_floor(problem: Problem, settings: Settings, stats: Stats, base: Base,
                                classes: list[str] | None) -> tuple[int, list[str], bool] | None:
    """:func:`fewest_racks`, with the runs of the floor the edit gives, and whether the count is
    shown the least. With a row size every run is capped by the floor of ``site.max_racks``
    (docs/model.md, "Cable runs"), so a design found on the site's smaller floor may need longer
    parts once ``max_racks`` is raised to its count: the search is repeated on the floor of the
    count found until a count holds on its own floor. A shorter run only widens the parts a
    design may take (the model's compute parts; the option tables' cheapest part per option and
    placement), so as long as that never raises a design's power, each count found is a lower
    bound, that count the least, and no design on a floor means none on a larger one (the
    built-in catalog has no part that reaches less for no more and draws more power than one of
    the same ends). A search finding fewer racks than the last count (one cut short before)
    shows the last count enough, on its floor, not the least."""
    found = fewest_racks(problem, settings, stats, base, classes)
    lengths = link_lengths_m(problem.instance)
    while found is not None and found[0] > problem.instance.site.max_racks:
        wider = link_lengths_m(problem.instance, found[0])
        if wider == lengths:
            return (*found, True)
        problem, lengths = problem.with_max_racks(found[0]), wider
        again = fewest_racks(problem, settings, stats, functools.cache(lambda p=problem: explanation_model(p)), classes)
        if again is None or again[0] == found[0]:
            return None if again is None else (*again, True)
        if again[0] < found[0]:
            return (*found, False)
        found = again
    return None if found is None else (*found, True)


def fewest_racks(problem: Problem, settings: Settings, stats: Stats, base: Base,
                  classes: list[str] | None) -> tuple[int, list[str]] | None:
    """(racks, rack classes) of the design with the fewest racks when every family but
    racks_available holds and its rack classes are among ``classes`` (any when None): the nodes'
    class, then the network and storage racks' when it differs."""
    dm = relaxation_model(problem, base, "racks_available")
    for option, *literals in zip(dm.options.racks, dm.vars.use_rack, dm.vars.use_infra_rack):
        if classes is not None and option.rack.id not in classes:
            dm.model.add(sum(literals) == 0)
    dm.model.minimize(dm.vars.racks)
    status, solver = run(dm.model, settings, stats)
    if status not in OK:
        return None
    used = [o.rack.id for literals in (dm.vars.use_rack, dm.vars.use_infra_rack)
            for o, literal in zip(dm.options.racks, literals) if solver.value(literal)]
    return solver.value(dm.vars.racks), list(dict.fromkeys(used))


RELAXATIONS: dict[str, Callable[[Problem, str, Settings, Stats, Base], Relaxed]] = {
    "deadline_met": relax_deadline,
    "budget_cap": relax_budget,
    "site_power_within_limit": relax_site_power,
    "racks_available": relax_racks_available,
}
"""The families whose limit is a number an instance can move, and how the smallest move is found;
every other family is relaxed by dropping it (:func:`relax_by_dropping`)."""
