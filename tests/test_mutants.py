"""A deliberately broken model is caught: each constraint family's model function, replaced by a
no-op, lets the solver return a design the independent checker rejects under that family.

For each family with a model function (``topoopt.solver.model_module.RULES``) the test
removes the family from the model (test-only monkeypatching), solves a tiny instance on which the
family binds, and asserts that the checker names the family. Families whose per-option rules are
also applied before the model is built (``topoopt.options.rules.PREFILTERABLE``: allow/deny lists,
prices, pins, reach, …) are removed from that prefilter too; otherwise the prefilter alone would
still enforce them and the mutant would be the same model.

Structural families (``Family.structural`` in topoopt/families.py) cannot be removed this way: the
option tables never offer a design that breaks them (``link_speed``: a configuration runs one
interconnect and fabrics are built at its speed), so their model functions add nothing;
``test_structural_families_add_nothing`` checks that.
(``nic_fits_server`` is structural for compute NICs, whose node configurations come from each
server's NIC options and slots, but storage NIC choices are paired with servers in the model.)
"""

from __future__ import annotations

import copy
import functools

import pytest
from solver_fixtures import TINY_CATALOG, TINY_PRICES, tiny

import topoopt.solver as solver_module
from topoopt.checker import check_design
from topoopt.families import FAMILIES
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.options.problem import Problem
from topoopt.options.rules import PREFILTERABLE
from topoopt.solver import model as model_module
from topoopt.solver.model import new_model

SRC = "estimate: test fixture"
STRUCTURAL = tuple(family.id for family in FAMILIES.values() if family.structural)

SW8 = {"id": "sw8", "name": "SW 8x400", "source": SRC, "protocols": ["ib"], "cages": 4,
       "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 600, "rack_units": 1}
# Only the 8-port switch for the compute fabric (the storage and management switches stay), 50 m
# switch-to-switch runs (the twin-port kit reaches), room for big fabrics.
ONLY_SW8 = {"catalog.add.switches": [SW8, *(s for s in TINY_CATALOG["switches"] if s["id"] != "sw64")],
            "catalog.prices": {**TINY_PRICES, "sw8": 6_000},
            "site.distances.across_rows_m": 48, "budget.max": 1e9, "site.max_racks": 1_000,
            "goal.deadline_days": None}
BIG_MODEL = {"workload.model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "attention_heads": 64,
                                "kv_heads": 8, "ffn_hidden_size": 28672, "vocab_size": 128256},
             "goal.deadline_days": None, "constraints.pins.server": "s80", "constraints.pins.nics_per_node": 1}
ETHERNET_SWITCH = dict(copy.deepcopy(TINY_CATALOG["switches"][0]), id="eth64", protocols=["ethernet"])
QSFP56_KIT = dict(copy.deepcopy(TINY_CATALOG["cables"][1]), id="q56", b_form_factor="qsfp56")
RACK_200KW = {"id": "r200", "name": "200 kW rack", "source": SRC, "power_kw": 200, "rack_units": 42,
              "cooling": "air"}
CHEAP_STORAGE_NIC = dict(next(copy.deepcopy(n) for n in TINY_CATALOG["nics"] if n["id"] == "snic100"),
                         id="snic-cheap", name="Storage NIC only s80 takes")
HALF_A_DAY = {"goal.deadline_days": 0.5}  # 7 nodes of s80: several racks, a 1-tier fabric
# 1.944e6 bytes per token at 2e10 tokens / 30 days, doubled for safety: 30 GB/s of reads.
HEAVY_READS = {"workload.data": {"bytes_per_token": 1.944e6}}

