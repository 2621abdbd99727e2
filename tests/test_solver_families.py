"""A just-feasible and a just-infeasible case per constraint family, on the tiny instance.

Every family of ``topoopt.families.FAMILIES`` has tests named ``test_<family>_…`` here or, for the
storage and management networks, in test_solver_storage.py (a test below fails otherwise). Feasible cases must be proven ``optimal``; infeasible ones exactly
``infeasible`` (never "not solved"), with the family in the minimal conflict — and, where only
one minimal conflict exists, the conflict is exactly that set. Numeric edges are tight: the limit
at the value the optimal design uses is feasible, one unit (or 1 %) less is not.

Three families are structural: the option tables never offer a design that breaks them
(``nic_fits_server`` for compute NICs, ``link_speed``, ``uplinks_balanced``), so they get no
infeasible case; their tests check that solved designs honour the rule. Storage NICs are paired
with servers in the model, so ``nic_fits_server`` has an infeasible case for them.
"""

from __future__ import annotations

import copy
import math

import pytest
from solver_fixtures import TINY_CATALOG, TINY_PRICES, conflict, infeasible, inst, optimal, tiny

from topoopt import perf
from topoopt.catalog import resolve_catalog
from topoopt.families import FAMILIES
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.options.problem import Problem
from topoopt.solver.explain import deadline_outprices_budget

SECONDS_PER_DAY = 86_400.0
SRC = "estimate: test fixture"

# Room for thousands of nodes: the port-count edges below need big clusters.
ROOMY = {"budget.max": 1e13, "site.max_racks": 100_000}
# Leaf-spine and spine-core runs of 50 m, which the 50 m optical kits reach.
REACH_ACROSS_ROWS = {"site.distances.across_rows_m": 48}
# Without a compute fabric a design has one node, a rule of leaf_ports_cover_endpoints; so that
# family is in every conflict that rules out all fabrics for two or more nodes.
NEEDS_A_FABRIC = "leaf_ports_cover_endpoints"
# Half a day forces several nodes; with free racks and 1 m node runs (a DAC reaches) nothing but
# the deadline makes the optimum more expensive than a single node.
MULTI_NODE = {
    "goal.deadline_days": 0.5,
    "site.distances.in_row_m": 1,
    "site.distances.slack_m": 0,
    "catalog.prices": {**TINY_PRICES, "r40": 0},
}


# -- helpers ----------------------------------------------------------------------------------------








def relaxation(result: SolveResult, family: str):
    return next(r for r in result.explanation.relaxations if r.family == family)


# The storage and management networks' own parts stay when a test replaces a kind of item, so that
# a test about the compute fabric changes only the compute fabric.
NETWORK_ITEMS = {"nics": {"snic100"}, "interconnects": {"eth100"}, "switches": {"esw32", "esw256", "m48"},
                 "cables": {"q28-sr100", "cat6", "cat6a"}}


def catalog_with(**kinds) -> dict:
    """The tiny catalog with some kinds replaced (``nics=[…]``) as ``catalog.add`` changes; the
    storage and management networks' items of those kinds are kept."""
    changes = {}
    for kind, items in kinds.items():
        given = {x["id"] for x in items}
        kept = [x for x in TINY_CATALOG.get(kind, []) if x["id"] in NETWORK_ITEMS.get(kind, set()) - given]
        changes[f"catalog.add.{kind}"] = [*items, *kept]
    return changes


def item(kind: str, item_id: str) -> dict:
    return copy.deepcopy(next(x for x in TINY_CATALOG[kind] if x["id"] == item_id))


def job_and_hardware(instance: Instance, design) -> tuple[perf.Job, perf.Hardware]:
    """The performance model's view of a solved design (a single node looks like one switch)."""
    catalog = resolve_catalog(instance).catalog
    server = catalog.by_id("servers")[design.server]
    multi_tier = design.tiers >= 2
    hardware = perf.Hardware(
        gpu=catalog.by_id("gpus")[design.gpu],
        gpus_per_node=server.gpus_per_node,
        nodes=design.nodes,
        nics_per_node=design.nics_per_node,
        link_gbps=design.link_gbps,
        interconnect=catalog.by_id("interconnects")[design.interconnect],
        tiers=max(design.tiers, 1),
        oversubscription=design.fabric.leaf_down_ports / design.fabric.leaf_up_ports if multi_tier else 1.0,
    )
    return perf.Job.from_instance(instance, catalog), hardware


def days_at_least(seconds: float) -> float:
    """The smallest float of days whose seconds are not below ``seconds``."""
    days = seconds / SECONDS_PER_DAY
    while days * SECONDS_PER_DAY < seconds:
        days = math.nextafter(days, math.inf)
    return days


def fits_cage(part, end: str, form_factor: str, ports_per_cage: int, gbps: int) -> bool:
    """The part's end plugs into a cage of that form factor carrying all its logical ports."""
    part_form_factor, ends = (part.a_form_factor, part.a_ends) if end == "a" else (part.b_form_factor, part.b_ends)
    return part.gbps == gbps and part_form_factor == form_factor and part.links == ports_per_cage * ends


def unit_powers_w(instance: Instance, design) -> tuple[int, dict, dict]:
    """docs/model.md, racks and power, in whole W rounded up: a node (server, bought compute NICs
    and the hungriest fitting module in each of its cages — the server alone without a fabric —
    plus, on a dedicated storage network, its bought storage NICs and the hungriest module fitting
    each storage port), each switch model (every cage holding the hungriest module that fits it at
    a speed the switch runs), each storage tier. Returns (node W, {switch: W}, {tier: W})."""
    catalog = resolve_catalog(instance).catalog
    server = catalog.by_id("servers")[design.server]
    nic = catalog.by_id("nics")[design.nic]
    own_cages = server.compute_port_form_factor is not None
    node_ff = server.compute_port_form_factor if own_cages else nic.port_form_factor
    ports_per_cage = server.compute_ports_per_cage if own_cages else 1
    node_w = server.power_w
    if design.tiers:
        end_w = max((p.power_w_per_b_end for p in catalog.cables
                     if fits_cage(p, "b", node_ff, ports_per_cage, design.link_gbps)), default=0.0)
        bought_nics_w = 0.0 if server.builtin_compute_nics else design.nics_per_node * nic.power_w
        node_w += bought_nics_w + math.ceil(design.nics_per_node / ports_per_cage) * end_w
    path = design.storage_network
    if path.mode == "dedicated":
        snic = catalog.by_id("nics")[path.nic]
        end_w = max((p.power_w_per_b_end for p in catalog.cables
                     if fits_cage(p, "b", snic.port_form_factor, 1, path.link_gbps)), default=0.0)
        node_w += (0.0 if server.builtin_storage_nics else path.nics_per_node * snic.power_w) + path.ports_per_node * end_w
    switch_w = {}
    for group in design.switches:
        switch = catalog.by_id("switches")[group.model]
        cage_w = max(((p.power_w_per_a_end if end == "a" else p.power_w_per_b_end)
                      for p in catalog.cables for end in "ab" for gbps, per_cage in switch.ports_per_cage.items()
                      if fits_cage(p, end, switch.cage_form_factor, per_cage, gbps)), default=0.0)
        switch_w[group.model] = math.ceil(switch.power_w + switch.cages * cage_w)
    tiers = [design.storage] + ([design.cold_storage] if design.cold_storage else [])
    storage_w = {t.tier: math.ceil(catalog.by_id("storage")[t.tier].power_w) for t in tiers}
    return math.ceil(node_w), switch_w, storage_w


