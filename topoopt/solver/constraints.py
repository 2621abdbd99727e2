"""One function per constraint family: the rules of a design, as CP-SAT constraints.

Each function takes the :class:`~topoopt.solver.build.DesignModel` and adds its family's
constraints, every one enforced by the family's assumption literal. docs/model.md states each rule
in words; topoopt/checker.py verifies it independently.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from topoopt.families import FAMILIES
from topoopt.solver.build import DesignModel
from topoopt.solver.build_networks import converged_offered
from topoopt.solver.networks import server_takes
from topoopt.solver.options import devices_per_rack_by_power, part_fits_node_end, part_fits_switch_end


def _nodes_at_least(dm: DesignModel, family: str, need_of, by_mode: bool = False) -> None:
    """n ≥ need per node-configuration group (and fabric class, and with ``by_mode`` storage
    network mode: ``need_of(config, class, converged)``); None rules the combination out.

    Besides the enforced bounds, three implied linear cuts keep the search (and proofs of
    infeasibility) short: n ≥ Σ need·use and server cost ≥ Σ price·need·use over the groups, with
    each group's smallest need over the fabric classes, and no use of the groups that no
    combination admits. They follow from the bounds, so they belong to the same family.
    """
    v, m = dm.v, dm.m
    modes = [((), False)]
    if by_mode:
        offered = {s.mode for s in dm.options.storage_nets}
        modes = [((lit,), converged) for lit, converged, mode in ((dm.n.dedicated, False, "dedicated"),
                                                                   (dm.n.converged, True, "converged"))
                 if mode in offered]
    node_terms, cost_terms, dead = [], [], []
    for group, configs in dm.node_groups(dm.problem.perf_key):
        needs = []
        for cls, cls_lit in v.use_cls.items():
            for mode, converged in modes:
                if (converged and configs[0].speed_key not in dm.options.converged_speeds
                        and not converged_offered(configs[0])):
                    continue  # not offered (build_networks.py)
                need = need_of(configs[0], cls, converged)
                if need is None:
                    dm.forbid(family, group, cls_lit, *mode)
                else:
                    needs.append(need)
                    dm.add(family, m.add(v.nodes >= need), group, cls_lit, *mode)
        if not needs:
            dead.append(group)
            continue
        least = min(needs)
        node_terms.append(least * group)
        cost_terms += [least * (c.server_price or 0) * v.use_nc[c.index] for c in configs]
    dm.add(family, m.add(v.nodes >= sum(node_terms)))
    dm.add(family, m.add(v.cost["server"] >= sum(cost_terms)))
    # Presolve fixes every dead group's literal from this one constraint (the per-combination
    # clauses leave it to the search; measured: the infeasible example's first proof 0.23 s ->
    # 0.04 s). One constraint however many groups die: the model's size does not depend on them.
    dm.add(family, m.add(sum(dead) <= 0))


def memory_fits(dm: DesignModel) -> None:
    """n ≥ the fewest nodes on which the model fits (perf.min_nodes_to_fit)."""
    _nodes_at_least(dm, "memory_fits", lambda config, _cls, _converged: dm.problem.min_nodes_to_fit(config))


def deadline_met(dm: DesignModel) -> None:
    """n ≥ the fewest nodes that train in time, per (node configuration, fabric class, storage
    network mode): a converged network's storage reads slow the step."""
    seconds = dm.problem.time_limit_s
    if seconds is not None:
        _nodes_at_least(dm, "deadline_met", lambda config, cls, converged: dm.problem.min_nodes_for_time(
            config, cls, seconds, converged), by_mode=True)


def budget_cap(dm: DesignModel) -> None:
    dm.add("budget_cap", dm.m.add(dm.v.total_cost <= int(dm.problem.instance.budget.max)))


def allowed_by_lists(dm: DesignModel) -> None:
    dm.forbid_violations("allowed_by_lists")


def priced_in_book(dm: DesignModel) -> None:
    """Unpriced options are ruled out; a node whose bought NIC is unpriced may only stand alone."""
    dm.forbid_violations("priced_in_book")
    for c in dm.options.node_configs:
        if c.nic_price is None:
            dm.forbid("priced_in_book", dm.v.use_nc[c.index], dm.v.use_tier[0].Not())


