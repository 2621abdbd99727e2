"""Every constant of the performance model, in one place, each with its source.

"fitted" means the value was fitted on the calibration runs of ``tests/calibration`` (Megatron
SC21 MEG-1..10, MosaicML llm-foundry MOS-1..23, torchtitan TT-1..9, Nemotron-4 340B NEM-1..3,
listed with their sources in ``docs/performance-model.md`` §9) and on nothing else;
``tests/test_calibration.py`` guards the fit, in sample and 2-fold cross-validated.
"estimate: …" means no published figure was found and the reason for the value is given.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------
# Bytes per parameter and per activation element
# --------------------------------------------------------------------------------------------

WEIGHT_BYTES_PER_PARAM = 2.0
"""bf16/fp16 working weights (ZeRO paper, Rajbhandari et al. 2020, arXiv:1910.02054 §3.1: 2Ψ).
FP8 training (Transformer Engine) keeps bf16 weights and casts per GEMM, so fp8 uses 2 as well."""

GRADIENT_BYTES_PER_PARAM = 2.0
"""bf16/fp16 gradients (ZeRO paper §3.1: 2Ψ). Frameworks that accumulate in fp32 use 4; the
planning model follows the ZeRO accounting."""

OPTIMIZER_BYTES_PER_PARAM = {
    # fp32 master weights 4 + first moment 4 + second moment 4 (ZeRO paper §3.1: K = 12).
    "adam": 12.0,
    "adamw": 12.0,
    # fp32 master weights 4 + momentum 4.
    "sgd_momentum": 8.0,
    # fp32 master weights 4; Adafactor's factored second moment is O(rows + cols) per matrix
    # (Shazeer & Stern 2018, arXiv:1804.04235) and without first moment that is all it keeps.
    "adafactor": 4.0,
}
"""Optimizer state held per parameter, bytes (mixed precision: 2 + 2 + 12 = 16 bytes/param for Adam)."""

ACTIVATION_BYTES = 2.0
"""Activations and the tensors that TP/PP exchange are bf16/fp16 (Korthikanti et al. 2022,
arXiv:2205.05198 §4: "2 bytes per element")."""

LOGIT_BYTES_PER_ELEMENT = 2.0
"""The vocabulary logits of one micro-batch kept for the loss, bytes per element (estimate: bf16
logits; fused/chunked cross-entropy kernels avoid keeping a full fp32 copy)."""

# --------------------------------------------------------------------------------------------
# Activation memory (Korthikanti et al. 2022, arXiv:2205.05198, Table 2, with sequence parallelism)
# --------------------------------------------------------------------------------------------

ACT_LINEAR_BYTES_PER_TOKEN_HIDDEN = 34.0
"""Bytes per token per hidden unit per layer kept for backward, excluding the attention score
matrices: the "34" of s·b·h·(34 + 5·a·s/h) (Korthikanti et al. 2022, eq. 1)."""

ACT_ATTENTION_SCORE_BYTES = 5.0
"""Bytes per attention-score element kept for backward without recomputation (softmax output 2,
dropout mask 1, dropout output 2): the "5·a·s/h" term (Korthikanti et al. 2022, eq. 1)."""

FP8_SAVED_LINEAR_INPUT_BYTES = 1.0
"""Bytes per element of a linear layer's input kept for its weight-gradient GEMM under FP8
training: Transformer Engine's ``_Linear.forward`` saves the FP8-cast input (``saved_inputmat =
inputmat``, or its FP8 transpose) instead of the bf16 one (NVIDIA/TransformerEngine,
transformer_engine/pytorch/module/linear.py). Of the 34 bytes per token and hidden unit, the
inputs of the QKV, attention-output, MLP-up and MLP-down matmuls (2·h, 2·h, 2·h, 2·f per token)
are then halved; the rest (norms, attention core, activation function) stays bf16."""

ACT_FULL_RECOMPUTE_BYTES_PER_TOKEN_HIDDEN = 2.0
"""Full recomputation keeps only each layer's input: 2·s·b·h bytes (Korthikanti et al. 2022 §4.3)."""

# --------------------------------------------------------------------------------------------
# Calibration coverage
# --------------------------------------------------------------------------------------------

