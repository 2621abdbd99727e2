"""Explaining "no" and "why this": minimal conflicts, relaxations and binding families.

On INFEASIBLE a pre-check first tries the commonest "no" in plain terms: the deadline needs more
nodes than the budget buys at the servers' prices alone (:func:`deadline_outprices_budget`).
Otherwise every family's assumption literal is passed to a pure feasibility solve; the core
CP-SAT returns is treated as a hint and shrunk by deletion to a minimal set that is verified
infeasible, each member necessary. Then, for each conflicting limit, the smallest change that
makes the instance feasible is computed by re-optimising with that one family relaxed.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.models.design import ConflictItem, Explanation, Relaxation
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.build import DesignModel
from topoopt.solver.least_cost import least_cost
from topoopt.solver.networks import server_takes
from topoopt.solver.options import MAX_NODES
from topoopt.solver.problem import SECONDS_PER_DAY, Problem
from topoopt.solver.run import OK, Settings, Stats, run

# Where in the instance each family's limit comes from (a dotted field path).
FAMILY_SOURCES: dict[str, str] = {
    "budget_cap": "budget.max",
    "deadline_met": "goal.deadline_days",
    "memory_fits": "workload.model",
    "racks_available": "site.max_racks",
    "site_power_within_limit": "site.power_cap_kw",
    "rack_power_within_limit": "site.rack_classes",
    "rack_units_within_limit": "site.rack_classes",
    "allowed_by_lists": "constraints",
    "pins_respected": "constraints.pins",
    "oversubscription_within_limit": "constraints.max_oversubscription",
    "cable_reach": "site.distances",
    "storage_bandwidth_met": "workload.checkpoint",
    "storage_capacity_met": "workload.data.dataset_tb",
    "storage_latency_ok": "workload.data.small_files",
    "priced_in_book": "catalog.price_book",
    "storage_nic_bandwidth_met": "workload.data",
    "storage_fabric_ports_cover": "constraints.storage",
    "cold_storage_met": "workload.checkpoint.archive_days",
    "management_ports_cover": "constraints.switches",
}


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


def _model(problem: Problem) -> DesignModel:
    """The model the deletion filter runs on: every family enforced by its literal alone."""
    problem = problem.without_pinned_nodes_shortcut()
    return DesignModel(problem, throughput_target_tokens_per_s=problem.throughput_target)


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
    member of the result is necessary given the others. ``dm``: :func:`_model` of ``problem``,
    when already built.
    """
    dm = dm or _model(problem)
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
    held = [f for f in FAMILIES if f in problem.prefilter and f not in kept and _removes_options(everything, f)]
    if held and not _infeasible_with_every_option(everything, kept, settings, stats):
        for family in list(held):
            trial = [f for f in held if f != family]
            relaxed = Problem(problem.instance, prefilter=frozenset(trial), like=problem)
            if _infeasible(_model(relaxed), kept + trial, settings, stats):
                held = trial
        # With the held families enforced (exclusions and literals), some of ``kept`` may have
        # become redundant: shrink it again. The held families stay necessary, since a smaller
        # ``kept`` only loosens the rest.
        final = _model(Problem(problem.instance, prefilter=frozenset(held), like=problem))
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
    return (_infeasible(_model(everything.with_known_deadline_bounds_only()), families, settings, stats)
            or _infeasible(_model(everything), families, settings, stats))


Base = Callable[[], DesignModel]
"""The explanation's model (:func:`_model` of the problem), built on first use."""


def _relaxation_model(problem: Problem, base: Base, family: str) -> DesignModel:
    """The model with every family enforced but ``family``: ``model_for``'s, copied from the
    explanation's model (same options) unless ``family`` was prefiltered, whose options only a
    rebuild restores."""
    from topoopt.solver import enforce_all, model_for  # circular at import time

    if family in problem.prefilter:
        return model_for(problem, frozenset({family}))
    dm = copy.copy(base())
    dm.m = dm.m.clone()
    return enforce_all(dm, frozenset({family}))