def pins_respected(dm: DesignModel) -> None:
    dm.forbid_violations("pins_respected")
    nodes = dm.problem.instance.constraints.pins.nodes
    if nodes is not None:
        dm.add("pins_respected", dm.m.add(dm.v.nodes == nodes))


def nic_fits_server(dm: DesignModel) -> None:
    """Compute NICs: node configurations are enumerated from each server's NIC options and slots
    (options.py), so a compute NIC that does not fit never becomes a variable. Storage NICs: a
    dedicated network's NICs are the server's built-in ones, or 1 … max_storage_nics of one of its
    storage_nic_options; other (server, storage NIC choice) pairs are ruled out."""
    for server_lit, configs in dm.node_groups(lambda c: c.server.id):
        for choice, lit in dm.storage_nic_choices.items():
            if not server_takes(configs[0].server, choice):
                dm.forbid("nic_fits_server", server_lit, lit)


def link_speed(dm: DesignModel) -> None:
    """The link speed is the interconnect's, which NIC, switch and cable all run (options.py and
    nic_supports_interconnect); the design reports it as ``link_gbps``."""


def nic_supports_interconnect(dm: DesignModel) -> None:
    """The fabric's switches run the node configuration's protocol at its speed."""
    v = dm.v
    dm.forbid_violations("nic_supports_interconnect")
    for speed, lit in dm.fabric_groups(lambda f: f.speed_key if f.tiers else None, "fabric_speed"):
        if speed in v.use_speed:
            dm.m.add_implication(lit, v.use_speed[speed]).only_enforce_if(dm.assumption["nic_supports_interconnect"])
        else:
            # No node configuration of this model runs that (protocol, speed): a model restricted to
            # some configurations (min_time's per-pair solves) still offers such fabrics.
            dm.forbid("nic_supports_interconnect", lit)


def leaf_ports_cover_endpoints(dm: DesignModel) -> None:
    """1 tier: E ≤ k. Otherwise leaves per rail = ceil(n / d) exactly and leaves = rails × that
    (plus the leaves of converged storage units). Without a fabric, one node only."""
    v, m = dm.v, dm.m
    dm.add("leaf_ports_cover_endpoints", m.add(v.nodes == 1), v.use_tier[0])
    for radix, lit in dm.fabric_groups(lambda f: f.radix if f.tiers == 1 else None, "single_switch_radix"):
        dm.add("leaf_ports_cover_endpoints", m.add(v.endpoints <= radix), lit)
    for down, lit in dm.fabric_groups(lambda f: f.down if f.tiers >= 2 else None, "leaf_down_ports"):
        dm.add("leaf_ports_cover_endpoints", m.add(down * v.leaves_per_rail >= v.nodes), lit)
        dm.add("leaf_ports_cover_endpoints", m.add(down * v.leaves_per_rail <= v.nodes + down - 1), lit)
    # Converged storage adds compute_storage_leaves for the storage units (storage_fabric_ports_cover).
    for rails_lit, configs in dm.node_groups(lambda c: c.rails):
        dm.add("leaf_ports_cover_endpoints",
               m.add(v.leaves == configs[0].rails * v.leaves_per_rail + dm.n.compute_storage_leaves),
               rails_lit, v.multi_tier)


def spine_ports_cover_uplinks(dm: DesignModel) -> None:
    """2 tiers: leaves × links per leaf-spine pair ≤ k. 3 tiers: pods = ceil(leaves / P)."""
    v, m = dm.v, dm.m
    for (links, radix), lit in dm.fabric_groups(
            lambda f: (f.links_per_leaf_spine, f.radix) if f.tiers == 2 else None, "leaf_spine_ports"):
        dm.add("spine_ports_cover_uplinks", m.add(v.leaves * links <= radix), lit)
    for p, lit in dm.fabric_groups(lambda f: f.leaves_per_pod if f.tiers == 3 else None, "pod_leaves"):
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods >= v.leaves), lit)
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods <= v.leaves + p - 1), lit)


def core_ports_cover_uplinks(dm: DesignModel) -> None:
    """3 tiers: pods × links per spine-core pair ≤ k."""
    for (links, radix), lit in dm.fabric_groups(
            lambda f: (f.links_per_spine_core, f.radix) if f.tiers == 3 else None, "spine_core_ports"):
        dm.add("core_ports_cover_uplinks", dm.m.add(dm.v.pods * links <= radix), lit)