def provisioned_power_w(instance: Instance, design) -> float:
    node_w, switch_w, storage_w = unit_powers_w(instance, design)
    tiers = [design.storage] + ([design.cold_storage] if design.cold_storage else [])
    return (design.nodes * node_w + sum(g.count * switch_w[g.model] for g in design.switches)
            + sum(t.units * storage_w[t.tier] for t in tiers))


def racks_used(design) -> int:
    return sum(group.count for group in design.racks)


def apply_relaxation(changes: dict, relaxation) -> dict:
    """The instance changes a relaxation suggests (its edits), on top of ``changes``."""
    assert relaxation.edits, relaxation.message
    return {**changes, **relaxation.edits}


def test_every_family_has_edge_tests():
    """Here, or for the storage and management networks in test_solver_storage.py."""
    import test_solver_storage

    names = [name for name in [*globals(), *vars(test_solver_storage)] if name.startswith("test_")]
    missing = [f for f in FAMILIES if not any(name.startswith(f"test_{f}_") for name in names)]
    assert missing == []


# -- memory_fits ------------------------------------------------------------------------------------
BIG_MODEL = {
    "workload.model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8,
                       "ffn_hidden_size": 28672, "vocab_size": 128256},
    "goal.deadline_days": None,
    "constraints.pins.server": "s80",
    "constraints.pins.nics_per_node": 1,
}


def _nodes_to_fit_big_model() -> int:
    instance = inst(BIG_MODEL)
    catalog = resolve_catalog(instance).catalog
    hardware = perf.Hardware(gpu=catalog.by_id("gpus")["g80"], gpus_per_node=8, nodes=1, nics_per_node=1,
                             link_gbps=400, interconnect=catalog.by_id("interconnects")["ib400"], tiers=2,
                             oversubscription=1.0)
    need = perf.min_nodes_to_fit(perf.Job.from_instance(instance, catalog), hardware, 1024)
    assert need is not None and need >= 2, "the 70B model must not fit on one node"
    return need


def test_memory_fits_feasible_at_the_fewest_nodes_that_fit():
    need = _nodes_to_fit_big_model()
    result = optimal(inst(BIG_MODEL))
    assert result.design.nodes == need
    assert optimal(inst(BIG_MODEL, {"constraints.pins.nodes": need})).design.nodes == need


def test_memory_fits_infeasible_one_node_fewer():
    need = _nodes_to_fit_big_model()
    result = infeasible(inst(BIG_MODEL, {"constraints.pins.nodes": need - 1}))
    assert conflict(result) == {"memory_fits", "pins_respected"}


# -- deadline_met -----------------------------------------------------------------------------------
def _deadline_design():
    """The optimum for half a day, its pins, and its predicted time to train (s)."""
    instance = inst(MULTI_NODE)
    design = optimal(instance).design
    assert design.nodes > 1
    pins = {
        "constraints.pins.server": design.server,
        "constraints.pins.nics_per_node": design.nics_per_node,
        "constraints.pins.tiers": design.tiers,
        "constraints.pins.nodes": design.nodes,
    }
    seconds = perf.time_to_train_s(*job_and_hardware(instance, design))
    assert seconds <= 0.5 * SECONDS_PER_DAY
    return design, pins, seconds


def test_deadline_met_feasible_at_the_designs_own_time_to_train():
    design, pins, seconds = _deadline_design()
    result = optimal(inst(MULTI_NODE, pins, {"goal.deadline_days": days_at_least(seconds)}))
    assert result.design.nodes == design.nodes
    assert result.performance.time_to_train_days * SECONDS_PER_DAY == pytest.approx(seconds, rel=1e-9)
    # Unpinned, the tighter deadline still admits the same optimum: nothing cheaper met the looser one.
    unpinned = optimal(inst(MULTI_NODE, {"goal.deadline_days": days_at_least(seconds)}))
    assert unpinned.cost.total == result.cost.total


def test_deadline_met_infeasible_one_percent_sooner_with_nodes_pinned():
    _, pins, seconds = _deadline_design()
    result = infeasible(inst(MULTI_NODE, pins, {"goal.deadline_days": 0.99 * seconds / SECONDS_PER_DAY}))
    assert conflict(result) == {"deadline_met", "pins_respected"}
    # More nodes meet it: without the node pin the instance is feasible.
    unpinned = {k: v for k, v in pins.items() if k != "constraints.pins.nodes"}
    faster = optimal(inst(MULTI_NODE, unpinned, {"goal.deadline_days": 0.99 * seconds / SECONDS_PER_DAY}))
    assert faster.design.nodes > pins["constraints.pins.nodes"]


def test_deadline_met_relaxation_is_enough():
    """Too tight a deadline for the racks: the suggested deadline is feasible.

    Half a day needs 7 s80 nodes. A 40 kW rack, mixed or not, holds at most 3 s80 nodes (over
    10.2 kW each) or 6 s40 nodes (6.5 kW each), so 2 racks hold too few GPUs for half a day; a
    longer deadline needs fewer."""
    changes = {**MULTI_NODE, "site.max_racks": 2}
    result = infeasible(inst(changes))
    assert "deadline_met" in conflict(result)
    suggestion = relaxation(result, "deadline_met")
    assert suggestion.value > 0.5
    optimal(inst(apply_relaxation(changes, suggestion)))


# -- budget_cap -------------------------------------------------------------------------------------
def test_budget_cap_feasible_at_the_optimal_cost():
    cost = optimal(tiny()).cost.total
    result = optimal(inst({"budget.max": cost}))
    assert result.cost.total == cost


def test_budget_cap_infeasible_one_unit_below_the_optimal_cost():
    cost = optimal(tiny()).cost.total
    result = infeasible(inst({"budget.max": cost - 1}))
    assert conflict(result) == {"budget_cap"}
    suggestion = relaxation(result, "budget_cap")
    assert suggestion.value == cost
    optimal(inst(apply_relaxation({"budget.max": cost - 1}, suggestion)))


def test_budget_cap_with_a_deadline_conflicts_with_the_deadline():
    cost = optimal(inst(MULTI_NODE)).cost.total
    assert optimal(inst(MULTI_NODE, {"budget.max": cost})).cost.total == cost
    changes = {**MULTI_NODE, "budget.max": cost - 1}
    result = infeasible(inst(changes))
    # Without leaf_ports_cover_endpoints the nodes could share no fabric at all, which is cheaper;
    # without rack_power_within_limit fewer racks would do, and so fewer PDUs and their management
    # cords.
    assert conflict(result) == {"budget_cap", "deadline_met", NEEDS_A_FABRIC, "rack_power_within_limit"}
    assert relaxation(result, "budget_cap").value == cost
    for family in ("budget_cap", "deadline_met"):
        optimal(inst(apply_relaxation(changes, relaxation(result, family))))


