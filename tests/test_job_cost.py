"""``min_job_cost``: rent per month × months of training, exactly (topoopt/solver/objectives/min_job_cost.py).

* Differential: on small rented catalogs the solver's optimum equals exhaustive enumeration's
  (tests/enumeration.py, ``JobCostEnumerator``: every combination the rules admit, storage fed at
  its own rate, ranked by job cost, judged by the independent checker), and "infeasible" agrees.
* The lemmas the optimality proof rests on, checked candidate by candidate against CP-SAT: the
  cost floor never exceeds a candidate's cheapest design (and an infinite floor means there is
  none), no design lies outside a pair's node range, the floor grows and the time to train falls
  with the node count.
* The example instance from the CLI (checker acceptance), capex rejection (exit 2), the reported
  value, storage at the design's own rate, time limits and determinism.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from pathlib import Path

import pytest
from enumeration import enumerate_min_job_cost
from example_outputs import written_example
from solver_fixtures import SRC, TINY_CATALOG, TINY_PRICES, tiny
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt.checker import check_design
from topoopt.cli.app import app
from topoopt.loader import load_instance

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "instances" / "llama3-70b-job-cost-cny.yaml"
DEMO = REPO / "instances" / "llama3-70b-roce-cny.yaml"
DAYS_PER_MONTH = 365.25 / 12

# An 8-port switch and a 20 kW rack, otherwise like the tiny catalog's.
SW8 = dict(TINY_CATALOG["switches"][0], id="sw8", name="SW 8x400", source=SRC, cages=4, power_w=600)
R20 = dict(TINY_CATALOG["racks"][0], id="r20", name="20 kW rack", source=SRC, power_kw=20)
# The tiny catalog's prices read as monthly rent in CNY.
RENTED = {
    "goal.objective": "min_job_cost",
    "budget.basis": "monthly_rent",
    "budget.currency": "CNY",
    "budget.max": 6_000_000,
    "catalog.price_book": "cny-monthly-rent",
    "catalog.add.switches": [*TINY_CATALOG["switches"], SW8],
    "catalog.add.racks": [*TINY_CATALOG["racks"], R20],
    "catalog.add.servers": [dict(s, max_compute_nics=2) for s in TINY_CATALOG["servers"]],
    "catalog.prices": {**TINY_PRICES, "sw8": 6_000, "r20": 3_000},
    "site.distances.across_rows_m": 48,
    "catalog.terms": [],  # billed pro rata unless a case states terms
}
# The 8-port switch as the only compute switch (the storage and management switches stay allowed).
ONLY_SW8 = {"constraints.switches": {"allow": ["sw8", "esw32", "esw256", "m48"]}}
HEAVY_READS = {"workload.data": {"bytes_per_token": 100_000}}
# An NVMe array with InfiniBand 400G data ports: it can sit on the compute fabric, so a converged
# storage network is offered (its reads then share the compute NICs and slow the step).
IB_NVME = dict(TINY_CATALOG["storage"][0], id="ibnvme", name="NVMe array, IB 400G", source=SRC,
               port_speeds_gbps=[400], port_form_factor="osfp-flat", protocols=["ib"])
CONVERGED = {"catalog.add.storage": [*TINY_CATALOG["storage"], IB_NVME],
             "catalog.prices": {**RENTED["catalog.prices"], "ibnvme": 25_000}}
# A 1-month minimum and a quarterly term at 95 % of monthly.
TERMS = [{"months": 1, "factor": 1.0, "source": SRC}, {"months": 3, "factor": 0.95, "source": SRC}]
CASES = {
    "no deadline": {"goal.deadline_days": None},
    "deadline 1 day": {"goal.deadline_days": 1},
    "deadline 6 hours": {"goal.deadline_days": 0.25},
    "1 node pinned": {"constraints.pins.nodes": 1, "goal.deadline_days": None},
    "5 nodes pinned": {"constraints.pins.nodes": 5, "goal.deadline_days": None},
    "8-port switch, 6 hours": {"goal.deadline_days": 0.25, **ONLY_SW8},
    "8-port switch, 12 hours, 7 racks": {"goal.deadline_days": 0.5, "site.max_racks": 7, **ONLY_SW8},
    "30 nodes, 8-port switch, 3:1": {"constraints.pins.nodes": 30, "goal.deadline_days": None,
                                     "constraints.max_oversubscription": 3, **ONLY_SW8},
    "20 kW racks, 1 day": {"goal.deadline_days": 1, "site.rack_classes": ["r20"]},
    "small files, fast saves": {"goal.deadline_days": None, "workload.data": {"small_files": True},
                                "workload.checkpoint": {"max_save_time_s": 5}},
    "heavy reads": {"goal.deadline_days": None, **HEAVY_READS},
    "heavy reads, 12 hours": {"goal.deadline_days": 0.5, **HEAVY_READS},
    "budget too small": {"goal.deadline_days": 0.5, "budget.max": 1_000_000},
    "3 racks, 12 hours": {"goal.deadline_days": 0.5, "site.max_racks": 3},
    "converged offered": {"goal.deadline_days": None, **CONVERGED},
    "converged offered, 12 hours": {"goal.deadline_days": 0.5, **CONVERGED},
    "converged offered, heavy reads, 1 day": {"goal.deadline_days": 1, **HEAVY_READS, **CONVERGED},
    "monthly and quarterly terms": {"goal.deadline_days": None, "catalog.terms": TERMS},
    "terms, 5 nodes pinned": {"constraints.pins.nodes": 5, "goal.deadline_days": None, "catalog.terms": TERMS},
    "terms, heavy reads": {"goal.deadline_days": None, "catalog.terms": TERMS, **HEAVY_READS},
}


def rented(**changes):
    return tiny(**{**RENTED, **changes})


@cache
def solved(case: str):
    from topoopt.solver import solve

    return solve(rented(**CASES[case]), explain=False)


def months(result) -> float:
    return result.performance.time_to_train_days / DAYS_PER_MONTH


# == Differential: the optimum against exhaustive enumeration ======================================
@pytest.mark.parametrize("case", CASES)
def test_optimum_equals_exhaustive_enumeration(case):
    expected = enumerate_min_job_cost(rented(**CASES[case]))
    result = solved(case)
    if expected.job_cost is None:
        assert result.status == "infeasible"
        return
    assert expected.cost_mismatches == 0
    assert result.status == "optimal"
    assert result.objective.value == pytest.approx(expected.job_cost, rel=1e-9)
    assert result.objective.bound == result.objective.value and result.objective.gap == 0.0


def test_the_cases_are_not_all_alike():
    """Several fabric tiers, both storage network modes, both answers, and designs that min_cost
    would not pick."""
    from topoopt.solver import solve

    results = {case: solved(case) for case in CASES}
    assert {r.design.tiers for r in results.values() if r.design} >= {0, 1, 2}
    assert {r.design.storage_network.mode for r in results.values() if r.design} == {"dedicated", "converged"}
    assert {r.status for r in results.values()} == {"optimal", "infeasible"}
    cheaper_jobs = 0
    for case, result in results.items():
        if result.design is None:
            continue
        per_month = solve(rented(**CASES[case], **{"goal.objective": "min_cost"}), explain=False)
        # The cheapest rent per month is a design too when its storage also feeds its own rate
        # (min_cost sizes storage for the deadline's rate): its job, billed under the same terms
        # (its reported rental), then costs at least the optimum.
        if check_design(rented(**CASES[case]), per_month.design) == []:
            assert per_month.cost.rental.total >= result.objective.value * (1 - 1e-12)
        assert per_month.cost.total <= result.cost.total
        cheaper_jobs += per_month.cost.rental.total > result.objective.value * (1 + 1e-9)
    assert cheaper_jobs >= 3, "min_job_cost should differ from min_cost on several cases"


@pytest.mark.parametrize("case", ["no deadline", "8-port switch, 6 hours", "heavy reads",
                                  "converged offered, heavy reads, 1 day"])
def test_solution_passes_the_checker_at_the_value_it_reports(case):
    result = solved(case)
    instance = rented(**CASES[case])
    assert check_design(instance, result.design, result.cost, result.performance) == []
    assert result.objective.value == pytest.approx(result.cost.total * months(result), rel=1e-12)
    assert result.cost.total <= instance.budget.max


# == The lemmas of the optimality proof, candidate by candidate =====================================
def candidate(search, pair, n: int, tokens_per_s: float):
    """The candidate's model (its pair's options and storage mode, ``nodes == n``) with storage at
    ``tokens_per_s``."""
    return search.model(pair, n, tokens_per_s)


def cheapest(dm):
    from ortools.sat.python import cp_model

    from topoopt.solver.run import Settings, Stats, run

    dm.model.minimize(dm.vars.total_cost)
    status, solver = run(dm.model, Settings(), Stats())
    assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    return None if status == cp_model.INFEASIBLE else round(solver.objective_value)


@pytest.mark.parametrize("case", ["no deadline", "8-port switch, 6 hours", "30 nodes, 8-port switch, 3:1",
                                  "heavy reads, 12 hours", "converged offered, heavy reads, 1 day"])
def test_cost_floor_and_node_range_hold_for_every_candidate(case):
    from topoopt.options.problem import Problem
    from topoopt.options.tables import MAX_NODES
    from topoopt.perf import evaluate
    from topoopt.solver.objectives.min_job_cost import JobCostSearch
    from topoopt.solver.run import Settings, Stats

    search = JobCostSearch(Problem.of(rented(**CASES[case])), Settings(), Stats())
    pairs = search.pairs()
    assert pairs
    tokens = search.tokens
    checked = nonempty = 0
    for pair in pairs:
        search.bound(pair)  # the search tightens n_hi when it first pops the pair
        nonempty += pair.n_lo <= pair.n_hi
        # Outside [n_lo, n_hi] nothing is feasible, even with storage fed at no rate at all.
        for outside in (pair.n_lo - 1, pair.n_hi + 1):
            if 1 <= outside <= MAX_NODES:
                assert cheapest(candidate(search, pair, outside, 0.0)) is None, (pair.perf_class, outside)
        span = range(pair.n_lo, pair.n_hi + 1)
        last_floor, last_s = 0.0, math.inf
        for n in sorted({*span[:6], *span[-2:]}):
            seconds = search.duration_s(pair, n)
            assert seconds is not None and seconds <= last_s  # time to train falls with n
            floor = search.cost_floor(pair, n, tokens / seconds)
            assert floor >= last_floor  # the floor grows with n (the frontier bound relies on it)
            assert seconds >= search.duration_s(pair, pair.n_hi)  # so a range's key bounds its counts
            hardware = search.problem.hardware(pair.configs[0], pair.perf_class, n, pair.converged)
            rate = evaluate(search.problem.job, hardware).tokens_per_s
            assert rate >= tokens / seconds * (1 - 1e-12)  # the floor's rate is at most the own rate
            cost = cheapest(candidate(search, pair, n, rate))
            if floor == math.inf:
                assert cost is None, (pair.perf_class, n)
            elif cost is not None:
                assert floor <= cost, (pair.perf_class, n, floor, cost)
            last_floor, last_s = floor, seconds
            checked += 1
    assert checked >= max(5, nonempty)


# == The example instance, from the command line ===================================================
@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """One run of the command line on the example: its summary on stdout, its result in design.json."""
    out = tmp_path_factory.mktemp("job-cost") / "set"
    run = CliRunner().invoke(app, ["solve", str(EXAMPLE), "--out", str(out)])
    assert run.exit_code == 0, run.stderr
    return run, json.loads((out / "design.json").read_text(encoding="utf-8"))


def test_example_solves_from_the_cli_and_the_checker_accepts_it(example_run):
    run, printed = example_run
    assert "checker accepts the design" in run.stderr
    assert printed["status"] == "optimal"
    objective, cost, performance = printed["objective"], printed["cost"], printed["performance"]
    assert objective["kind"] == "min_job_cost" and objective["gap"] == 0.0
    assert objective["value"] == pytest.approx(cost["total"] * performance["time_to_train_days"] / DAYS_PER_MONTH,
                                               rel=1e-12)
    instance = load_instance(EXAMPLE).instance
    assert cost["total"] <= instance.budget.max
    assert performance["time_to_train_days"] <= instance.goal.deadline_days


def test_example_summary_spells_out_the_job_cost(example_run):
    run, _ = example_run
    assert "OPTIMAL (min_job_cost)" in run.stdout
    line = next(line for line in run.stdout.splitlines() if line.startswith("Job cost"))
    assert "/month ×" in line and "÷ 30.4375 days per month" in line


def test_example_job_is_cheaper_than_the_cheapest_monthly_rent(example_run):
    """The demo's min_cost design (cheapest per month) trains longer; as a job it costs more."""
    _, job = example_run
    per_month = written_example(DEMO.name).result  # the session's solve (example_outputs.py)
    assert per_month.cost.total < job["cost"]["total"]
    assert per_month.cost.total * months(per_month) > job["objective"]["value"]


