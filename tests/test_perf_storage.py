"""Storage in the performance model: the needs (hot tier, storage network, cold tier) and the
converged storage network's cost to the step, with its exactness contracts."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perf_fixtures import H100, IB_HDR, IB_NDR, MODEL_7B, TCP_25, TCP_100, architecture, cluster, job

from topoopt.models.instance import Checkpoint, Data
from topoopt.perf import converged_storage_gb_per_step, evaluate, min_nodes_for_time, storage_needs, time_to_train_s
from topoopt.perf.constants import CONVERGED_STORAGE_OVERLAP
from topoopt.perf.storage import (
    archived_checkpoints,
    checkpoint_gb,
    cold_capacity_tb,
    cold_write_gb_per_s,
    converged_storage_s,
)

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VIDEO = Data(bytes_per_sample=48e6)
"""A 48 MB clip per 4,096-token sample: ~11.7 kB per token, so storage reads matter."""


def converged(hw, job_):
    return replace(hw, converged_storage_gb_per_step=converged_storage_gb_per_step(job_))


# ------------------------------------------------------------------------------------ the needs


def test_converged_reads_per_step_are_the_mean_rate() -> None:
    text = job(MODEL_7B, global_batch=256, sequence_length=4096)
    assert converged_storage_gb_per_step(text) == pytest.approx(256 * 4096 * 4.0 / 1e9)
    video = job(MODEL_7B, global_batch=256, sequence_length=4096, data=VIDEO)
    # One sample per sequence, no read safety factor (that sizes the storage tier, not the step).
    assert converged_storage_gb_per_step(video) == pytest.approx(256 * 48e6 / 1e9)
    tokens = job(MODEL_7B, global_batch=64, sequence_length=2048, data=Data(bytes_per_token=100.0))
    assert converged_storage_gb_per_step(tokens) == pytest.approx(64 * 2048 * 100.0 / 1e9)


def test_network_need_is_the_larger_of_reads_and_writes() -> None:
    reads_win = storage_needs(job(MODEL_7B, data=VIDEO), 50_000.0)
    assert reads_win.read_gb_per_s > reads_win.write_gb_per_s
    assert reads_win.network_gbps == pytest.approx(8 * reads_win.read_gb_per_s)
    writes_win = storage_needs(job(MODEL_7B), 50_000.0)
    assert writes_win.write_gb_per_s > writes_win.read_gb_per_s
    assert writes_win.network_gbps == pytest.approx(8 * writes_win.write_gb_per_s)


def test_cold_tier_capacity_and_write_rate() -> None:
    plain = job(MODEL_7B)
    assert cold_capacity_tb(plain) == 0 and cold_write_gb_per_s(plain) == 0
    assert storage_needs(plain, 1.0).cold_capacity_tb == 0
    archive = job(MODEL_7B, data=Data(archive_tb=250.0), checkpoint=Checkpoint(interval_hours=3, archive_days=7))
    gb = checkpoint_gb(archive)
    assert archived_checkpoints(archive) == 56  # 7 days x 24 h / 3 h
    assert cold_capacity_tb(archive) == pytest.approx(250.0 + 56 * gb / 1000)
    assert cold_write_gb_per_s(archive) == pytest.approx(gb / (3 * 3600))
    needs = storage_needs(archive, 1.0)
    assert (needs.cold_capacity_tb, needs.cold_write_gb_per_s) == (cold_capacity_tb(archive), cold_write_gb_per_s(archive))
    # Raw data archived, checkpoints not: a cold tier that is never written by checkpoints.
    data_only = job(MODEL_7B, data=Data(archive_tb=10.0))
    assert cold_capacity_tb(data_only) == 10.0 and cold_write_gb_per_s(data_only) == 0


def test_a_run_archives_no_more_than_its_deadline_writes() -> None:
    """90 days kept, a checkpoint every 2 h, a 30-day deadline: the run has written 30 × 12 = 360
    checkpoints by its end, not the 1,080 of 90 days; without a deadline, the 1,080 stand."""
    kept = Checkpoint(interval_hours=2, archive_days=90)
    assert archived_checkpoints(replace(job(MODEL_7B, checkpoint=kept), deadline_days=30.0)) == 360
    assert archived_checkpoints(replace(job(MODEL_7B, checkpoint=kept), deadline_days=120.0)) == 1080
    assert archived_checkpoints(job(MODEL_7B, checkpoint=kept)) == 1080
    assert archived_checkpoints(replace(job(MODEL_7B), deadline_days=30.0)) == 0


@pytest.mark.parametrize("days,interval,expected", [(0.7, 1.4, 12), (1.0, 5.0, 5), (0.5, 24.0, 1), (2.0, 2.0, 24)])
def test_archived_checkpoints_round_up(days: float, interval: float, expected: int) -> None:
    archive = job(MODEL_7B, checkpoint=Checkpoint(interval_hours=interval, archive_days=days))
    assert archived_checkpoints(archive) == expected == math.ceil(round(days * 24 / interval, 6))


# --------------------------------------------------------------------- the converged step penalty


def test_storage_seconds_follow_the_formula() -> None:
    video = job(MODEL_7B, data=VIDEO)
    hw = converged(cluster(H100, nodes=4, interconnect=TCP_25, nics_per_node=2), video)
    expected = converged_storage_gb_per_step(video) / 4 / (2 * 25 / 8)
    assert CONVERGED_STORAGE_OVERLAP == 0.0
    assert converged_storage_s(hw) == pytest.approx(expected)
    assert converged_storage_s(replace(hw, converged_storage_gb_per_step=0.0)) == 0.0
    with pytest.raises(ValueError, match="compute NICs"):
        converged_storage_s(replace(hw, nics_per_node=0))


def test_evaluate_adds_the_reads_to_the_step() -> None:
    video = job(MODEL_7B, data=VIDEO)
    dedicated = cluster(H100, nodes=2, interconnect=TCP_100, nics_per_node=1)
    shared = converged(dedicated, video)
    base, slow = evaluate(video, dedicated), evaluate(video, shared)
    assert base.step.storage_s == 0.0
    assert slow.step.storage_s == pytest.approx(converged_storage_s(shared))
    assert slow.step.step_time_s == pytest.approx(base.step.step_time_s + slow.step.storage_s)
    assert slow.step_time_s == slow.step.step_time_s
    assert slow.tokens_per_s == pytest.approx(256 * 4096 / slow.step_time_s)
    assert slow.parallelism == base.parallelism  # the reads cost every layout the same
    assert slow.time_to_train_days * 86_400 == pytest.approx(time_to_train_s(video, shared))
    assert time_to_train_s(video, shared) > time_to_train_s(video, dedicated)


def test_bottleneck_names_storage_when_reads_dominate() -> None:
    video = job(MODEL_7B, data=Data(bytes_per_sample=400e6))
    hw = converged(cluster(H100, nodes=1, interconnect=TCP_25, nics_per_node=1), video)
    result = evaluate(video, hw)
    assert result.bottleneck == "storage"
    parts = (result.step.compute_s, result.step.bubble_s, result.step.exposed_comm_s)
    assert result.step.storage_s > max(parts)
    assert evaluate(video, replace(hw, converged_storage_gb_per_step=0.0)).bottleneck != "storage"


def test_default_is_no_contention() -> None:
    """Calibration and every dedicated design see exactly the step they saw before."""
    hw = cluster(H100, nodes=2, interconnect=IB_NDR)
    assert hw.converged_storage_gb_per_step == 0.0
    text = job(MODEL_7B)
    assert evaluate(text, hw) == evaluate(text, replace(hw, converged_storage_gb_per_step=0.0))


MODELS = [MODEL_7B, architecture(1.3, 24, 2048, 16)]
LINKS = [TCP_25, TCP_100, IB_HDR]


@st.composite
def converged_cases(draw):
    bytes_per_sample = draw(st.sampled_from([1e6, 12e6, 48e6, 200e6]))
    job_ = job(draw(st.sampled_from(MODELS)), global_batch=draw(st.sampled_from([64, 256])), data=Data(bytes_per_sample=bytes_per_sample))
    hw = cluster(
        H100,
        nodes=draw(st.integers(1, 12)),
        interconnect=draw(st.sampled_from(LINKS)),
        nics_per_node=draw(st.sampled_from([1, 2, 8])),
        tiers=draw(st.sampled_from([1, 2])),
    )
    return job_, converged(hw, job_)


def _time(job_, hw) -> float:
    seconds = time_to_train_s(job_, hw)
    return math.inf if seconds is None else seconds


@SETTINGS
@given(converged_cases(), st.integers(1, 16))
def test_more_nodes_never_slower_with_contention(case, extra) -> None:
    job_, hw = case
    assert _time(job_, replace(hw, nodes=hw.nodes + extra)) <= _time(job_, hw)


@SETTINGS
@given(converged_cases(), st.sampled_from([0.5, 2.0, 10.0]))
def test_more_reads_never_faster_and_faster_links_never_slower(case, factor) -> None:
    job_, hw = case
    light, heavy = sorted((hw.converged_storage_gb_per_step, hw.converged_storage_gb_per_step * factor))
    assert _time(job_, replace(hw, converged_storage_gb_per_step=light)) <= _time(
        job_, replace(hw, converged_storage_gb_per_step=heavy)
    )
    assert _time(job_, hw) >= _time(job_, replace(hw, converged_storage_gb_per_step=0.0))
    assert _time(job_, replace(hw, nics_per_node=hw.nics_per_node * 2)) <= _time(job_, hw)


def _scan(job_, hw, budget_s: float, limit: int) -> int | None:
    return next((n for n in range(1, limit + 1) if _time(job_, replace(hw, nodes=n)) <= budget_s), None)


@SETTINGS
@given(converged_cases(), st.sampled_from([0.3, 1.0, 3.0, 10.0, 60.0]))
def test_min_nodes_for_time_equals_a_linear_scan_with_contention(case, days) -> None:
    job_, hw = case
    limit = 24
    budget_s = days * 86_400
    assert min_nodes_for_time(job_, hw, budget_s, limit) == _scan(job_, hw, budget_s, limit)


def test_contention_raises_the_node_count_exactly() -> None:
    """A case where the reads decide the node count: the dedicated answer is too few, and the
    converged answer is exactly the brute-force one (found past a gallop and a bisection)."""
    video = job(MODEL_7B, data=Data(bytes_per_sample=200e6), tokens=2e10)
    dedicated = cluster(H100, nodes=1, interconnect=TCP_25, nics_per_node=1)
    shared = converged(dedicated, video)
    limit = 64
    gaps = []
    for days in (2.5, 3.0, 5.0):
        budget_s = days * 86_400
        fewest_dedicated = min_nodes_for_time(video, dedicated, budget_s, limit)
        fewest_converged = min_nodes_for_time(video, shared, budget_s, limit)
        assert fewest_converged == _scan(video, shared, budget_s, limit)
        assert fewest_dedicated == _scan(video, dedicated, budget_s, limit)
        assert fewest_dedicated is not None and fewest_converged is not None
        assert fewest_converged > fewest_dedicated, days
        gaps.append(fewest_converged - fewest_dedicated)
    assert max(gaps) >= 2, gaps  # the answer lies past the first gallop step
    assert min_nodes_for_time(video, shared, 0.05 * 86_400, limit) is None
