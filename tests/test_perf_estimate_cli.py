"""``topoopt estimate`` and :func:`topoopt.perf.estimate`: pinned, not pinned, does not fit."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt.cli.app import app
from topoopt.models.instance import Instance
from topoopt.perf import DoesNotFitError, LayoutError, NotPinnedError, estimate

PINNED = """\
name: pinned-70b
workload:
  model: llama3-70b
  training:
    tokens: 1.0e+11
    sequence_length: 8192
    global_batch_sequences: 512
    parallelism: {tp: 8, pp: 4, dp: 4, zero_stage: 1, microbatch: 1}
    activation_recompute: selective
goal:
  deadline_days: 30
budget: {basis: capex, currency: USD, max: 8.0e+6}
site: {max_racks: 6}
catalog: {price_book: usd-capex}
constraints:
  pins:
    server: dgx-h100
    nodes: 16
    interconnect: ib-ndr
    nics_per_node: 8
"""

JSON_KEYS = {
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "step_time_s",
    "tflops_per_gpu",
    "mfu",
    "time_to_train_days",
    "memory_per_gpu_gb",
    "bottleneck",
    "parallelism",
}


def variant(text: str = PINNED, **replace: str) -> str:
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def run(tmp_path, text: str, *args: str):
    path = tmp_path / "instance.yaml"
    path.write_text(text, encoding="utf-8")
    return CliRunner().invoke(app, ["estimate", str(path), *args])


def instance(text: str) -> Instance:
    return Instance.model_validate(yaml.safe_load(text))


def test_pinned_instance_prints_a_readable_breakdown(tmp_path):
    result = run(tmp_path, PINNED)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "16 × 8 h100-sxm = 128 GPUs" in out
    assert "TP 8 × PP 4 × DP 4, ZeRO-1, micro-batch 1" in out
    for word in ("tokens/s", "MFU", "days to train", "bottleneck", "weights", "activations", "total", "Deadline"):
        assert word in out


def test_json_has_the_documented_keys(tmp_path):
    result = run(tmp_path, PINNED, "--json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert JSON_KEYS <= set(body)
    # The pinned fields as pinned; virtual_stages, left out, is searched: 80 layers / 4 stages
    # split into v equal chunks, and interleaving shortens the bubble of this 4-stage pipeline.
    parallelism = dict(body["parallelism"])
    assert parallelism.pop("virtual_stages") in (2, 4, 5, 10, 20)
    # cp, left out too, stays 1: TP 8 × PP 4 × DP 4 already takes all 128 GPUs.
    assert parallelism == {"tp": 8, "pp": 4, "dp": 4, "cp": 1, "zero_stage": 1, "microbatch": 1,
                           "activation_recompute": "selective"}
    assert body["hardware"]["gpus"] == 128 and body["hardware"]["link_gbps"] == 400
    assert body["tokens_per_s"] == pytest.approx(body["tokens_per_s_per_gpu"] * 128)
    assert body["tokens_per_s"] == pytest.approx(512 * 8192 / body["step_time_s"])
    assert 0.1 < body["mfu"] < 0.7
    assert body["deadline_met"] == (body["time_to_train_days"] <= 30)


def test_cli_and_library_agree():
    performance = estimate(instance(PINNED))
    assert performance.gpus_used == 128
    assert performance.parallelism.tp == 8


def test_auto_layout_is_estimated(tmp_path):
    text = variant(**{"{tp: 8, pp: 4, dp: 4, zero_stage: 1, microbatch: 1}": "auto"})
    result = run(tmp_path, text, "--json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    layout = body["parallelism"]
    assert layout["tp"] * layout["pp"] * layout["dp"] <= 128
    pinned_tokens = estimate(instance(PINNED)).tokens_per_s
    assert body["tokens_per_s"] >= pinned_tokens  # auto is the fastest layout, so never slower


def test_missing_pins_exit_2_and_are_named(tmp_path):
    text = variant(**{"    nodes: 16\n": "", "    interconnect: ib-ndr\n": ""})
    result = run(tmp_path, text)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "nodes" in result.stderr and "interconnect" in result.stderr and "constraints.pins" in result.stderr
    with pytest.raises(NotPinnedError) as caught:
        estimate(instance(text))
    assert caught.value.missing == ["nodes", "interconnect"]


def test_nothing_pinned_names_every_pin(tmp_path):
    text = PINNED[: PINNED.index("constraints:")]
    with pytest.raises(NotPinnedError) as caught:
        estimate(instance(text))
    assert caught.value.missing == ["server (or gpu)", "nodes", "interconnect", "nics_per_node"]
    assert run(tmp_path, text).exit_code == 2


def test_builtin_nics_stand_in_for_a_nics_pin():
    performance = estimate(instance(variant(**{"    nics_per_node: 8\n": ""})))
    assert performance.gpus_used == 128  # the DGX H100's 8 built-in ConnectX-7 rails


def test_does_not_fit_exits_3_with_the_memory_breakdown(tmp_path):
    text = variant(
        **{
            "model: llama3-70b": "model: llama3-405b",
            "{tp: 8, pp: 4, dp: 4, zero_stage: 1, microbatch: 1}": "{tp: 8, pp: 1, zero_stage: 0, microbatch: 1}",
            "nodes: 16": "nodes: 2",
        }
    )
    result = run(tmp_path, text)
    assert result.exit_code == 3
    assert "DOES NOT FIT" in result.stdout
    for word in ("weights", "gradients", "optimizer", "activations", "reserve", "total"):
        assert word in result.stdout
    assert "does not fit" in result.stderr
    as_json = run(tmp_path, text, "--json")
    assert as_json.exit_code == 3
    body = json.loads(as_json.stdout)
    assert body["fits"] is False and body["memory"]["total_gb"] > body["memory"]["capacity_gb"]
    with pytest.raises(DoesNotFitError) as caught:
        estimate(instance(text))
    assert caught.value.memory.weights_gb == pytest.approx(405.9 / 8 * 2, rel=0.02)
    # TP 8 without pipelining or ZeRO-3 needs 16 bytes per parameter over 8 GPUs: no single change
    # of the layout fits on 16 GPUs, and no node count fits that layout.
    assert body["smallest_change_that_fits"] is None
    assert "No single change of the layout or node count fits" in result.stdout


@pytest.mark.parametrize(
    ("layout", "recompute", "expected"),
    [
        ("{tp: 8, pp: 4, dp: 4, zero_stage: 0, microbatch: 4}", "none", "workload.training.activation_recompute: full"),
        ("{tp: 4, pp: 2, zero_stage: 0, microbatch: 1}", "selective", "workload.training.parallelism.pp: "),
    ],
)
def test_does_not_fit_names_the_smallest_change_that_fits(tmp_path, layout, recompute, expected):
    text = variant(**{"{tp: 8, pp: 4, dp: 4, zero_stage: 1, microbatch: 1}": layout,
                      "activation_recompute: selective": f"activation_recompute: {recompute}"})
    with pytest.raises(DoesNotFitError) as caught:
        estimate(instance(text))
    change = caught.value.change
    assert change.startswith(expected)
    result = run(tmp_path, text)
    assert result.exit_code == 3 and f"Smallest change that fits: {change}" in result.stdout
    # Applying the change fits.
    field, value = change.split(" (")[0].rsplit(": ", 1)
    name = field.rsplit(".", 1)[1]
    if name == "activation_recompute":
        fixed = text.replace(f"activation_recompute: {recompute}", f"activation_recompute: {value}")
    else:
        fixed = text.replace(layout, re.sub(rf"\b{name}: \d+", f"{name}: {value}", layout))
    assert fixed != text
    assert estimate(instance(fixed)).memory.total_gb <= 80


def test_auto_that_does_not_fit_shows_the_leanest_layout(tmp_path):
    text = variant(
        **{
            "model: llama3-70b": "model: llama3-405b",
            "{tp: 8, pp: 4, dp: 4, zero_stage: 1, microbatch: 1}": "auto",
            "nodes: 16": "nodes: 1",
        }
    )
    with pytest.raises(DoesNotFitError) as caught:
        estimate(instance(text))
    assert caught.value.memory.total_gb > 80
    assert run(tmp_path, text).exit_code == 3


def test_a_layout_larger_than_the_cluster_is_a_usage_error(tmp_path):
    text = variant(**{"nodes: 16": "nodes: 8"})
    with pytest.raises(LayoutError):
        estimate(instance(text))
    result = run(tmp_path, text)
    assert result.exit_code == 2
    assert "needs 128 GPUs" in result.stderr


def test_invalid_instance_exits_2(tmp_path):
    result = run(tmp_path, variant(**{"nodes: 16": "nodes: many"}))
    assert result.exit_code == 2
    assert "constraints.pins.nodes" in result.stderr


def test_reads_standard_input():
    result = CliRunner().invoke(app, ["estimate", "-"], input=PINNED)
    assert result.exit_code == 0, result.stderr
    assert "tokens/s" in result.stdout


# ------------------------------------------------------------------------- converged storage

VIDEO = variant(**{"    activation_recompute: selective\n": "    activation_recompute: selective\n"
                   "  data: {bytes_per_sample: 2.0e+8}\n"})


def test_converged_storage_shows_the_penalty(tmp_path):
    dedicated = json.loads(run(tmp_path, VIDEO, "--json").stdout)
    result = run(tmp_path, VIDEO, "--json", "--converged-storage")
    assert result.exit_code == 0, result.stderr
    shared = json.loads(result.stdout)
    assert dedicated["hardware"]["storage_network"] == "dedicated" and dedicated["step"]["storage_s"] == 0
    assert shared["hardware"]["storage_network"] == "converged"
    # 512 samples x 200 MB per step over 16 nodes x 8 x 400G NICs.
    expected_s = 512 * 0.2 / 16 / (8 * 400 / 8)
    assert shared["hardware"]["converged_storage_gb_per_step"] == pytest.approx(512 * 0.2)
    assert shared["step"]["storage_s"] == pytest.approx(expected_s)
    assert shared["step_time_s"] == pytest.approx(dedicated["step_time_s"] + expected_s)
    assert shared["time_to_train_days"] > dedicated["time_to_train_days"]
    text = run(tmp_path, VIDEO, "--converged-storage").stdout
    assert "storage reads" in text and "Storage net  converged" in text
    assert "storage reads" not in run(tmp_path, VIDEO).stdout


def test_pinned_converged_storage_network_is_honoured():
    pinned = variant(VIDEO, **{"    nics_per_node: 8\n": "    nics_per_node: 8\n    storage_network: converged\n"})
    assert estimate(instance(pinned)).step.storage_s > 0
    assert estimate(instance(VIDEO)).step.storage_s == 0
    assert estimate(instance(VIDEO), converged=True).step.storage_s == estimate(instance(pinned)).step.storage_s


def test_an_uncalibrated_gpu_is_flagged(tmp_path):
    """H100 in bf16 is covered by calibration runs; a B200 (no calibration run) is flagged in the
    text and in the JSON record."""
    calibrated = run(tmp_path, PINNED, "--json")
    assert json.loads(calibrated.stdout)["calibrated"] is True
    assert "uncalibrated" not in run(tmp_path, PINNED).stdout
    b200 = variant(PINNED, **{"server: dgx-h100": "server: dgx-b200"})
    text = run(tmp_path, b200)
    assert text.exit_code == 0, text.stderr
    assert "Confidence   uncalibrated: no calibration run covers this GPU" in text.stdout
    assert json.loads(run(tmp_path, b200, "--json").stdout)["calibrated"] is False
