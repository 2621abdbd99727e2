"""Hostile and careless use: every case asserts the exit code, the message, and that nothing outside
the output directory changed.

Classes covered: output sets (atomic, complete, no stale files, no links followed, bad ``--out``,
interruption at random points), injection (spreadsheet formulas, control characters, drawings
that must parse), bounded inputs, and bounded ``render``/``check``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from topoopt.cli import app
from topoopt.fabric.output_set import MANIFEST, OutputError, verify_output_set, write_output_set

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "instances" / "llama2-7b-finetune-8gpu.yaml"
INFEASIBLE = ROOT / "instances" / "infeasible-budget.yaml"
LARGE = ROOT / "instances" / "llama3-405b-16k-usd.yaml"
"""16k GPUs: a 33 MB output set that takes a noticeable part of the run to write."""


def snapshot(directory: Path, *, skip: Path | None = None) -> dict[str, str]:
    """``{relative path: sha256 or 'dir' or 'link -> target'}`` of everything under ``directory``
    except ``skip`` (the output directory)."""
    state = {}
    for root, dirs, files in os.walk(directory):
        if skip is not None:
            dirs[:] = [d for d in dirs if Path(root, d) != skip]
        for name in dirs + files:
            path = Path(root, name)
            if skip is not None and path == skip:
                continue
            key = str(path.relative_to(directory))
            if path.is_symlink():
                state[key] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                state[key] = "dir"
            else:
                state[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def topoopt(*args: str) -> list[str]:
    """The console script as a separate process (signals need a real one)."""
    return [sys.executable, "-c", "from topoopt.cli import main; main()", *args]


def invoke(*args) -> object:
    return CliRunner().invoke(app, [str(arg) for arg in args])


# --------------------------------------------------------------------------------------------
# Output sets


def test_an_infeasible_solve_replaces_the_whole_earlier_set(tmp_path):
    """No stale BOM, cables or drawing from the earlier feasible run beside the new design.json."""
    out = tmp_path / "out"
    assert invoke("solve", SMALL, "--out", out).exit_code == 0
    assert (out / "cables.csv").exists()
    before = snapshot(tmp_path, skip=out)
    run = invoke("solve", INFEASIBLE, "--no-explain", "--out", out)
    assert run.exit_code == 3, run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["design.json", MANIFEST]
    assert json.loads((out / "design.json").read_text())["status"] == "infeasible"
    assert verify_output_set(out) == []
    assert snapshot(tmp_path, skip=out) == before  # no temporary directory left beside it


@pytest.mark.parametrize("case", ["file", "link", "foreign", "unlisted", "empty-text"])
def test_an_unusable_out_is_a_usage_error_before_solving(tmp_path, case):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    expected = {
        "file": "exists and is not a directory",
        "link": "is a symbolic link",
        "foreign": "holds files that are not a topoopt output set (notes.txt)",
        "unlisted": "holds files that its manifest.json does not list (notes.txt)",
        "empty-text": "the output directory is empty text",
    }[case]
    if case == "file":
        out.write_text("a file\n")
    elif case == "link":
        out.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    elif case in ("foreign", "unlisted"):
        out.mkdir()
        if case == "unlisted":
            assert invoke("solve", INFEASIBLE, "--no-explain", "--out", out).exit_code == 3
        (out / "notes.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    run = invoke("solve", SMALL, "--out", "" if case == "empty-text" else out)
    assert run.exit_code == 2, run.stderr
    assert run.stderr.startswith("--out: ") and expected in run.stderr
    assert "checked:" not in run.stderr  # refused before any solving
    assert snapshot(tmp_path) == before


def test_a_link_inside_an_earlier_set_is_replaced_never_followed(tmp_path):
    """``design.json -> victim`` in the directory: the victim keeps its content."""
    out = tmp_path / "out"
    assert invoke("solve", INFEASIBLE, "--no-explain", "--out", out).exit_code == 3
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (out / "design.json").unlink()
    (out / "design.json").symlink_to(victim)
    before = snapshot(tmp_path, skip=out)
    assert invoke("solve", SMALL, "--out", out).exit_code == 0
    assert victim.read_text() == "keep me\n"
    assert not (out / "design.json").is_symlink() and verify_output_set(out) == []
    assert snapshot(tmp_path, skip=out) == before


def test_a_failed_write_leaves_the_earlier_set_untouched(tmp_path):
    """Disk full (or any error) half-way: the published set stays whole, nothing is left beside it."""
    out = tmp_path / "out"
    write_output_set(out, lambda d: (d / "design.json").write_text("good\n"))
    before = snapshot(tmp_path)

    def fill(staging: Path) -> None:
        (staging / "design.json").write_text("trunc")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_output_set(out, fill)
    assert snapshot(tmp_path) == before
    assert (out / "design.json").read_text() == "good\n" and verify_output_set(out) == []


def test_the_manifest_detects_a_changed_or_missing_file(tmp_path):
    out = tmp_path / "out"
    write_output_set(out, lambda d: [(d / name).write_text(name) for name in ("a.csv", "b.csv")])
    assert verify_output_set(out) == []
    (out / "a.csv").write_text("changed")
    (out / "b.csv").unlink()
    problems = verify_output_set(out)
    assert any(p.startswith("a.csv: 7 bytes") for p in problems)
    assert "b.csv: listed in manifest.json but missing" in problems


def test_a_directory_already_used_by_another_writer_is_rechecked_under_the_lock(tmp_path):
    """Foreign files that appear while the set is being written are still never deleted."""
    out = tmp_path / "out"

    def fill(staging: Path) -> None:
        (staging / "design.json").write_text("{}")
        out.mkdir()
        (out / "theirs.txt").write_text("theirs")

    with pytest.raises(OutputError, match="theirs.txt"):
        write_output_set(out, fill)
    assert (out / "theirs.txt").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_unwritable_out_exits_2_and_still_prints_the_solved_result(tmp_path, monkeypatch):
    """An error while publishing (after the solve) still prints the answer, then exits 2."""
    import topoopt.fabric.publish as publish

    def full_disk(out_dir, fill):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish, "write_output_set", full_disk)
    run = invoke("solve", SMALL, "--json", "--out", tmp_path / "out")
    assert run.exit_code == 2
    assert json.loads(run.stdout)["status"] == "optimal"
    assert "cannot write the output set: No space left on device; the directory is unchanged" in run.stderr
    assert not (tmp_path / "out").exists()


def wait_for_line(process: subprocess.Popen, prefix: str) -> None:
    for line in process.stderr:
        if line.startswith(prefix):
            return


@pytest.mark.slow
def test_sigterm_or_sigint_at_random_points_leaves_one_complete_set(tmp_path):
    """20 interruptions of commands writing into one directory: ``solve --out`` on the 16k-GPU
    example at random points of the solve, and ``render --out`` of its design (the same output
    set, 33 MB, without the 8 s solve) at random points of the writing. The directory always
    holds one complete set (the earlier infeasible one or a new one), its manifest's hashes match,
    and nothing is left beside it."""
    out = tmp_path / "out"
    assert invoke("solve", INFEASIBLE, "--no-explain", "--out", out).exit_code == 3
    solved = tmp_path / "solved"
    solved.mkdir()
    assert invoke("solve", LARGE, "--json", "--out", solved / "set").exit_code == 0
    rng = random.Random(21)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    render = topoopt("render", str(LARGE), str(solved / "set" / "design.json"), "--out", str(out))
    outcomes = []
    for attempt in range(20):
        sig = (signal.SIGTERM, signal.SIGINT)[attempt % 2]
        anywhere = attempt % 4 == 0
        command = topoopt("solve", str(LARGE), "--out", str(out)) if anywhere or attempt == 19 else render
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        if attempt == 19:  # once the set is published: the signal finds the command finishing
            wait_for_line(process, "wrote ")
        elif anywhere:  # anywhere in the run, the solve included
            time.sleep(rng.uniform(0.2, 3.0))
        else:  # while the output set is written: it starts once the checker has accepted the design
            wait_for_line(process, "checked:")
            time.sleep(rng.uniform(0.0, 0.6))
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=120)
        cut = not anywhere and attempt != 19 and process.returncode == 130
        outcomes.append("cut while writing" if cut else "published" if attempt == 19 or "wrote" in stderr else "other")
        # 130: interrupted and cleaned up; -sig: the signal came before the handler was installed
        # (interpreter start) or after the command returned (interpreter exit).
        assert process.returncode in (0, 130, -sig), (attempt, process.returncode, stderr)
        assert verify_output_set(out) == [], attempt
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "solved"], attempt
        # The earlier infeasible set (its design.json alone) or a new design's, fabric files included.
        infeasible = (out / "design.json").exists() and json.loads((out / "design.json").read_text())["status"] == "infeasible"
        assert infeasible != (out / "cables.csv").exists(), attempt
    # The random points did cut a write short, and the last run published its set.
    assert {"cut while writing", "published"} <= set(outcomes), outcomes
    assert json.loads((out / "design.json").read_text())["status"] == "optimal"


# --------------------------------------------------------------------------------------------
# Injection: spreadsheet formulas, control characters, drawings that must parse

FORMULA_NAME = '=HYPERLINK("http://127.0.0.1/x","x") <&> ]]> "q" -- {a|b}'
FORMULA_SERVER = "=cmd|' /C calc'!A0 <b>&amp;"


def hostile_instance() -> str:
    """The 8-GPU example named with a spreadsheet formula and XML/DOT metacharacters, built on
    an added server whose product name is a formula too."""
    text = SMALL.read_text(encoding="utf-8")
    text = text.replace("name: llama2-7b-finetune-8gpu", "name: " + json.dumps(FORMULA_NAME))
    added = (
        "  prices: {evil-node: 50000}\n"
        "  add:\n"
        "    servers:\n"
        f"      - {{id: evil-node, name: {json.dumps(FORMULA_SERVER)}, source: 'estimate: quote', gpu: h100-sxm,\n"
        "         gpus_per_node: 8, power_w: 10000, rack_units: 8, max_compute_nics: 8, nic_options: [cx7-osfp]}\n"
    )
    text = text.replace("  price_book: cny-monthly-rent", added + "  price_book: cny-monthly-rent", 1)
    text = text.replace("  pins:\n", "  pins:\n    server: evil-node\n", 1)
    assert FORMULA_SERVER[:4] in text and "server: evil-node" in text
    return text


@pytest.fixture(scope="module")
def hostile_out(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    path = base / "hostile.yaml"
    path.write_text(hostile_instance(), encoding="utf-8")
    before = snapshot(base)
    run = invoke("solve", path, "--out", base / "out")
    assert run.exit_code == 0, run.stderr
    assert snapshot(base, skip=base / "out") == before
    return base / "out"


def test_every_csv_written_is_formula_safe(hostile_out):
    """No cell of any CSV (those of tomorrow's exports too: every *.csv in the set) starts with a
    character that makes a spreadsheet evaluate it, unless it is a plain number."""
    import csv

    from topoopt.fabric.csvfile import _PLAIN_NUMBER, FORMULA_TRIGGERS

    tables = sorted(hostile_out.glob("*.csv"))
    assert {"bom.csv", "cables.csv", "racks.csv", "netbox-devices.csv"} <= {p.name for p in tables}
    for table in tables:
        with open(table, newline="", encoding="utf-8-sig") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    assert not cell.startswith(FORMULA_TRIGGERS) or _PLAIN_NUMBER.fullmatch(cell), (table.name, cell)
    bom = (hostile_out / "bom.csv").read_text(encoding="utf-8")
    devices = (hostile_out / "netbox-devices.csv").read_text(encoding="utf-8")
    assert "'" + FORMULA_SERVER in bom
    assert "'=HYPERLINK(" in devices and ",=HYPERLINK(" not in devices and '"=HYPERLINK(' not in devices


def test_every_drawing_parses(hostile_out):
    """The SVG and GraphML are well-formed XML and keep the hostile name as text; the DOT file
    parses with Graphviz's own reader."""
    import shutil
    import xml.etree.ElementTree as ElementTree

    import networkx as nx

    svg = ElementTree.parse(hostile_out / "fabric.svg").getroot()
    assert FORMULA_NAME in "".join(svg.itertext())
    graph = nx.read_graphml(hostile_out / "fabric.graphml")
    assert graph.number_of_nodes() > 0
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz 'dot' is not installed")
    parsed = subprocess.run([dot, "-Tcanon", str(hostile_out / "fabric.dot")], capture_output=True, text=True,
                            timeout=60)
    assert parsed.returncode == 0 and not parsed.stderr, parsed.stderr


@pytest.mark.parametrize("line,field,words", [
    ('name: "a\\e]0;X\\a\\e[2J\\0b"\n', "name", "control character U+001B"),
    ('name: "ok\\x9b2J"\n', "name", "control character U+009B"),
    ('name: "abc\\u202edcba"\n', "name", "bidirectional control U+202E"),
    ('name: "a\\rOK b"\n', "name", "control character U+000D"),
    ('"\\e[2K\\rOK t.yaml: valid\\e[8m": 1\n', "<root>", "control character U+001B"),
    ('"a\\nOK t.yaml: valid": 1\n', "<root>", "a line break or tab in the key"),
])
def test_escaped_control_characters_are_refused_and_never_echoed(tmp_path, line, field, words):
    text = SMALL.read_text(encoding="utf-8").replace("name: llama2-7b-finetune-8gpu\n", line)
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    before = snapshot(tmp_path)
    run = invoke("validate", path)
    assert run.exit_code == 2
    assert f": {field}: {words}" in run.stderr
    assert "instance is not valid" in run.stderr
    shown = run.stdout + run.stderr
    assert not any(ch in shown for ch in "\x1b\x07\x00\r\x9b\u202e"), repr(shown)
    assert "\nOK" not in shown
    assert snapshot(tmp_path) == before


@given(st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False)))
def test_a_neutralised_cell_is_inert_and_loses_nothing(cell):
    from topoopt.fabric.csvfile import _PLAIN_NUMBER, FORMULA_TRIGGERS, spreadsheet_safe

    safe = spreadsheet_safe(cell)
    if not isinstance(cell, str):
        assert safe == cell
        return
    assert safe in (cell, "'" + cell)
    assert not safe.startswith(FORMULA_TRIGGERS) or _PLAIN_NUMBER.fullmatch(safe)