def deadline_outprices_budget(problem: Problem) -> str | None:
    """The pre-check: no design meets the deadline within the budget when every node
    configuration of the problem's options needs more nodes to train in time than the budget buys
    at its server price alone — counted on the fabric class and storage mode never slower than
    any (one tier, no oversubscription, dedicated storage: at most the nodes any design of the
    configuration needs), while a design's cost includes at least its nodes' servers. On the
    unfiltered problem (:meth:`Problem.unfiltered`, every option kept) this shows that
    deadline_met and budget_cap cannot both hold whatever else is relaxed. Returns the reason in
    plain words, or None when the pre-check does not settle it (no deadline, or some
    configuration within the budget)."""
    seconds = problem.time_limit_s
    if seconds is None or problem.deadline_s is None:
        return None
    budget = int(problem.instance.budget.max)  # as budget_cap states it
    cheapest: tuple[int, int, str] | None = None  # (cost, nodes, server) of the cheapest in time
    for configs in problem.config_groups():
        fewest = problem.min_nodes_for_time(configs[0], FASTEST_CLASS, seconds)
        if fewest is None:
            continue  # no count up to MAX_NODES trains in time
        for c in configs:
            cost = fewest * (c.server_price or 0)  # unpriced: no bound (priced_in_book may be relaxed)
            if cost <= budget:
                return None
            cheapest = min(cheapest or (cost, fewest, c.server.id), (cost, fewest, c.server.id))
    if cheapest is None:
        return f"no node configuration trains in time on up to {MAX_NODES:,} nodes"
    cost, nodes, server = cheapest
    currency = problem.instance.budget.currency
    return (f"meeting the deadline costs at least {cost:,} {currency} in servers alone ({nodes:,} × {server}, the "
            f"cheapest server count that can train in time), over the budget of {budget:,} {currency}")


def _removes_options(problem: Problem, family: str) -> bool:
    """Does ``family`` rule out any option of this (unfiltered) problem on its own?"""
    o = problem.options
    groups = [o.node_configs, o.fabrics, o.racks, o.storage, *o.parts.values(), o.storage_nets, o.cold, o.management]
    return any(family in option.violations for options in groups for option in options)


def _detail(problem: Problem, family: str, nodes: int | None = None) -> str:
    """The instance values behind a family's limit; ``nodes``: the node count of the cheapest
    design without the family (or the pinned count), for the storage path."""
    inst = problem.instance
    rules = inst.constraints
    if family == "budget_cap":
        return f"budget {inst.budget.max:,.0f} {inst.budget.currency} ({inst.budget.basis})"
    if family == "deadline_met" and inst.goal.deadline_days is not None:
        return f"train {inst.workload.training.tokens:.3g} tokens within {inst.goal.deadline_days:g} days"
    if family == "memory_fits":
        model = inst.workload.model
        return f"model {model if isinstance(model, str) else f'{model.params_b:g}B parameters'}"
    if family == "racks_available":
        classes = ", ".join(inst.site.rack_classes) if inst.site.rack_classes else "any class"
        return f"at most {inst.site.max_racks} racks ({classes})"
    if family == "site_power_within_limit":
        return f"site power cap {inst.site.power_cap_kw:g} kW"
    if family == "allowed_by_lists":
        lists = [f"{kind} allow={rule.allow} deny={rule.deny}" for kind in
                 ("gpus", "servers", "interconnects", "switches", "cables", "storage", "storage_nics")
                 if (rule := getattr(rules, kind)).allow is not None or rule.deny]
        return "; ".join(lists) or "allow/deny lists"
    if family == "pins_respected":
        pins = {k: v for k, v in rules.pins.model_dump().items() if v is not None}
        return ", ".join(f"{k}={v}" for k, v in pins.items())
    if family == "oversubscription_within_limit":
        return f"oversubscription at most {rules.max_oversubscription:g}:1"
    if family == "cable_reach":
        d = inst.site.distances
        return f"runs of {d.in_row_m + d.slack_m:g} m (in row) and {d.across_rows_m + d.slack_m:g} m (across rows)"
    if family == "storage_latency_ok":
        return "many small files need a low-latency storage tier"
    if family == "storage_nic_bandwidth_met":
        return storage_path_detail(problem, nodes)
    if family == "cold_storage_met":
        needs = problem.storage_needs(0.0)
        checkpoint = inst.workload.checkpoint
        return (f"archive {needs.cold_capacity_tb:,.1f} TB ({inst.workload.data.archive_tb:g} TB of data and "
                f"{checkpoint.archive_days:g} days of checkpoints) on an object-store tier")
    if family == "storage_fabric_ports_cover":
        tiers = problem.catalog.catalog.by_id("storage")
        allowed = [t for t in tiers.values() if rules.storage.admits(t.id)]
        ports = "; ".join(f"{t.id}: {t.network_ports} × {'/'.join(map(str, t.port_speeds_gbps))}G "
                          f"{'/'.join(t.protocols)}" for t in allowed)
        return f"storage-unit ports must run the storage network's speed and protocol ({ports or 'no tier allowed'})"
    if family == "management_ports_cover":
        return "1 in-band and the out-of-band management ports of every node, data switch and storage unit"
    return FAMILIES[family]