CALIBRATED_GPU_PRECISIONS = frozenset(
    {
        ("a100-80gb-sxm", "fp16"),
        ("a100-80gb-sxm", "bf16"),
        ("a100-40gb-sxm", "bf16"),
        ("h100-sxm", "bf16"),
        ("h100-sxm", "fp8"),
        ("h100-96gb-hbm2e-500w", "bf16"),
        ("h100-96gb-hbm2e-500w", "fp8"),
        ("h200-sxm", "fp8"),
        ("mi325x", "fp8"),
    }
)
"""(GPU id, precision its linear layers run in) pairs that calibration runs cover: the runs of
``tests/calibration`` (``tests/test_calibration.py`` checks that this set is exactly theirs).
A prediction for any other pair extrapolates the fitted constants through the catalog's peaks,
GEMM efficiency and bandwidths, and says so (``Performance.calibrated``)."""

# --------------------------------------------------------------------------------------------
# Memory reserve
# --------------------------------------------------------------------------------------------

RESERVE_FIXED_GB = 1.5
"""CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers per GPU (estimate: a CUDA context takes
0.3–0.6 GB and NCCL allocates a few hundred MB of channel buffers per communicator)."""

RESERVE_FRACTION = 0.05
"""Caching-allocator fragmentation and temporary buffers, as a fraction of the modelled memory
(estimate: a few per cent in tuned runs. Upper-bounded by the calibration runs: the MosaicML runs picked the largest
micro-batch that fit, and with a larger reserve the model would reject some of them)."""

ZERO3_GATHERED_LAYERS = 2
"""Layers whose full (un-sharded) bf16 weights are materialised at once under ZeRO-3/FSDP: the one
computing and the one being prefetched (estimate: FSDP ``limit_all_gathers`` allows two in flight)."""

# --------------------------------------------------------------------------------------------
# Compute
# --------------------------------------------------------------------------------------------

FP8_MATMUL_EFFICIENCY_RATIO = 0.883
"""FP8 GEMMs reach a smaller fraction of their (2×) peak than BF16 ones: measured best GEMM on
H100 SXM is 1,402.6 of 1,979 FP8 TFLOPS (70.9%) vs 794.5 of 989 BF16 (80.3%); ratio 0.883
(hardware-facts §A1, MAMF table, [g1]). ``gpu.matmul_efficiency`` is the BF16 figure; a GPU
with a measured FP8 figure (``gpu.matmul_efficiency_fp8``) uses its own ratio instead."""

UTILISATION = 1.0
"""Fraction of the GPU's best measured GEMM throughput (``gpu.matmul_efficiency`` × dense peak)
that the training matmuls sustain, fitted (searched over 0.80–1.00 on the 2021–2023 runs, 0.95–1.00 since; the fit sits at the
physical bound 1: once memory-bound work, overheads and communication are counted, the B2 runs'
matmuls ran at the best measured GEMM rate)."""

MEMORY_BOUND_BYTES_PER_FLOP = 0.002
"""HBM traffic of the non-matmul work (normalisation, activation functions, residuals, softmax,
casts) that is not hidden under the matmuls, in bytes per model FLOP, fitted. It makes the
achievable rate a roofline-like blend of the matmul ceiling and ``memory_bandwidth / this``, so
GPUs whose compute grew faster than their memory bandwidth (H100 vs A100) reach a lower fraction
of peak, as the calibration runs show."""

ATTENTION_SCORE_TRAFFIC_BYTES = 48.0
"""HBM bytes moved per attention-score element per training pass (forward + backward) by
materialized (non-flash) attention: score GEMM output, softmax, dropout and their gradients,
fitted (the Megatron-LM 2021 runs, the only ones with materialized attention)."""

STEP_OVERHEAD_S = 0.15
"""Fixed time per optimizer step outside the modelled kernels (gradient-norm clipping, optimizer
kernel launches, logging, data-loader hand-off), seconds, fitted."""

OPTIMIZER_STEP_BYTES_PER_PARAM = 32.0
"""HBM bytes read and written per parameter by one mixed-precision Adam step (estimate: read fp32
master, m, v and the gradient, write master, m, v and the bf16 weights ≈ 4·3 + 4 + 4·3 + 2 + 2)."""

# --------------------------------------------------------------------------------------------
# Communication
# --------------------------------------------------------------------------------------------

SCALE_UP_BUS_EFFICIENCY = 0.8
"""All-reduce bus bandwidth over NVLink/NVSwitch as a fraction of the one-direction link rate:
DGX A100 232.5/300 = 0.78, HGX H100 ring 370/450 = 0.82 (hardware-facts §B1.2, nccl-tests
issues 175 and 212)."""

SCALE_UP_LATENCY_US = 2.0
"""Per-step latency (alpha) of a collective inside the scale-up domain, µs (estimate: NCCL's LL
protocol reaches a few µs per ring step over NVLink; an 8-GPU small-message all-reduce takes
~15–30 µs over its 14 ring steps)."""