# == Capex price books are rejected ================================================================
def test_capex_price_book_is_rejected_with_a_precise_message():
    from topoopt.solver import UnsupportedObjective, solve

    with pytest.raises(UnsupportedObjective) as info:
        solve(tiny(**{"goal.objective": "min_job_cost"}))
    message = str(info.value)
    assert message.startswith("goal.objective: min_job_cost needs a monthly_rent price book")
    assert "'usd-capex' is capex" in message


def test_capex_price_book_exits_2_from_the_cli(tmp_path):
    source = (REPO / "instances" / "llama3-405b-16k-usd.yaml").read_text(encoding="utf-8")
    assert "objective: min_cost" in source and "price_book: usd-capex" in source
    path = tmp_path / "capex-job.yaml"
    path.write_text(source.replace("objective: min_cost", "objective: min_job_cost", 1), encoding="utf-8")
    run = CliRunner().invoke(app, ["solve", str(path)])
    assert run.exit_code == 2
    assert run.stderr.startswith(f"{path}: goal.objective: min_job_cost needs a monthly_rent price book")
    assert "Traceback" not in run.stderr + run.stdout


# == Storage at the design's own rate ===============================================================
def test_storage_feeds_the_designs_own_rate():
    result = solved("heavy reads")
    need = result.performance.storage.read_gb_per_s
    assert result.design.storage.read_gbps / 8 >= need * (1 - 1e-9)
    # The rate decides: one unit of the cheapest tier (what capacity and checkpoints alone need)
    # would not feed it.
    cheapest_tier = min(TINY_CATALOG["storage"], key=lambda tier: TINY_PRICES[tier["id"]])
    assert need > cheapest_tier["read_gb_per_s"]


