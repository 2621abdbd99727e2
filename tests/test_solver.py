"""The CP-SAT designer as a whole: its optimum against exhaustive enumeration, the model's size,
reproducibility, and every example instance from the library and the command line.

The enumerator below is written from the rules of docs/model.md (and the catalog, the instance
and ``topoopt.perf``), never from the solver's code: it imports nothing from ``topoopt.solver``.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from solver_fixtures import TINY_CATALOG, TINY_PRICES, tiny
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt import perf
from topoopt.catalog import resolve_catalog
from topoopt.cli.app import app
from topoopt.loader import load_instance
from topoopt.models.instance import Instance

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "instances").glob("*.yaml"))
SECONDS_PER_DAY = 86_400.0
SRC = "estimate: test fixture"


# == Exhaustive enumeration (docs/model.md) ==========================================================
RAILS = (1, 2, 4, 8)
RATIOS = (1, 2, 3)
LINK_CLASSES = ("node-leaf", "leaf-spine", "spine-core")
THREE_TIER_LINKS_PER_PAIR = (1, 2)


@dataclass(frozen=True)
class Node:
    """A node configuration: server, NIC, rails and the interconnect they run."""

    server: object
    gpu: object
    nic: object
    rails: int
    interconnect: object
    builtin: bool
    port_form_factor: str
    ports_per_cage: int


@dataclass(frozen=True)
class Fabric:
    """tiers 0 (one node, no switch), 1, 2 or 3; for 2 and 3 tiers the leaf split (d, u) and the
    links per leaf-spine pair m (2 tiers: S = u/m spines; 3 tiers: m in {1, 2}), and in 3 tiers
    the cores per plane C."""

    tiers: int
    switch: object = None
    radix: int = 0
    down: int = 0
    up: int = 0
    links_per_leaf_spine: int = 0
    cores_per_plane: int = 0


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def divisors(value: int) -> list[int]:
    return [d for d in range(1, value + 1) if value % d == 0]


def switch_protocol(interconnect) -> str:
    return "ib" if interconnect.protocol == "ib" else "ethernet"


def node_configurations(catalog) -> list[Node]:
    gpus, nics, ics = catalog.by_id("gpus"), catalog.by_id("nics"), catalog.by_id("interconnects")
    nodes = []
    for server in catalog.servers:
        if server.builtin_compute_nics is not None:
            choices = [(server.builtin_compute_nics.nic, server.builtin_compute_nics.count, True)]
        else:
            choices = [(n, r, False) for n in server.nic_options for r in RAILS if r <= server.max_compute_nics]
        for nic_id, rails, builtin in choices:
            nic = nics[nic_id]
            for ic_id in nic.interconnects:
                own_cages = server.compute_port_form_factor is not None
                nodes.append(Node(server, gpus[server.gpu], nic, rails, ics[ic_id], builtin,
                                  server.compute_port_form_factor if own_cages else nic.port_form_factor,
                                  server.compute_ports_per_cage if own_cages else 1))
    return nodes


def fabrics_for(node: Node, catalog, max_oversubscription: float) -> list[Fabric]:
    """No fabric, and every folded Clos of every compute switch speaking the node's protocol."""
    found = [Fabric(tiers=0)]
    g = node.interconnect.gbps
    for switch in catalog.switches:
        k = switch.cages * switch.ports_per_cage.get(g, 0)
        if switch.role != "compute" or switch_protocol(node.interconnect) not in switch.protocols or k < 1:
            continue
        found.append(Fabric(1, switch, k))
        for ratio in RATIOS:
            if ratio > max_oversubscription:
                continue
            d = k * ratio // (1 + ratio)
            u = ceil_div(d, ratio)
            if d < 1 or u < 1 or d + u > k:
                continue
            found += [Fabric(2, switch, k, d, u, links_per_leaf_spine=m) for m in divisors(u)]
            found += [Fabric(3, switch, k, d, u, links_per_leaf_spine=m, cores_per_plane=c)
                      for m in THREE_TIER_LINKS_PER_PAIR if u % m == 0 for c in divisors(k - k // 2)]
    return found


@dataclass(frozen=True)
class Shape:
    """Switches bought, and per link class (device pairs, links per pair): node–leaf counts each
    rail as one "pair" of n links, since a rail's nodes share their leaves' cages."""

    switches: int
    pairs: dict


def fabric_shape(fabric: Fabric, nodes: int, rails: int) -> Shape | None:
    """Switch and link counts, or None when a port rule fails."""
    k, d, u, m = fabric.radix, fabric.down, fabric.up, fabric.links_per_leaf_spine
    if fabric.tiers == 0:
        return Shape(0, {}) if nodes == 1 else None
    if fabric.tiers == 1:
        return Shape(1, {"node-leaf": (rails, nodes)}) if nodes * rails <= k else None
    leaves = rails * ceil_div(nodes, d)
    if fabric.tiers == 2:
        spines = u // m
        if leaves * m > k:
            return None
        return Shape(leaves + spines, {"node-leaf": (rails, nodes), "leaf-spine": (leaves * spines, m)})
    # 3 tiers: a spine has floor(k/2) ports down, u2 = k - floor(k/2) up; pods of P leaves and Q spines.
    pod_leaves, pod_spines, spine_up = (k // 2) // m, u // m, k - k // 2
    if pod_leaves < 1:
        return None
    pods = ceil_div(leaves, pod_leaves)
    spines = pods * pod_spines
    per_core_pair = spine_up // fabric.cores_per_plane
    if pods * per_core_pair > k:
        return None
    cores = pod_spines * fabric.cores_per_plane
    return Shape(leaves + spines + cores, {"node-leaf": (rails, nodes), "leaf-spine": (leaves * pod_spines, m),
                                           "spine-core": (spines * fabric.cores_per_plane, per_core_pair)})


def fits_cage(part, end: str, form_factor: str, ports_per_cage: int, g: int) -> bool:
    """The part's end plugs into a cage of that form factor, carrying all of its logical ports."""
    part_form_factor, ends = (part.a_form_factor, part.a_ends) if end == "a" else (part.b_form_factor, part.b_ends)
    return part.gbps == g and part_form_factor == form_factor and part.links == ports_per_cage * ends


def part_fits(part, link_class: str, node: Node, fabric: Fabric, g: int) -> bool:
    """Both ends fit their cages at the link speed; a copper or active cable whose node end carries
    several links cannot split them over rail-optimized leaves, so it serves 0 or 1 tier only."""
    switch = fabric.switch
    upper_ports = switch.ports_per_cage.get(g, 0)
    if link_class == "node-leaf":
        lower = (node.port_form_factor, node.ports_per_cage)
        if fabric.tiers >= 2 and part.media in ("dac", "acc", "aoc") and part.links > part.b_ends:
            return False
    else:
        lower = (switch.cage_form_factor, upper_ports)
    return fits_cage(part, "a", switch.cage_form_factor, upper_ports, g) and fits_cage(part, "b", *lower, g)


def assemblies(pairs: tuple[int, int], part) -> int:
    """Whole assemblies per device pair: an assembly joins one cage to one cage (or fans one cage
    out to its b-ends), so ``pairs × ceil(links per pair / part.links)``."""
    count, links_per_pair = pairs
    return count * ceil_div(links_per_pair, part.links)


def node_power_w(node: Node, catalog, fabric: bool) -> int:
    """Whole W, rounded up: the server, plus on a fabric its bought NICs and the hungriest module
    fitting a node cage in every cage its rails use."""
    if not fabric:
        return math.ceil(node.server.power_w)
    g = node.interconnect.gbps
    end_w = max((p.power_w_per_b_end for p in catalog.cables
                 if fits_cage(p, "b", node.port_form_factor, node.ports_per_cage, g)), default=0.0)
    nics_w = 0.0 if node.builtin else node.rails * node.nic.power_w
    return math.ceil(node.server.power_w + nics_w + ceil_div(node.rails, node.ports_per_cage) * end_w)


def switch_power_w(switch, catalog) -> int:
    """Whole W, rounded up: the switch, plus in every cage the hungriest module end that fits it at
    a speed the switch runs."""
    ends = [p.power_w_per_a_end if end == "a" else p.power_w_per_b_end
            for p in catalog.cables for end in "ab" for g, per_cage in switch.ports_per_cage.items()
            if fits_cage(p, end, switch.cage_form_factor, per_cage, g)]
    return math.ceil(switch.power_w + switch.cages * max(ends, default=0.0))


def rack_w(rack) -> int:
    return round(rack.power_kw * 1000)


def per_rack(rack, power_w: int, rack_units: int) -> int:
    return min(rack_w(rack) // power_w, rack.rack_units // rack_units)


_TIMES: dict[tuple, float | None] = {}


def time_to_train_s(job, job_key: str, node: Node, tiers: int, oversubscription: float, nodes: int) -> float | None:
    """perf.time_to_train_s for this node configuration at ``nodes`` (cached across cases)."""
    key = (job_key, node.gpu.id, node.server.gpus_per_node, node.rails, node.interconnect.id, tiers,
           oversubscription, nodes)
    if key not in _TIMES:
        hardware = perf.Hardware(gpu=node.gpu, gpus_per_node=node.server.gpus_per_node, nodes=nodes,
                                 nics_per_node=node.rails, link_gbps=node.interconnect.gbps,
                                 interconnect=node.interconnect, tiers=tiers, oversubscription=oversubscription)
        _TIMES[key] = perf.time_to_train_s(job, hardware)
    return _TIMES[key]


def enumerate_designs(instance: Instance) -> tuple[int, str] | None:
    """The cheapest design by brute force over every decision of docs/model.md: (cost, summary).

    Node configuration × node count × fabric option × cable per link class × rack class × storage
    tier; the storage unit count is the fewest that meet the needs (more only add cost, power and
    racks). Node counts run to the pinned count or to what the budget buys.
    """
    resolved = resolve_catalog(instance)
    catalog = resolved.catalog
    rules, pins, site = instance.constraints, instance.constraints.pins, instance.site
    job = perf.Job.from_instance(instance, catalog)
    job_key = instance.workload.model_dump_json()

    def price(item_id: str) -> int | None:
        value = resolved.price(item_id)
        return None if value is None else int(round(value))

    deadline_s = None if instance.goal.deadline_days is None else instance.goal.deadline_days * SECONDS_PER_DAY
    tokens_per_s = 0.0 if deadline_s is None else instance.workload.training.tokens / deadline_s
    needs = perf.storage_needs(job, tokens_per_s)
    lengths_m = {"node-leaf": site.distances.in_row_m + site.distances.slack_m,
                 "leaf-spine": site.distances.across_rows_m + site.distances.slack_m,
                 "spine-core": site.distances.across_rows_m + site.distances.slack_m}

    racks = [r for r in catalog.racks if price(r.id) is not None
             and (site.rack_classes is None or r.id in site.rack_classes) and pins.rack_class in (None, r.id)]
    storage = []
    for tier in catalog.storage:
        if (price(tier.id) is None or not rules.storage.admits(tier.id) or pins.storage not in (None, tier.id)
                or (instance.workload.data.small_files and tier.latency_class == "high")):
            continue
        units = max(1, math.ceil(needs.read_gb_per_s / tier.read_gb_per_s - 1e-9),
                    math.ceil(needs.write_gb_per_s / tier.write_gb_per_s - 1e-9),
                    math.ceil(needs.capacity_tb / tier.capacity_tb - 1e-9))
        storage.append((tier, units))

    best = None
    for node in node_configurations(catalog):
        server, nic, rails, ic = node.server, node.nic, node.rails, node.interconnect
        server_price = node_price = price(server.id)
        if not node.builtin and node_price is not None:
            nic_price = price(nic.id)
            node_price = None if nic_price is None else node_price + rails * nic_price
        pinned = {pins.server: server.id, pins.gpu: node.gpu.id, pins.interconnect: ic.id, pins.nic: nic.id,
                  pins.nics_per_node: rails}
        if (node_price is None or any(want is not None and want != have for want, have in pinned.items())
                or not (rules.gpus.admits(node.gpu.id) and rules.servers.admits(server.id)
                        and rules.interconnects.admits(ic.id))):
            continue
        hardware = perf.Hardware(gpu=node.gpu, gpus_per_node=server.gpus_per_node, nodes=1, nics_per_node=rails,
                                 link_gbps=ic.gbps, interconnect=ic, tiers=2, oversubscription=1.0)
        fit = perf.min_nodes_to_fit(job, hardware, 100_000)
        if fit is None:
            continue
        # Every design pays at least its servers, so the budget bounds the node count.
        counts = [pins.nodes] if pins.nodes is not None else range(1, int(instance.budget.max // server_price) + 1)
        assert len(counts) <= 200, "keep the enumeration small"
        for fabric in fabrics_for(node, catalog, rules.max_oversubscription):
            switch = fabric.switch
            if fabric.tiers and (price(switch.id) is None or not rules.switches.admits(switch.id)
                                 or pins.leaf_switch not in (None, switch.id)):
                continue
            if pins.tiers not in (None, fabric.tiers) or (pins.leaf_switch is not None and not fabric.tiers):
                continue
            used = LINK_CLASSES[:max(fabric.tiers, 1)] if fabric.tiers else ()
            parts = {cls: [p for p in catalog.cables if part_fits(p, cls, node, fabric, ic.gbps)
                           and p.max_reach_m >= lengths_m[cls] and price(p.id) is not None
                           and rules.cables.admits(p.id)] for cls in used}
            switch_w = switch_power_w(switch, catalog) if switch else 0
            # A single node without a fabric buys no compute NICs and powers none.
            node_w = node_power_w(node, catalog, fabric=fabric.tiers > 0)
            unit_price = node_price if fabric.tiers else server_price
            over = fabric.down / fabric.up if fabric.tiers >= 2 else 1.0
            for n in counts:
                shape = fabric_shape(fabric, n, rails) if n >= fit else None
                if shape is None:
                    continue
                if deadline_s is not None:
                    seconds = time_to_train_s(job, job_key, node, max(fabric.tiers, 1), over, n)
                    if seconds is None or seconds > deadline_s:
                        continue
                fixed_cost = n * unit_price + shape.switches * (price(switch.id) if switch else 0)
                for chosen in itertools.product(*(parts[cls] for cls in used)):
                    cable_cost = sum(assemblies(shape.pairs[cls], p) * price(p.id) for cls, p in zip(used, chosen))
                    for rack, (tier, units) in itertools.product(racks, storage):
                        power_w = n * node_w + shape.switches * switch_w + units * math.ceil(tier.power_w)
                        if site.power_cap_kw is not None and power_w > round(site.power_cap_kw * 1000):
                            continue
                        n_racks = _racks(rack, n, node_w, server.rack_units, shape.switches, switch_w,
                                         switch.rack_units if switch else 1, units, tier, power_w)
                        if n_racks is None or n_racks > site.max_racks:
                            continue
                        cost = (fixed_cost + cable_cost + n_racks * price(rack.id) + units * price(tier.id))
                        if cost <= instance.budget.max and (best is None or cost < best[0]):
                            best = (cost, f"{n} x {server.id} with {rails} x {nic.id} on {ic.id}, {fabric}, "
                                          f"{[p.id for p in chosen]}, {n_racks} x {rack.id}, {units} x {tier.id}")
    return best


def enumerate_min_cost(instance: Instance) -> int | None:
    """The cheapest design's cost by brute force (:func:`enumerate_designs`), or None."""
    best = enumerate_designs(instance)
    return None if best is None else best[0]


def _racks(rack, n, node_w, node_u, switches, switch_w, switch_u, units, tier, power_w) -> int | None:
    """Fewest racks of this class: one mixed rack when everything fits in it (power and units),
    else homogeneous compute, network and storage racks, each holding at least one device."""
    total_u = n * node_u + switches * switch_u + units * tier.rack_units
    if power_w <= rack_w(rack) and total_u <= rack.rack_units:
        return 1
    holds = [(n, per_rack(rack, node_w, node_u)), (units, per_rack(rack, math.ceil(tier.power_w), tier.rack_units))]
    if switches:
        holds.append((switches, per_rack(rack, switch_w, switch_u)))
    if any(per < 1 for _, per in holds):
        return None
    return sum(ceil_div(count, per) for count, per in holds)


# == Differential: solver optimum == enumeration ====================================================
# The tiny catalog with a second, 8-port switch (so 2 and 3 tiers appear at a few dozen nodes),
# two rack classes, at most 2 NICs per server, and 50 m runs between rows.
SW8 = {"id": "sw8", "name": "SW 8x400", "source": SRC, "protocols": ["ib"], "cages": 4,
       "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 600, "rack_units": 1}
R20 = {"id": "r20", "name": "20 kW rack", "source": SRC, "power_kw": 20, "rack_units": 42, "cooling": "air"}
DIFF_BASE = {
    "catalog.add.switches": [*TINY_CATALOG["switches"], SW8],
    "catalog.add.racks": [*TINY_CATALOG["racks"], R20],
    "catalog.add.servers": [dict(s, max_compute_nics=2) for s in TINY_CATALOG["servers"]],
    "catalog.prices": {**TINY_PRICES, "sw8": 6_000, "r20": 3_000},
    "site.distances.across_rows_m": 48,
    "budget.max": 6_000_000,
}
ONLY_SW8 = {"constraints.switches": {"allow": ["sw8"]}}
# A DGX-like server: 8 built-in rails on 4 twin-port cages, and a twin-port DAC for 1 m runs.
DGX = {"id": "dgx", "name": "DGX-like", "source": SRC, "gpu": "g80", "gpus_per_node": 8, "power_w": 10200,
       "rack_units": 8, "builtin_compute_nics": {"nic": "nic400", "count": 8}, "max_compute_nics": 8,
       "compute_port_form_factor": "osfp-twin-finned", "compute_ports_per_cage": 2}
TWIN_DAC = {"id": "twin-dac", "name": "Twin-port DAC 1 m", "source": SRC, "media": "dac", "gbps": 400, "links": 2,
            "a_form_factor": "osfp-twin-finned", "b_form_factor": "osfp-twin-finned", "max_reach_m": 1,
            "power_w_per_a_end": 0.2, "power_w_per_b_end": 0.2}
TWIN_PORT_NODES = {
    "catalog.add.servers": [*DIFF_BASE["catalog.add.servers"], DGX],
    "catalog.add.cables": [*TINY_CATALOG["cables"], TWIN_DAC],
    "catalog.prices": {**DIFF_BASE["catalog.prices"], "dgx": 330_000, "twin-dac": 150},
    "site.distances.in_row_m": 1, "site.distances.slack_m": 0,
    "constraints.pins.server": "dgx", "goal.deadline_days": None, "budget.max": 12_000_000,
}
DIFF_CASES = {
    "deadline 30 days": {},
    "deadline 1 day": {"goal.deadline_days": 1},
    "deadline 6 hours": {"goal.deadline_days": 0.25},
    "1 node pinned": {"constraints.pins.nodes": 1, "goal.deadline_days": None},
    "5 nodes pinned": {"constraints.pins.nodes": 5, "goal.deadline_days": None},
    "12 nodes, 8-port switch": {"constraints.pins.nodes": 12, "goal.deadline_days": None, **ONLY_SW8},
    "30 nodes, 8-port switch, 3:1": {"constraints.pins.nodes": 30, "goal.deadline_days": None,
                                     "constraints.max_oversubscription": 3, **ONLY_SW8},
    "40 nodes, 8-port switch": {"constraints.pins.nodes": 40, "goal.deadline_days": None, "budget.max": 10_000_000,
                                **ONLY_SW8},
    "64 nodes, 2 rails, 8-port switch": {"constraints.pins.nodes": 64, "constraints.pins.nics_per_node": 2,
                                         "goal.deadline_days": None, "budget.max": 12_000_000,
                                         "site.max_racks": 100, **ONLY_SW8},
    "deadline, 8-port switch, 6 racks": {"goal.deadline_days": 0.5, "site.max_racks": 6, **ONLY_SW8},
    "deadline, 3 racks": {"goal.deadline_days": 0.5, "site.max_racks": 3},
    "deadline, 20 kW racks only": {"goal.deadline_days": 1, "site.rack_classes": ["r20"]},
    "deadline, 60 kW site": {"goal.deadline_days": 0.5, "site.power_cap_kw": 60},
    "deadline, budget too small": {"goal.deadline_days": 0.5, "budget.max": 1_000_000},
    "leaf switch pinned": {"constraints.pins.leaf_switch": "sw8"},
    "twin-port nodes, 1 tier (DAC)": {**TWIN_PORT_NODES, "constraints.pins.nodes": 8},
    "twin-port nodes, rail-optimized (no DAC)": {**TWIN_PORT_NODES, "constraints.pins.nodes": 12},
    "small files, fast saves": {"workload.data": {"small_files": True}, "workload.checkpoint": {"max_save_time_s": 5}},
}


def diff_instance(changes: dict) -> Instance:
    return tiny(**{**DIFF_BASE, **changes})


@cache
def solved(case: str):
    from topoopt.solver import solve

    return solve(diff_instance(DIFF_CASES[case]), explain=False)


@pytest.mark.parametrize("case", DIFF_CASES)
def test_optimum_equals_exhaustive_enumeration(case):
    expected = enumerate_min_cost(diff_instance(DIFF_CASES[case]))
    result = solved(case)
    if expected is None:
        assert result.status == "infeasible"
    else:
        assert result.status == "optimal"
        assert result.objective.value == expected
        assert result.cost.total == expected


@pytest.mark.parametrize("case", ["deadline 6 hours", "30 nodes, 8-port switch, 3:1"])
def test_budget_edge_agrees_with_enumeration(case):
    """At the enumerated optimum the instance is feasible; one unit less, both say infeasible."""
    from topoopt.solver import solve

    optimum = enumerate_min_cost(diff_instance(DIFF_CASES[case]))
    at_optimum = {**DIFF_CASES[case], "budget.max": optimum}
    below = {**DIFF_CASES[case], "budget.max": optimum - 1}
    assert enumerate_min_cost(diff_instance(at_optimum)) == optimum
    assert enumerate_min_cost(diff_instance(below)) is None
    assert solve(diff_instance(at_optimum), explain=False).cost.total == optimum
    assert solve(diff_instance(below), explain=False).status == "infeasible"


def test_differential_cases_cover_every_tier_and_both_answers():
    """The cases above are not all alike: each fabric tier and infeasibility occur."""
    results = [solved(case) for case in DIFF_CASES]
    assert {r.design.tiers for r in results if r.design} == {0, 1, 2, 3}
    assert {r.status for r in results} == {"optimal", "infeasible"}


# == Model size ====================================================================================
def model_size(instance: Instance) -> tuple[int, int]:
    """Variables and constraints of the min-cost model; the model must validate (no overflow)."""
    from topoopt.solver.build import DesignModel
    from topoopt.solver.problem import Problem

    problem = Problem(instance)
    dm = DesignModel(problem, throughput_target_tokens_per_s=problem.throughput_target)
    assert dm.m.validate() == ""
    return len(dm.m.proto.variables), len(dm.m.proto.constraints)


def with_nodes(instance: Instance, nodes: int) -> Instance:
    data = instance.model_dump(by_alias=True, exclude_unset=True)
    data.setdefault("constraints", {}).setdefault("pins", {})["nodes"] = nodes
    return Instance.model_validate(data)


def test_model_size_does_not_depend_on_the_node_count():
    roomy = {"budget.max": 1e13, "site.max_racks": 100_000}
    one, many = (model_size(tiny(**roomy, **{"constraints.pins.nodes": n})) for n in (1, 16_384))
    assert one == many
    assert 0 < one[0] and 0 < one[1]


def test_model_size_of_the_builtin_catalog_does_not_depend_on_the_node_count():
    """frontier-131k pins 16,384 DGX nodes; the same instance at one node builds the same model."""
    frontier = load_instance(REPO / "instances" / "frontier-131k.yaml").instance
    assert frontier.constraints.pins.nodes == 16_384
    assert model_size(frontier) == model_size(with_nodes(frontier, 1))


# == Reproducibility ===============================================================================
@pytest.mark.parametrize("instance", [
    pytest.param(lambda: diff_instance(DIFF_CASES["deadline, 8-port switch, 6 racks"]), id="tiny"),
    pytest.param(lambda: load_instance(REPO / "instances" / "frontier-131k.yaml").instance, id="frontier-131k"),
])
def test_same_instance_same_design_whatever_the_run_or_worker_count(instance):
    from topoopt.solver import solve

    instance = instance()
    runs = [solve(instance, explain=False), solve(instance, explain=False), solve(instance, workers=2, explain=False)]
    designs = {r.design.model_dump_json() for r in runs}
    costs = {r.cost.model_dump_json() for r in runs}
    assert len(designs) == 1 and len(costs) == 1
    assert runs[0].status == "optimal"


# == Example instances, from the library and the command line ======================================
INFEASIBLE_EXAMPLE = "infeasible-budget.yaml"
SLOW_EXAMPLES = {INFEASIBLE_EXAMPLE}  # its explanation re-solves for each relaxation


def example_params():
    return [pytest.param(path, id=path.name, marks=[pytest.mark.slow] if path.name in SLOW_EXAMPLES else [])
            for path in EXAMPLES]


def test_the_examples_include_an_infeasible_one():
    assert INFEASIBLE_EXAMPLE in {path.name for path in EXAMPLES}
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", example_params())
def test_example_solves_from_the_library(path):
    from topoopt.solver import solve

    instance = load_instance(path).instance
    result = solve(instance)
    if path.name == INFEASIBLE_EXAMPLE:
        assert result.status == "infeasible"
        assert "budget_cap" in {item.family for item in result.explanation.conflict}
        budget = next(r for r in result.explanation.relaxations if r.family == "budget_cap")
        assert budget.value > instance.budget.max
        return
    assert result.status == "optimal", result.explanation
    assert result.cost.total == result.objective.value <= instance.budget.max
    pins = instance.constraints.pins
    d = result.design
    for pinned, chosen in ((pins.nodes, d.nodes), (pins.server, d.server), (pins.gpu, d.gpu)):
        assert pinned in (None, chosen)


@pytest.mark.parametrize("path", example_params())
def test_example_solves_from_the_cli(path, tmp_path):
    infeasible = path.name == INFEASIBLE_EXAMPLE
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["solve", str(path), "--json", "--out", str(out)])
    assert run.exit_code == (3 if infeasible else 0), run.stderr
    printed = json.loads(run.stdout)
    written = json.loads((out / "design.json").read_text(encoding="utf-8"))
    assert printed["status"] == written["status"] == ("infeasible" if infeasible else "optimal")
    if infeasible:
        families = {item["family"] for item in printed["explanation"]["conflict"]}
        assert "budget_cap" in families
        # The CLI locates each limit in the file: "<file>:<line>:<column> budget.max".
        budget = next(item for item in printed["explanation"]["conflict"] if item["family"] == "budget_cap")
        assert budget["source"].startswith(f"{path}:") and budget["source"].endswith("budget.max")
    else:
        assert printed["design"]["nodes"] >= 1
        assert printed["cost"]["total"] == printed["objective"]["value"]


def test_cli_summary_without_json(tmp_path):
    """The readable summary goes to stdout (not JSON); --out still writes design.json."""
    path = REPO / "instances" / "llama2-7b-finetune-8gpu.yaml"
    run = CliRunner().invoke(app, ["solve", str(path), "--out", str(tmp_path)])
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() and not run.stdout.lstrip().startswith("{")
    assert json.loads((tmp_path / "design.json").read_text(encoding="utf-8"))["status"] == "optimal"