def servers_price_in_time(instance: Instance) -> int:
    """The least a design can spend on servers and still train within the deadline: for each
    server, the fewest nodes (scanned one by one) that train in time with all its NIC rails on
    one switch, times its price. One switch with every rail is the fastest fabric the tiny
    catalog offers, so no design of fewer nodes meets the deadline."""
    catalog = resolve_catalog(instance).catalog
    job = perf.Job.from_instance(instance, catalog)
    seconds = instance.goal.deadline_days * SECONDS_PER_DAY
    link = catalog.by_id("interconnects")["ib400"]
    least = math.inf
    for server in catalog.by_id("servers").values():
        for nodes in range(1, 1025):
            hardware = perf.Hardware(gpu=catalog.by_id("gpus")[server.gpu], gpus_per_node=server.gpus_per_node,
                                     nodes=nodes, nics_per_node=server.max_compute_nics, link_gbps=link.gbps,
                                     interconnect=link, tiers=1, oversubscription=1.0)
            seconds_taken = perf.time_to_train_s(job, hardware)
            if seconds_taken is not None and seconds_taken <= seconds:
                least = min(least, nodes * int(instance.catalog.prices[server.id]))
                break
    return least


def test_budget_cap_and_deadline_settled_by_the_precheck_just_below_the_servers_price():
    """The pre-check names deadline and budget as the conflict, with its plain reason, when the
    budget is one unit below what the servers alone cost at the fewest nodes in time."""
    changes = {"goal.deadline_days": 0.2}
    floor = servers_price_in_time(inst(changes))
    assert 0 < floor < math.inf
    assert deadline_outprices_budget(Problem.of(inst(changes, {"budget.max": floor}))) is None
    below = {**changes, "budget.max": floor - 1}
    result = infeasible(inst(below))
    assert conflict(result) == {"budget_cap", "deadline_met"}
    assert result.explanation.precheck is not None and f"{floor:,} USD in servers alone" in result.explanation.precheck
    for family in ("budget_cap", "deadline_met"):
        optimal(inst(apply_relaxation(below, relaxation(result, family))))


# -- allowed_by_lists -------------------------------------------------------------------------------
def test_allowed_by_lists_feasible_with_an_allow_list():
    result = optimal(inst({"constraints.gpus": {"allow": ["g80"]}, "constraints.storage": {"deny": ["obj"]}}))
    assert result.design.gpu == "g80"
    assert result.design.storage.tier == "nvme"


def test_allowed_by_lists_infeasible_when_every_server_is_denied():
    result = infeasible(inst({"constraints.servers": {"deny": ["s40", "s80"]}}))
    assert conflict(result) == {"allowed_by_lists"}


def test_allowed_by_lists_infeasible_when_the_only_reaching_cable_is_denied():
    """Node runs of 4 m in one rack, 17 m between racks: the 3 m DAC is too short, the twin-port
    kit fits no NIC, the SR4 kit is denied."""
    result = infeasible(inst({"constraints.cables": {"deny": ["sr50"]}, "constraints.pins.nodes": 2,
                              "site.distances.in_rack_m": 4}))
    assert conflict(result) == {"allowed_by_lists", "cable_reach", "port_form_factor_match", "pins_respected",
                                NEEDS_A_FABRIC}


def test_allowed_by_lists_denying_the_switch_leaves_a_single_node():
    """A single node needs no compute fabric, so denying every switch does not rule it out."""
    result = optimal(inst({"constraints.switches": {"deny": ["sw64"]}}))
    assert result.design.nodes == 1 and result.design.tiers == 0
    denied = infeasible(inst({"constraints.switches": {"deny": ["sw64"]}, "constraints.pins.nodes": 2}))
    assert "allowed_by_lists" in conflict(denied)


# -- priced_in_book ---------------------------------------------------------------------------------
def _prices_without(*item_ids: str) -> dict:
    return {"catalog.prices": {k: v for k, v in TINY_PRICES.items() if k not in item_ids}}


def test_priced_in_book_feasible_with_one_server_unpriced():
    result = optimal(inst(_prices_without("s40")))
    assert result.design.server == "s80"
    assert all(line.item != "s40" for line in result.cost.breakdown)


def test_priced_in_book_unpriced_nic_only_rules_out_a_fabric():
    """A single node buys no compute NIC, so an unpriced NIC only rules out fabric-attached nodes."""
    assert optimal(inst(_prices_without("nic400"))).design.tiers == 0
    result = infeasible(inst(_prices_without("nic400"), {"constraints.pins.nodes": 2}))
    assert conflict(result) == {"priced_in_book", "pins_respected", NEEDS_A_FABRIC}


@pytest.mark.parametrize("unpriced", [("s40", "s80"), ("r40",), ("nvme", "obj")])
def test_priced_in_book_infeasible_when_a_needed_kind_is_unpriced(unpriced):
    result = infeasible(inst(_prices_without(*unpriced)))
    assert conflict(result) == {"priced_in_book"}
    assert result.explanation.relaxations == []


def test_priced_in_book_unpriced_switch_only_rules_out_a_fabric():
    assert optimal(inst(_prices_without("sw64"))).design.tiers == 0
    result = infeasible(inst(_prices_without("sw64"), {"constraints.pins.nodes": 2}))
    assert conflict(result) == {"priced_in_book", "pins_respected", NEEDS_A_FABRIC}


# -- pins_respected ---------------------------------------------------------------------------------
def test_pins_respected_feasible_with_every_pin_set():
    pins = {"gpu": "g80", "server": "s80", "nodes": 3, "interconnect": "ib400", "nic": "nic400",
            "nics_per_node": 2, "tiers": 1, "leaf_switch": "sw64", "rack_class": "r40", "storage": "nvme"}
    result = optimal(inst({f"constraints.pins.{k}": v for k, v in pins.items()}))
    d = result.design
    assert (d.gpu, d.server, d.nodes, d.interconnect, d.nic, d.nics_per_node, d.tiers, d.fabric.switch,
            d.racks[0].rack_class, d.storage.tier) == tuple(pins.values())


@pytest.mark.parametrize("pins", [
    {"server": "s80", "gpu": "g40"},
    {"nics_per_node": 16},
    {"interconnect": "ib200"},
    {"rack_class": "r99"},
])
def test_pins_respected_infeasible_for_contradicting_or_unknown_pins(pins):
    result = infeasible(inst({f"constraints.pins.{k}": v for k, v in pins.items()}))
    assert conflict(result) == {"pins_respected"}


