"""Memory per GPU against hand-computed values; ZeRO and recomputation shrink what they should."""

from __future__ import annotations

import pytest
from perf_fixtures import A100_40, H100, MODEL_7B, MODEL_70B, cluster, job, pinned

from topoopt.models.instance import Checkpoint, Data
from topoopt.models.performance import Parallelism
from topoopt.perf import evaluate, fits_in_memory, storage_needs
from topoopt.perf.estimate import leanest_memory
from topoopt.perf.flops import hardware_flops_per_token, layer_attention_flops_per_token, recompute_factors
from topoopt.perf.job import ModelShape
from topoopt.perf.memory import in_flight_microbatches, last_stage_in_flight, memory_model, params_per_gpu

GB = 1e9
# MODEL_7B: 7e9 parameters, 32 layers, h = 4096, 32 heads, V = 32000.
# Untied (the default): the input embedding and the LM head are a V×h matrix each.
EMBEDDING = 32000 * 4096  # 131,072,000
LAYER = (7e9 - 2 * EMBEDDING) / 32  # 210,558,000


def model(**kwargs):
    settings = dict(
        sequence_length=4096,
        optimizer="adamw",
        recompute="selective",
        attention="flash",
        tp=1,
        pp=1,
        zero_stage=0,
        microbatch=1,
        virtual_stages=1,
        capacity_gb=80.0,
    )
    settings.update(kwargs)
    return memory_model(ModelShape.of(MODEL_7B), **settings)


def test_parameters_split_into_layers_and_embedding():
    shape = ModelShape.of(MODEL_7B)
    assert (shape.embedding_params, shape.head_params) == (EMBEDDING, EMBEDDING)
    assert shape.layer_params == pytest.approx(LAYER)
    assert params_per_gpu(shape, 1, 1) == pytest.approx(7e9)
    # TP 2, PP 4: 8 layers and one V×h table per stage (the embedding first, the head last).
    assert params_per_gpu(shape, 2, 4) == pytest.approx((8 * LAYER + EMBEDDING) / 2)
    # PP 5 does not divide 32 layers: the busiest stage has ceil(32/5) = 7.
    assert params_per_gpu(shape, 1, 5) == pytest.approx(7 * LAYER + EMBEDDING)


def test_a_tied_head_is_one_table_and_its_matmul_is_charged_once_either_way():
    """Tied, the head reuses the embedding: the layers hold N − V·h, the one stage N, a pipelined
    stage its layers and one table (the last stage's copy). Tied or not, the head's matmul costs
    6·V·h per token once and the layers 6 × their parameters."""
    tied = ModelShape.of(MODEL_7B.model_copy(update={"tied_embeddings": True}))
    untied = ModelShape.of(MODEL_7B)
    assert (tied.head_params, tied.layer_params) == (0.0, pytest.approx((7e9 - EMBEDDING) / 32))
    assert params_per_gpu(tied, 1, 1) == pytest.approx(7e9)
    assert params_per_gpu(tied, 1, 4) == pytest.approx(8 * tied.layer_params + EMBEDDING)
    for shape, linear in ((tied, 6 * (7e9 - EMBEDDING)), (untied, 6 * (7e9 - 2 * EMBEDDING))):
        attention = 32 * layer_attention_flops_per_token(shape, 4096) * recompute_factors("none")[1]
        assert hardware_flops_per_token(shape, 4096, "none") == pytest.approx(linear + attention + 6 * EMBEDDING)


def test_mixed_precision_adam_is_16_bytes_per_parameter_without_zero():
    weights, gradients, optimizer, _ = model().parts_bytes(dp=8, microbatches=32)
    assert weights == pytest.approx(2 * 7e9)
    assert gradients == pytest.approx(2 * 7e9)
    assert optimizer == pytest.approx(12 * 7e9)


def test_zero_stages_shard_optimizer_then_gradients_then_weights():
    dp = 8
    parts = {stage: model(zero_stage=stage).parts_bytes(dp, 32) for stage in (0, 1, 2, 3)}
    assert parts[1][2] == pytest.approx(12 * 7e9 / dp)  # optimizer sharded
    assert parts[1][1] == pytest.approx(2 * 7e9)  # gradients not yet
    assert parts[2][1] == pytest.approx(2 * 7e9 / dp)  # gradients sharded
    assert parts[2][0] == pytest.approx(2 * 7e9)  # weights not yet
    # ZeRO-3 shards the weights but holds two gathered layers.
    assert parts[3][0] == pytest.approx(2 * 7e9 / dp + 2 * LAYER * 2)
    totals = [model(zero_stage=stage).total_gb(dp, 32) for stage in (0, 1, 2, 3)]
    assert totals == sorted(totals, reverse=True)
    states = [sum(parts[stage][:3]) for stage in (0, 1, 2, 3)]
    assert states[3] < states[0] / 6


def test_activations_follow_korthikanti():
    s, h = 4096, 4096
    logits = s * 32000 * 2
    selective = model(recompute="selective").parts_bytes(1, 1)[3]
    assert selective == pytest.approx(32 * s * h * 34 + logits)
    materialized_none = model(recompute="none", attention="materialized").parts_bytes(1, 1)[3]
    assert materialized_none == pytest.approx(32 * s * h * (34 + 5 * 32 * s / h) + logits)
    # A flash kernel never stores the scores: "none" keeps what "selective" keeps.
    assert model(recompute="none", attention="flash").parts_bytes(1, 1)[3] == pytest.approx(selective)
    full = model(recompute="full").parts_bytes(1, 1)[3]
    assert full == pytest.approx(32 * s * h * 2 + s * h * 34 + logits)