def test_checker_rejects_storage_sized_below_the_own_rate():
    """Without a deadline min_cost sizes no read rate; judged as a job, that storage and the
    storage network's path to it are too slow."""
    from topoopt.solver import solve

    per_month = solve(rented(**CASES["heavy reads"], **{"goal.objective": "min_cost"}), explain=False)
    violations = check_design(rented(**CASES["heavy reads"]), per_month.design)
    assert sorted(v.family for v in violations) == ["storage_bandwidth_met", "storage_nic_bandwidth_met"]


def test_infeasible_only_because_of_the_own_rate_says_so():
    """A budget that buys the cheapest design with storage for no read rate, not one for its own."""
    from topoopt.solver import solve

    per_month = solve(rented(**CASES["heavy reads"], **{"goal.objective": "min_cost"}), explain=False)
    result = solve(rented(**CASES["heavy reads"], **{"budget.max": per_month.cost.total}))
    assert result.status == "infeasible"
    assert [item.family for item in result.explanation.conflict] == ["storage_bandwidth_met"]
    assert "own training rate" in result.explanation.conflict[0].detail
    assert result.explanation.relaxations[0].message.startswith("feasible as min_cost")


def test_infeasible_instance_is_explained():
    from topoopt.solver import solve

    result = solve(rented(**CASES["budget too small"]))
    assert result.status == "infeasible"
    assert "budget_cap" in {item.family for item in result.explanation.conflict}