# -- nic_fits_server (structural) -------------------------------------------------------------------
def test_nic_fits_server_honoured_by_solved_designs():
    """Node configurations come from each server's NIC options and slots, so no design breaks the
    rule; check the solved designs: the NIC is one the server takes, rails ≤ its slots, and a server
    with built-in NICs uses exactly those."""
    servers = [dict(item("servers", "s80"), max_compute_nics=2), item("servers", "s40")]
    dgx = {"id": "dgx", "name": "DGX-like", "source": SRC, "gpu": "g80", "gpus_per_node": 8, "power_w": 10200,
           "rack_units": 8, "builtin_compute_nics": {"nic": "nic400", "count": 8}, "max_compute_nics": 8,
           "compute_port_form_factor": "osfp-twin-finned", "compute_ports_per_cage": 2,
       "builtin_storage_nics": {"nic": "snic100", "count": 1}}
    for changes in (
        {**MULTI_NODE, **catalog_with(servers=servers)},
        {**MULTI_NODE, **catalog_with(servers=servers), "constraints.pins.server": "s80"},
    ):
        d = optimal(inst(changes)).design
        server = next(s for s in changes["catalog.add.servers"] if s["id"] == d.server)
        assert d.nic in server["nic_options"] and d.nics_per_node <= server["max_compute_nics"]
        assert d.nics_per_node in (1, 2, 4, 8)
    prices = {**TINY_PRICES, "dgx": 320_000}
    d = optimal(inst(MULTI_NODE, catalog_with(servers=[*servers, dgx]), {"catalog.prices": prices, "constraints.pins.server": "dgx"})).design
    assert (d.nic, d.nics_per_node) == ("nic400", 8)
    # Twin-port node cages: the node-leaf part has a twin-port end carrying two links per cage.
    assert [link.part for link in d.links if link.between == "node-leaf"] == ["sw-sr50"]
    with_nics = infeasible(inst(catalog_with(servers=[*servers, dgx]), {"catalog.prices": prices, "constraints.pins.server": "dgx",
                                   "constraints.pins.nics_per_node": 4}))
    assert conflict(with_nics) == {"pins_respected"}


def test_nic_fits_server_storage_nics_the_servers_slots_take():
    """Storage NICs fit the server: s80 alone takes a cheaper storage NIC; pinned to s40 the design
    keeps s40's own storage NIC."""
    cheap = dict(item("nics", "snic100"), id="snic-cheap", name="Cheap storage NIC")
    servers = [dict(item("servers", "s80"), storage_nic_options=["snic100", "snic-cheap"]), item("servers", "s40")]
    changes = {**catalog_with(nics=[*TINY_CATALOG["nics"], cheap], servers=servers),
               "catalog.prices": {**TINY_PRICES, "snic-cheap": 100}}
    assert optimal(inst(changes, {"constraints.pins.server": "s80"})).design.storage_network.nic == "snic-cheap"
    assert optimal(inst(changes, {"constraints.pins.server": "s40"})).design.storage_network.nic == "snic100"


def test_nic_fits_server_infeasible_without_a_storage_path():
    """A server with no storage NIC slots has no dedicated storage network, and no converged one
    here (the storage units do not run the compute fabric's 400G InfiniBand): pinned, no design."""
    servers = [item("servers", "s80"), dict(item("servers", "s40"), storage_nic_options=[], max_storage_nics=0)]
    assert optimal(inst(catalog_with(servers=servers))).design.server == "s80"
    result = infeasible(inst(catalog_with(servers=servers), {"constraints.pins.server": "s40"}))
    # Either storage path would do: storage NICs in s40 (nic_fits_server) or the units on the compute
    # fabric (storage_fabric_ports_cover).
    assert conflict(result) == {"nic_fits_server", "storage_fabric_ports_cover", "pins_respected"}


# -- nic_supports_interconnect ----------------------------------------------------------------------
ROCE = {"id": "roce400", "name": "RoCE 400", "source": SRC, "protocol": "roce", "gbps": 400,
        "bus_efficiency": 0.8, "latency_us": 3.0}
ROCE_ONLY_NIC = catalog_with(nics=[dict(item("nics", "nic400"), interconnects=["roce400"])],
                             interconnects=[*TINY_CATALOG["interconnects"], ROCE])
ETHERNET_SWITCH = dict(item("switches", "sw64"), id="eth64", protocols=["ethernet"])


def test_nic_supports_interconnect_feasible_with_an_ethernet_switch():
    changes = {**ROCE_ONLY_NIC, **catalog_with(switches=[*TINY_CATALOG["switches"], ETHERNET_SWITCH]),
               "catalog.prices": {**TINY_PRICES, "eth64": 30_000}, "constraints.pins.nodes": 2}
    d = optimal(inst(changes)).design
    assert (d.interconnect, d.fabric.switch) == ("roce400", "eth64")


def test_nic_supports_interconnect_single_node_needs_no_switch():
    d = optimal(inst(ROCE_ONLY_NIC)).design
    assert (d.nodes, d.tiers, d.interconnect) == (1, 0, "roce400")


def test_nic_supports_interconnect_infeasible_when_no_switch_speaks_the_protocol():
    result = infeasible(inst(ROCE_ONLY_NIC, {"constraints.pins.nodes": 2}))
    # Two nodes need a switch, and the only switch is InfiniBand.
    assert conflict(result) == {"nic_supports_interconnect", "pins_respected", NEEDS_A_FABRIC}


# -- link_speed (structural) ------------------------------------------------------------------------
def test_link_speed_honoured_links_run_at_the_slower_end():
    """A 400G NIC that can also run 200G, on a switch with 200G ports only: the design runs at
    200 Gb/s everywhere. Node configurations pair a NIC only with interconnects it lists, and
    fabrics only with switch ports at that speed, so no design can break the rule."""
    ib200 = {"id": "ib200", "name": "IB 200", "source": SRC, "protocol": "ib", "gbps": 200,
             "bus_efficiency": 0.92, "latency_us": 1.5}
    switch = dict(item("switches", "sw64"), id="sw40x200", cages=40, cage_form_factor="qsfp56",
                  ports_per_cage={200: 1})
    cable = {"id": "aoc200", "name": "AOC 200G", "source": SRC, "media": "aoc", "gbps": 200, "links": 1,
             "a_form_factor": "qsfp56", "b_form_factor": "osfp-flat", "max_reach_m": 30,
             "power_w_per_a_end": 5, "power_w_per_b_end": 5}
    changes = {
        **catalog_with(nics=[dict(item("nics", "nic400"), interconnects=["ib400", "ib200"])],
                       interconnects=[*TINY_CATALOG["interconnects"], ib200], switches=[switch],
                       cables=[*TINY_CATALOG["cables"], cable]),
        "catalog.prices": {**TINY_PRICES, "sw40x200": 20_000, "aoc200": 800},
        "constraints.pins.nodes": 4,
    }
    d = optimal(inst(changes)).design
    nic_gbps = max(ic["gbps"] for ic in [*TINY_CATALOG["interconnects"], ib200])
    switch_gbps = max(switch["ports_per_cage"])
    assert d.link_gbps == min(nic_gbps, switch_gbps) == 200
    assert d.interconnect == "ib200"
    compute_links = [link for link in d.links if link.network == "compute"]
    assert compute_links and all(link.gbps == 200 for link in compute_links)
    assert {link.part for link in compute_links} == {"aoc200"}