TP_ALLREDUCES_PER_LAYER = 4
"""All-reduce equivalents per transformer layer per micro-batch under tensor parallelism: two in
the forward pass (after attention and after the MLP), two in the backward pass (Shoeybi et al.
2019, arXiv:1909.08053 Fig. 4). With sequence parallelism each becomes a reduce-scatter plus an
all-gather of the same total volume (Korthikanti et al. 2022 §4.2.2)."""

TP_ALLREDUCES_FULL_RECOMPUTE = 2
"""Extra all-reduces per layer when the forward pass is recomputed (full recomputation)."""

CP_RING_PASSES = 3
"""Ring passes of the K,V chunks per layer and micro-batch under context parallelism: one in the
forward pass, two in the backward pass (K,V again and their gradients dK,dV) — Megatron-core's
ring attention (``TEDotProductAttention`` with ``cp_comm_type = p2p``; Liu et al. 2023, "Ring
Attention with Blockwise Transformers", arXiv:2310.01889). Full recomputation adds one."""

CP_COMM_OVERLAP = 1.0
"""Fraction of the ring-attention sends that can hide, and only behind the attention compute of
the same micro-batch (estimate: each ring step's send overlaps the attention block of the chunk
already received — the point of the ring schedule, arXiv:2310.01889 §3 — but the linear layers
run before and after the attention core, outside the ring)."""

TP_OVERLAP = 0.5
"""Fraction of the TP communication a stack that overlaps it (``training.tp_comm_overlap``:
Transformer Engine userbuffers, PyTorch AsyncTP) hides behind the GEMMs, fitted on the speedups
of the paired calibration runs (the same torchtitan run without and with AsyncTP: TT-4/TT-10,
TT-11/TT-12, TT-13/TT-14); the decomposition caps it at (tp − 1)/tp (``step.tp_exposed_s``).
Without overlap none is hidden: the collectives sit between dependent GEMMs."""

PP_COMM_OVERLAP = 0.0
"""Fraction of pipeline point-to-point time hidden (estimate: 1F1B send/recv are blocking in
Megatron-LM 2021, the runs of B2; plan with none)."""

GRAD_REDUCE_OVERLAP = 0.8
"""Fraction of the ZeRO-0/1/2 gradient all-reduce (or reduce-scatter) that can run under the
backward pass of the last micro-batch (estimate: bucketed DDP starts reducing as soon as the first
bucket is ready; the last bucket and the tail after backward stay exposed). Never more than that
backward pass can hide."""

ZERO3_OVERLAP = 0.75
"""Fraction of ZeRO-3/FSDP per-micro-batch parameter all-gathers and gradient reduce-scatters
that prefetching hides under the micro-batch's compute, fitted (the MosaicML and torchtitan FSDP
rows). Never more than that compute can hide."""

CP_MIN_TOKENS_PER_RANK = 8192
"""``auto`` splits a sequence over context-parallel ranks only while each keeps at least this many
tokens (estimate: context parallelism is for long sequences — Megatron-core recommends it when
activations of long sequences do not fit; with fewer tokens per rank the chunked attention GEMMs
get small and the ring's per-step latency shows; it also keeps the layout space, and the search,
of the common 4k–8k jobs as small as without CP). A 16k sequence is searched with CP 1 and 2, a
131k one up to 16; a pinned ``cp`` is not limited, and at 8k it is the way to ask for CP 2."""

CP_CHOICES = (2, 4, 8, 16, 32)
"""Context-parallel degrees ``auto`` tries (powers of two: the load-balanced split cuts a sequence
into 2·cp chunks)."""

# --------------------------------------------------------------------------------------------
# Storage
# --------------------------------------------------------------------------------------------

DEFAULT_BYTES_PER_TOKEN = 4.0
"""Bytes read per token when the instance gives no rate: pre-tokenised text stored as uint32 ids
(hardware-facts §A7: "2 M tokens/s × 4 bytes ≈ 8 MB/s")."""

CHECKPOINT_WEIGHT_BYTES_PER_PARAM = 2.0
"""A checkpoint holds the bf16 weights plus the optimizer state (fp32 master and moments): 2 + 12 =
14 bytes/param for Adam; BLOOM-176B's full checkpoint was 2.3 TB ≈ 13 bytes/param (hardware-facts
§B2.3 STO-1)."""

CONVERGED_STORAGE_OVERLAP = 0.0
"""Fraction of a converged storage network's data reads (over the compute NICs) hidden behind the
step (estimate: data loaders prefetch, but the reads share the NICs with the step's collectives,
so the model plans conservatively with none: the reads are serial with the step). A dedicated
storage network has its own NICs and costs the step nothing."""
