"""The storage network, the cold tier and the management network in the CP-SAT model: a
just-feasible and a just-infeasible case per family on the tiny instance (exact statuses, the family
in the minimal conflict), converged storage on the compute fabric, and the video example whose
storage path decides the design.

Expected values come from docs/model.md's rules and the performance model (topoopt.perf), never
from the solver's code.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest
from fabric_invariants import check_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solver_fixtures import SRC, TINY_CATALOG, TINY_PRICES, conflict, infeasible, inst, optimal, tiny

from topoopt import perf
from topoopt.catalog import resolve_catalog
from topoopt.checker import check_design
from topoopt.fabric import build_fabric, fabric_graph
from topoopt.loader import load_instance
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.solver import solve

REPO = Path(__file__).resolve().parents[1]
ROOMY = {"budget.max": 1e13, "site.max_racks": 100_000}










def needs(instance: Instance):
    """The storage needs at the deadline's token rate (perf.storage_needs)."""
    catalog = resolve_catalog(instance).catalog
    rate = 0.0
    if instance.goal.deadline_days is not None:
        rate = instance.workload.training.tokens / (instance.goal.deadline_days * 86_400)
    return perf.storage_needs(perf.Job.from_instance(instance, catalog), rate)


# -- storage_nic_bandwidth_met ----------------------------------------------------------------------
# One pinned node; its server takes up to 2 dual-port 100G storage NICs: 400 Gb/s at most.
ONE_NODE = {"constraints.pins.nodes": 1, "constraints.pins.server": "s40"}


def _reading(gbps: float) -> dict:
    """Bytes per token that make the nodes' storage traffic ``gbps`` (reads dominate)."""
    per_byte = needs(inst(ONE_NODE, {"workload.data": {"bytes_per_token": 1.0}})).read_gb_per_s * 8
    return {"workload.data": {"bytes_per_token": gbps / per_byte}}


def test_storage_nic_bandwidth_met_feasible_at_two_nics_line_rate():
    changes = {**ONE_NODE, **_reading(400)}
    assert needs(inst(changes)).network_gbps == pytest.approx(400, rel=1e-9)
    path = optimal(inst(changes)).design.storage_network
    assert (path.mode, path.nic, path.nics_per_node, path.ports_per_node, path.link_gbps) == (
        "dedicated", "snic100", 2, 4, 100)
    assert path.node_gbps == 400 and path.need_gbps == pytest.approx(400, rel=1e-6)


def test_storage_nic_bandwidth_met_one_nic_while_it_suffices():
    path = optimal(inst(ONE_NODE, _reading(200))).design.storage_network
    assert (path.nics_per_node, path.node_gbps) == (1, 200)
    assert optimal(inst(ONE_NODE, _reading(200.01))).design.storage_network.nics_per_node == 2


def test_storage_nic_bandwidth_met_infeasible_just_past_two_nics():
    result = infeasible(inst(ONE_NODE, _reading(400.01)))
    assert conflict(result) == {"storage_nic_bandwidth_met", "pins_respected"}
    item = next(i for i in result.explanation.conflict if i.family == "storage_nic_bandwidth_met")
    assert item.detail == "storage NIC 2 × snic100 (4 × 100G cabled) per node × 1 nodes = 400 Gb/s < 400 Gb/s needed" \
        "; dedicated: at most max(8 × need, nodes × 400G) cabled, 2-tier leaf uplinks ≥ need"


def test_storage_nic_bandwidth_met_more_nodes_carry_more():
    """Without the node pin, two nodes carry what one cannot."""
    d = optimal(inst({"constraints.pins.server": "s40"}, _reading(700))).design
    assert d.nodes == 2 and d.nodes * d.storage_network.node_gbps >= 700


def test_the_smallest_budget_counts_the_nodes_the_storage_traffic_needs():
    """The budget an explanation asks for is the optimum's cost also when the storage traffic,
    not memory or the deadline, sets the node count (the least-cost search looks past a pair's
    fewest nodes)."""
    changes = {"constraints.pins.server": "s40", **_reading(700)}
    best = optimal(inst(changes))
    assert best.design.nodes == 2
    result = infeasible(inst(changes, {"budget.max": best.cost.total - 1}))
    assert "budget_cap" in conflict(result)
    assert next(r for r in result.explanation.relaxations if r.family == "budget_cap").value == best.cost.total


# -- storage_fabric_ports_cover ---------------------------------------------------------------------
# Only the 32-port storage switch, 2 storage ports pinned per node (one NIC); the object tier's
# unit has 2. One tier takes 32 ports. Two tiers: the most endpoint ports per leaf is the 8:1
# split, d = 32·8 // 9 = 28 down and u = 4 up; a spine takes leaves × u/S ≤ 32, so at most 32
# leaves (S = u = 4): 32 × 28 = 896 endpoint ports.
SMALL_STORAGE_SWITCH = {**ROOMY, "constraints.switches": {"deny": ["esw256"]}, "constraints.storage": {"allow": ["obj"]},
                        "goal.deadline_days": None, "constraints.pins.server": "s40",
                        "constraints.pins.nics_per_node": 1, "site.distances.across_rows_m": 48,
                        "constraints.pins.storage_ports_per_node": 2}


@pytest.mark.parametrize("nodes, tiers, leaves, spines", [(15, 1, 1, 0), (447, 2, 32, 4)])
def test_storage_fabric_ports_cover_feasible_at_the_storage_switch_limits(nodes, tiers, leaves, spines):
    d = optimal(inst(SMALL_STORAGE_SWITCH, {"constraints.pins.nodes": nodes})).design
    path = d.storage_network
    assert (path.tiers, path.leaves, path.spines, path.ports_per_node, path.unit_ports) == (tiers, leaves, spines, 2, 2)
    groups = {g.tier: g for g in d.switches if g.network == "storage"}
    assert groups["storage-leaf"].count == leaves
    endpoints = nodes * 2 + 2
    assert groups["storage-leaf"].ports_used == endpoints + (leaves * 4 if tiers == 2 else 0)
    assert groups["storage-leaf"].ports_used <= leaves * 32


