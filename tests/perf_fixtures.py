"""Hand-built GPUs, links and jobs for the performance-model tests.

The numbers are those of reference/hardware-facts.md (§A1 GPUs, §B1.2 NCCL bus efficiencies), so
the tests do not move when the built-in catalog is retuned.
"""

from __future__ import annotations

from topoopt.models.catalog import Gpu, Interconnect, ModelArchitecture
from topoopt.models.instance import Checkpoint, Data, PinnedParallelism, Training
from topoopt.perf import Hardware, Job

SOURCE = "estimate: test fixture from reference/hardware-facts.md"


def gpu(gpu_id: str, memory_gb: float, bandwidth_gb_per_s: float, tflops: dict, efficiency: float, nvlink: float) -> Gpu:
    return Gpu(
        id=gpu_id,
        name=gpu_id,
        source=SOURCE,
        vendor="nvidia",
        memory_gb=memory_gb,
        memory_bandwidth_gb_per_s=bandwidth_gb_per_s,
        dense_tflops=tflops,
        matmul_efficiency=efficiency,
        matmul_efficiency_source=SOURCE,
        tdp_w=700,
        scale_up_gb_per_s=nvlink,
        scale_up_domain_gpus=8,
    )


A100_80 = gpu("a100-80gb-sxm", 80, 2039, {"bf16": 312.0, "fp16": 312.0}, 0.869, 300)
A100_40 = gpu("a100-40gb-sxm", 40, 1555, {"bf16": 312.0, "fp16": 312.0}, 0.869, 300)
H100 = gpu("h100-sxm", 80, 3350, {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0}, 0.803, 450)


def link(link_id: str, protocol: str, gbps: int, efficiency: float, latency_us: float) -> Interconnect:
    return Interconnect(
        id=link_id, name=link_id, source=SOURCE, protocol=protocol, gbps=gbps, bus_efficiency=efficiency, latency_us=latency_us
    )


IB_HDR = link("ib-hdr", "ib", 200, 0.93, 1.5)
IB_NDR = link("ib-ndr", "ib", 400, 0.92, 1.2)
ROCE_400 = link("roce-400", "roce", 400, 0.88, 2.5)
TCP_100 = link("tcp-100", "tcp", 100, 0.35, 30.0)
TCP_25 = link("tcp-25", "tcp", 25, 0.50, 50.0)


def cluster(
    gpu_: Gpu = H100,
    nodes: int = 1,
    interconnect: Interconnect = IB_NDR,
    nics_per_node: int = 8,
    tiers: int = 2,
    oversubscription: float = 1.0,
    link_gbps: int | None = None,
    gpus_per_node: int = 8,
) -> Hardware:
    return Hardware(
        gpu=gpu_,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        nics_per_node=nics_per_node,
        link_gbps=link_gbps or interconnect.gbps,
        interconnect=interconnect,
        tiers=tiers,
        oversubscription=oversubscription,
    )


def architecture(params_b: float, layers: int, hidden: int, heads: int, vocab: int = 32000) -> ModelArchitecture:
    return ModelArchitecture(
        params_b=params_b,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=heads,
        ffn_hidden_size=4 * hidden,
        vocab_size=vocab,
    )


MODEL_7B = architecture(7.0, 32, 4096, 32)
MODEL_70B = architecture(70.0, 80, 8192, 64, vocab=128256)


def job(
    model: ModelArchitecture = MODEL_7B,
    *,
    sequence_length: int = 4096,
    global_batch: int = 256,
    parallelism: str | PinnedParallelism = "auto",
    recompute: str = "selective",
    attention: str = "flash",
    precision: str = "bf16",
    optimizer: str = "adamw",
    tokens: float = 1e11,
    data: Data | None = None,
    checkpoint: Checkpoint | None = None,
    tp_comm_overlap: bool = False,
    param_gather_overlap: bool = False,
) -> Job:
    training = Training(
        tokens=tokens,
        sequence_length=sequence_length,
        global_batch_sequences=global_batch,
        precision=precision,
        optimizer=optimizer,
        parallelism=parallelism,
        activation_recompute=recompute,
        attention=attention,
        tp_comm_overlap=tp_comm_overlap,
        param_gather_overlap=param_gather_overlap,
    )
    return Job(model=model, training=training, data=data or Data(), checkpoint=checkpoint or Checkpoint())


def pinned(tp: int | None = 1, pp: int | None = 1, dp: int | None = None, zero_stage: int | None = 1,
           microbatch: int | None = 1, virtual_stages: int | None = 1, cp: int | None = 1):
    """A pinned layout; a None field is left to the search."""
    return PinnedParallelism(
        tp=tp, pp=pp, dp=dp, cp=cp, zero_stage=zero_stage, microbatch=microbatch, virtual_stages=virtual_stages
    )