# -- leaf_ports_cover_endpoints ---------------------------------------------------------------------
@pytest.mark.parametrize("rails, nodes", [(1, 64), (8, 8)])
def test_leaf_ports_cover_endpoints_feasible_one_switch_at_its_radix(rails, nodes):
    pins = {"constraints.pins.tiers": 1, "constraints.pins.nics_per_node": rails, "constraints.pins.nodes": nodes}
    d = optimal(inst(ROOMY, pins)).design
    assert d.nodes * d.nics_per_node == 64
    assert [(s.tier, s.count, s.ports_used) for s in d.switches if s.network == "compute"] == [("leaf", 1, 64)]


@pytest.mark.parametrize("rails, nodes", [(1, 65), (8, 9)])
def test_leaf_ports_cover_endpoints_infeasible_one_switch_past_its_radix(rails, nodes):
    pins = {"constraints.pins.tiers": 1, "constraints.pins.nics_per_node": rails, "constraints.pins.nodes": nodes}
    result = infeasible(inst(ROOMY, pins))
    # With several rails, a rail-only fabric (one switch per rail group) would hold them.
    assert conflict(result) == {"pins_respected", "leaf_ports_cover_endpoints"} | (
        {"rail_only_allowed"} if rails > 1 else set())


# -- rail_only_allowed ---------------------------------------------------------------------------------
def test_rail_only_allowed_feasible_when_the_instance_allows_it():
    """9 nodes × 8 rails on 64-port switches in 1 tier: 2 switches of 4 rails (4 × 9 = 36 ports)."""
    pins = {"constraints.pins.tiers": 1, "constraints.pins.nics_per_node": 8, "constraints.pins.nodes": 9,
            "constraints.allow_rail_only": True}
    f = optimal(inst(ROOMY, pins)).design.fabric
    assert f.rail_only and f.leaves == 8 // f.rails_per_leaf and f.rails_per_leaf * 9 <= 64


def test_rail_only_allowed_infeasible_by_default():
    pins = {"constraints.pins.tiers": 1, "constraints.pins.nics_per_node": 8, "constraints.pins.nodes": 9,
            "constraints.pins.interconnect": "ib400"}
    assert "rail_only_allowed" in conflict(infeasible(inst(ROOMY, pins)))


# -- spine_ports_cover_uplinks / oversubscription_within_limit / uplinks_balanced --------------------
# Radix 64: at 1:1 a leaf has 32 down / 32 up ports, at 2:1 42 / 21, at 3:1 48 / 16. A spine takes
# at most 64 leaves (one link from each), so a 2-tier fabric of single-rail nodes ends at
# 64 x 32 = 2,048 nodes (1:1), 2,688 (2:1) or 3,072 (3:1).
TWO_TIERS = {**ROOMY, **REACH_ACROSS_ROWS, "goal.deadline_days": None,
             "constraints.pins.tiers": 2, "constraints.pins.nics_per_node": 1}
AT_MOST_3_TO_1 = {"constraints.max_oversubscription": 3}


@pytest.mark.parametrize("nodes, over, leaf_ports, spines", [(2048, 1, (32, 32), 32), (3072, 3, (48, 16), 16)])
def test_spine_ports_cover_uplinks_feasible_at_the_largest_two_tier_fabric(nodes, over, leaf_ports, spines):
    d = optimal(inst(TWO_TIERS, {"constraints.pins.nodes": nodes, "constraints.max_oversubscription": over})).design
    f = d.fabric
    assert (f.leaves, f.spines, f.links_per_leaf_spine) == (64, spines, 1)
    assert (f.leaf_down_ports, f.leaf_up_ports) == leaf_ports
    assert next(g.ports_used for g in d.switches if g.tier == "spine") == spines * 64


def test_spine_ports_cover_uplinks_infeasible_one_node_more():
    result = infeasible(inst(TWO_TIERS, AT_MOST_3_TO_1, {"constraints.pins.nodes": 3073}))
    # Without leaf_ports_cover_endpoints fewer leaves could serve the nodes; without
    # oversubscription_within_limit a leaf could take more than 3 down-ports per uplink; without
    # uplinks_balanced 65 leaves × 16 uplinks fit on 17 spines (1,088 ports), each leaf missing one.
    assert conflict(result) == {"pins_respected", "leaf_ports_cover_endpoints", "spine_ports_cover_uplinks",
                                "oversubscription_within_limit", "uplinks_balanced"}


def test_oversubscription_within_limit_feasible_at_two_to_one():
    """2,049 nodes need 2:1 leaves (42 down / 21 up, 21 spines): allowed by a 2:1 cap."""
    d = optimal(inst(TWO_TIERS, {"constraints.pins.nodes": 2049, "constraints.max_oversubscription": 2})).design
    assert d.oversubscription == 2.0
    assert (d.fabric.leaf_down_ports, d.fabric.leaf_up_ports) == (42, 21)


def test_oversubscription_within_limit_infeasible_one_node_past_one_and_a_half():
    """At most 1.5:1 a 64-port leaf takes d = 38 down-ports with u = ceil(38 / 1.5) = 26 uplinks
    (39 would need 26: 65 ports), and a spine at most 64 leaves: 64 × 38 = 2,432 nodes, no more.
    The 64-leaf limit holds because every leaf reaches every spine (uplinks_balanced): without it
    65 leaves × 26 uplinks fit on 27 spines' 1,728 ports, each leaf missing one spine."""
    assert optimal(inst(TWO_TIERS, {"constraints.pins.nodes": 2432, "constraints.max_oversubscription": 1.5}))
    result = infeasible(inst(TWO_TIERS, {"constraints.pins.nodes": 2433,
                                         "constraints.max_oversubscription": 1.5}))
    assert conflict(result) == {"pins_respected", "leaf_ports_cover_endpoints", "spine_ports_cover_uplinks",
                                "oversubscription_within_limit", "uplinks_balanced"}


@pytest.mark.parametrize("nodes, over", [(7, 1), (100, 1), (2049, 3), (5000, 1)])
def test_uplinks_balanced_honoured_spines_divide_leaf_uplinks(nodes, over):
    """Fabric options are built with spine counts that divide the leaf uplinks or, in 2 tiers, take
    them near-balanced (u/2 < S < u: 1 or 2 links per pair), and core counts that divide spine
    uplinks, so no design breaks the rule; check 2- and 3-tier designs."""
    tiers = 3 if nodes == 5000 else 2
    changes = {**TWO_TIERS, "constraints.pins.tiers": tiers, "constraints.pins.nodes": nodes,
               "constraints.max_oversubscription": over}
    f = optimal(inst(changes)).design.fabric
    assert f.tiers == tiers
    if tiers == 2:
        near_balanced = f.leaf_up_ports / 2 < f.spines < f.leaf_up_ports
        assert f.spines * f.links_per_leaf_spine == f.leaf_up_ports or near_balanced
        assert f.links_per_leaf_spine == f.leaf_up_ports // f.spines
        assert f.leaves * f.leaf_up_ports <= f.spines * 64
    else:
        assert f.spines_per_pod * f.links_per_leaf_spine == f.leaf_up_ports
        assert f.cores_per_plane * f.links_per_spine_core == f.spine_up_ports
        assert f.cores == f.spines_per_pod * f.cores_per_plane
        assert f.spines == f.pods * f.spines_per_pod
        assert f.pods * f.links_per_spine_core <= 64