# --------------------------------------------------------------------------------------------
# Bounded inputs: what validate accepts, solve handles in bounded time


def builtin_item(kind: str, item_id: str, **changes) -> dict:
    """A built-in catalog item as instance data, with ``changes``."""
    from topoopt.catalog import load_builtin_catalog

    item = next(x for x in getattr(load_builtin_catalog(), kind) if x.id == item_id)
    data = item.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data.update(changes)
    return data


def small_with(edit) -> str:
    """The 8-GPU example as YAML after ``edit(data)``."""
    import copy

    import yaml

    data = copy.deepcopy(yaml.safe_load(SMALL.read_text(encoding="utf-8")))
    edit(data)
    return yaml.safe_dump(data, sort_keys=False, width=10**9)


def added(kind: str, *items: dict):
    return lambda data: data["catalog"].setdefault("add", {}).setdefault(kind, []).extend(items)


def inline_model(**changes):
    def edit(data):
        model = builtin_item("models", "llama2-7b", **changes)
        for key in ("id", "name", "source"):
            model.pop(key)
        data["workload"]["model"] = model
    return edit


def appended(block: str, after: str = "") -> str:
    """The example's text with ``block`` inserted after the line ``after`` (at the end without)."""
    text = SMALL.read_text(encoding="utf-8")
    if not after:
        return text + block
    head, tail = text.split(after + "\n", 1)
    return head + after + "\n" + block + tail


