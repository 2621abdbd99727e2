"""Collective costs, where groups communicate, and the step time they produce."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from perf_fixtures import (
    A100_80,
    H100,
    IB_HDR,
    IB_NDR,
    MODEL_7B,
    MODEL_70B,
    ROCE_400,
    TCP_25,
    TCP_100,
    cluster,
    job,
    pinned,
)
from pydantic import ValidationError

from topoopt.catalog import load_builtin_catalog
from topoopt.models.catalog import Gpu
from topoopt.models.performance import Parallelism
from topoopt.perf import evaluate, search, space
from topoopt.perf.collectives import (
    all_gather_s,
    all_reduce_s,
    group_link,
    p2p_link,
    reduce_scatter_s,
    ring_all_reduce_s,
    tree_all_reduce_s,
)
from topoopt.perf.constants import FP8_MATMUL_EFFICIENCY_RATIO, GRAD_REDUCE_OVERLAP
from topoopt.perf.flops import hardware_flops_per_token, model_flops_per_token, recompute_factors
from topoopt.perf.job import Fabric, GpuSpec, ModelShape
from topoopt.perf.step import dp_comm_s


def test_ring_and_tree_all_reduce():
    size, ranks, bw, alpha = 1e9, 8, 100.0, 5e-6
    assert ring_all_reduce_s(size, ranks, bw, alpha) == pytest.approx(14 * alpha + 2 * 7 / 8 * size / 100e9)
    assert tree_all_reduce_s(size, ranks, bw, alpha) == pytest.approx(6 * alpha + 2 * size / 100e9)
    assert all_reduce_s(size, ranks, bw, alpha) == ring_all_reduce_s(size, ranks, bw, alpha)  # large: ring
    small = 1e3
    assert all_reduce_s(small, 1024, bw, alpha) == tree_all_reduce_s(small, 1024, bw, alpha)  # small: tree
    assert reduce_scatter_s(size, ranks, bw, alpha) == pytest.approx(7 * alpha + 7 / 8 * size / 100e9)
    assert all_reduce_s(size, 1, bw, alpha) == 0.0


def test_fabric_arithmetic():
    hw = cluster(H100, nodes=4, interconnect=IB_NDR, nics_per_node=8, tiers=2, oversubscription=2.0)
    fabric = Fabric.of(hw, 8)
    assert fabric.scale_up_gb_per_s == pytest.approx(450 * 0.8)
    # 8 NICs × 400 Gb/s / 8 × 0.92, halved by 2:1 oversubscription, shared by 8 GPUs.
    assert fabric.scale_out_gb_per_s == pytest.approx(8 * 50 * 0.92 / 2 / 8)
    assert fabric.scale_out_alpha_s == pytest.approx(1.2e-6 * 3)
    single_switch = Fabric.of(cluster(H100, tiers=1, oversubscription=2.0), 8)
    assert single_switch.scale_out_gb_per_s == pytest.approx(8 * 50 * 0.92 / 8)  # no spine to cross
    assert single_switch.scale_out_alpha_s == pytest.approx(1.2e-6)


def test_groups_use_the_scale_up_link_only_inside_an_island():
    fabric = Fabric.of(cluster(A100_80, nodes=4, interconnect=IB_HDR), 8)
    per_gpu_out = 8 * 25 * 0.93 / 8
    assert group_link(fabric, 8, 1).level == "scale_up"  # TP 8 in a node
    assert group_link(fabric, 4, 2).level == "scale_up"  # DP 4 over stride 2: 8 GPUs
    across = group_link(fabric, 32, 1)  # DP over 4 nodes, 8 members per node
    assert across.level == "scale_out"
    assert across.gb_per_s == pytest.approx(8 * per_gpu_out)  # ~186 GB/s, as NCCL measures ~192
    one_per_node = group_link(fabric, 4, 8)  # DP groups of a TP-8 layout: one GPU per node
    assert one_per_node.gb_per_s == pytest.approx(per_gpu_out)
    # A TP group larger than the island pays scale-out bandwidth.
    assert group_link(fabric, 16, 1).level == "scale_out"
    assert p2p_link(fabric, 8).level == "scale_up" and p2p_link(fabric, 16).level == "scale_out"


def test_tp_beyond_the_island_pays_scale_out_bandwidth():
    hw = cluster(H100, nodes=2, nics_per_node=2)
    inside = evaluate(job(global_batch=64), hw, Parallelism(tp=8, pp=1, dp=2, zero_stage=1, microbatch=1))
    outside = evaluate(job(global_batch=64), hw, Parallelism(tp=16, pp=1, dp=1, zero_stage=1, microbatch=1))
    # Two 400G NICs per node give 8 GPUs 8 × 2 × 46 / 8 = 92 GB/s against NVLink's 360.
    assert outside.step.tp_comm_s > 3 * inside.step.tp_comm_s
    assert outside.bottleneck == "scale_out"


def test_flops_per_token():
    shape = ModelShape.of(MODEL_7B)
    assert model_flops_per_token(shape, 4096) == pytest.approx(6 * 7e9 + 12 * 32 * 4096 * 4096)
    assert recompute_factors("full", "materialized") == (4 / 3, 4 / 3)
    assert recompute_factors("full", "flash") == (4 / 3, 5 / 3)
    assert recompute_factors("none", "materialized") == (1, 1)
    assert recompute_factors("none", "flash") == (1, 4 / 3)
    # Full recomputation adds one forward pass of the layers (not of the LM head); the input
    # embedding, in the model FLOPs' 6·N, is a lookup without a matmul.
    extra = hardware_flops_per_token(shape, 4096, "full", "materialized") - model_flops_per_token(shape, 4096)
    layers = 7e9 - shape.embedding_params - shape.head_params
    assert extra == pytest.approx(6 * layers / 3 + 12 * 32 * 4096 * 4096 / 3 - 6 * shape.embedding_params)


def _fsdp_fine_tune(interconnect, nics):
    """Azure's IB-vs-Ethernet comparison: a 7B model, FSDP over 2 nodes × 8 H100."""
    hw = cluster(H100, nodes=2, interconnect=interconnect, nics_per_node=nics, tiers=1)
    work = job(MODEL_7B, global_batch=64, parallelism=pinned(tp=1, pp=1, dp=16, zero_stage=3))
    return evaluate(work, hw)