# -- core_ports_cover_uplinks -----------------------------------------------------------------------
# Three tiers at 1:1: pods of 32 leaves, 32 up-ports per spine; a core takes at most 64 pods, so
# 64 x 32 = 2,048 leaves; with 8 rails that is 8 x ceil(n / 32) <= 2,048, i.e. n <= 8,192.
THREE_TIERS = {**TWO_TIERS, "constraints.pins.tiers": 3, "constraints.pins.nics_per_node": 8}


def test_core_ports_cover_uplinks_feasible_at_the_largest_three_tier_fabric():
    d = optimal(inst(THREE_TIERS, {"constraints.pins.nodes": 8192})).design
    f = d.fabric
    assert (f.leaves, f.pods, f.cores_per_plane, f.links_per_spine_core) == (2048, 64, 32, 1)
    assert f.rail_optimized and f.leaves_per_rail == 256


def test_core_ports_cover_uplinks_infeasible_one_node_more():
    result = infeasible(inst(THREE_TIERS, {"constraints.pins.nodes": 8193}))
    # At 1:1 only: oversubscribed leaves would serve more nodes per leaf.
    assert conflict(result) == {"pins_respected", "leaf_ports_cover_endpoints", "spine_ports_cover_uplinks",
                                "core_ports_cover_uplinks", "oversubscription_within_limit"}


# -- port_form_factor_match -------------------------------------------------------------------------
QSFP56_NIC = catalog_with(nics=[dict(item("nics", "nic400"), port_form_factor="qsfp56")])


def test_port_form_factor_match_feasible_with_a_fitting_cable():
    cable = dict(item("cables", "sr50"), id="sr50-q56", b_form_factor="qsfp56")
    changes = {**QSFP56_NIC, **catalog_with(cables=[*TINY_CATALOG["cables"], cable]),
               "catalog.prices": {**TINY_PRICES, "sr50-q56": 2_600}, "constraints.pins.nodes": 2}
    d = optimal(inst(changes)).design
    assert [(link.between, link.part) for link in d.links if link.network == "compute"] == [("node-leaf", "sr50-q56")]


def test_port_form_factor_match_infeasible_when_no_cable_fits_the_nic():
    result = infeasible(inst(QSFP56_NIC, {"constraints.pins.nodes": 2}))
    assert conflict(result) == {"port_form_factor_match", "pins_respected", NEEDS_A_FABRIC}


# -- cable_reach ------------------------------------------------------------------------------------
# The node–leaf run is in_rack_m when every device shares one rack, in_row_m + slack
# otherwise (docs/model.md, "Cable runs"); the 50 m kit sr50 is the only node–leaf part past 3 m.
# Two nodes (s40, 6.5 kW each) and their switches and storage fit one 40 kW rack. Four pinned s80
# nodes draw 4 × 10,234 W (server, NIC, one 9 W module) > 40 kW: at least two racks, so in-row runs.
IN_ROW_NODES = {"constraints.pins.server": "s80", "constraints.pins.nodes": 4}


def test_cable_reach_feasible_at_the_cables_reach_in_one_rack():
    changes = {"site.distances.in_rack_m": 50, "site.distances.in_row_m": 60, "constraints.pins.nodes": 2}
    d = optimal(inst(changes)).design
    assert [group.role for group in d.racks] == ["mixed"] and d.racks[0].count == 1
    assert [(link.part, link.length_m) for link in d.links if link.network == "compute"] == [("sr50", 50)]


def test_cable_reach_infeasible_one_metre_past_it_in_one_rack():
    # In-row runs of 62 m (storage and management parts reach 100 m) are longer still.
    changes = {"site.distances.in_rack_m": 51, "site.distances.in_row_m": 60, "constraints.pins.nodes": 2}
    assert conflict(infeasible(inst(changes))) == {"cable_reach", "pins_respected", NEEDS_A_FABRIC}


def test_cable_reach_feasible_at_the_cables_reach_in_a_row():
    d = optimal(inst(IN_ROW_NODES, {"site.distances.in_row_m": 48})).design
    assert racks_used(d) >= 2
    assert [(link.part, link.length_m) for link in d.links if link.network == "compute"] == [("sr50", 50)]


def test_cable_reach_infeasible_one_metre_past_it_in_a_row():
    # Only the rack's power keeps the four nodes out of one rack, where the run would be 5 m: each
    # of the four families is needed (a single node needs no fabric, hence NEEDS_A_FABRIC).
    result = infeasible(inst(IN_ROW_NODES, {"site.distances.in_row_m": 49}))
    assert conflict(result) == {"cable_reach", "pins_respected", NEEDS_A_FABRIC, "rack_power_within_limit"}


# Two tiers across rows: 48 nodes × 8 rails = 384 ports at 1:1 on 64-port switches need at least 12
# leaves (32 down, 32 up) and 384 / 64 = 6 spines, 18 switches or more of 2,244 W provisioned (1,700
# W and 32 cages × 17 W); a 40 kW rack holds 17, so the compute switches take two network racks. The
# 48 nodes take 16 compute racks (3 per 40 kW): more than eight racks, each of one model, and the
# leaf–spine run is across rows (across_rows_m + slack).
ACROSS_ROWS_PINS = {"constraints.pins.tiers": 2, "constraints.pins.nodes": 48, "constraints.pins.server": "s80",
                    "constraints.pins.nics_per_node": 8}


def test_cable_reach_across_rows_limits_two_tiers():
    """Default runs across rows are 52 m; the only switch-to-switch kit reaches 50 m."""
    d = optimal(inst(ROOMY, REACH_ACROSS_ROWS, ACROSS_ROWS_PINS)).design
    assert d.tiers == 2 and racks_used(d) > 8 and "mixed" not in {group.role for group in d.racks}
    compute = [(link.between, link.part, link.length_m) for link in d.links if link.network == "compute"]
    assert compute == [("node-leaf", "sr50", 17), ("leaf-spine", "sw-sr50", 50)]
    result = infeasible(inst(ROOMY, ACROSS_ROWS_PINS))
    # The one minimal conflict: without the rack's power limit, or with a fabric of at most 17
    # switches (what the fabric's port and oversubscription rules forbid; near-balanced spines
    # keep the balance rule out of it), every compute switch would share one rack and the
    # leaf–spine run would be in-rack. Each family is needed: relaxing any one alone is feasible.
    fabric = {NEEDS_A_FABRIC, "spine_ports_cover_uplinks", "oversubscription_within_limit"}
    assert conflict(result) == {"cable_reach", "pins_respected", "rack_power_within_limit", *fabric}
    assert {r.family for r in result.explanation.relaxations if r.value is not None} == conflict(result)