def test_fp8_keeps_the_linear_inputs_in_one_byte():
    """QKV, attention-output and MLP-up inputs (h each) and the MLP-down input (f = 4h here) are
    kept in FP8: 34 − (3 + 4) = 27 bytes per token and hidden unit; full recomputation keeps
    only the bf16 layer input, and the buffer of the layer being recomputed shrinks the same way."""
    s, h = 4096, 4096
    logits = s * 32000 * 2
    fp8 = model(fp8=True).parts_bytes(1, 1)[3]
    assert fp8 == pytest.approx(32 * s * h * 27 + logits)
    full = model(recompute="full", fp8=True).parts_bytes(1, 1)[3]
    assert full == pytest.approx(32 * s * h * 2 + s * h * 27 + logits)


def test_recomputation_shrinks_activations():
    none = model(recompute="none", attention="materialized").parts_bytes(1, 1)[3]
    selective = model(recompute="selective", attention="materialized").parts_bytes(1, 1)[3]
    full = model(recompute="full", attention="materialized").parts_bytes(1, 1)[3]
    assert none > selective > full


def test_activations_divide_by_tp_and_the_more_loaded_pipeline_end_counts():
    single = model().parts_bytes(1, 16)[3]
    logits = 4096 * 32000 * 2
    all_layers = single - logits  # 32 layers of one micro-batch, TP 1
    # First stage: 8 layers × 4 micro-batches in flight = the whole model's layers, halved by TP;
    # the logits sit on the last stage, which holds one micro-batch in flight.
    assert model(tp=2, pp=4).parts_bytes(1, 16)[3] == pytest.approx(all_layers / 2)
    # One micro-batch per step: both ends hold one; the last adds its logits.
    assert model(tp=2, pp=4).parts_bytes(1, 1)[3] == pytest.approx(all_layers / 8 + logits / 2)
    # Fewer micro-batches than stages: only those are in flight on the first stage.
    assert model(tp=2, pp=4).parts_bytes(1, 2)[3] == pytest.approx(max(all_layers / 4, all_layers / 8 + logits / 2))


def test_interleaving_holds_more_in_flight_at_both_ends():
    assert in_flight_microbatches(4, 16, 2) == pytest.approx(4 * (1 + 3 / 8))
    # The last stage's interleaved warm-up: (v − 1)·pp chunk forwards, plus the one in flight.
    assert last_stage_in_flight(4, 16, 2) == pytest.approx((1 * 4 + 1) / 2)
    assert last_stage_in_flight(4, 16, 1) == 1 and last_stage_in_flight(1, 16, 1) == 1
    assert last_stage_in_flight(8, 3, 4) == 3  # never more than the step's micro-batches
    plain, interleaved = model(tp=2, pp=4), model(tp=2, pp=4, virtual_stages=2)
    assert interleaved.parts_bytes(1, 16)[3] == pytest.approx(plain.parts_bytes(1, 16)[3] * (1 + 3 / 8))


def test_reserve_and_total():
    memory = model(zero_stage=3)
    parts = memory.parts_bytes(8, 32)
    breakdown = memory.breakdown(8, 32)
    modelled = sum(parts) / GB
    assert breakdown.reserve_gb == pytest.approx(1.5 + 0.05 * modelled)
    assert breakdown.total_gb == pytest.approx(modelled * 1.05 + 1.5)
    assert breakdown.total_gb == pytest.approx(memory.total_gb(8, 32))


def test_70b_needs_several_nodes():
    big = job(MODEL_70B, parallelism=pinned(tp=1, pp=1, dp=1, zero_stage=0), global_batch=64)
    assert not fits_in_memory(big, cluster(A100_40, nodes=1))
    # 16 bytes/param × 70e9 = 1.12 TB of model state: more than 16 × 80 GB once activations count.
    assert not fits_in_memory(job(MODEL_70B, global_batch=64), cluster(H100, nodes=2))
    assert fits_in_memory(job(MODEL_70B, global_batch=64), cluster(H100, nodes=3))
    parallelism, memory = leanest_memory(big, cluster(A100_40, nodes=1))
    assert memory.total_gb > memory.capacity_gb == 40
    assert parallelism.tp == 1


def test_evaluate_reports_the_breakdown_of_the_chosen_layout():
    result = evaluate(job(global_batch=64), cluster(H100, nodes=1), Parallelism(tp=2, pp=1, dp=4, zero_stage=1, microbatch=2))
    assert result.parallelism.dp == 4 and result.gpus_used == 8
    assert result.memory_per_gpu_gb == pytest.approx(result.memory.total_gb)
    assert result.memory.optimizer_gb == pytest.approx(12 * 7e9 / 2 / 4 / GB)


def test_storage_needs():
    data = Data(bytes_per_sample=8192.0, dataset_tb=10.0, read_safety_factor=2.0, small_files=True)
    needs = storage_needs(job(data=data, checkpoint=Checkpoint(keep=3, max_save_time_s=100.0)), tokens_per_s=1e6)
    assert needs.read_gb_per_s == pytest.approx(8192 / 4096 * 1e6 * 2 / 1e9)
    assert needs.checkpoint_gb == pytest.approx(7.0 * 14)  # bf16 weights + fp32 master, m, v
    assert needs.write_gb_per_s == pytest.approx(98.0 / 100.0)
    assert needs.capacity_tb == pytest.approx(10.0 + 3 * 98.0 / 1000)
    assert needs.needs_low_latency
    # BLOOM-176B's published full checkpoint was 2.3 TB: 14 bytes/param is within 10% above it.
    bloom = storage_needs(job(model=MODEL_7B.model_copy(update={"params_b": 176.2})), 1.0).checkpoint_gb
    assert 2300 <= bloom <= 2300 * 1.1
    assert storage_needs(job(optimizer="sgd_momentum"), 1.0).checkpoint_gb == pytest.approx(7.0 * 10)
