"""``topoopt check INSTANCE DESIGN_JSON``: exit 0 when clean, 3 with the violations, 2 for bad input."""

from __future__ import annotations

import json

import pytest
import yaml
from checker_fixtures import BASE_INSTANCE, base_design, instance
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers every command on the app)
from topoopt.checker import CHECKER_RULES, recompute_cost
from topoopt.cli.app import app
from topoopt.models.design import ObjectiveValue, SolveResult

runner = CliRunner()


@pytest.fixture()
def files(tmp_path):
    """The base instance as YAML and its design as a solve result, in a temporary directory."""
    instance_path = tmp_path / "base.yaml"
    instance_path.write_text(yaml.safe_dump(BASE_INSTANCE, sort_keys=False), encoding="utf-8")
    design = base_design()
    cost = recompute_cost(instance(), design)
    result = SolveResult(status="optimal", objective=ObjectiveValue(kind="min_cost", value=cost.total, bound=cost.total,
                                                                    gap=0.0), design=design, cost=cost)
    result_path = tmp_path / "design.json"
    result_path.write_text(result.model_dump_json(indent=2, by_alias=True), encoding="utf-8")
    return tmp_path, instance_path, result_path, result


def invoke(*args: str):
    return runner.invoke(app, ["check", *map(str, args)])


def test_a_clean_design_exits_0(files):
    _, instance_path, result_path, _ = files
    run = invoke(instance_path, result_path)
    assert run.exit_code == 0, run.output
    assert run.stdout.strip() == f"design OK: {len(CHECKER_RULES)} rules checked"


def test_a_bare_design_is_accepted(files):
    tmp, instance_path, _, result = files
    bare = tmp / "bare.json"
    bare.write_text(result.design.model_dump_json(by_alias=True), encoding="utf-8")
    assert invoke(instance_path, bare).exit_code == 0


def test_violations_exit_3_and_are_listed(files):
    tmp, instance_path, _, result = files
    broken = result.model_copy(update={"design": base_design(**{"racks.0.nodes_per_rack": 3, "racks.0.power_kw": 30.834})})
    path = tmp / "broken.json"
    path.write_text(broken.model_dump_json(by_alias=True), encoding="utf-8")
    run = invoke(instance_path, path)
    assert run.exit_code == 3
    assert "design violates 1 rule(s)" in run.stdout
    assert ("rack_power_within_limit: compute racks (air-30kw): 3 × dgx-h100 at 10.278 kW = 30.834 kW > 30.0 kW"
            in run.stdout)


def test_json_verdict(files):
    tmp, instance_path, _, result = files
    broken = result.model_copy(update={"cost": result.cost.model_copy(update={"total": 1.0})})
    path = tmp / "broken.json"
    path.write_text(broken.model_dump_json(by_alias=True), encoding="utf-8")
    run = invoke(instance_path, path, "--json")
    assert run.exit_code == 3
    verdict = json.loads(run.stdout)
    assert verdict["ok"] is False and verdict["rules_checked"] == len(CHECKER_RULES)
    assert verdict["violations"] == [{"family": "budget_cap", "item": "reported cost",
                                      "detail": "total 1 USD reported, 1,967,115 USD recomputed"}]


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"server": "dgx-h100"}', "not a valid Design"),
    ('{"status": "infeasible", "objective": {"kind": "min_cost", "value": null, "bound": null, "gap": null}}',
     "no design to check (status infeasible)"),
])
def test_unreadable_design_exits_2(files, content, message):
    tmp, instance_path, _, _ = files
    path = tmp / "input.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    run = invoke(instance_path, path)
    assert run.exit_code == 2
    assert message in run.stderr


def test_invalid_instance_exits_2(files):
    tmp, _, result_path, _ = files
    bad = tmp / "bad.yaml"
    bad.write_text("name: x\nbudget: {max: -1}\n", encoding="utf-8")
    run = invoke(bad, result_path)
    assert run.exit_code == 2
    assert "bad.yaml:" in run.stderr


@pytest.mark.slow  # the solve command also finds the binding families: about 10-20 s
def test_solve_out_then_check(tmp_path):
    pinned = {**BASE_INSTANCE, "constraints": {"pins": {
        "server": "dgx-h100", "nodes": 4, "tiers": 2, "leaf_switch": "qm9700", "rack_class": "air-30kw",
        "storage": "nvme-of-array", "interconnect": "ib-ndr"}}}
    instance_path = tmp_path / "pinned.yaml"
    instance_path.write_text(yaml.safe_dump(pinned, sort_keys=False), encoding="utf-8")
    solved = runner.invoke(app, ["solve", str(instance_path), "--out", str(tmp_path / "out")])
    assert solved.exit_code == 0, solved.output
    run = invoke(instance_path, tmp_path / "out" / "design.json")
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("design OK")