def test_storage_fabric_ports_cover_one_node_past_one_switch_takes_two_tiers():
    """34 ports: the 8:1 leaf (28 down, 4 up) needs 2 leaves and 1 spine (2 × 4 ≤ 32), the fewest
    switches and leaf–spine links of any split."""
    path = optimal(inst(SMALL_STORAGE_SWITCH, {"constraints.pins.nodes": 16})).design.storage_network
    assert (path.tiers, path.leaves, path.spines) == (2, math.ceil((16 * 2 + 2) / 28), 1)
    assert (path.leaf_down_ports, path.leaf_up_ports) == (28, 4)


# Past 32 leaves 2 tiers cannot hold them (every leaf reaches every spine: leaves × u/S ≤ 32), so
# the storage network takes a third tier (docs/model.md, "Storage network"): the 100G part carries
# one link, so m = 1 link per leaf–spine pair, pods of P = floor(32/2) = 16 leaves and Q = u spines,
# each spine's u2 = 16 uplinks over the C cores of its plane (C divides 16), a core using
# pods × 16 / C ≤ 32 ports; cores = Q · C.
@cache
def _three_tiers() -> tuple[Instance, SolveResult]:
    instance = inst(SMALL_STORAGE_SWITCH, {"constraints.pins.nodes": 448})
    return instance, optimal(instance)


def test_storage_fabric_ports_cover_one_node_past_two_tiers_takes_three():
    """448 nodes × 2 ports + the unit's 2 = 898 endpoint ports. Per split (d, u): leaves =
    ceil(898 / d), pods = ceil(leaves / 16), spines = pods · u, C = 2 (3 or 4 pods × 16 / C ≤ 32),
    cores = u · C: (16, 16) 57 + 64 + 32 = 153 switches; (20, 12) 45 + 36 + 24 = 105; (24, 8)
    38 + 24 + 16 = 78; (28, 4) 33 + 12 + 8 = 53, the fewest, at $15,000 each."""
    instance, result = _three_tiers()
    d = result.design
    path = d.storage_network
    assert (path.tiers, path.leaves, path.spines, path.cores, path.links_per_leaf_spine) == (3, 33, 12, 8, 1)
    assert (path.leaf_down_ports, path.leaf_up_ports) == (28, 4)
    groups = {g.tier: (g.count, g.ports_used) for g in d.switches if g.network == "storage"}
    # Leaves: 898 endpoints + 33 × 4 uplinks; spines: those 132 + 12 × 16 uplinks; cores: the 192.
    assert groups == {"storage-leaf": (33, 898 + 132), "storage-spine": (12, 132 + 192), "storage-core": (8, 192)}
    links = {g.between: (g.count, g.assemblies) for g in d.links if g.network == "storage"}
    # One assembly per link (q = 1): 33 leaves × 4 spines × 1 link; 12 spines × 2 cores × 8 links.
    assert links["storage-leaf-spine"] == (132, 132) and links["storage-spine-core"] == (192, 192)
    [line] = [c for c in result.cost.breakdown if c.item == "esw32"]
    assert (line.quantity, line.total) == (53, 53 * 15_000)
    assert check_design(instance, d, result.cost, result.performance) == []
    catalog = resolve_catalog(instance).catalog
    check_all(d, fabric_graph(d, catalog=catalog), catalog)


@pytest.mark.parametrize("change, field", [
    ({"spines": 11}, "storage_network.spines"),
    ({"cores": 12}, "storage core switches"),  # 4 planes of 3: 3 does not divide 16
    ({"links_per_leaf_spine": 3}, "storage leaf–spine links"),
    ({"leaves": 32}, "storage_network.leaves"),
])
def test_a_tampered_three_tier_storage_network_is_rejected(change, field):
    instance, result = _three_tiers()
    d = result.design
    tampered = d.model_copy(update={"storage_network": d.storage_network.model_copy(update=change)})
    found = check_design(instance, tampered, result.cost, result.performance)
    assert any(v.family == "storage_fabric_ports_cover" and v.item.startswith(field) for v in found), found


def test_storage_fabric_ports_cover_three_tiers_at_their_limit():
    """A core takes pods × 16 / C ≤ 32 ports, so at most 32 pods (C = 16) of 16 leaves: 512 leaves
    × 28 = 14,336 endpoint ports, 7,167 nodes with the unit's 2; one node more is infeasible."""
    path = optimal(inst(SMALL_STORAGE_SWITCH, {"constraints.pins.nodes": 7167})).design.storage_network
    assert (path.tiers, path.leaves, path.spines, path.cores) == (3, 512, 32 * 4, 4 * 16)
    result = infeasible(inst(SMALL_STORAGE_SWITCH, {"constraints.pins.nodes": 7168}))
    # The bigger storage switch is denied (allowed_by_lists); converged is not offered (the units
    # run 100G Ethernet, the compute fabric 400G InfiniBand).
    assert conflict(result) == {"storage_fabric_ports_cover", "pins_respected", "allowed_by_lists"}