def storage_path_detail(problem: Problem, nodes: int | None) -> str:
    """The fastest storage path the instance allows, against the traffic it must carry:
    "storage NIC 2 × eth-10g-2p (4 × 10G) per node × 4 nodes = 160 Gb/s < 579 Gb/s needed"."""
    need = problem.storage_needs(problem.throughput_target or 0.0).network_gbps
    everything = problem.unfiltered().options
    instance_rules = {"allowed_by_lists", "pins_respected", "priced_in_book"}
    configs = [c for c in everything.node_configs if not c.violations & instance_rules]
    servers = {c.server.id: c.server for c in configs}
    paths = []
    for s in everything.storage_nets:
        if s.violations & instance_rules:
            continue
        if s.mode == "dedicated" and any(server_takes(server, s.nic_choice) for server in servers.values()):
            paths.append((s.node_gbps, f"storage NIC {s.nics} × {s.nic.id} ({s.ports_per_node} × {s.gbps}G) per node"))
        elif s.mode == "converged":
            paths += [(c.rails * c.interconnect.gbps, f"compute NICs shared with storage ({c.rails} × "
                       f"{c.interconnect.gbps}G) per node") for c in configs
                      if c.speed_key in everything.converged_speeds]
    if not paths:
        return f"no storage path is allowed; {need:,.0f} Gb/s needed"
    gbps, path = max(paths)
    if nodes is None:
        return f"{path} = {gbps:,} Gb/s per node; {need:,.0f} Gb/s needed"
    total = gbps * nodes
    return f"{path} × {nodes:,} nodes = {total:,} Gb/s {'<' if total < need else '≥'} {need:,.0f} Gb/s needed"


def _relax_one(problem: Problem, family: str, settings: Settings, stats: Stats,
               base: Base) -> tuple[Relaxation, int | None]:
    """The smallest change to ``family``'s limit that makes the instance feasible, all else kept,
    and the node count of the design that shows it (None when there is none). The relaxation's
    value is None exactly when relaxing the family alone is not enough."""
    from topoopt.solver import fastest_time_s  # circular at import time

    inst = problem.instance
    relaxed = frozenset({family})
    if family == "deadline_met":
        saved = problem.time_limit_s
        problem.time_limit_s = None
        try:
            seconds = fastest_time_s(problem, settings, stats, relaxed)
        finally:
            problem.time_limit_s = saved
        if seconds is None:
            return Relaxation(family=family, message="no deadline makes it feasible: other limits conflict too"), None
        days = math.ceil(seconds / SECONDS_PER_DAY * 10) / 10
        return Relaxation(family=family, message=f"feasible with deadline ≥ {days:g} days", value=days,
                          edits={"goal.deadline_days": days}), None
    if family == "racks_available":
        return _relax_racks(problem, settings, stats, base), None
    if family == "budget_cap":
        cost = least_cost(problem, settings, stats)
        if cost is None:
            return Relaxation(family=family, message=f"relaxing {family} alone is not enough"), None
        return Relaxation(family=family, message=f"feasible with budget ≥ {cost:,} {inst.budget.currency}",
                          value=cost, edits={"budget.max": cost}), None
    if family == "site_power_within_limit":
        dm = _relaxation_model(problem, base, family)
        dm.m.minimize(dm.v.power_w["total"])
        status, solver = run(dm.m, settings, stats)
        if status not in OK:
            return Relaxation(family=family, message=f"relaxing {family} alone is not enough"), None
        kw = math.ceil(solver.value(dm.v.power_w["total"]) / 100) / 10
        return Relaxation(family=family, message=f"feasible with a site power cap ≥ {kw:g} kW", value=kw,
                          edits={"site.power_cap_kw": kw}), None
    dm = _relaxation_model(problem, base, family)
    dm.m.minimize(dm.v.total_cost)
    status, solver = run(dm.m, settings, stats)
    if status not in OK:
        return Relaxation(family=family, message=f"relaxing {family} alone is not enough"), None
    value = int(round(solver.objective_value))  # an integer cost, reported as a double
    from topoopt.solver.extract import chosen

    pick = chosen(dm, solver.value)
    what = f"{pick.config.label}, {pick.fabric.label}, {pick.storage_net.label}"
    return Relaxation(family=family, message=f"feasible without {family} (e.g. {what}; cost {value:,.0f})",
                      value=value), solver.value(dm.v.nodes)