# family -> (why the family binds, instance changes). The instance is feasible with the family, or
# infeasible only because of it; without the family the solver finds something cheaper.
CASES: dict[str, tuple[str, dict]] = {
    "memory_fits": ("a 70B model needs several 80 GB nodes; one is cheaper", BIG_MODEL),
    "deadline_met": ("half a day needs 7 nodes; one is cheaper", HALF_A_DAY),
    "budget_cap": ("one unit below the cheapest design", {"goal.deadline_days": None, "budget.max": 184_999}),
    "allowed_by_lists": ("the cheaper server is denied", {"constraints.servers": {"deny": ["s40"]}}),
    "pins_respected": ("3 nodes pinned; one is cheaper", {"constraints.pins.nodes": 3, "goal.deadline_days": None}),
    "nic_supports_interconnect": (
        "InfiniBand NICs; a cheaper Ethernet switch",
        {"catalog.add.switches": [*TINY_CATALOG["switches"], ETHERNET_SWITCH],
         "catalog.prices": {**TINY_PRICES, "eth64": 10_000}, "constraints.pins.nodes": 2}),
    "leaf_ports_cover_endpoints": ("9 nodes on 8-port switches need 2 tiers; 1 is cheaper",
                                   {**ONLY_SW8, "constraints.pins.nodes": 9}),
    "spine_ports_cover_uplinks": ("33 nodes on 8-port switches need 3 tiers; 2 are cheaper",
                                  {**ONLY_SW8, "constraints.pins.nodes": 33}),
    "core_ports_cover_uplinks": ("3 pods need 2 cores per plane; 1 is cheaper",
                                 {**ONLY_SW8, "constraints.pins.nodes": 40, "constraints.pins.tiers": 3}),
    "oversubscription_within_limit": ("3:1 leaves need fewer switches; the cap is 1:1",
                                      {**ONLY_SW8, "constraints.pins.nodes": 12}),
    "rail_only_allowed": ("2 nodes × 8 rails on 8-port switches need 2 tiers; 2 rail-only switches are cheaper",
                          {**ONLY_SW8, "constraints.pins.nodes": 2, "constraints.pins.nics_per_node": 8}),
    "uplinks_balanced": ("5 nodes on 2 tiers: spines bought to reach every leaf's uplinks (even, or 1–2 links "
                         "per pair) and R1; fewer are cheaper",
                         {**ONLY_SW8, "constraints.pins.nodes": 5, "constraints.pins.tiers": 2}),
    "uplinks_balanced/3 tiers": ("spines and cores per pod; none is cheaper",
                                 {**ONLY_SW8, "constraints.pins.nodes": 40, "constraints.pins.tiers": 3}),
    "port_form_factor_match": (
        "a cheaper kit whose node end is QSFP56, the NIC's cage OSFP",
        {"catalog.add.cables": [*TINY_CATALOG["cables"], QSFP56_KIT],
         "catalog.prices": {**TINY_PRICES, "q56": 100}, "constraints.pins.nodes": 2}),
    "cable_reach": ("the cheap 3 m DAC on a 4 m run (two nodes and the rest in one rack)",
                    {"constraints.pins.nodes": 2, "site.distances.in_rack_m": 4}),
    "rack_power_within_limit": ("3 nodes per 40 kW rack by power, 5 by height", HALF_A_DAY),
    "rack_units_within_limit": ("5 nodes per 42 U rack by height, 19 by power",
                                {**HALF_A_DAY, "catalog.add.racks": [RACK_200KW],
                                 "catalog.prices": {**TINY_PRICES, "r200": 5_000}}),
    "racks_available": ("half a day needs 7 nodes of over 10 kW: 3 racks of 40 kW, mixed or not; 2 are available",
                        {**HALF_A_DAY, "site.max_racks": 2}),
    "site_power_within_limit": ("half a day needs more than 70 kW", {**HALF_A_DAY, "site.power_cap_kw": 70}),
    "storage_bandwidth_met": ("a 98 GB checkpoint saved in 10 s needs several object nodes",
                              {"workload.checkpoint": {"max_save_time_s": 10}}),
    "storage_capacity_met": ("4.5 PB of data needs 5 object nodes", {"workload.data": {"dataset_tb": 4500}}),
    "storage_latency_ok": ("small files rule out the cheaper object tier", {"workload.data": {"small_files": True}}),
    "nic_fits_server": ("a cheaper storage NIC that only the other server's slots take",
                        {"catalog.add.nics": [*TINY_CATALOG["nics"], CHEAP_STORAGE_NIC],
                         "catalog.add.servers": [dict(s, storage_nic_options=["snic100", "snic-cheap"])
                                                 if s["id"] == "s80" else s for s in TINY_CATALOG["servers"]],
                         "catalog.prices": {**TINY_PRICES, "snic-cheap": 100}, "constraints.pins.server": "s40"}),
    # The storage and management networks (issue 8).
    "storage_nic_bandwidth_met": ("30 GB/s of reads on one node need both 2 × 100G storage NICs; one is cheaper",
                                  HEAVY_READS),
    "storage_fabric_ports_cover": ("16 nodes' 32 storage ports and the units' overflow one 32-port storage switch; "
                                   "a second tier costs more", {"constraints.pins.nodes": 16, "goal.deadline_days": None,
                                                                "constraints.pins.storage_ports_per_node": 2}),
    "cold_storage_met": ("500 TB of raw data to archive need a cold tier; none is cheaper",
                         {"workload.data": {"archive_tb": 500}, "constraints.pins.nodes": 8, "goal.deadline_days": None}),
    "management_ports_cover": ("24 nodes, their switches and units need 2 management leaves and 2 aggregation "
                               "switches; fewer are cheaper", {"constraints.pins.nodes": 24, "goal.deadline_days": None,
                                                                  "constraints.pins.storage_ports_per_node": 2}),
}
# In 3 tiers the spine and core counts the broken model leaves out are the port families' records
# (spines = pods x spines per pod, cores = planes x cores per plane), so they name it.
CAUGHT_BY = {"uplinks_balanced/3 tiers": {"spine_ports_cover_uplinks", "core_ports_cover_uplinks"}}
# priced_in_book: an unpriced server costs nothing to the broken model, which picks it; the
# solver's own bill cannot price it, so the mutant is caught when the solve raises (or, if the
# bill were ever made tolerant, by the checker).
UNPRICED_S40 = {"catalog.prices": {k: v for k, v in TINY_PRICES.items() if k != "s40"}}


