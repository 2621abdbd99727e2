"""Published layouts that ran must fit, and partial pins, interleaving and recomputation as a
choice must express them.

Nemotron-4 340B (NVIDIA, "Nemotron-4 340B Technical Report", arXiv:2406.11704: model and training
details, Table 2):
96 layers, hidden 18,432, 96 heads (8 KV heads), MLP 73,728, vocabulary 256,000, sequence 4,096,
bf16 on DGX H100 80 GB; 8-way tensor parallelism, 12-way pipeline parallelism with interleaving,
data parallelism 16, 32 and 64 (1,536, 3,072 and 6,144 GPUs) at global batches 768, 1,536 and
2,304, with the distributed optimizer (ZeRO-1).
"""

from __future__ import annotations

import pytest
from perf_fixtures import H100, cluster, job, pinned

from topoopt.models.catalog import ModelArchitecture
from topoopt.perf import evaluate

NEMOTRON_4_340B = ModelArchitecture(
    params_b=341.0,
    layers=96,
    hidden_size=18432,
    attention_heads=96,
    kv_heads=8,
    ffn_hidden_size=73728,
    vocab_size=256000,
)
LLAMA_405B_SHAPE = ModelArchitecture(
    params_b=405.0, layers=126, hidden_size=16384, attention_heads=128, kv_heads=8, ffn_hidden_size=53248,
    vocab_size=128256,
)


@pytest.mark.parametrize(("dp", "batch"), [(16, 768), (32, 1536), (64, 2304)])
def test_nemotron_4_340b_fits_as_it_ran_and_interleaves(dp, batch):
    layout = pinned(tp=8, pp=12, dp=dp, zero_stage=1, microbatch=1, virtual_stages=None)
    nemotron = job(NEMOTRON_4_340B, sequence_length=4096, global_batch=batch, parallelism=layout, recompute="auto")
    result = evaluate(nemotron, cluster(H100, nodes=12 * dp))
    assert result is not None, "the published layout must fit in 80 GB"
    p = result.parallelism
    assert (p.tp, p.pp, p.dp, p.zero_stage, p.microbatch) == (8, 12, dp, 1, 1)
    # Left to the search, interleaving is chosen (8 layers per stage: v ∈ {2, 4, 8}) and beats
    # the plain 1F1B pipeline the same pins give with v = 1.
    assert p.virtual_stages in (2, 4, 8)
    plain = job(NEMOTRON_4_340B, sequence_length=4096, global_batch=batch, recompute="auto",
                parallelism=pinned(tp=8, pp=12, dp=dp, zero_stage=1, microbatch=1, virtual_stages=1))
    assert result.step_time_s < evaluate(plain, cluster(H100, nodes=12 * dp)).step_time_s


def test_recompute_auto_turns_to_full_recomputation_only_when_nothing_else_fits():
    """405B-class shape, TP8 PP16 (CP 1) at 8k sequences in bf16: without recomputation the first
    stage's 16 micro-batches in flight need more than 80 GB; ``auto`` then takes full
    recomputation, and with the sequence halved it keeps the faster no-recomputation step."""
    layout = pinned(tp=8, pp=16, dp=None, zero_stage=1, microbatch=1, virtual_stages=None)
    layout = layout.model_copy(update={"cp": 1})
    long = job(LLAMA_405B_SHAPE, sequence_length=8192, global_batch=2048, parallelism=layout, recompute="auto")
    none = job(LLAMA_405B_SHAPE, sequence_length=8192, global_batch=2048, parallelism=layout, recompute="none")
    hw = cluster(H100, nodes=1024)
    assert evaluate(none, hw) is None
    assert evaluate(long, hw).parallelism.activation_recompute == "full"
    short = job(LLAMA_405B_SHAPE, sequence_length=2048, global_batch=2048, parallelism=layout, recompute="auto")
    assert evaluate(short, hw).parallelism.activation_recompute == "none"


def test_a_pinned_policy_is_kept():
    layout = pinned(tp=8, pp=16, dp=None, zero_stage=1, microbatch=1, virtual_stages=None)
    short = job(LLAMA_405B_SHAPE, sequence_length=2048, global_batch=2048, parallelism=layout, recompute="full")
    assert evaluate(short, cluster(H100, nodes=1024)).parallelism.activation_recompute == "full"


def test_context_parallelism_halves_the_activations_of_long_sequences():
    """The same 8k layout with CP 2 (ranks TP, CP, DP, PP from the innermost: 8 × 2 × 16 GPUs per
    replica) fits without recomputation; with cp left to the search the fastest of both is taken."""
    base = pinned(tp=8, pp=16, dp=None, zero_stage=1, microbatch=1, virtual_stages=None)
    hw = cluster(H100, nodes=1024)

    def step(cp, recompute):
        layout = base.model_copy(update={"cp": cp})
        found = evaluate(job(LLAMA_405B_SHAPE, sequence_length=8192, global_batch=2048, parallelism=layout,
                             recompute=recompute), hw)
        return found

    with_cp = step(2, "none")
    assert with_cp is not None and with_cp.parallelism.cp == 2 and with_cp.gpus_used == 8 * 2 * 16 * with_cp.parallelism.dp
    assert with_cp.step.cp_comm_s > 0
    assert step(1, "none") is None
    # At 8k tokens auto does not split sequences (CP_MIN_TOKENS_PER_RANK): cp left out is CP 1.
    assert step(None, "auto").parallelism.cp == 1


def test_long_sequences_search_context_parallelism():
    """At 16k tokens a cp left out is searched over CP 1 and 2: the fastest of both is taken."""
    base = pinned(tp=8, pp=16, dp=None, zero_stage=1, microbatch=1, virtual_stages=None, cp=None)
    hw = cluster(H100, nodes=1024)

    def best(cp):
        layout = base.model_copy(update={"cp": cp})
        return evaluate(job(LLAMA_405B_SHAPE, sequence_length=16384, global_batch=1024, parallelism=layout,
                            recompute="auto"), hw)

    searched, each = best(None), [best(1), best(2)]
    assert searched.step_time_s == min(r.step_time_s for r in each if r is not None)
