"""The storage network's families: the nodes' storage ports carry the traffic, and the storage
switches (or the converged compute leaves) have the ports for every node and storage unit."""

from __future__ import annotations

from topoopt.options.networks import STORAGE_CAP_NEED_FACTOR, STORAGE_CAP_NODE_GBPS
from topoopt.solver.model.core import DesignModel, by_value, dedicated_options
from topoopt.solver.model.fabric import growth_leaves
from topoopt.solver.model.integers import ceil_div, thousandths, thousandths_up


def storage_need_gbps(dm: DesignModel) -> float:
    """Storage traffic of all nodes together at the throughput target: 8 × max(read, write) GB/s
    (reads run continuously; a blocking checkpoint save pauses them)."""
    return dm.problem.storage_needs(dm.target or 0.0).network_gbps


def storage_nic_bandwidth_met(dm: DesignModel) -> None:
    """n × storage Gb/s per node ≥ the storage traffic: dedicated, the storage ports cabled × their
    speed; converged, the compute rails × the link speed. Dedicated, also: the storage leaves'
    uplinks carry the traffic (2 or 3 tiers: leaves × up × g ≥ need), and the nodes are not cabled
    beyond max(8 × need, nodes × 400 Gb/s) (for P × g ≤ 400 that always holds)."""
    v, m, n = dm.vars, dm.model, dm.net
    need_gbps = storage_need_gbps(dm)
    need = thousandths_up(need_gbps)
    family = "storage_nic_bandwidth_met"
    ded, lits = dedicated_options(dm)
    for gbps, lit in by_value(dm, ded, lits, lambda s: s.node_gbps, "storage_node_gbps").items():
        dm.add(family, m.add(1000 * gbps * v.nodes >= need), lit)
        if gbps > STORAGE_CAP_NODE_GBPS:
            dm.add(family, m.add(1000 * gbps * v.nodes <= thousandths(STORAGE_CAP_NEED_FACTOR * need_gbps)), lit)
    two = [(s, x) for s, x in zip(ded, lits) if s.tiers == 2]
    for uplink_gbps, lit in by_value(dm, [s for s, _ in two], [x for _, x in two], lambda s: s.up * s.gbps,
                                     "storage_uplink_gbps").items():
        dm.add(family, m.add(1000 * uplink_gbps * n.leaves >= need), lit)
    for lit, configs in dm.node_groups(lambda c: c.rails * c.interconnect.gbps):
        gbps = configs[0].rails * configs[0].interconnect.gbps
        dm.add(family, m.add(1000 * gbps * v.nodes >= need), lit, n.converged)


def storage_fabric_ports_cover(dm: DesignModel) -> None:
    """Dedicated: 1 tier, node and unit ports ≤ k; 2 or 3 tiers, storage leaves = ceil(ports /
    down) exactly; 2 tiers, leaves × links per leaf–spine pair (up / spines) ≤ k; 3 tiers
    (_three_tiers, a 2-tier option's third tier), pods of P leaves and cores within k. Converged (docs/model.md,
    "Storage network"): a compute fabric is needed, not rail-only; on one switch, node and unit
    ports ≤ k; otherwise the units sit on free top-tier ports (spines: ``U + leaves·u ≤ S·k``;
    cores: ``U + spines·u2 ≤ cores·k``) or on compute_storage_leaves = ceil(U / (k − u)) exactly,
    whose uplinks carry the storage need. Either way the units must run the switch's speed and
    protocol (pairings, options/networks.py)."""
    m, n = dm.model, dm.net
    family = "storage_fabric_ports_cover"
    dm.forbid_violations(family)
    ded, lits = dedicated_options(dm)
    for radix, lit in by_value(dm, [s for s in ded if s.tiers == 1], [x for s, x in zip(ded, lits) if s.tiers == 1],
                               lambda s: s.radix, "storage_one_switch").items():
        dm.add(family, m.add(n.endpoints <= radix), lit)
    two = [(s, x) for s, x in zip(ded, lits) if s.tiers == 2]
    for down, lit in by_value(dm, [s for s, _ in two], [x for _, x in two], lambda s: s.down, "storage_down").items():
        dm.add(family, m.add(down * n.leaves >= n.endpoints), lit)
        dm.add(family, m.add(down * n.leaves <= n.endpoints + down - 1), lit)
    # Each leaf reaches each spine with up / spines links: leaves × up / spines ≤ k (2 tiers).
    for (up, radix), lit in by_value(dm, [s for s, _ in two], [x for _, x in two],
                                     lambda s: (s.up, s.radix), "storage_spine_ports").items():
        dm.add(family, m.add(up * n.leaves <= radix * n.spines), lit)
    _three_tiers(dm, family, [(s, x) for s, x in zip(ded, lits) if s.three_tier_links])
    _converged_attach(dm, family)