def test_a_storage_network_past_two_tiers_of_ndr200_takes_three():
    """frontier-131k on InfiniBand: 8,192 DGX B200 (the most a 3-tier QM9700 compute fabric
    holds: 65,536 rails), InfiniBand switches only, 2 storage ports per node pinned. QM9700 at
    NDR200 has k = 128 ports in 4-port cages; the 8:1 split is 112 down / 16 up, so 2 tiers end
    at 128 leaves × 112 = 14,336 endpoint ports, below 16,384 node ports + 32 unit ports. 3 tiers:
    147 leaves (ceil(16,416 / 112)). The twin DR4 kit's fibre carries 2 links, so m is even and
    leaves 2 spines per pod at least: m ∈ {2, 4, 8}, pods of 64 / m leaves and 16 / m spines, and
    C cores per plane, the least divisor of 64 with pods × 64 / C ≤ 128:
    m = 2: 5 pods, 40 spines, C = 4, 32 cores (219 switches);
    m = 4: 10 pods, 40 spines, C = 8, 32 cores (219);
    m = 8: 19 pods, 38 spines, C = 16, 32 cores (217), the fewest.
    Its kits by the cages filled: leaf–spine max(2 spines × (18 full pods × 16 + the last pod's 3
    leaves × 8 / 4 = 6), 147 leaves × 4) = 588; spine–core max(32 cores × ceil(19 × 4 / 4),
    38 spines × 16) = 608 — also the fewest (m = 2: 592 and 640)."""
    data = load_instance(REPO / "instances" / "frontier-131k.yaml").instance.model_dump(by_alias=True,
                                                                                         exclude_unset=True)
    data["goal"]["deadline_days"] = 120
    data["constraints"]["switches"] = {"deny": ["sn4700", "sn5600", "th5-64x800", "th4-64x400", "tor-32x100",
                                                "sn2410"]}
    data["constraints"]["pins"].update(nodes=8192, interconnect="ib-ndr", storage_network="dedicated",
                                       storage_ports_per_node=2)
    instance = Instance.model_validate(data)
    result = optimal(instance)
    path = result.design.storage_network
    assert (path.switch, path.link_gbps, path.unit_ports) == ("qm9700", 200, 32)
    assert (path.tiers, path.leaf_down_ports, path.leaf_up_ports, path.links_per_leaf_spine) == (3, 112, 16, 8)
    assert (path.leaves, path.spines, path.cores) == (147, 38, 32)
    kits = {g.between: g.assemblies for g in result.design.links if g.network == "storage"}
    assert (kits["storage-leaf-spine"], kits["storage-spine-core"]) == (588, 608)
    assert check_design(instance, result.design, result.cost, result.performance) == []


# QSFP28 ports that run 25G only: the 100G parts fit their cages, but not their speed.
SLOW_UNITS = {"id": "obj25", "name": "Object node 25G", "source": SRC, "kind": "object", "capacity_tb": 1000,
              "read_gb_per_s": 5, "write_gb_per_s": 3, "latency_class": "high", "power_w": 800, "rack_units": 2,
              "network_ports": 2, "port_speeds_gbps": [25], "port_form_factor": "qsfp28", "protocols": ["ethernet"]}


def test_storage_fabric_ports_cover_infeasible_when_no_unit_runs_the_storage_speed():
    """The only allowed tier runs 25G; every storage network here runs 100G (the storage NIC's speed)."""
    changes = {"catalog.add.storage": [*TINY_CATALOG["storage"], SLOW_UNITS],
               "catalog.prices": {**TINY_PRICES, "obj25": 25_000}, "constraints.storage": {"allow": ["obj25"]}}
    result = infeasible(inst(changes))
    assert conflict(result) == {"storage_fabric_ports_cover", "allowed_by_lists"}


# -- storage units at another speed than the nodes -------------------------------------------------
# The 32-cage storage switch of SMALL_STORAGE_SWITCH whose cages also run 4 × 25G, an object tier
# with 25G SFP28 ports only and a 100G-to-4 × 25G breakout: the nodes run 100G, the units 25G in
# cages of their own, each unit's ceil(ports / 4) breakouts one cage = 1 port at 100G (docs/model.md,
# "Unit speeds").
BREAKOUT_SWITCH = {"id": "esw32b", "name": "Storage SW 32x100G, 4 x 25G breakout", "source": SRC,
                   "protocols": ["ethernet"], "cages": 32, "cage_form_factor": "qsfp28",
                   "ports_per_cage": {100: 1, 25: 4}, "power_w": 300, "rack_units": 1}
SFP_UNITS = {**SLOW_UNITS, "id": "obj25s", "port_form_factor": "sfp28"}
BREAKOUT = {"id": "brk25", "name": "100G to 4 x 25G breakout AOC 30 m", "source": SRC, "media": "aoc", "gbps": 25,
            "links": 4, "a_form_factor": "qsfp28", "a_ends": 1, "b_form_factor": "sfp28", "b_ends": 4,
            "max_reach_m": 30, "power_w_per_a_end": 2, "power_w_per_b_end": 1}


def _slow_units(nodes: int, ports_per_unit: int, capacity_tb: float = 1000) -> Instance:
    units = {**SFP_UNITS, "network_ports": ports_per_unit, "capacity_tb": capacity_tb}
    return inst(SMALL_STORAGE_SWITCH, {
        "catalog.add.switches": [*TINY_CATALOG["switches"], BREAKOUT_SWITCH],
        "catalog.add.storage": [*TINY_CATALOG["storage"], units],
        "catalog.add.cables": [*TINY_CATALOG["cables"], BREAKOUT],
        "catalog.prices": {**TINY_PRICES, "esw32b": 16_000, "obj25s": 25_000, "brk25": 400},
        "constraints.switches": {"deny": ["esw32", "esw256"]}, "constraints.storage": {"allow": ["obj25s"]},
        "constraints.pins.nodes": nodes})