# -- rack_power_within_limit / rack_units_within_limit -----------------------------------------------
def _one_rack_class(power_kw: float, rack_units: int) -> dict:
    rack = {"id": "rk", "name": "test rack", "source": SRC, "power_kw": power_kw, "rack_units": rack_units,
            "cooling": "air"}
    return {**catalog_with(racks=[rack]), "catalog.prices": {**TINY_PRICES, "rk": 1_000},
            "constraints.pins.server": "s80"}


def _s80_node_w() -> float:
    d = optimal(inst(_one_rack_class(40, 42))).design
    assert (d.server, d.nodes, d.nics_per_node) == ("s80", 1, 1)
    return unit_powers_w(inst(_one_rack_class(40, 42)), d)[0]


def _node_racks(design) -> list[tuple]:
    """The rack groups holding nodes: (role, racks, nodes per rack, what else each holds)."""
    return [(g.role, g.count, g.nodes_per_rack, g.holds) for g in design.racks if g.nodes_per_rack > 0]


def test_rack_power_within_limit_feasible_when_a_rack_holds_exactly_one_node():
    """A rack of exactly the node's power holds it, and nothing else: every switch and storage unit
    draws power, so the storage and management devices take a (mixed) rack of their own."""
    node_w = _s80_node_w()
    d = optimal(inst(_one_rack_class(node_w / 1000, 42))).design
    assert _node_racks(d) == [("mixed", 1, 1, {})]
    node_rack = next(g for g in d.racks if g.nodes_per_rack > 0)
    assert node_rack.power_kw * 1000 == pytest.approx(node_w)
    assert racks_used(d) == 2


def test_rack_power_within_limit_infeasible_one_watt_short():
    node_w = _s80_node_w()
    result = infeasible(inst(_one_rack_class((node_w - 1) / 1000, 42)))
    assert conflict(result) == {"rack_power_within_limit", "pins_respected"}


def test_rack_units_within_limit_feasible_when_a_rack_holds_exactly_one_node():
    """An 8 U rack holds one 8 U s80 node and nothing else (every other device takes a unit)."""
    d = optimal(inst(_one_rack_class(40, 8))).design
    assert _node_racks(d) == [("mixed", 1, 1, {})]
    # Nine nodes take nine racks, more than eight: racks of one model each, one node per compute rack.
    d = optimal(inst(_one_rack_class(40, 8), {"constraints.pins.nodes": 9})).design
    assert _node_racks(d) == [("compute", 9, 1, {})]


def test_rack_units_within_limit_infeasible_one_unit_short():
    result = infeasible(inst(_one_rack_class(40, 7)))
    assert conflict(result) == {"rack_units_within_limit", "pins_respected"}


# -- racks_available --------------------------------------------------------------------------------
def test_racks_available_feasible_in_one_rack():
    """One node and its storage share a single mixed rack."""
    d = optimal(inst({"site.max_racks": 1})).design
    assert racks_used(d) == 1
    assert [(group.role, group.count) for group in d.racks] == [("mixed", 1)]


def test_racks_available_fewest_racks_feasible_one_fewer_infeasible():
    """Half a day needs several large nodes: the relaxation's rack count is the fewest any design
    needs — feasible at that count, infeasible one below."""
    result = infeasible(inst(MULTI_NODE, {"site.max_racks": 1}))
    assert "racks_available" in conflict(result)
    fewest = int(relaxation(result, "racks_available").value)
    assert fewest > 1
    assert racks_used(optimal(inst(MULTI_NODE, {"site.max_racks": fewest})).design) == fewest
    fewer = infeasible(inst(MULTI_NODE, {"site.max_racks": fewest - 1}))
    assert "racks_available" in conflict(fewer)
    assert relaxation(fewer, "racks_available").value == fewest


def test_racks_available_pinned_cluster_one_rack_fewer():
    """27 pinned 1-tier s80 nodes: a 40 kW rack holds 3 (4 would draw over 40 kW; 42 U would take
    5), so the nodes alone need 9 racks, more than eight: racks of one model each. 9 compute
    racks (two of them hold the management leaves), a network rack per switch model (compute,
    storage and the management aggregation pair, each model's few switches in one rack) and a
    storage rack: 13."""
    pins = {"constraints.pins.server": "s80", "constraints.pins.nodes": 27, "constraints.pins.tiers": 1,
            "constraints.pins.nics_per_node": 1}
    d = optimal(inst(pins)).design
    node_w = unit_powers_w(inst(pins), d)[0]
    assert 3 * node_w <= 40_000 < 4 * node_w
    assert [(g.role, g.count, g.nodes_per_rack) for g in d.racks] == [
        ("compute", 9, 3), ("network", 1, 0), ("network", 1, 0), ("network", 1, 0), ("storage", 1, 0)]
    assert len({s.model for s in d.switches}) == 3
    assert racks_used(optimal(inst(pins, {"site.max_racks": 13})).design) == 13
    changes = {**pins, "site.max_racks": 12}
    result = infeasible(inst(changes))
    # The one minimal conflict: without the rack's power limit 5 nodes fit a rack by height, and the
    # 27 nodes (216 U) and the rest fit six mixed racks; without the management port rule one
    # leaf, without an aggregation pair, would sit in a compute rack and free the m48 rack; the
    # height limit alone is no obstacle, so rack_units_within_limit is not in it.
    assert conflict(result) == {"racks_available", "pins_respected", "rack_power_within_limit",
                                "management_ports_cover"}
    suggestion = relaxation(result, "racks_available")
    assert suggestion.value == 13
    optimal(inst(apply_relaxation(changes, suggestion)))


def test_racks_available_pinned_mixed_racks_one_rack_fewer():
    """6 pinned s80 nodes at 3 per 40 kW rack: two mixed racks, one of 3 nodes and one of 3 nodes
    with every switch and storage unit (under 4 kW together); one rack cannot hold them."""
    pins = {"constraints.pins.server": "s80", "constraints.pins.nodes": 6, "constraints.pins.tiers": 1,
            "constraints.pins.nics_per_node": 1}
    d = optimal(inst(pins)).design
    assert [g.role for g in d.racks] == ["mixed", "mixed"] and racks_used(d) == 2
    assert sorted(g.nodes_per_rack for g in d.racks) == [3, 3]
    changes = {**pins, "site.max_racks": 1}
    result = infeasible(inst(changes))
    # Either rack family alone keeps 6 nodes out of one rack (3 by power, 5 by height): two minimal
    # conflicts, one with each.
    found = conflict(result)
    assert {"racks_available", "pins_respected"} < found
    assert found - {"racks_available", "pins_respected"} in ({"rack_power_within_limit"}, {"rack_units_within_limit"})
    suggestion = relaxation(result, "racks_available")
    assert suggestion.value == 2
    optimal(inst(apply_relaxation(changes, suggestion)))