# == Time limits and determinism ===================================================================
def test_a_time_limit_reports_an_honest_bound(example_run):
    """Whatever the limit stops, a reported design's bound never exceeds its value."""
    from topoopt.solver import solve

    instance = load_instance(EXAMPLE).instance
    optimum = example_run[1]["objective"]["value"]
    for limit_s in (0.01, 0.05):
        result = solve(instance, time_limit_s=limit_s, explain=False)
        assert result.status in ("optimal", "feasible", "unknown")
        if result.design is None:
            continue
        objective = result.objective
        assert objective.bound <= optimum * (1 + 1e-12) <= objective.value * (1 + 1e-12) + 1e-6
        if result.status == "optimal":
            assert objective.gap == 0.0
        else:
            assert objective.gap == pytest.approx((objective.value - objective.bound) / objective.value)


def test_same_instance_same_design_whatever_the_run_or_worker_count():
    from topoopt.solver import solve

    instance = rented(**CASES["8-port switch, 12 hours, 7 racks"])
    runs = [solve(instance, explain=False), solve(instance, explain=False), solve(instance, workers=2, explain=False)]
    assert len({r.design.model_dump_json() for r in runs}) == 1
    assert len({r.cost.model_dump_json() for r in runs}) == 1
    assert len({r.objective.model_dump_json() for r in runs}) == 1


def test_ties_are_broken_by_catalog_order():
    """Two servers identical but for their id tie on every job cost: the first in the catalog wins,
    whichever order the catalog lists them in."""
    from topoopt.solver import solve

    twin = dict(TINY_CATALOG["servers"][0], id="s80-twin", name="S80 twin", max_compute_nics=2)
    servers = copy.deepcopy(RENTED["catalog.add.servers"])
    prices = {**RENTED["catalog.prices"], "s80-twin": TINY_PRICES["s80"]}
    chosen = []
    for order in (servers + [twin], [twin] + servers):
        result = solve(rented(**{"goal.deadline_days": 1, "catalog.add.servers": order, "catalog.prices": prices}),
                       explain=False)
        chosen.append((result.design.server, result.objective.value))
    assert chosen[0][1] == chosen[1][1]
    assert {chosen[0][0], chosen[1][0]} == {"s80", "s80-twin"}
    assert chosen[0][0] == "s80" and chosen[1][0] == "s80-twin"