def oversubscription_within_limit(dm: DesignModel) -> None:
    dm.forbid_violations("oversubscription_within_limit")


def uplinks_balanced(dm: DesignModel) -> None:
    """Spines divide leaf uplinks (enumerated), so spines = S (2 tiers) or Q per pod, cores = Q × C."""
    v, m = dm.v, dm.m
    for spines, lit in dm.fabric_groups(lambda f: f.spines if f.tiers == 2 else None, "spines_2_tiers"):
        dm.add("uplinks_balanced", m.add(v.spines == spines), lit)
    for spines, lit in dm.fabric_groups(lambda f: f.spines if f.tiers == 3 else None, "spines_per_pod"):
        dm.add("uplinks_balanced", m.add(v.spines == spines * v.pods), lit)
    for cores, lit in dm.fabric_groups(lambda f: f.spines * f.cores_per_plane if f.tiers == 3 else None, "cores"):
        dm.add("uplinks_balanced", m.add(v.cores == cores), lit)


def port_form_factor_match(dm: DesignModel) -> None:
    """A part may be used only with a switch (a-end) and a node or switch (b-end) it fits.

    A cable (DAC, ACC, AOC) whose node end carries several links cannot split them over the
    different leaves of a rail-optimized fabric, so it is only usable with one switch.
    """
    o, v = dm.options, dm.v
    # Fabric options share their switch and speed: test each part once per (switch, speed).
    by_switch_speed: dict[tuple, tuple] = {}
    for f in o.fabrics:
        if f.tiers:
            switch, literals = by_switch_speed.setdefault((f.switch.id, f.gbps), (f.switch, []))
            literals.append(v.use_fo[f.index])

    def switches_fitting(part, end: str) -> list:
        return [lit for (_, gbps), (switch, lits) in by_switch_speed.items()
                if part_fits_switch_end(part, switch, gbps, end) for lit in lits]

    for cls, parts in o.parts.items():
        for p in parts:
            lit = v.use_part[cls, p.index]
            upper = switches_fitting(p.part, "a")
            if cls == "node-leaf":
                lower = [v.use_nc[c.index] for c in o.node_configs if part_fits_node_end(p.part, c)]
                if p.part.one_piece and p.part.links > p.part.b_ends:
                    dm.forbid("port_form_factor_match", lit, v.multi_tier)
            else:
                lower = switches_fitting(p.part, "b")
            for fits in (upper, lower):
                if fits:
                    dm.m.add_bool_or(fits).only_enforce_if([dm.assumption["port_form_factor_match"], lit])
                else:
                    dm.forbid("port_form_factor_match", lit)
    # Storage and management parts are chosen per option among fitting ones (networks.py): an
    # option or pairing without one is ruled out.
    dm.forbid_violations("port_form_factor_match")


def cable_reach(dm: DesignModel) -> None:
    dm.forbid_violations("cable_reach")