def _three_tiers(dm: DesignModel, family: str, three: list) -> None:
    """3 tiers: pods = ceil(leaves / P) exactly, and a core's pods × u2 / C ports ≤ k for the
    cores per plane C. Taken only beyond what the same shape holds in 2 tiers (leaves × m > k):
    below it the 2 tiers need no more spines, cables or cores, so the restriction keeps the
    optimum (docs/model.md, "Storage network")."""
    m, n = dm.model, dm.net
    for (per_pod, spine_up, radix, links), lit in by_value(
            dm, [s for s, _ in three], [x for _, x in three],
            lambda s: (s.pod[0], s.pod[2], s.radix, s.three_tier_links), "storage_pods").items():
        dm.add(family, m.add(per_pod * n.pods >= n.leaves), lit, n.three_tiers)
        dm.add(family, m.add(per_pod * n.pods <= n.leaves + per_pod - 1), lit, n.three_tiers)
        dm.add(family, m.add(links * n.leaves >= radix + 1), lit, n.three_tiers)
        for c, c_lit in n.cores_per_plane.items():
            if spine_up % c == 0:
                dm.add(family, m.add(n.pods * (spine_up // c) <= radix), lit, c_lit)


def _converged_attach(dm: DesignModel, family: str) -> None:
    """Where a converged network's units plug into the compute fabric (docs/model.md)."""
    v, m, n = dm.vars, dm.model, dm.net
    for radix, lit in dm.fabric_groups(lambda f: f.radix if f.tiers == 1 else None, "single_switch_radix"):
        dm.add(family, m.add(v.endpoints + n.unit_slots <= radix), lit, n.converged)
    # Rail-only: a unit would reach one rail group only.
    for rails, rails_lit in dm.rails_groups():
        for g, g_lit in v.use_rails_per_leaf.items():
            if g < rails:
                dm.forbid(family, n.converged, v.use_tier[1], rails_lit, g_lit)
    on_leaves = [n.converged, n.storage_on_top.Not()]
    need = thousandths_up(storage_need_gbps(dm))
    # A storage leaf's down-ports, uplinks and speed.
    for (ports, up, gbps), lits in dm.leaf_groups(lambda f: f.up, lambda f: (f.radix, f.gbps),
                                                  lambda up, base: (base[0] - up, up, base[1]),
                                                  lambda f: (f.radix - f.up, f.up, f.gbps), "storage_leaf_room"):
        csl = n.compute_storage_leaves
        dm.add(family, m.add(ports * csl >= n.unit_slots), *lits, *on_leaves)
        dm.add(family, m.add(ports * csl <= n.unit_slots + ports - 1), *lits, *on_leaves)
        dm.add(family, m.add(1000 * up * gbps * csl >= need), *lits, *on_leaves)
    for (up, radix), lits in dm.two_tier_groups(lambda f: f.up, lambda f: f.radix, "spine_free_ports"):
        dm.add(family, m.add(n.unit_slots + up * v.leaves <= v.spines_2_tier * radix), *lits, n.storage_on_top)
    for (ports, up), lit in dm.fabric_groups(
            lambda f: (f.spines * f.cores_per_plane * f.radix, f.spine_up) if f.tiers == 3 else None, "core_free_ports"):
        dm.add(family, m.add(n.unit_slots + up * v.spines <= ports), lit, n.storage_on_top)
    # Provisioned for growth: the top tier keeps the ports of the leaves still to come.
    if dm.problem.instance.site.provision_fabric_for_nodes is None:
        return
    two = dm.two_tier_groups(lambda f: f.up, lambda f: f.radix, "growth_spine_ports")
    for (up, radix), lits, grown, conditions in growth_leaves(dm, [(((u, b), b - u), lits) for (u, b), lits in two]):
        dm.add(family, m.add(n.unit_slots <= v.spines_2_tier * radix - up * grown), *lits, n.storage_on_top,
               *conditions)
    three = dm.fabric_groups(lambda f: ((f.spines * f.cores_per_plane * f.radix, f.spines * f.spine_up,
                                         f.leaves_per_pod), f.down) if f.tiers == 3 else None, "growth_core_ports")
    for (ports, up, pod), lits, grown, conditions in growth_leaves(dm, [(k, [x]) for k, x in three]):
        dm.add(family, m.add(n.unit_slots <= ports - up * ceil_div(grown, pod)), *lits, n.storage_on_top, *conditions)