HOSTILE_INPUTS = {
    "nvl-domain-2^62": (lambda: small_with(added("gpus", builtin_item("gpus", "h100-sxm", id="x-gpu",
                                                                       scale_up_domain_gpus=2**62)))),
    "ports-per-cage-1e8": (lambda: small_with(added("switches", builtin_item("switches", "qm8700", id="x-sw",
                                                                            ports_per_cage={"100": 10**8})))),
    "hidden-size-1e310": lambda: small_with(inline_model(hidden_size=10**310)),
    "storage-power-1e308": (lambda: small_with(added("storage", builtin_item("storage", "nvme-of-array", id="x-st",
                                                                            power_w=1e308)))),
    "checkpoint-every-1e-300-h": (lambda: small_with(
        lambda d: d["workload"].setdefault("checkpoint", {}).update(interval_hours=1e-300))),
    "id-of-1000-chars": lambda: small_with(added("cables", builtin_item("cables", "hdr-dac-2m", id="c" * 1000))),
    "text-of-10000-chars": lambda: small_with(lambda d: d.update(description="d" * 10_000)),
    "5000-added-servers": lambda: appended(
        "  add:\n    servers:\n" + "".join(
            f"      - {{id: s{i}, name: S, source: 'estimate: x', gpu: h100-sxm, gpus_per_node: 8, power_w: 10000, "
            f"rack_units: 8, max_compute_nics: 8, nic_options: [cx7-osfp]}}\n" for i in range(5000)),
        after="  price_book: cny-monthly-rent    # China rental market, per month (servers priced as whole nodes)"),
    "300k-price-ids": lambda: appended(
        "  prices:\n" + "".join(f"    p{i}: 1\n" for i in range(300_000)),
        after="  price_book: cny-monthly-rent    # China rental market, per month (servers priced as whole nodes)"),
    "380k-unknown-keys": lambda: appended("".join(f"k{i}: 1\n" for i in range(380_000))),
    "duplicate-added-ids": lambda: small_with(added(
        "servers", builtin_item("servers", "hgx-h100", id="mine", power_w=5111),
        builtin_item("servers", "hgx-h100", id="mine", power_w=9011))),
}