def test_racks_available_rack_classes_limit_the_classes():
    assert optimal(inst({"site.rack_classes": ["r40"]})).design.racks[0].rack_class == "r40"
    assert conflict(infeasible(inst({"site.rack_classes": ["r99"]}))) == {"racks_available"}


def test_racks_available_relaxation_names_the_rack_class_the_site_lacks():
    """The site offers r20 racks only and the pin asks for r40: one rack is enough, so the
    relaxation is the class, not the count (it once read "max_racks ≥ 1", already true)."""
    r20 = dict(item("racks", "r40"), id="r20", name="20 kW rack", power_kw=20)
    changes = {**catalog_with(racks=[item("racks", "r40"), r20]), "catalog.prices": {**TINY_PRICES, "r20": 4_000},
               "site.rack_classes": ["r20"], "constraints.pins.rack_class": "r40", "site.max_racks": 1}
    result = infeasible(inst(changes))
    assert conflict(result) == {"pins_respected", "racks_available"}
    suggestion = relaxation(result, "racks_available")
    assert suggestion.message == "feasible with rack class r40 added to site.rack_classes"
    assert suggestion.edits == {"site.rack_classes": ["r20", "r40"]}
    assert optimal(inst(apply_relaxation(changes, suggestion))).design.racks[0].rack_class == "r40"
    # With more than one rack needed, the count grows too.
    more = infeasible(inst(MULTI_NODE, changes))
    suggestion = relaxation(more, "racks_available")
    assert set(suggestion.edits) == {"site.rack_classes", "site.max_racks"}
    assert suggestion.message.startswith("feasible with rack class r40 added to site.rack_classes and max_racks ≥ ")
    optimal(inst(MULTI_NODE, apply_relaxation(changes, suggestion)))


# -- site_power_within_limit ------------------------------------------------------------------------
@pytest.mark.parametrize("pins", [{}, {"constraints.pins.server": "s80", "constraints.pins.nodes": 6,
                                       "constraints.pins.tiers": 1}])
def test_site_power_within_limit_feasible_at_the_provisioned_power(pins):
    d = optimal(inst(pins)).design
    power_w = provisioned_power_w(inst(pins), d)
    result = optimal(inst(pins, {"site.power_cap_kw": power_w / 1000}))
    assert result.cost.total == optimal(inst(pins)).cost.total


@pytest.mark.parametrize("pins, expected", [
    ({}, {"site_power_within_limit"}),
    # The storage ports are pinned too: with them free, a design cabling fewer storage ports draws
    # less power than the cheapest one.
    ({"constraints.pins.server": "s80", "constraints.pins.nodes": 6, "constraints.pins.tiers": 1,
      "constraints.pins.storage_ports_per_node": 2},
     {"site_power_within_limit", "pins_respected"}),
])
def test_site_power_within_limit_infeasible_one_watt_less(pins, expected):
    power_w = provisioned_power_w(inst(pins), optimal(inst(pins)).design)
    changes = {**pins, "site.power_cap_kw": (power_w - 1) / 1000}
    result = infeasible(inst(changes))
    assert conflict(result) == expected
    suggestion = relaxation(result, "site_power_within_limit")
    assert suggestion.value * 1000 >= power_w
    optimal(inst(apply_relaxation(changes, suggestion)))


# -- storage_bandwidth_met / storage_capacity_met / storage_latency_ok ------------------------------
def _storage_needs(changes: dict):
    instance = inst(changes)
    catalog = resolve_catalog(instance).catalog
    tokens_per_s = instance.workload.training.tokens / (instance.goal.deadline_days * SECONDS_PER_DAY)
    return perf.storage_needs(perf.Job.from_instance(instance, catalog), tokens_per_s)


# A 98 GB checkpoint saved in 10 s needs 9.8 GB/s of writes: 4 object nodes (3 GB/s each).
FAST_SAVES = {"workload.checkpoint": {"max_save_time_s": 10}}
# 4.5 PB of data: 5 object nodes of 1 PB each.
BIG_DATASET = {"workload.data": {"dataset_tb": 4500}}


@pytest.mark.parametrize("changes, per_unit", [(FAST_SAVES, "write"), (BIG_DATASET, "capacity")])
def test_storage_needs_set_the_unit_count(changes, per_unit):
    needs = _storage_needs(changes)
    d = optimal(inst(changes)).design
    assert d.storage.tier == "obj"
    need, unit = (needs.write_gb_per_s, 3) if per_unit == "write" else (needs.capacity_tb, 1000)
    assert d.storage.units == math.ceil(need / unit) > 1


def test_storage_bandwidth_met_feasible_at_the_budget_its_units_cost():
    cost = optimal(inst(FAST_SAVES)).cost.total
    assert optimal(inst(FAST_SAVES, {"budget.max": cost})).cost.total == cost


def test_storage_bandwidth_met_infeasible_one_unit_below():
    cost = optimal(inst(FAST_SAVES)).cost.total
    result = infeasible(inst(FAST_SAVES, {"budget.max": cost - 1}))
    assert conflict(result) == {"budget_cap", "storage_bandwidth_met"}
    assert relaxation(result, "budget_cap").value == cost


def test_storage_bandwidth_met_read_rate_follows_the_deadline():
    """Reading 1 MB per token at the deadline's token rate needs many object nodes."""
    changes = {"workload.data": {"bytes_per_token": 1e6}, "goal.deadline_days": 2}
    needs = _storage_needs(changes)
    d = optimal(inst(changes)).design
    per_unit = {"obj": 5, "nvme": 50}[d.storage.tier]
    assert d.storage.units == math.ceil(needs.read_gb_per_s / per_unit) > 1


def test_storage_capacity_met_feasible_at_the_budget_its_units_cost():
    cost = optimal(inst(BIG_DATASET)).cost.total
    assert optimal(inst(BIG_DATASET, {"budget.max": cost})).cost.total == cost


def test_storage_capacity_met_infeasible_one_unit_below():
    cost = optimal(inst(BIG_DATASET)).cost.total
    result = infeasible(inst(BIG_DATASET, {"budget.max": cost - 1}))
    assert conflict(result) == {"budget_cap", "storage_capacity_met"}


def test_storage_latency_ok_feasible_small_files_on_a_low_latency_tier():
    assert optimal(inst({"workload.data": {"small_files": True}})).design.storage.tier == "nvme"
    assert optimal(inst({"constraints.pins.storage": "obj"})).design.storage.tier == "obj"


def test_storage_latency_ok_infeasible_small_files_on_the_object_tier():
    result = infeasible(inst({"workload.data": {"small_files": True}, "constraints.pins.storage": "obj"}))
    assert conflict(result) == {"storage_latency_ok", "pins_respected"}