def without_family(monkeypatch, family: str) -> None:
    """Remove ``family`` from the model: its function is a no-op and nothing prefilters by it."""
    monkeypatch.setitem(model_module.RULES, family, lambda dm: None)
    if family in PREFILTERABLE:
        of = Problem.of.__func__
        monkeypatch.setattr(Problem, "of", classmethod(functools.partial(of, prefilter=PREFILTERABLE - {family})))


def checked_families(instance: Instance, result: SolveResult) -> set[str]:
    return {v.family for v in check_design(instance, result.design, result.cost, result.performance)}


def test_every_family_with_a_model_function_has_a_mutant_case():
    assert set(model_module.RULES) == set(FAMILIES)
    assert {case.split("/")[0] for case in CASES} | {"priced_in_book"} | set(STRUCTURAL) == set(FAMILIES)


@pytest.mark.parametrize("case", list(CASES))
def test_removing_a_family_is_caught_by_the_checker(case, monkeypatch):
    family = case.split("/")[0]
    _, changes = CASES[case]
    instance = tiny(**changes)
    intact = solve_quietly(instance)
    if intact.status == "optimal":
        assert checked_families(instance, intact) == set(), "the intact model's design must pass"
    without_family(monkeypatch, family)
    broken = solve_quietly(instance)
    assert broken.status == "optimal", "the broken model finds a design"
    if intact.status == "optimal":
        assert broken.cost.total < intact.cost.total, "without the family the optimum is cheaper"
    caught_by = CAUGHT_BY.get(case, {family})
    assert caught_by <= checked_families(instance, broken)


def test_removing_priced_in_book_is_caught(monkeypatch):
    instance = tiny(**UNPRICED_S40)
    intact = solve_quietly(instance)
    assert intact.design.server == "s80" and checked_families(instance, intact) == set()
    without_family(monkeypatch, "priced_in_book")
    try:
        broken = solve_quietly(instance)
    except TypeError:  # the solver's bill has no price for the unpriced server it chose
        return
    assert broken.design.server == "s40"
    assert "priced_in_book" in checked_families(instance, broken)


@pytest.mark.parametrize("family", STRUCTURAL)
def test_structural_families_add_nothing(family, monkeypatch):
    """The option tables already exclude what these families forbid, so their model functions add
    no constraint: removing one leaves the model unchanged (and cannot be caught by solving)."""
    instance = tiny(**HALF_A_DAY)

    def size() -> tuple[int, int]:
        problem = Problem.of(instance)
        model = new_model(problem).model
        return len(model.proto.variables), len(model.proto.constraints)

    intact = size()
    monkeypatch.setitem(model_module.RULES, family, lambda dm: None)
    assert size() == intact


def solve_quietly(instance: Instance) -> SolveResult:
    return solver_module.solve(instance, explain=False)