EXPECTED = {
    "nvl-domain-2^62": ("catalog.add.gpus[0].scale_up_domain_gpus", "must be at most 576 (the largest NVLink domain"),
    "ports-per-cage-1e8": ("catalog.add.switches[0].ports_per_cage", "must be at most 8 (a cage has at most 8"),
    "hidden-size-1e310": ("workload.model.hidden_size", "must be at most 262144 (16 times the widest"),
    "storage-power-1e308": ("catalog.add.storage[0].power_w", "must be at most 100000 (100 kW is more than"),
    "checkpoint-every-1e-300-h": ("workload.checkpoint.interval_hours", "must be at least 0.001 (a checkpoint"),
    "id-of-1000-chars": ("catalog.add.cables[0].id", "at most 64 characters"),
    "text-of-10000-chars": ("description", "text of 10,000 characters; strings are at most 4,000"),
    "5000-added-servers": ("catalog.add.servers", "should have at most 64 items"),
    "300k-price-ids": ("catalog.prices", "more than 5,000 entries in one mapping"),
    "380k-unknown-keys": ("<root>", "more than 5,000 entries in one mapping"),
    "duplicate-added-ids": ("catalog.add.servers[1].id", "duplicate id 'mine', first added at line "),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_INPUTS))
def test_hostile_input_is_refused_quickly_with_the_reason(tmp_path, case):
    path = tmp_path / f"{case}.yaml"
    path.write_text(HOSTILE_INPUTS[case](), encoding="utf-8")
    before = snapshot(tmp_path)
    started = time.perf_counter()
    run = invoke("solve", path, "--out", tmp_path / "out")
    elapsed = time.perf_counter() - started
    field, words = EXPECTED[case]
    assert run.exit_code == 2, run.stderr[-2000:]
    assert any(f": {field}: " in line and words in line for line in run.stderr.splitlines()), run.stderr[-2000:]
    assert len(run.stderr.splitlines()) <= 102 and len(run.stderr) < 50_000
    assert elapsed < 20, elapsed  # about a second each on a loaded 2-core machine
    assert snapshot(tmp_path) == before