def _rack_capacity(dm: DesignModel, family: str) -> None:
    """Homogeneous racks: per device model, count = ceil(devices / devices per rack), each family
    owning its bound (nodes: per distinct node power or rack units; switches and storage units:
    per model, over all networks).

    A design whose devices all fit in one rack may instead use a single mixed rack (exact: the
    sums of power and units are checked against that one rack).
    """
    o, v, m, n = dm.options, dm.v, dm.m, dm.n
    by_power = family == "rack_power_within_limit"
    several = v.single_rack.Not()
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")

    def caps(watts: float, units: int) -> tuple:
        """(by power, by units) devices per rack, for every rack class."""
        return tuple((devices_per_rack_by_power(r.rack, watts), r.rack.rack_units // units) for r in o.racks)

    # Nodes: one bound per family, compute racks are the larger (build_networks.py).
    if by_power:
        node_groups = list(n.node_power_caps)  # (literal, nodes per rack in each rack class)
        racks = n.node_racks_by_power
    else:
        node_groups = [(lit, tuple(r.rack.rack_units // configs[0].server.rack_units for r in o.racks))
                       for lit, configs in dm.node_groups(lambda c: c.server.rack_units)]
        racks = n.node_racks_by_units
    for lit, per_class in node_groups:
        for r, cap in zip(o.racks, per_class):
            rack_lit = v.use_rack[r.index]
            if cap < 1:
                dm.forbid(family, lit, rack_lit)
                continue
            dm.add(family, m.add(cap * racks >= v.nodes), lit, rack_lit, several)
            dm.add(family, m.add(cap * racks <= v.nodes + cap - 1), lit, rack_lit, several)
    dm.add(family, m.add(v.compute_racks >= racks), several)
    # Switches and storage units, per model.
    groups = [(switches[sid], o.switch_power_w(switches[sid]), count, n.switch_racks_of[sid])
              for sid, count in n.switches_of.items()]
    groups += [(tiers[t], tiers[t].power_w, count, n.unit_racks_of[t]) for t, count in n.units_of.items()]
    for device, watts, count, racks in groups:
        for r, (power_cap, units_cap) in zip(o.racks, caps(watts, device.rack_units)):
            rack_lit = v.use_rack[r.index]
            cap = power_cap if by_power else units_cap
            if cap < 1:
                dm.add(family, m.add(count == 0), rack_lit)
                continue
            dm.add(family, m.add(cap * racks >= count), rack_lit, several)
            if cap == min(power_cap, units_cap):  # the binding bound also fixes the ceiling exactly
                dm.add(family, m.add(cap * racks <= count + cap - 1), rack_lit, several)
    total = v.power_w["total"] if by_power else v.rack_units["total"]
    for r in o.racks:
        limit = _thousandths(r.rack.power_kw) if by_power else r.rack.rack_units  # W totals are rounded up
        dm.add(family, m.add(total <= limit), v.use_rack[r.index], v.single_rack)


def rack_power_within_limit(dm: DesignModel) -> None:
    _rack_capacity(dm, "rack_power_within_limit")


def rack_units_within_limit(dm: DesignModel) -> None:
    _rack_capacity(dm, "rack_units_within_limit")


def racks_available(dm: DesignModel) -> None:
    v, m = dm.v, dm.m
    dm.add("racks_available", m.add(v.racks <= dm.problem.instance.site.max_racks))
    dm.forbid_violations("racks_available")
    # A single mixed rack is one rack, whatever it holds.
    for var, value in ((v.compute_racks, 1), (v.switch_racks, 0), (v.storage_racks, 0)):
        m.add(var == value).only_enforce_if(v.single_rack)


def site_power_within_limit(dm: DesignModel) -> None:
    cap = dm.problem.instance.site.power_cap_kw
    if cap is not None:
        dm.add("site_power_within_limit", dm.m.add(dm.v.power_w["total"] <= _thousandths(cap)))


def _thousandths(value: float) -> int:
    """A limit or a per-unit supply in integer thousandths (kW → W, GB/s → MB/s, TB → GB), rounded
    down. The 1e-6 keeps decimal inputs exact: 64.448 kW is 64447.99999999999 W in binary."""
    return math.floor(value * 1000 + 1e-6)


def _thousandths_up(value: float) -> int:
    """A need in integer thousandths, rounded up (0.3 GB/s is 300 MB/s, not 301)."""
    return math.ceil(value * 1000 - 1e-6)


def storage_bandwidth_met(dm: DesignModel) -> None:
    """units × read ≥ data-loading need at the throughput target; units × write ≥ checkpoint need."""
    needs = dm.problem.storage_needs(dm.target or 0.0)
    for s in dm.options.storage:
        lit = dm.v.use_storage[s.index]
        for need, per_unit in ((needs.read_gb_per_s, s.tier.read_gb_per_s), (needs.write_gb_per_s, s.tier.write_gb_per_s)):
            dm.add("storage_bandwidth_met",
                   dm.m.add(_thousandths(per_unit) * dm.v.storage_units >= _thousandths_up(need)), lit)


def storage_capacity_met(dm: DesignModel) -> None:
    need_gb = _thousandths_up(dm.problem.storage_needs(dm.target or 0.0).capacity_tb)
    for s in dm.options.storage:
        dm.add("storage_capacity_met",
               dm.m.add(_thousandths(s.tier.capacity_tb) * dm.v.storage_units >= need_gb), dm.v.use_storage[s.index])


def storage_latency_ok(dm: DesignModel) -> None:
    dm.forbid_violations("storage_latency_ok")


from topoopt.solver import storage_constraints  # noqa: E402  (the storage and management networks' families)

FAMILY_FUNCTIONS: dict[str, Callable[[DesignModel], None]] = {
    family: globals().get(family) or getattr(storage_constraints, family) for family in FAMILIES}
