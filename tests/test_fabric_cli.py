"""``topoopt render INSTANCE DESIGN_JSON --out DIR``: files on success, exit 2 for bad input."""

from __future__ import annotations

import json

import fabric_designs as fd
import pytest
import yaml
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers every command on the app)
from topoopt.cli.app import app

runner = CliRunner()

INSTANCE = {
    "name": "render-test",
    "workload": {
        "model": "llama3-8b",
        "training": {"tokens": 2.0e10, "sequence_length": 4096, "global_batch_sequences": 512},
    },
    "budget": {"basis": "capex", "currency": "USD", "max": 50_000_000.0},
    "site": {"max_racks": 40},
    # The hand-built designs use a few test items (fabric_designs.ADDITIONS): added to the catalog.
    "catalog": {"price_book": "usd-capex", "add": fd.ADDITIONS.model_dump(mode="json"), "prices": fd.TEST_PRICES},
}


@pytest.fixture()
def files(tmp_path):
    instance_path = tmp_path / "instance.yaml"
    instance_path.write_text(yaml.safe_dump(INSTANCE, sort_keys=False), encoding="utf-8")
    result_path = tmp_path / "design.json"
    result_path.write_text(fd.result_for(fd.two_tier_32_dgx()).model_dump_json(by_alias=True), encoding="utf-8")
    return tmp_path, instance_path, result_path


def invoke(design, instance, *args, unchecked=True):
    """``render INSTANCE DESIGN …``; the hand-built designs here are not sized for the instance's
    workload, so they are rendered ``--unchecked`` unless told otherwise."""
    extra = ["--unchecked"] if unchecked else []
    return runner.invoke(app, ["render", str(instance), str(design), *map(str, args), *extra])


def test_render_writes_every_file_and_lists_them(files):
    tmp, instance_path, result_path = files
    run = invoke(result_path, instance_path, "--out", tmp / "out")
    assert run.exit_code == 0, run.output
    listed = run.stdout.split()
    for name in ("bom.csv", "cables.csv", "racks.csv", "fabric.graphml", "topology.conf", "netbox-devices.csv",
                 "netbox-cables.csv", "fabric.dot"):
        assert str(tmp / "out" / name) in listed
        assert (tmp / "out" / name).exists()
    # the instance name reaches the NetBox site and the drawing's title
    assert "render-test" in (tmp / "out" / "netbox-devices.csv").read_text(encoding="utf-8-sig")
    assert "render-test" in (tmp / "out" / "fabric.dot").read_text()


def test_a_bare_design_renders_without_prices(files):
    tmp, instance_path, _ = files
    bare = tmp / "bare.json"
    bare.write_text(fd.two_tier_32_dgx().model_dump_json(by_alias=True), encoding="utf-8")
    run = invoke(bare, instance_path, "--out", tmp / "out")
    assert run.exit_code == 0, run.output
    bom = (tmp / "out" / "bom.csv").read_text(encoding="utf-8-sig").splitlines()
    assert bom[1].startswith("server,dgx-h100,") and ",32,," in bom[1]


def test_not_a_design_exits_2(files):
    tmp, instance_path, _ = files
    bad = tmp / "bad.json"
    bad.write_text(json.dumps({"status": "optimal"}), encoding="utf-8")
    run = invoke(bad, instance_path, "--out", tmp / "out")
    assert run.exit_code == 2
    assert "bad.json" in run.stderr


def test_a_design_the_catalog_cannot_build_exits_2(files):
    tmp, instance_path, _ = files
    design = fd.two_tier_32_dgx()
    broken = design.model_copy(update={"fabric": design.fabric.model_copy(update={"switch": "no-such-switch"})})
    path = tmp / "broken.json"
    path.write_text(broken.model_dump_json(by_alias=True), encoding="utf-8")
    run = invoke(path, instance_path, "--out", tmp / "out")
    assert run.exit_code == 2
    assert "no-such-switch" in run.stderr


def test_an_invalid_instance_exits_2(files):
    tmp, _, result_path = files
    bad = tmp / "bad.yaml"
    bad.write_text("name: [unclosed\n", encoding="utf-8")
    run = invoke(result_path, bad, "--out", tmp / "out")
    assert run.exit_code == 2
    assert "bad.yaml" in run.stderr


def test_missing_dot_is_a_warning_not_a_failure(files, monkeypatch):
    tmp, instance_path, result_path = files
    monkeypatch.setenv("TOPOOPT_DOT", "")
    monkeypatch.setenv("PATH", str(tmp / "empty"))
    run = invoke(result_path, instance_path, "--out", tmp / "out", "--png")
    assert run.exit_code == 0
    assert "warning: graphviz 'dot' not found" in run.stderr
    assert (tmp / "out" / "fabric.dot").exists()


def test_solve_out_prints_the_fabric_warnings_as_render_does(tmp_path, monkeypatch):
    from solver_fixtures import TINY

    instance_path = tmp_path / "tiny.yaml"
    # Through JSON: instance files spell the per-speed mapping keys as strings.
    instance_path.write_text(yaml.safe_dump(json.loads(json.dumps(TINY)), sort_keys=False), encoding="utf-8")
    # Without Graphviz the build-out warns (and keeps the DOT file).
    monkeypatch.setenv("TOPOOPT_DOT", "")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    solved = runner.invoke(app, ["solve", str(instance_path), "--out", str(tmp_path / "solved")])
    assert solved.exit_code == 0, solved.output
    warnings = [line for line in solved.stderr.splitlines() if line.startswith("warning: ")]
    assert any("graphviz 'dot' not found" in line for line in warnings)
    rendered = invoke(tmp_path / "solved" / "design.json", instance_path, "--out", tmp_path / "rendered",
                      unchecked=False)
    assert rendered.exit_code == 0, rendered.output
    assert warnings == [line for line in rendered.stderr.splitlines() if line.startswith("warning: ")]