def test_duplicate_added_ids_name_both_lines(tmp_path):
    path = tmp_path / "dups.yaml"
    text = HOSTILE_INPUTS["duplicate-added-ids"]()
    path.write_text(text, encoding="utf-8")
    lines = [number for number, line in enumerate(text.splitlines(), 1) if line.lstrip("- ").startswith("id: mine")]
    run = invoke("validate", path)
    assert run.exit_code == 2
    assert f"dups.yaml:{lines[1]}:" in run.stderr and f"first added at line {lines[0]};" in run.stderr


def test_every_stage_caps_its_messages(tmp_path):
    """300 unknown price ids reach the reference check (under every cap of the schema): the
    report stops at 100 messages and says how many more there were."""
    path = tmp_path / "prices.yaml"
    path.write_text(appended("  prices:\n" + "".join(f"    nosuch{i}: 1\n" for i in range(300)),
                             after="  price_book: cny-monthly-rent    # China rental market, per month "
                                   "(servers priced as whole nodes)"), encoding="utf-8")
    run = invoke("validate", path)
    assert run.exit_code == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 102 and "catalog.prices.nosuch0: " in lines[0]
    assert lines[-2].endswith("stopped after 100 problems (200 more not shown)")
    assert lines[-1] == "more than 100 problem(s) found; the instance is not valid"


def _gpu_edit(field: str, value):
    """An added GPU with ``field`` at ``value``, in an added, priced server (so it is an option)."""
    def edit(data):
        added("gpus", builtin_item("gpus", "h100-sxm", id="x-gpu", **{field: value}))(data)
        added("servers", builtin_item("servers", "hgx-h100", id="x-node", gpu="x-gpu"))(data)
        data["catalog"].setdefault("prices", {})["x-node"] = 1000
    return edit


