"""The storage network's families: the nodes' storage ports carry the traffic, and the storage
switches (or the converged compute leaves) have the ports for every node and storage unit."""

from __future__ import annotations

from topoopt.options.networks import STORAGE_CAP_NEED_FACTOR, STORAGE_CAP_NODE_GBPS
from topoopt.solver.model.core import DesignModel, by_value, dedicated_options
from topoopt.solver.model.integers import thousandths, thousandths_up


def storage_need_gbps(dm: DesignModel) -> float:
    """Storage traffic of all nodes together at the throughput target: 8 × max(read, write) GB/s
    (reads run continuously; a blocking checkpoint save pauses them)."""
    return dm.problem.storage_needs(dm.target or 0.0).network_gbps


def storage_nic_bandwidth_met(dm: DesignModel) -> None:
    """n × storage Gb/s per node ≥ the storage traffic: dedicated, the storage ports cabled × their
    speed; converged, the compute rails × the link speed. Dedicated, also: the storage leaves'
    uplinks carry the traffic (2 tiers: leaves × up × g ≥ need), and the nodes are not cabled
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
    """Dedicated: 1 tier, node and unit ports ≤ k; 2 tiers, storage leaves = ceil(ports / down)
    exactly and leaves × links per leaf–spine pair (up / spines) ≤ k. Converged: a compute fabric is needed; on
    one switch, node and unit ports ≤ k; otherwise compute_storage_leaves = ceil(unit ports / d)
    exactly. Either way the units must run the switch's speed and protocol (pairings, options/networks.py)."""
    v, m, n, o = dm.vars, dm.model, dm.net, dm.options
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
    # Each leaf reaches each spine with up / spines links: leaves × up / spines ≤ k.
    for (up, radix), lit in by_value(dm, [s for s, _ in two], [x for _, x in two],
                                     lambda s: (s.up, s.radix), "storage_spine_ports").items():
        dm.add(family, m.add(up * n.leaves <= radix * n.spines), lit)
    # Converged: the units sit on the compute fabric (which a converged network needs: network_definitions.py).
    for f in o.fabrics:
        if f.tiers == 1:
            dm.add(family, m.add(v.endpoints + n.unit_ports <= f.radix), v.use_fabric[f.index], n.converged)
    multi = [f for f in o.fabrics if f.tiers >= 2]
    for down, lit in by_value(dm, multi, [v.use_fabric[f.index] for f in multi], lambda f: f.down, "fabric_down").items():
        csl = n.compute_storage_leaves
        dm.add(family, m.add(down * csl >= n.unit_ports), lit, n.converged)
        dm.add(family, m.add(down * csl <= n.unit_ports + down - 1), lit, n.converged)