def test_tcp_is_far_slower_than_infiniband():
    ib = _fsdp_fine_tune(IB_NDR, 8)
    tcp = _fsdp_fine_tune(TCP_100, 1)
    ratio = ib.tokens_per_s / tcp.tokens_per_s
    # Azure measured IB 26-28x faster than ~40-50 Gb/s TCP for a 7B fine-tune on 2 H100 nodes
    # (hardware-facts §B1.3); the model must land in the same order of magnitude.
    assert 10 < ratio < 60
    assert tcp.bottleneck == "scale_out" and ib.bottleneck == "compute"
    slower = _fsdp_fine_tune(TCP_25, 1)
    assert slower.tokens_per_s < tcp.tokens_per_s
    assert _fsdp_fine_tune(ROCE_400, 8).tokens_per_s == pytest.approx(ib.tokens_per_s, rel=0.1)


def test_auto_avoids_the_slow_fabric_where_it_can():
    work = job(MODEL_7B, global_batch=64)
    tcp = evaluate(work, cluster(H100, nodes=2, interconnect=TCP_100, nics_per_node=1))
    forced = _fsdp_fine_tune(TCP_100, 1)
    assert tcp.tokens_per_s > 3 * forced.tokens_per_s


def test_step_breakdown_adds_up_and_names_the_bottleneck():
    result = evaluate(job(MODEL_70B, global_batch=512), cluster(H100, nodes=16))
    step = result.step
    assert step.step_time_s >= step.compute_s + step.bubble_s
    assert step.step_time_s == pytest.approx(step.compute_s + step.bubble_s + step.exposed_comm_s)
    assert result.tokens_per_s == pytest.approx(512 * 4096 / step.step_time_s)
    assert result.tokens_per_s_per_gpu == pytest.approx(result.tokens_per_s / result.gpus_used)
    assert result.mfu == pytest.approx(result.tflops_per_gpu / 989.0)
    assert result.hardware_tflops_per_gpu > result.tflops_per_gpu
    assert 0.2 < result.mfu < 0.6
    assert result.bottleneck == "compute"
    deep = evaluate(
        job(MODEL_70B, global_batch=8), cluster(H100, nodes=16), Parallelism(tp=8, pp=16, dp=1, zero_stage=1, microbatch=1)
    )
    assert deep.bottleneck == "pipeline_bubble"
    assert deep.step.bubble_s > deep.step.compute_s  # 15 stages of fill and drain for 8 micro-batches


def test_interleaving_shrinks_the_bubble():
    work = job(MODEL_70B, global_batch=64)
    hw = cluster(H100, nodes=8)
    plain = evaluate(work, hw, Parallelism(tp=8, pp=8, dp=1, zero_stage=1, microbatch=1))
    interleaved = evaluate(work, hw, Parallelism(tp=8, pp=8, dp=1, zero_stage=1, microbatch=1, virtual_stages=2))
    assert interleaved.step.bubble_s == pytest.approx(plain.step.bubble_s / 2)
    assert interleaved.step.pp_comm_s > plain.step.pp_comm_s