EXTREMES = {
    # (edit at the low end, edit at the high end) of a bound the schema accepts
    "gpu.scale_up_domain_gpus": (_gpu_edit("scale_up_domain_gpus", 1), _gpu_edit("scale_up_domain_gpus", 576)),
    "gpu.memory_bandwidth_gb_per_s": (_gpu_edit("memory_bandwidth_gb_per_s", 1e-6),
                                      _gpu_edit("memory_bandwidth_gb_per_s", 100_000)),
    "gpu.dense_tflops": (_gpu_edit("dense_tflops", {"bf16": 1e-6}), _gpu_edit("dense_tflops", {"bf16": 100_000})),
    "gpu.scale_up_gb_per_s": (_gpu_edit("scale_up_gb_per_s", 0), _gpu_edit("scale_up_gb_per_s", 100_000)),
    "switch.ports_per_cage": (
        added("switches", builtin_item("switches", "qm8700", id="x-sw", ports_per_cage={"1": 1})),
        added("switches", builtin_item("switches", "qm8700", id="x-sw", cages=512, ports_per_cage={"200": 8}))),
    "storage.capacity_tb": (
        added("storage", builtin_item("storage", "nvme-of-array", id="x-st", capacity_tb=1e-6, power_w=1e-6)),
        added("storage", builtin_item("storage", "nvme-of-array", id="x-st", capacity_tb=100_000, power_w=100_000))),
    "model.width": (inline_model(hidden_size=1, ffn_hidden_size=1, attention_heads=1, kv_heads=1, vocab_size=1),
                    inline_model(hidden_size=262_144, ffn_hidden_size=1_048_576, attention_heads=16_384,
                                 kv_heads=16_384, vocab_size=16_777_216, layers=1000, params_b=100_000)),
    "training.tokens": (lambda d: d["workload"]["training"].update(tokens=1e-6),
                        lambda d: d["workload"]["training"].update(tokens=1e16)),
    "training.sequence_length": (lambda d: d["workload"]["training"].update(sequence_length=1),
                                 lambda d: d["workload"]["training"].update(sequence_length=1_048_576,
                                                                            global_batch_sequences=1_000_000)),
    "checkpoint": (lambda d: d["workload"]["checkpoint"].update(interval_hours=0.001, keep=10_000, max_save_time_s=1e-9),
                   lambda d: d["workload"]["checkpoint"].update(interval_hours=10_000, keep=1, max_save_time_s=1e6)),
    "budget.max": (lambda d: d["budget"].update(max=1e-6), lambda d: d["budget"].update(max=1e13)),
    "goal.deadline_days": (lambda d: d["goal"].update(deadline_days=1e-9),
                           lambda d: d["goal"].update(deadline_days=36_500)),
    "site.max_racks": (lambda d: d["site"].update(max_racks=1), lambda d: d["site"].update(max_racks=100_000)),
}

SOLVE_BOUND_S = 120
"""A validated instance is answered within this (the explanation is limited to 5 s)."""


@pytest.mark.slow
@given(st.lists(st.tuples(st.sampled_from(sorted(EXTREMES)), st.booleans()), min_size=1, max_size=4,
                unique_by=lambda pair: pair[0]))