def test_units_at_another_speed_take_whole_cages_beside_the_nodes():
    """15 nodes × 2 ports at 100G and one unit of 4 × 25G ports on one breakout: 30 + 1 = 31 ≤ 32
    ports, one switch (counted as 4 ports, 34 would need two tiers). The breakout lands on cage 1,
    the node ports on the next 30 cages, and the checker accepts the design."""
    instance = _slow_units(15, 4)
    result = optimal(instance)
    d = result.design
    path = d.storage_network
    assert (path.mode, path.link_gbps, path.tiers, path.leaves, path.unit_ports, d.storage.units) == (
        "dedicated", 100, 1, 1, 4, 1)
    assert [(g.tier, g.model, g.count, g.ports_used) for g in d.switches if g.network == "storage"] == [
        ("storage-leaf", "esw32b", 1, 15 * 2 + 1)]
    assert [(g.part, g.gbps, g.count, g.assemblies) for g in d.links if g.between == "storage-unit"] == [
        ("brk25", 25, 4, 1)]
    assert check_design(instance, d, result.cost, result.performance) == []
    fabric = build_fabric(d, instance)
    assert fabric.warnings == []
    units = next(b for b in fabric.links if b.between == "storage-unit")
    assert units.a_port == ["p1/1", "p1/2", "p1/3", "p1/4"] and set(units.b_device) == {"storage-01"}
    nodes = next(b for b in fabric.links if b.between == "node-storage")
    assert sorted(nodes.a_port, key=lambda port: int(port[1:])) == [f"p{cage}" for cage in range(2, 32)]


def test_units_at_another_speed_take_a_cage_each():
    """Two units of 2 × 25G (each holding 0.6 of the capacity needed): an assembly serves one
    unit, so each takes a breakout and its cage: 15 × 2 + 2 = 32 ports, the switch's last; one
    node more takes two tiers, ceil(34 / 28) = 2 leaves of the 8:1 split."""
    capacity_tb = 0.6 * needs(_slow_units(15, 2)).capacity_tb
    d = optimal(_slow_units(15, 2, capacity_tb)).design
    assert d.storage.units == 2
    assert (d.storage_network.tiers, d.storage_network.leaves) == (1, 1)
    assert [(g.tier, g.ports_used) for g in d.switches if g.network == "storage"] == [("storage-leaf", 32)]
    assert [(g.part, g.count, g.assemblies) for g in d.links if g.between == "storage-unit"] == [("brk25", 4, 2)]
    path = optimal(_slow_units(16, 2, capacity_tb)).design.storage_network
    assert (path.tiers, path.leaves, path.spines, path.leaf_down_ports) == (2, 2, 1, 28)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(1, 40), ports=st.integers(1, 6), units=st.integers(1, 3))