def test_fp8_gemms_run_at_the_measured_fp8_efficiency():
    """A GPU with a measured FP8 GEMM efficiency runs its FP8 linear layers at it (B200: 0.763 of
    the FP8 peak against 0.776 of the BF16 one); without one, at the H100's ratio 0.883 of the BF16
    efficiency. The ratio enters the linear-layer time only: the same job on the same GPU with a
    measured FP8 efficiency equal to the BF16 one runs faster than at the H100's ratio."""
    b200 = GpuSpec.of(load_builtin_catalog().by_id("gpus")["b200"], 8, "fp8")
    assert b200.linear_efficiency_ratio == pytest.approx(0.763 / 0.776)
    assert GpuSpec.of(H100, 8, "fp8").linear_efficiency_ratio == pytest.approx(FP8_MATMUL_EFFICIENCY_RATIO)
    assert GpuSpec.of(H100, 8, "bf16").linear_efficiency_ratio == 1.0
    measured = H100.model_copy(update={"matmul_efficiency_fp8": H100.matmul_efficiency,
                                       "matmul_efficiency_fp8_source": "estimate: test fixture, FP8 at the BF16 fraction"})
    at_ratio = evaluate(job(precision="fp8", global_batch=64), cluster(H100, nodes=1))
    at_measured = evaluate(job(precision="fp8", global_batch=64), cluster(measured, nodes=1))
    assert at_measured.tokens_per_s > at_ratio.tokens_per_s


def test_a_measured_fp8_efficiency_needs_its_source_and_an_fp8_peak():
    fields = H100.model_dump()
    with pytest.raises(ValidationError, match="go together"):
        Gpu.model_validate({**fields, "matmul_efficiency_fp8": 0.7})
    with pytest.raises(ValidationError, match="without an fp8 peak"):
        Gpu.model_validate({**fields, "dense_tflops": {"bf16": 989.0}, "matmul_efficiency_fp8": 0.7,
                            "matmul_efficiency_fp8_source": "estimate: test fixture, no fp8 peak"})


def test_fp8_is_faster_but_not_twice():
    hw = cluster(H100, nodes=1)
    bf16 = evaluate(job(precision="bf16", global_batch=64), hw)
    fp8 = evaluate(job(precision="fp8", global_batch=64), hw)
    assert 1.1 < fp8.tokens_per_s / bf16.tokens_per_s < 2.0
    assert fp8.mfu < bf16.mfu  # MFU is against the (2x) fp8 peak
    a100_fp8 = evaluate(job(precision="fp8", global_batch=64), cluster(A100_80, nodes=1))
    a100_bf16 = evaluate(job(precision="bf16", global_batch=64), cluster(A100_80, nodes=1))
    assert a100_fp8.tokens_per_s == pytest.approx(a100_bf16.tokens_per_s)  # no fp8: runs bf16


def test_time_to_train_counts_checkpoint_saves():
    result = evaluate(job(tokens=1e11, global_batch=64), cluster(H100, nodes=1))
    plain_days = 1e11 / result.tokens_per_s / 86400
    assert result.time_to_train_days == pytest.approx(plain_days * (1 + 120 / 7200))
    assert math.isfinite(result.time_to_train_days)


def test_an_overlapped_weight_all_gather_hides_behind_the_first_forward_pass():
    """ZeRO-1 with ``param_gather_overlap``: the updated weights' all-gather hides as the gradient
    reduction does (GRAD_REDUCE_OVERLAP), behind one forward pass (t_mb / 3) whatever the number of
    micro-batches; without it the all-gather is exposed in full."""
    work = job(MODEL_7B, global_batch=256, parallelism=pinned(tp=1, pp=1, zero_stage=1, microbatch=1))
    spec = search.gpu_spec(work, cluster(H100, nodes=4))
    off = space.build_layout(work, spec, 1, 1, 1, 1, 1, "selective")
    on = replace(off, param_gather_overlap=True)
    gather = all_gather_s(off.weight_bytes, 32, 50.0, 5e-6)
    hidden = min(GRAD_REDUCE_OVERLAP * gather, off.microbatch_compute_s / 3)
    for microbatches in (1, 8):
        raw_off, exposed_off = dp_comm_s(off, 32, microbatches, 50.0, 5e-6)
        raw_on, exposed_on = dp_comm_s(on, 32, microbatches, 50.0, 5e-6)
        assert raw_on == raw_off
        assert exposed_on == pytest.approx(exposed_off - hidden)
    assert 0 < hidden < gather