@settings(max_examples=12)
def test_validate_accepted_means_solve_answers_in_bounded_time(tmp_path_factory, edits):
    """Extreme values the schema accepts: ``solve`` exits 0, 3 or 4 (never 1, never hangs)."""
    from topoopt.loader import InputError, load_instance

    text = small_with(lambda data: [EXTREMES[name][high](data) for name, high in edits])
    try:
        load_instance("extreme.yaml", text=text)
    except InputError:
        return  # validate refuses the combination: nothing to promise
    path = tmp_path_factory.mktemp("extreme") / "extreme.yaml"
    path.write_text(text, encoding="utf-8")

    def too_slow(signum, frame):
        raise TimeoutError(f"solve took over {SOLVE_BOUND_S} s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(SOLVE_BOUND_S)
    try:
        run = invoke("solve", path, "--explain-time-s", 5)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert run.exit_code in (0, 3, 4), (edits, run.exit_code, run.stderr[-3000:], run.exception)


# --------------------------------------------------------------------------------------------
# render and check: bounded, checked, versioned


@pytest.fixture(scope="module")
def solved_small(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("solved") / "out"
    assert invoke("solve", SMALL, "--out", out).exit_code == 0
    return out / "design.json"


def edited_design(solved: Path, tmp_path: Path, edit) -> Path:
    data = json.loads(solved.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "design.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


DESIGN_CASES = {
    "units-10^12": (lambda d: d["design"]["storage"].update(units=10**12), 2,
                    "design.storage.units: 1e+12 is beyond any cluster (counts are at most 10,000,000)"),
    "schema-99.0": (lambda d: d.update(schema_version="99.0"), 2,
                    "schema_version '99.0' is not one this topoopt reads (1.0 to "),
    "escape-in-a-string": (lambda d: d["design"].update(server="hgx\u001b[2J"), 2,
                           "design.server: control character U+001B in a string"),
    "one-unit-more": (lambda d: d["design"]["storage"].update(units=d["design"]["storage"]["units"] + 1), 3,
                      "the checker rejects the design"),
}


@pytest.mark.parametrize("case", sorted(DESIGN_CASES))
def test_render_refuses_a_design_that_is_out_of_bounds_or_rejected(solved_small, tmp_path, case):
    edit, code, words = DESIGN_CASES[case]
    path = edited_design(solved_small, tmp_path, edit)
    before = snapshot(tmp_path)
    run = invoke("render", SMALL, path, "--out", tmp_path / "out")
    assert run.exit_code == code, run.stderr
    assert words in run.stderr
    assert "\x1b" not in run.stderr
    assert snapshot(tmp_path) == before  # no output directory made


def test_render_takes_check_s_argument_order_and_explains_the_old_one(solved_small, tmp_path):
    before = snapshot(tmp_path)
    run = invoke("render", solved_small, SMALL, "--out", tmp_path / "out")
    assert run.exit_code == 2
    assert "the arguments are INSTANCE DESIGN_JSON (as for 'topoopt check')" in run.stderr
    assert snapshot(tmp_path) == before
    run = invoke("render", SMALL, solved_small, "--out", tmp_path / "out")
    assert run.exit_code == 0, run.stderr
    assert verify_output_set(tmp_path / "out") == []


@pytest.mark.parametrize("case", ["oversized", "deeply-nested", "not-utf8"])
def test_check_refuses_oversized_and_over_deep_files(tmp_path, case):
    from topoopt.cli.design_file import MAX_DESIGN_BYTES

    path = tmp_path / "design.json"
    content, words = {
        "oversized": (b"{" + b" " * MAX_DESIGN_BYTES + b"}", "larger than the 10,000,000-byte limit"),
        "deeply-nested": (b"[" * 200_000 + b"]" * 200_000, "JSON nested deeper than 32 levels"),
        "not-utf8": (b'{"a": "\xff"}', "not UTF-8 text (byte 0xff at offset 7)"),
    }[case]
    path.write_bytes(content)
    before = snapshot(tmp_path)
    run = invoke("check", SMALL, path)
    assert run.exit_code == 2, (run.exit_code, run.stderr[-500:], run.exception)
    assert words in run.stderr
    assert snapshot(tmp_path) == before


def test_check_refuses_a_design_nested_too_deep_to_be_one(solved_small, tmp_path):
    """Deep but within Python's parser: refused by the walk, not by a RecursionError."""
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    path = edited_design(solved_small, tmp_path, lambda d: d["design"].update(extra=deep))
    run = invoke("check", SMALL, path)
    assert run.exit_code == 2
    assert "JSON nested deeper than 32 levels" in run.stderr


# --------------------------------------------------------------------------------------------
# The library validates what did not come from the loader


@pytest.fixture(scope="module")
def small_instance():
    from topoopt.loader import load_instance

    return load_instance(SMALL).instance


def with_training(instance, **changes):
    """A copy made the way that skips pydantic's validation (model_copy(update=…))."""
    training = instance.workload.training.model_copy(update=changes)
    return instance.model_copy(update={"workload": instance.workload.model_copy(update={"training": training})})


@pytest.mark.parametrize("entry", ["solve", "estimate"])
def test_solve_and_estimate_revalidate_a_copied_instance(small_instance, entry):
    import topoopt

    bad = with_training(small_instance, tokens=-1e9)
    with pytest.raises(topoopt.InputError) as caught:
        getattr(topoopt, entry)(bad)
    assert caught.value.messages == ["workload.training.tokens: Input should be greater than 0, got -1000000000.0"]


def test_solve_refuses_a_currency_the_price_book_does_not_use(small_instance):
    import topoopt

    bad = small_instance.model_copy(update={"budget": small_instance.budget.model_copy(update={"currency": "USD"})})
    with pytest.raises(topoopt.InputError, match="budget.currency: 'USD' does not match price book 'cny-monthly-rent'"):
        topoopt.solve(bad)


def test_a_control_character_set_in_code_is_refused(small_instance):
    import topoopt

    with pytest.raises(topoopt.InputError, match="name: control character U\\+001B in the text"):
        topoopt.validate_instance(small_instance.model_copy(update={"name": "a\x1b[2Jb"}))


def test_with_changes_returns_a_validated_variant(small_instance):
    from topoopt.loader import InputError

    variant = small_instance.with_changes({"budget.max": 1e5, "constraints.gpus.allow": ["h100-sxm"]}, name="v")
    assert (variant.name, variant.budget.max, variant.constraints.gpus.allow) == ("v", 1e5, ["h100-sxm"])
    assert small_instance.budget.max == 150000  # the original is unchanged
    with pytest.raises(InputError, match=r"constraints.gpus.allow\[0\]: unknown GPU id 'h100'"):
        small_instance.with_changes({"constraints.gpus.allow": ["h100"]})
    with pytest.raises(InputError, match="budget.maxx: unknown field"):
        small_instance.with_changes({"budget.maxx": 1})
    with pytest.raises(InputError, match="name.first: no such field or item to change"):
        small_instance.with_changes({"name.first": "x"})


# --------------------------------------------------------------------------------------------
# Careless input: messages that say what was meant


FRICTION = {
    "hours-for-days": (("  deadline_days: 4", "  deadline_hours: 96"),
                       "goal.deadline_hours: unknown field; did you mean 'deadline_days'? It is in days "
                       "(96 hours = 4 days)"),
    "typo": (("  max: 150000", "  maxx: 150000"), "budget.maxx: unknown field; did you mean 'max'?"),
    "empty-section": (("  max_racks: 3", ""), "site: the section is empty; it needs max_racks"),
    "comma-in-a-number": (("  max: 150000", "  max: 150000\n  limits: {max: 1,500,000}"),
                          "budget.limits: '500' after a comma reads as a new key: inside {…} commas separate "
                          "entries, so write numbers without commas"),
}


@pytest.mark.parametrize("case", sorted(FRICTION))
def test_a_careless_mistake_gets_a_message_that_says_what_was_meant(tmp_path, case):
    (old, new), words = FRICTION[case]
    text = SMALL.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith(old))
    path = tmp_path / "careless.yaml"
    path.write_text(text.replace(line, new, 1), encoding="utf-8")
    before = snapshot(tmp_path)
    run = invoke("validate", path)
    assert run.exit_code == 2
    assert words in run.stderr, run.stderr
    assert snapshot(tmp_path) == before


def test_schema_ids_and_price_book_mistakes_are_reported_in_one_pass(tmp_path):
    """Three typos of three stages (a field name, a price book, an id): one run names all three."""
    text = SMALL.read_text(encoding="utf-8")
    for old, new in (("  deadline_days: 4", "  deadline_dayz: 4"), ("  price_book: cny-monthly-rent", "  price_book: cny-monthly-rnt"),
                     ("  pins:\n", "  pins:\n    gpu: h100\n")):
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "three.yaml"
    path.write_text(text, encoding="utf-8")
    run = invoke("validate", path)
    assert run.exit_code == 2
    problems = run.stderr.splitlines()
    assert [line.split(": ")[1] for line in problems[:-1]] == [
        "goal.deadline_dayz", "catalog.price_book", "constraints.pins.gpu"]
    assert "did you mean 'cny-monthly-rent'" in problems[1] and "did you mean 'h100-sxm'" in problems[2]
    assert problems[-1] == "3 problem(s) found; the instance is not valid"


def test_the_summary_fits_the_terminal(monkeypatch):
    import topoopt.cli.common

    monkeypatch.setattr(topoopt.cli.common, "on_terminal", lambda: True)
    run = CliRunner().invoke(app, ["solve", str(LARGE)], env={"COLUMNS": "80"})
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) > 10 and max(len(line) for line in lines) <= 80
    assert any(line.startswith(" " * 13) and line.strip() for line in lines)  # continuation lines
    monkeypatch.setattr(topoopt.cli.common, "on_terminal", lambda: False)
    piped = CliRunner().invoke(app, ["solve", str(SMALL)], env={"COLUMNS": "80"})
    assert any(len(line) > 80 for line in piped.stdout.splitlines())  # piped output keeps its lines whole


@pytest.mark.parametrize("kind", ["switches", "prices"])
def test_catalog_tables_fit_the_terminal(kind, monkeypatch):
    import topoopt.cli.common

    monkeypatch.setattr(topoopt.cli.common, "on_terminal", lambda: True)
    fitted = CliRunner().invoke(app, ["catalog", kind], env={"COLUMNS": "100"})
    assert fitted.exit_code == 0
    lines = fitted.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100 and any(line.endswith("…") for line in lines)
    monkeypatch.setattr(topoopt.cli.common, "on_terminal", lambda: False)
    piped = CliRunner().invoke(app, ["catalog", kind], env={"COLUMNS": "100"})
    assert max(len(line) for line in piped.stdout.splitlines()) > 100  # whole lines for tools


def test_concurrent_writers_leave_one_complete_set(tmp_path):
    """Two writers into one directory (as two solves would be): each publishes a whole set, the
    last one wins, and no file of one is spliced into the other's."""
    import threading

    out = tmp_path / "out"
    barrier = threading.Barrier(2)

    def fill(tag: str):
        def write(staging: Path) -> None:
            for index in range(20):
                (staging / f"part{index}.csv").write_text(f"{tag},{index}\n")
                if index == 10:
                    barrier.wait(timeout=30)  # both half-way through at once
        return write

    threads = [threading.Thread(target=write_output_set, args=(out, fill(tag))) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert verify_output_set(out) == []
    tags = {(out / f"part{index}.csv").read_text().split(",")[0] for index in range(20)}
    assert len(tags) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