def _relax_racks(problem: Problem, settings: Settings, stats: Stats, base: Base) -> Relaxation:
    """racks_available limits both the rack count and, with ``site.rack_classes``, the classes.
    The fewest racks with the site's classes kept; when those classes stand in the way too, the
    fewest racks of any class, naming the class to add (and the count, when it must grow)."""
    family, site = "racks_available", problem.instance.site
    found = _fewest_racks(problem, settings, stats, base, site.rack_classes)
    if found is None and site.rack_classes is not None:
        found = _fewest_racks(problem, settings, stats, base, None)
    if found is None:
        return Relaxation(family=family, message=f"relaxing {family} alone is not enough")
    racks, rack_class = found
    edits: dict[str, int | float | list[str]] = {}
    if site.rack_classes is not None and rack_class not in site.rack_classes:
        edits["site.rack_classes"] = [*site.rack_classes, rack_class]
    if racks > site.max_racks:
        edits["site.max_racks"] = racks
    words = {"site.rack_classes": f"rack class {rack_class} added to site.rack_classes",
             "site.max_racks": f"max_racks ≥ {racks}"}
    # Without any edit the design meets racks_available too; then the instance was feasible and
    # this is not reached, but the message stays well-formed.
    change = " and ".join(words[field] for field in edits) or f"{racks} racks of class {rack_class}"
    return Relaxation(family=family, message=f"feasible with {change}", value=racks, edits=edits)


def _fewest_racks(problem: Problem, settings: Settings, stats: Stats, base: Base,
                  classes: list[str] | None) -> tuple[int, str] | None:
    """(racks, rack class) of the design with the fewest racks when every family but
    racks_available holds and the rack class is one of ``classes`` (any when None)."""
    dm = _relaxation_model(problem, base, "racks_available")
    for option, literal in zip(dm.options.racks, dm.v.use_rack):
        if classes is not None and option.rack.id not in classes:
            dm.m.add(literal == 0)
    dm.m.minimize(dm.v.racks)
    status, solver = run(dm.m, settings, stats)
    if status not in OK:
        return None
    rack_class = next(o.rack.id for o, literal in zip(dm.options.racks, dm.v.use_rack) if solver.value(literal))
    return solver.value(dm.v.racks), rack_class


def explain_infeasible(problem: Problem, settings: Settings, stats: Stats) -> Explanation:
    """The minimal conflict, the relaxation of each of its limits and, when the pre-check settles
    the conflict, its plain reason."""
    base = functools.cache(lambda: _model(problem))
    relaxed: dict[str, tuple[Relaxation, int | None]] = {}

    def relaxation(family: str) -> tuple[Relaxation, int | None]:
        if family not in relaxed:
            relaxed[family] = _relax_one(problem, family, settings, stats, base)
        return relaxed[family]

    def shown_necessary(family: str) -> bool:
        """A family whose relaxation solves the model with every other family enforced (the same
        problem: not prefiltered, and not the deadline, whose relaxation also resizes storage)
        is necessary in any conflict; the relaxation is needed for the report anyway."""
        if family in problem.prefilter or family in ("deadline_met", "priced_in_book"):
            return False
        return relaxation(family)[0].value is not None

    deadline_and_budget = ["deadline_met", "budget_cap"]
    reason = deadline_outprices_budget(problem.unfiltered())
    if reason is not None and all(relaxation(family)[0].value is not None for family in deadline_and_budget):
        # The pre-check proves the pair cannot hold together, with every option. Each is
        # necessary: the budget's relaxation is a design that meets the deadline (and all else),
        # the deadline's one that meets the budget (its storage sized for its own rate, but the
        # storage families are then relaxed too): a verified minimal conflict.
        conflict = [f for f in FAMILIES if f in deadline_and_budget]
    else:
        reason = None
        conflict = minimal_conflict(problem, settings, stats, shown_necessary, base())
    relaxations, nodes = [], problem.instance.constraints.pins.nodes
    for family in conflict:
        if family == "priced_in_book":
            continue
        found, relaxed_nodes = relaxation(family)
        relaxations.append(found)
        if family == "storage_nic_bandwidth_met" and nodes is None:
            nodes = relaxed_nodes
    items = [
        ConflictItem(family=f, description=FAMILIES[f], detail=_detail(problem, f, nodes), source=FAMILY_SOURCES.get(f, ""))
        for f in conflict
    ]
    return Explanation(conflict=items, relaxations=relaxations, precheck=reason)
