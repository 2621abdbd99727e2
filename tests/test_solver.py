"""The CP-SAT designer as a whole: its optimum against exhaustive enumeration, the model's size,
reproducibility, and every example instance from the library and the command line.

The enumerator (tests/enumeration.py) is written from the rules of docs/model.md, the catalog, the
instance, ``topoopt.perf`` and the checker, never from the solver's code.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from enumeration import enumerate_min_cost
from example_outputs import written_example
from solver_fixtures import TINY_CATALOG, TINY_PRICES, tiny
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt.cli.app import app
from topoopt.loader import load_instance
from topoopt.models.instance import Instance

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "instances").glob("*.yaml"))
SRC = "estimate: test fixture"


# == Differential cases: the optimum against exhaustive enumeration (tests/enumeration.py) ==

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
# The only compute switch is the 8-port one (the storage and management switches stay allowed).
ONLY_SW8 = {"constraints.switches": {"allow": ["sw8", "esw32", "esw256", "m48"]}}
# A DGX-like server: 8 built-in rails on 4 twin-port cages, and a twin-port DAC for 1 m runs.
DGX = {"id": "dgx", "name": "DGX-like", "source": SRC, "gpu": "g80", "gpus_per_node": 8, "power_w": 10200,
       "rack_units": 8, "builtin_compute_nics": {"nic": "nic400", "count": 8}, "max_compute_nics": 8,
       "compute_port_form_factor": "osfp-twin-finned", "compute_ports_per_cage": 2,
       "builtin_storage_nics": {"nic": "snic100", "count": 1}}
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
# Storage units whose ports run 400G InfiniBand can join the compute fabric (converged storage).
IB_UNITS = {"id": "ibfs", "name": "IB file system unit", "source": SRC, "kind": "parallel_fs", "capacity_tb": 500,
            "read_gb_per_s": 50, "write_gb_per_s": 30, "latency_class": "low", "power_w": 2000, "rack_units": 2,
            "network_ports": 2, "port_speeds_gbps": [400], "port_form_factor": "osfp-flat", "protocols": ["ib"]}
WITH_IB_UNITS = {"catalog.add.storage": [*TINY_CATALOG["storage"], IB_UNITS],
                 "catalog.prices": {**DIFF_BASE["catalog.prices"], "ibfs": 120_000}}
DIFF_CASES = {
    "deadline 30 days": {},
    "deadline 1 day": {"goal.deadline_days": 1},
    "deadline 6 hours": {"goal.deadline_days": 0.25},
    "1 node pinned": {"constraints.pins.nodes": 1, "goal.deadline_days": None},
    "5 nodes pinned": {"constraints.pins.nodes": 5, "goal.deadline_days": None},
    "12 nodes, 8-port switch": {"constraints.pins.nodes": 12, "goal.deadline_days": None, **ONLY_SW8},
    "30 nodes, 8-port switch, 3:1": {"constraints.pins.nodes": 30, "goal.deadline_days": None,
                                     "constraints.max_oversubscription": 3, **ONLY_SW8},
    # 5 leaves × 4 uplinks = 20 links need 3 spines of 8 ports, which 4 uplinks do not divide:
    # near-balanced, every leaf 1 or 2 links per spine (the even shapes take 4 spines).
    "20 nodes, 8-port switch, near-balanced spines": {"constraints.pins.nodes": 20, "goal.deadline_days": None,
                                                     "budget.max": 10_000_000, **ONLY_SW8},
    "20 nodes converged, 8-port switch": {**WITH_IB_UNITS, "constraints.pins.storage_network": "converged",
                                          "constraints.pins.nodes": 20, "goal.deadline_days": None,
                                          "budget.max": 10_000_000, **ONLY_SW8},
    "40 nodes, 8-port switch": {"constraints.pins.nodes": 40, "goal.deadline_days": None, "budget.max": 10_000_000,
                                **ONLY_SW8},
    "64 nodes, 2 rails, 8-port switch": {"constraints.pins.nodes": 64, "constraints.pins.nics_per_node": 2,
                                         "goal.deadline_days": None, "budget.max": 12_000_000,
                                         "site.max_racks": 100, **ONLY_SW8},
    # Racks per device model: compute racks, a network rack per switch model (compute, storage,
    # management) and a storage rack.
    "deadline, 8-port switch, 7 racks": {"goal.deadline_days": 0.5, "site.max_racks": 7, **ONLY_SW8},
    "deadline, 6 racks": {"goal.deadline_days": 0.5, "site.max_racks": 6},
    "deadline, 20 kW racks only": {"goal.deadline_days": 1, "site.rack_classes": ["r20"]},
    "deadline, 76 kW site": {"goal.deadline_days": 0.5, "site.power_cap_kw": 76},
    "deadline, 75 kW site": {"goal.deadline_days": 0.5, "site.power_cap_kw": 75},
    "deadline, budget too small": {"goal.deadline_days": 0.5, "budget.max": 1_000_000},
    "leaf switch pinned": {"constraints.pins.leaf_switch": "sw8"},
    "twin-port nodes, 1 tier (DAC)": {**TWIN_PORT_NODES, "constraints.pins.nodes": 8},
    "twin-port nodes, rail-optimized (no DAC)": {**TWIN_PORT_NODES, "constraints.pins.nodes": 12},
    "small files, fast saves": {"workload.data": {"small_files": True}, "workload.checkpoint": {"max_save_time_s": 5}},
    "archive on a cold tier": {"workload.data": {"archive_tb": 1500}, "workload.checkpoint": {"archive_days": 3}},
    "heavy reads, 3 nodes pinned": {"workload.data": {"bytes_per_token": 6e6}, "constraints.pins.nodes": 3},
    "heavy reads, converged allowed": {**WITH_IB_UNITS, "workload.data": {"bytes_per_token": 6e6},
                                       "constraints.pins.nodes": 3},
    "converged pinned, 2 tiers": {**WITH_IB_UNITS, "constraints.pins.storage_network": "converged",
                                  "constraints.pins.nodes": 12, "constraints.pins.tiers": 2,
                                  "goal.deadline_days": None},
    "dedicated pinned, 30 nodes": {"constraints.pins.storage_network": "dedicated", "constraints.pins.nodes": 30,
                                   "goal.deadline_days": None, "budget.max": 10_000_000, "site.max_racks": 60},
}


def diff_instance(changes: dict) -> Instance:
    return tiny(**{**DIFF_BASE, **changes})


@cache
def solved(case: str):
    from topoopt.solver import solve

    return solve(diff_instance(DIFF_CASES[case]), explain=False)


@cache
def enumerated(case: str) -> int | None:
    return enumerate_min_cost(diff_instance(DIFF_CASES[case]))


@pytest.mark.parametrize("case", DIFF_CASES)
def test_optimum_equals_exhaustive_enumeration(case):
    expected = enumerated(case)
    result = solved(case)
    if expected is None:
        assert result.status == "infeasible"
    else:
        assert result.status == "optimal"
        assert result.objective.value == expected
        assert result.cost.total == expected


@pytest.mark.parametrize("case", ["deadline 6 hours", "30 nodes, 8-port switch, 3:1"])
def test_the_solver_meets_the_enumerated_optimum_at_the_budget_edge(case):
    """With the budget at the enumerated optimum the solver finds it; one unit less, no design.
    (The enumeration applies the budget as a filter on its candidates and as a sound bound on
    their node count, so it is not run again at both budgets: that took 74 s.)"""
    from topoopt.solver import solve

    optimum = enumerated(case)
    at_optimum = {**DIFF_CASES[case], "budget.max": optimum}
    below = {**DIFF_CASES[case], "budget.max": optimum - 1}
    assert solve(diff_instance(at_optimum), explain=False).cost.total == optimum
    assert solve(diff_instance(below), explain=False).status == "infeasible"


def test_differential_cases_cover_every_tier_and_both_answers():
    """The cases above are not all alike: each fabric tier and infeasibility occur."""
    results = [solved(case) for case in DIFF_CASES]
    designs = [r.design for r in results if r.design]
    assert {d.tiers for d in designs} == {0, 1, 2, 3}
    assert {r.status for r in results} == {"optimal", "infeasible"}
    # ... and the storage and management networks' decisions vary too.
    assert {(d.storage_network.mode, d.storage_network.tiers) for d in designs} == {
        ("dedicated", 1), ("dedicated", 2), ("converged", 0)}
    assert {d.storage_network.nics_per_node for d in designs} == {0, 1, 2}
    assert any(d.cold_storage for d in designs) and any(d.management_network.aggregation for d in designs)


# == Model size ====================================================================================
def model_size(instance: Instance) -> tuple[int, int]:
    """Variables and constraints of the min-cost model; the model must validate (no overflow)."""
    from topoopt.options.problem import Problem
    from topoopt.solver.model import new_model

    problem = Problem.of(instance)
    dm = new_model(problem)
    assert dm.model.validate() == ""
    return len(dm.model.proto.variables), len(dm.model.proto.constraints)


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
def _tiny_run():
    case = "deadline, 8-port switch, 7 racks"
    return diff_instance(DIFF_CASES[case]), solved(case)


def _frontier_run():
    written = written_example("frontier-131k.yaml")  # the session's run (example_outputs.py)
    return written.instance, written.result


@pytest.mark.parametrize("first_run", [pytest.param(_tiny_run, id="tiny"), pytest.param(_frontier_run, id="frontier-131k")])
def test_same_instance_same_design_whatever_the_run_or_worker_count(first_run):
    """A run of the session, another, and one on two workers: one design, one cost."""
    from topoopt.solver import solve

    instance, first = first_run()
    runs = [first, solve(instance, explain=False), solve(instance, workers=2, explain=False)]
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
    if path.name != INFEASIBLE_EXAMPLE:
        # The session's solve of the example (example_outputs.py), which the export tests read too.
        result = written_example(path.name).result
    else:
        result = solve(instance)
        assert result.status == "infeasible"
        assert "budget_cap" in {item.family for item in result.explanation.conflict}
        budget = next(r for r in result.explanation.relaxations if r.family == "budget_cap")
        assert budget.value > instance.budget.max
        return
    assert result.status == "optimal", result.explanation
    assert result.cost.total <= instance.budget.max
    if instance.goal.objective == "min_cost":
        assert result.objective.value == result.cost.total
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
        if printed["objective"]["kind"] == "min_cost":
            assert printed["cost"]["total"] == printed["objective"]["value"]


def test_cli_summary_without_json(tmp_path):
    """The readable summary goes to stdout (not JSON); --out still writes design.json."""
    path = REPO / "instances" / "llama2-7b-finetune-8gpu.yaml"
    run = CliRunner().invoke(app, ["solve", str(path), "--out", str(tmp_path)])
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() and not run.stdout.lstrip().startswith("{")
    assert json.loads((tmp_path / "design.json").read_text(encoding="utf-8"))["status"] == "optimal"