def test_units_at_another_speed_are_wired_as_counted(nodes, ports, units):
    """Whatever the node count, ports per unit and unit count: the design passes the checker, the
    build-out wires it without a warning, and the storage leaves hold 2 ports per node and one
    cage per breakout (ceil(ports / 4) per unit), plus their uplinks."""
    capacity_tb = needs(_slow_units(nodes, ports)).capacity_tb / units * 1.0001
    instance = _slow_units(nodes, ports, capacity_tb)
    result = optimal(instance)
    d = result.design
    assert check_design(instance, d, result.cost, result.performance) == []
    assert build_fabric(d, instance).warnings == []
    path, cages = d.storage_network, d.storage.units * -(-ports // 4)
    uplinks = path.leaves * path.leaf_up_ports if path.tiers == 2 else 0
    assert [g.ports_used for g in d.switches if g.tier == "storage-leaf"] == [2 * nodes + cages + uplinks]
    assert {(g.part, g.gbps) for g in d.links if g.between == "storage-unit"} == {("brk25", 25)}


def test_the_checker_counts_units_at_another_speed_in_cages():
    """The design above, tampered: its units recorded at 100G (the tier runs 25G only), or the
    switch's ports in use counted as the units' 4 ports: each is rejected."""
    instance = _slow_units(15, 4)
    result = optimal(instance)
    d = result.design
    index = next(i for i, g in enumerate(d.links) if g.between == "storage-unit")
    at_100 = d.model_copy(update={"links": [g.model_copy(update={"gbps": 100}) if i == index else g
                                            for i, g in enumerate(d.links)]})
    families = {v.family for v in check_design(instance, at_100, result.cost, result.performance)}
    assert "storage_fabric_ports_cover" in families
    as_ports = d.model_copy(update={"switches": [g.model_copy(update={"ports_used": 34}) if g.tier == "storage-leaf"
                                                 else g for g in d.switches]})
    assert {v.family for v in check_design(instance, as_ports, result.cost, result.performance)} == {
        "storage_fabric_ports_cover"}


# -- converged storage on the compute fabric ---------------------------------------------------------
# A tier whose ports run 400G InfiniBand (OSFP, two per twin-port switch cage) can join the compute
# fabric, so a converged network is offered.
IB_UNITS = {"id": "ibfs", "name": "IB file system unit", "source": SRC, "kind": "parallel_fs", "capacity_tb": 500,
            "read_gb_per_s": 50, "write_gb_per_s": 30, "latency_class": "low", "power_w": 2000, "rack_units": 2,
            "network_ports": 2, "port_speeds_gbps": [400], "port_form_factor": "osfp-flat", "protocols": ["ib"]}
CONVERGED = {"catalog.add.storage": [*TINY_CATALOG["storage"], IB_UNITS],
             "catalog.prices": {**TINY_PRICES, "ibfs": 150_000}, "constraints.storage": {"allow": ["ibfs"]},
             "constraints.pins.storage_network": "converged", "site.distances.across_rows_m": 48,
             "goal.deadline_days": None, "constraints.pins.nics_per_node": 1, "constraints.pins.server": "s40"}


def test_storage_fabric_ports_cover_converged_one_switch_at_its_radix():
    """62 nodes and one unit's 2 ports fill the 64-port compute switch."""
    d = optimal(inst(CONVERGED, {"constraints.pins.nodes": 62, "constraints.pins.tiers": 1})).design
    path = d.storage_network
    assert (path.mode, path.nic, path.switch, path.tiers, path.unit_ports, path.compute_storage_leaves) == (
        "converged", None, None, 0, 2, 0)
    assert [(g.tier, g.count, g.ports_used) for g in d.switches if g.network == "compute"] == [("leaf", 1, 64)]
    assert not [g for g in d.switches if g.network == "storage"]


def test_storage_fabric_ports_cover_converged_infeasible_one_node_more_on_one_switch():
    result = infeasible(inst(CONVERGED, {"constraints.pins.nodes": 63, "constraints.pins.tiers": 1}))
    assert conflict(result) == {"storage_fabric_ports_cover", "pins_respected"}


def test_storage_fabric_ports_cover_converged_units_on_free_spine_ports():
    """Two tiers at 1:1: 40 single-rail nodes on 2 leaves of 20 down-ports in use and 20 uplinks;
    the unit's 2 ports take free spine ports, no leaf of their own."""
    d = optimal(inst(CONVERGED, {"constraints.pins.nodes": 40, "constraints.pins.tiers": 2})).design
    f, path = d.fabric, d.storage_network
    assert (f.leaf_down_ports, f.leaf_up_ports, f.leaves_per_rail) == (20, 20, 2)
    assert (path.converged_attach, path.compute_storage_leaves, f.leaves) == ("top", 0, 2)
    spine = next(g for g in d.switches if g.tier == "spine")
    assert spine.ports_used == f.leaves * f.leaf_up_ports + path.unit_ports


def test_converged_storage_reads_slow_the_step():
    """The deadline rule depends on the mode: reads over the compute NICs lengthen each step."""
    instance = inst(CONVERGED, {"constraints.pins.nodes": 4, "workload.data": {"bytes_per_token": 5e4}})
    d = optimal(instance).design
    catalog = resolve_catalog(instance).catalog
    job = perf.Job.from_instance(instance, catalog)
    hardware = perf.Hardware(gpu=catalog.by_id("gpus")["g40"], gpus_per_node=8, nodes=4, nics_per_node=1,
                             link_gbps=400, interconnect=catalog.by_id("interconnects")["ib400"], tiers=1,
                             oversubscription=1.0)
    dedicated_s = perf.time_to_train_s(job, hardware)
    converged_hw = perf.Hardware(**{**hardware.__dict__,
                                    "converged_storage_gb_per_step": perf.converged_storage_gb_per_step(job)})
    converged_s = perf.time_to_train_s(job, converged_hw)
    assert converged_s > dedicated_s
    assert d.tiers == 1 and d.storage_network.mode == "converged"
    # A deadline between the two times: met by a dedicated network only.
    between = (dedicated_s + converged_s) / 2 / 86_400
    assert infeasible(inst(CONVERGED, {"constraints.pins.nodes": 4, "constraints.pins.tiers": 1,
                                       "workload.data": {"bytes_per_token": 5e4}, "goal.deadline_days": between}))
    free = {k: v for k, v in CONVERGED.items() if k != "constraints.pins.storage_network"}
    assert optimal(inst(free, {"constraints.pins.nodes": 4, "constraints.pins.tiers": 1,
                               "constraints.storage": {}, "workload.data": {"bytes_per_token": 5e4},
                               "goal.deadline_days": between})).design.storage_network.mode == "dedicated"


# -- cold_storage_met -------------------------------------------------------------------------------
def _cold_tb(changes: dict) -> float:
    return needs(inst(changes)).cold_capacity_tb


def test_cold_storage_met_no_cold_tier_when_nothing_is_archived():
    d = optimal(tiny()).design
    assert d.cold_storage is None


@pytest.mark.parametrize("archive_tb, units", [(1000, 1), (1000.001, 2)])
def test_cold_storage_met_feasible_units_cover_the_archive(archive_tb, units):
    changes = {"workload.data": {"archive_tb": archive_tb}}
    d = optimal(inst(changes)).design
    assert (d.cold_storage.tier, d.cold_storage.units, d.cold_storage.ports) == ("obj", units, 2 * units)
    assert d.cold_storage.capacity_tb >= _cold_tb(changes)
    # Cold units sit on the storage network beside the hot ones.
    assert d.storage_network.unit_ports == d.storage.ports + d.cold_storage.ports


def test_cold_storage_met_hot_and_cold_units_of_one_tier_counted_once():
    """The object tier as hot and cold tier: its units share racks and each is counted once."""
    changes = {"workload.data": {"archive_tb": 10}, "constraints.pins.storage": "obj"}
    result = optimal(inst(changes))
    d = result.design
    assert (d.storage.tier, d.cold_storage.tier) == ("obj", "obj")
    [rack] = d.racks
    catalog = resolve_catalog(inst(changes)).catalog
    server = catalog.by_id("servers")[d.server]
    counted_w = server.power_w + (d.storage.units + d.cold_storage.units) * catalog.by_id("storage")["obj"].power_w
    assert rack.role == "mixed" and rack.power_kw * 1000 < counted_w + 2_000  # switches and NICs add < 2 kW
    assert check_design(inst(changes), d, result.cost, result.performance) == []
    # 21 hot units (20,000 TB and the checkpoints) and the cold one share mixed racks, each in one.
    many = {"workload.data": {"archive_tb": 10, "dataset_tb": 20_000}, "constraints.pins.storage": "obj"}
    mixed = optimal(inst(many))
    d = mixed.design
    assert {g.role for g in d.racks} == {"mixed"}
    assert sum(g.count * g.holds.get("obj", 0) for g in d.racks) == d.storage.units + d.cold_storage.units == 22
    assert check_design(inst(many), d, mixed.cost, mixed.performance) == []
    # Beyond eight racks, storage racks hold units of one tier: 201 hot units (200,000 TB and the
    # checkpoints) and the cold one, 2 U and 800 W each, 21 per 40 kW, 42 U rack, take ceil(202 / 21)
    # = 10 racks in one group (hot and cold apart would take 10 + 1).
    huge = {"workload.data": {"archive_tb": 10, "dataset_tb": 200_000}, "constraints.pins.storage": "obj"}
    separate = optimal(inst(huge))
    d = separate.design
    assert (d.storage.units, d.cold_storage.units) == (201, 1)
    assert [(g.count, g.power_kw) for g in d.racks if g.role == "storage"] == [(10, pytest.approx(21 * 0.8))]
    assert check_design(inst(huge), d, separate.cost, separate.performance) == []


def test_cold_storage_met_archived_checkpoints_count():
    """7 days of checkpoints every 2 hours: 84 checkpoints of 98 GB = 8.232 TB."""
    changes = {"workload.checkpoint": {"archive_days": 7}}
    assert _cold_tb(changes) == pytest.approx(84 * 98 / 1000)
    assert optimal(inst(changes)).design.cold_storage.capacity_tb >= 8.232


def test_cold_storage_met_counts_no_more_checkpoints_than_the_run_writes_by_its_deadline():
    """60 days kept, a checkpoint every 2 hours, the tiny 30-day deadline: 30 × 12 = 360
    checkpoints of 98 GB (35.28 TB), not 720; the solver sizes the cold tier for them, the checker
    agrees, and a cold tier one unit short of them is rejected."""
    changes = {"workload.checkpoint": {"archive_days": 60}, "catalog.add.storage": [
        *TINY_CATALOG["storage"][:1], {**TINY_CATALOG["storage"][1], "capacity_tb": 10}]}
    assert _cold_tb(changes) == pytest.approx(360 * 98 / 1000)
    result = optimal(inst(changes))
    d = result.design
    assert d.cold_storage.units == 4  # ceil(35.28 / 10)
    assert check_design(inst(changes), d, result.cost, result.performance) == []
    short = d.model_copy(update={"cold_storage": d.cold_storage.model_copy(update={"units": 3, "capacity_tb": 30.0})})
    assert "cold_storage_met" in {v.family for v in check_design(inst(changes), short)}


def test_cold_storage_met_infeasible_one_unit_below_its_cost():
    changes = {"workload.data": {"archive_tb": 1500}}
    cost = optimal(inst(changes)).cost.total
    assert optimal(inst(changes, {"budget.max": cost})).cost.total == cost
    result = infeasible(inst(changes, {"budget.max": cost - 1}))
    assert conflict(result) == {"budget_cap", "cold_storage_met"}


def test_cold_storage_met_infeasible_without_an_object_tier():
    result = infeasible(inst({"workload.data": {"archive_tb": 10}, "constraints.storage": {"deny": ["obj"]}}))
    assert conflict(result) == {"cold_storage_met", "allowed_by_lists"}


# -- management_ports_cover -------------------------------------------------------------------------
# A 12-port management switch keeps 2 uplinks: 10 device ports per leaf. Nodes and the storage
# unit have one in-band and one out-of-band port, the compute and the storage switch one each, and
# the one 40 kW rack that holds them all its 2 PDUs: n nodes need 2 × (n + 1) + 2 + 2 ports, 10 at
# 2 nodes, 12 at 3.
M12 = dict(next(s for s in TINY_CATALOG["switches"] if s["id"] == "m48"), id="m12", cages=12)
MGMT = {"goal.deadline_days": None, "constraints.pins.server": "s40", "constraints.pins.nics_per_node": 1,
        "constraints.pins.tiers": 1, "constraints.storage": {"allow": ["obj"]},
        "catalog.add.switches": [*TINY_CATALOG["switches"], M12], "catalog.prices": {**TINY_PRICES, "m12": 800},
        "constraints.pins.management_switch": "m12"}


def _mgmt_ports(d) -> int:
    """Nodes and storage units: 1 in-band + 1 out-of-band port each here; data switches: their one
    management port; racks: their 2 PDUs."""
    switches = sum(g.count for g in d.switches if g.network != "management")
    return 2 * (d.nodes + d.storage.units) + switches + 2 * sum(g.count for g in d.racks)


def test_management_ports_cover_feasible_one_leaf_at_its_ports():
    """2 nodes, their leaf, the storage switch, the unit and the rack: 2 × 2 + 2 × 1 + 2 + 2 = 10 ports."""
    d = optimal(inst(MGMT, {"constraints.pins.nodes": 2})).design
    assert sum(g.count for g in d.racks) == 1
    mgmt = d.management_network
    assert (mgmt.switch, mgmt.ports, mgmt.leaves, mgmt.aggregation, mgmt.leaf_down_ports) == ("m12", 10, 1, 0, 10)
    assert mgmt.ports == _mgmt_ports(d)
    assert [(g.tier, g.count, g.ports_used) for g in d.switches if g.network == "management"] == [("mgmt-leaf", 1, 10)]
    assert [(link.between, link.count) for link in d.links if link.network == "management"] == [("mgmt", 10)]


def test_management_ports_cover_one_node_more_takes_an_aggregation_pair():
    d = optimal(inst(MGMT, {"constraints.pins.nodes": 3})).design
    mgmt = d.management_network
    assert (mgmt.ports, mgmt.leaves, mgmt.aggregation) == (12, 2, 2) and mgmt.ports == _mgmt_ports(d)
    assert [(g.tier, g.count, g.ports_used) for g in d.switches if g.network == "management"] == [
        ("mgmt-leaf", 2, 12 + 4), ("mgmt-aggregation", 2, 4)]
    assert [(link.between, link.count) for link in d.links if link.network == "management"] == [
        ("mgmt", 12), ("mgmt-uplink", 4)]


# -- head_nodes_built --------------------------------------------------------------------------------
# The same 10-port leaves: 2 nodes fill one; a head node's 1 in-band and 1 BMC port make 12.
HEAD = {"id": "hd", "name": "Head node", "source": SRC, "power_w": 600, "rack_units": 1}
WITH_HEAD = {"catalog.add.control": [HEAD], "catalog.prices": {**TINY_PRICES, "m12": 800, "hd": 5_000}}


def test_head_nodes_built_one_head_node_tips_a_full_leaf_into_an_aggregation_pair():
    d = optimal(inst(MGMT, WITH_HEAD, {"constraints.pins.nodes": 2, "site.head_nodes": 1})).design
    assert (d.head_nodes.model, d.head_nodes.count) == ("hd", 1)
    mgmt = d.management_network
    assert (mgmt.ports, mgmt.leaves, mgmt.aggregation) == (12, 2, 2) and mgmt.ports == _mgmt_ports(d) + 2


def test_head_nodes_built_a_pair_from_two_nodes_none_for_one():
    """Unset, a cluster buys the pair (4 ports: 14, two leaves) and a single node none."""
    two = optimal(inst(MGMT, WITH_HEAD, {"constraints.pins.nodes": 2})).design
    assert (two.head_nodes.count, two.management_network.ports) == (2, 14)
    one = optimal(inst(MGMT, WITH_HEAD, {"constraints.pins.nodes": 1})).design
    assert one.head_nodes is None and one.management_network.ports == _mgmt_ports(one)


def test_management_uplinks_too_long_across_rows_run_in_the_row():
    """Uplinks across rows run 99 + 2 m, past RJ45's 100 m: racks of one model each cannot cable an
    aggregation pair, so four nodes (two management leaves) take mixed racks, where the uplinks
    run in the row (15 + 2 m). 15 kW racks keep the four 6.5 kW nodes out of one rack."""
    r15 = {"id": "r15", "name": "15 kW rack", "source": "estimate: test rack", "power_kw": 15, "rack_units": 42,
           "cooling": "air"}
    far = {"site.distances.across_rows_m": 99, "catalog.add.racks": [r15],
           "catalog.prices": {**MGMT["catalog.prices"], "r15": 4_000}, "constraints.pins.rack_class": "r15"}
    d = optimal(inst(MGMT, far, {"constraints.pins.nodes": 4})).design
    assert {group.role for group in d.racks} == {"mixed"} and sum(group.count for group in d.racks) >= 2
    assert [(link.between, link.length_m) for link in d.links if link.network == "management"] == [
        ("mgmt", 17.0), ("mgmt-uplink", 17.0)]


# A management leaf with RJ45 device ports and SFP+ uplink cages of its own (the SN2201's layout):
# all 12 device cages take devices, and its two uplinks reach an aggregation pair of SFP+
# switches over multimode fibre, which Cat6a (100 m) cannot do across 150 m rows.
M12U = {"id": "m12u", "name": "Mgmt SW 12x1G + 2x10G SFP+", "source": SRC, "protocols": ["ethernet"], "cages": 12,
        "cage_form_factor": "rj45", "ports_per_cage": {1: 1}, "uplink_cages": 2, "uplink_cage_form_factor": "sfp-plus",
        "uplink_ports_per_cage": {10: 1}, "power_w": 60, "rack_units": 1, "role": "management"}
S48 = {"id": "s48", "name": "Mgmt SW 48x10G SFP+", "source": SRC, "protocols": ["ethernet"], "cages": 48,
       "cage_form_factor": "sfp-plus", "ports_per_cage": {10: 1, 1: 1}, "power_w": 150, "rack_units": 1,
       "role": "management"}
SR300 = {"id": "sr300", "name": "10G SR kit 300 m", "source": SRC, "media": "mmf", "gbps": 10,
         "a_form_factor": "sfp-plus", "b_form_factor": "sfp-plus", "max_reach_m": 300,
         "power_w_per_a_end": 1, "power_w_per_b_end": 1}
FIBRE_UPLINKS = {**MGMT, "catalog.add.switches": [*MGMT["catalog.add.switches"], M12U, S48],
                 "catalog.add.cables": [*TINY_CATALOG["cables"], SR300],
                 "catalog.prices": {**MGMT["catalog.prices"], "m12u": 700, "s48": 3_000, "sr300": 50},
                 "constraints.pins.management_switch": "m12u"}


def test_management_leaf_with_uplink_cages_keeps_every_device_cage_and_aggregates_on_fibre():
    """5 nodes, their switch, the storage switch, the unit and the rack's 2 PDUs: 5 × 2 + 2 × 1 +
    2 + 2 = 16 ports on leaves of 12 device ports: 2 leaves; their 4 uplinks (SFP+ cages, 10G)
    reach the one management model that runs 10G SFP+, s48: 2 × ceil(2 / (48 − 2)) = 2
    aggregation switches (each keeps 2 ports for the site's core), over the 300 m SR kit across
    150 m rows (+ 2 m slack)."""
    d = optimal(inst(FIBRE_UPLINKS, {"constraints.pins.nodes": 5, "site.distances.across_rows_m": 150})).design
    mgmt = d.management_network
    assert sum(g.count for g in d.racks) == 1 and mgmt.ports == _mgmt_ports(d) == 16
    assert (mgmt.switch, mgmt.aggregation_switch, mgmt.leaves, mgmt.aggregation, mgmt.leaf_down_ports,
            mgmt.link_gbps, mgmt.uplink_gbps) == ("m12u", "s48", 2, 2, 12, 1, 10)
    assert [(g.tier, g.model, g.count, g.ports_used) for g in d.switches if g.network == "management"] == [
        ("mgmt-leaf", "m12u", 2, 16 + 4), ("mgmt-aggregation", "s48", 2, 4)]
    assert [(link.between, link.part, link.count) for link in d.links if link.network == "management"] == [
        ("mgmt", "cat6", 16), ("mgmt-uplink", "sr300", 4)]
    # Wired: each leaf's two uplinks leave its own SFP+ cages (up1, up2), one to each s48 of the pair.
    instance = inst(FIBRE_UPLINKS, {"constraints.pins.nodes": 5, "site.distances.across_rows_m": 150})
    fabric = build_fabric(d, instance)
    uplinks = sorted((b_dev, b_port, a_dev) for bundle in fabric.links if bundle.between == "mgmt-uplink"
                     for a_dev, b_dev, b_port in zip(bundle.a_device, bundle.b_device, bundle.b_port))
    assert uplinks == [("mgmt-01", "up1", "mgmt-agg-01"), ("mgmt-01", "up2", "mgmt-agg-02"),
                       ("mgmt-02", "up1", "mgmt-agg-01"), ("mgmt-02", "up2", "mgmt-agg-02")]
    assert {(dev.name, dev.model) for dev in fabric.devices if dev.role.startswith("mgmt")} == {
        ("mgmt-01", "m12u"), ("mgmt-02", "m12u"), ("mgmt-agg-01", "s48"), ("mgmt-agg-02", "s48")}


def test_a_management_leaf_nothing_aggregates_serves_one_leaf_alone():
    """Without the SFP+ switch nothing runs the leaf's 10G SFP+ uplinks: 3 nodes' 3 × 2 + 2 × 1 +
    2 + 2 = 12 ports fill one leaf of 12 device ports; 5 nodes' 16 would need a second leaf and
    an aggregation pair, which nothing can be."""
    alone = {**FIBRE_UPLINKS, "catalog.add.switches": [*MGMT["catalog.add.switches"], M12U]}
    d = optimal(inst(alone, {"constraints.pins.nodes": 3})).design
    mgmt = d.management_network
    assert (mgmt.switch, mgmt.aggregation_switch, mgmt.ports, mgmt.leaves, mgmt.aggregation) == ("m12u", None, 12, 1, 0)
    assert "management_ports_cover" in conflict(infeasible(inst(alone, {"constraints.pins.nodes": 5})))


def test_management_uplinks_beyond_twisted_pair_need_fibre_cages_or_mixed_racks():
    """Without the fibre-uplink leaf, 150 m uplinks are out of Cat6a's reach: the checker rejects
    the fibre design re-recorded as RJ45 leaves aggregating on their own model."""
    changes = {"constraints.pins.nodes": 5, "site.distances.across_rows_m": 150}
    result = optimal(inst(FIBRE_UPLINKS, changes))
    design = result.design
    tampered = design.model_copy(update={"management_network": design.management_network.model_copy(
        update={"aggregation_switch": "m12u"})})
    found = {v.family for v in check_design(inst(FIBRE_UPLINKS, changes), tampered, result.cost, result.performance)}
    assert "management_ports_cover" in found
    assert check_design(inst(FIBRE_UPLINKS, changes), design, result.cost, result.performance) == []


# -- the video example: the storage path decides ----------------------------------------------------
VIDEO = REPO / "instances" / "video-storage-bound.yaml"


def video(**constraints) -> Instance:
    data = load_instance(VIDEO).instance.model_dump(by_alias=True, exclude_unset=True)
    rules = data.setdefault("constraints", {})
    for key, value in constraints.items():
        if key.startswith("pins_"):
            rules.setdefault("pins", {})[key.removeprefix("pins_")] = value
        else:
            rules[key] = value
    return Instance.model_validate(data)


TEN_G_ONLY = {"storage_nics": {"allow": ["eth-10g-2p"]}}


@cache
def video_ten_g_dedicated() -> SolveResult:
    return solve(video(**TEN_G_ONLY, pins_storage_network="dedicated"))


@pytest.mark.slow
def test_video_example_infeasible_on_10g_storage_nics_and_the_explanation_names_the_storage_path():
    result = video_ten_g_dedicated()
    assert result.status == "infeasible"
    assert "storage_nic_bandwidth_met" in conflict(result)
    item = next(i for i in result.explanation.conflict if i.family == "storage_nic_bandwidth_met")
    need = needs(video()).network_gbps
    assert item.detail == (f"storage NIC 2 × eth-10g-2p (4 × 10G cabled) per node × 4 nodes = 160 Gb/s < {need:,.0f} "
                           "Gb/s needed; dedicated: at most max(8 × need, nodes × 400G) cabled, 2-tier leaf uplinks ≥ need")


def test_video_example_feasible_with_a_faster_storage_nic():
    result = solve(video(storage_nics={"allow": ["eth-10g-2p", "cx6-dx-2x100g"]}, pins_storage_network="dedicated"),
                   explain=False)
    assert result.status == "optimal"
    path = result.design.storage_network
    assert (path.mode, path.nic) == ("dedicated", "cx6-dx-2x100g")
    assert result.design.nodes * path.node_gbps >= needs(video()).network_gbps


def test_video_example_feasible_converged_on_the_compute_fabric():
    result = solve(video(**TEN_G_ONLY), explain=False)
    assert result.status == "optimal"
    path = result.design.storage_network
    assert path.mode == "converged" and path.nic is None
    assert result.design.nodes * path.node_gbps >= needs(video()).network_gbps
