"""The two inputs of the performance model: the workload (:class:`Job`) and one candidate cluster
(:class:`Hardware`), plus the fabric arithmetic derived from the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoopt.models.catalog import Gpu, Interconnect, ModelArchitecture
from topoopt.models.instance import Checkpoint, Data, Training
from topoopt.perf.constants import FP8_MATMUL_EFFICIENCY_RATIO, SCALE_UP_BUS_EFFICIENCY, SCALE_UP_LATENCY_US
from topoopt.perf.units import BITS_PER_BYTE, SECONDS_PER_US

if TYPE_CHECKING:
    from topoopt.models.instance import Instance

# Which precision a GPU runs when it lacks the requested one (an A100 asked for fp8 trains in bf16).
_PRECISION_FALLBACK = {"fp8": ("fp8", "bf16", "fp16"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16")}


@dataclass(frozen=True)
class Job:
    """The workload, resolved: architecture and training, data and checkpoint settings.

    Hashable, so per-job results can be cached.
    """

    model: ModelArchitecture
    training: Training
    data: Data
    checkpoint: Checkpoint
    deadline_days: float | None = None
    """Training ends by then (``goal.deadline_days``), so no more than that many days of
    checkpoints exist to archive; None: no deadline."""

    @classmethod
    def from_instance(cls, instance: Instance, catalog: Any) -> Job:
        """Resolve the instance's workload; ``catalog`` is a :class:`Catalog` or a resolved catalog.

        Raises :class:`topoopt.catalog.CatalogError` when the model preset is unknown.
        """
        from topoopt.catalog import workload_model

        plain = getattr(catalog, "catalog", catalog)
        workload = instance.workload
        return cls(
            model=workload_model(instance, plain),
            training=workload.training,
            data=workload.data,
            checkpoint=workload.checkpoint,
            deadline_days=instance.goal.deadline_days,
        )


@dataclass(frozen=True)
class Hardware:
    """One candidate cluster.

    ``link_gbps`` is the speed of one NIC port, already the slower end of the link;
    ``oversubscription`` is the leaf down:up port ratio (1 = non-blocking) and applies to traffic
    that crosses the spine layer, i.e. only when ``tiers >= 2``.
    ``converged_storage_gb_per_step`` is what the nodes together read from storage per optimizer
    step over their compute NICs when the storage network is converged on the compute fabric
    (:func:`topoopt.perf.storage.converged_storage_gb_per_step`); 0 for a dedicated storage
    network, whose traffic never touches the compute NICs.
    """

    gpu: Gpu
    gpus_per_node: int
    nodes: int
    nics_per_node: int
    link_gbps: int
    interconnect: Interconnect
    tiers: int
    oversubscription: float
    converged_storage_gb_per_step: float = 0.0

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True)
class GpuSpec:
    """The numbers of one GPU that the model uses, for one training precision (hashable cache key)."""

    gpu_id: str
    memory_gb: float
    precision: str
    linear_tflops: float
    attention_tflops: float
    matmul_efficiency: float
    linear_efficiency_ratio: float
    memory_bandwidth_gb_per_s: float
    scale_up_gb_per_s: float
    island_gpus: int

    @classmethod
    def of(cls, gpu: Gpu, gpus_per_node: int, precision: str) -> GpuSpec:
        """Pick the precision the GPU actually runs and the scale-up island size.

        Linear layers run at ``precision`` (or the nearest one the GPU has); attention matmuls stay
        in bf16/fp16, as Transformer Engine's fp8 recipe does. FP8 GEMMs reach the GPU's measured
        FP8 fraction of their peak, or, where none is measured, :data:`FP8_MATMUL_EFFICIENCY_RATIO`
        × the BF16 fraction (the H100's ratio). The *island* is the group of GPUs joined by the
        scale-up link (see :func:`island_gpus`).
        """
        linear = next((p for p in _PRECISION_FALLBACK[precision] if p in gpu.dense_tflops), None)
        if linear is None:
            linear = max(gpu.dense_tflops, key=gpu.dense_tflops.get)
        attention = linear if linear != "fp8" else next(
            (p for p in ("bf16", "fp16") if p in gpu.dense_tflops), linear
        )
        return cls(
            gpu_id=gpu.id,
            memory_gb=gpu.memory_gb,
            precision=linear,
            linear_tflops=gpu.dense_tflops[linear],
            attention_tflops=gpu.dense_tflops[attention],
            matmul_efficiency=gpu.matmul_efficiency,
            linear_efficiency_ratio=fp8_efficiency_ratio(gpu) if linear == "fp8" else 1.0,
            memory_bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s,
            scale_up_gb_per_s=gpu.scale_up_gb_per_s,
            island_gpus=island_gpus(gpu, gpus_per_node),
        )


def fp8_efficiency_ratio(gpu: Gpu) -> float:
    """FP8 over BF16 GEMM efficiency (each a fraction of its own peak): the GPU's measured ratio,
    else the H100's (:data:`FP8_MATMUL_EFFICIENCY_RATIO`)."""
    if gpu.matmul_efficiency_fp8 is None:
        return FP8_MATMUL_EFFICIENCY_RATIO
    return gpu.matmul_efficiency_fp8 / gpu.matmul_efficiency


def island_gpus(gpu: Gpu, gpus_per_node: int) -> int:
    """GPUs that reach each other over the scale-up link (NVLink/xGMI): the *island*.

    The island is the GPU's scale-up domain: within a node when the domain is at most one node
    (an 8-GPU HGX board: 8; NVLink-bridge pairs: 2), across whole nodes when it spans several
    (GB200 NVL72 trays: 72, rounded down to whole nodes). GPUs without NVLink (a scale-up domain
    of 1: PCIe cards) still reach the other GPUs of their node over PCIe, whose rate the catalog
    gives as their ``scale_up_gb_per_s``: the node is their island (estimate: PCIe peer-to-peer
    through the node's PCIe switches; traffic never leaves through the NICs inside one node).
    GPUs of one node in different NVLink islands talk through the node's NICs.
    """
    domain = gpu.scale_up_domain_gpus
    if gpu.scale_up_gb_per_s <= 0:
        return 1
    if domain <= 1:
        return gpus_per_node
    if domain <= gpus_per_node:
        return domain
    return max(gpus_per_node, (domain // gpus_per_node) * gpus_per_node)


def scale_up_link(scale_up_gb_per_s: float) -> tuple[float, float]:
    """(bus GB/s, α seconds) of the scale-up link: rate × :data:`SCALE_UP_BUS_EFFICIENCY`, and
    :data:`SCALE_UP_LATENCY_US`. It depends on the GPU alone, not on the cluster's fabric."""
    return scale_up_gb_per_s * SCALE_UP_BUS_EFFICIENCY, SCALE_UP_LATENCY_US * SECONDS_PER_US


@dataclass(frozen=True)
class Fabric:
    """Bandwidth and latency of the two levels a collective can cross, per GPU.

    ``scale_up_gb_per_s`` = scale-up link rate × :data:`SCALE_UP_BUS_EFFICIENCY`;
    ``scale_out_gb_per_s`` = nics_per_node × link_gbps / 8 × interconnect.bus_efficiency /
    gpus_per_node, divided by the oversubscription when the fabric has a spine layer (tiers ≥ 2):
    a leaf's uplinks carry 1/oversubscription of its down-link traffic, and a ring is as fast as
    its slowest hop. ``scale_out_alpha_s`` = interconnect.latency_us × (2·tiers − 1) switch hops
    (leaf; leaf-spine-leaf; leaf-spine-core-spine-leaf).
    """

    island_gpus: int
    scale_up_gb_per_s: float
    scale_up_alpha_s: float
    scale_out_gb_per_s: float
    scale_out_alpha_s: float

    @classmethod
    def of(cls, hw: Hardware, island: int) -> Fabric:
        node_gb_per_s = hw.nics_per_node * hw.link_gbps / BITS_PER_BYTE * hw.interconnect.bus_efficiency
        if hw.tiers >= 2:
            node_gb_per_s /= max(1.0, hw.oversubscription)
        hops = 2 * hw.tiers - 1
        up_gb_per_s, up_alpha_s = scale_up_link(hw.gpu.scale_up_gb_per_s)
        return cls(
            island_gpus=island,
            scale_up_gb_per_s=up_gb_per_s,
            scale_up_alpha_s=up_alpha_s,
            scale_out_gb_per_s=node_gb_per_s / hw.gpus_per_node,
            scale_out_alpha_s=hw.interconnect.latency_us * hops * SECONDS_PER_US,
        )


FASTEST_CLASS: tuple[int, float] = (1, 1.0)
"""One tier without oversubscription: :func:`never_slower` than any fabric class."""


def never_slower(a: tuple[int, float], b: tuple[int, float]) -> bool:
    """Whether fabric class ``a`` = (tiers, oversubscription) never trains slower than ``b``.

    :meth:`Fabric.of` gives ``a`` at least ``b``'s scale-out bandwidth (oversubscription divides it
    only with a spine layer) and at most ``b``'s switch hops (2·tiers − 1); a step never slows with
    more bandwidth or fewer hops (tests/test_perf_properties.py), so neither does the best step.
    """

    def bandwidth_share(tiers: int, oversubscription: float) -> float:
        return 1.0 / max(1.0, oversubscription) if tiers >= 2 else 1.0

    return a[0] <= b[0] and bandwidth_share(*a) >= bandwidth_share(*b)


@dataclass(frozen=True)
class ModelShape:
    """Derived sizes of the architecture (parameters split into layers, the input embedding and
    the LM head's own weights)."""

    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    embedding_params: float
    """One V×h table: the input embedding, which a tied LM head reuses."""
    head_params: float
    """The LM head's own V×h weights: 0 when tied to the embedding."""
    layer_params: float
    ffn_hidden: int

    @classmethod
    def of(cls, model: ModelArchitecture) -> ModelShape:
        """Split ``params_b`` into the V×h embedding, an untied LM head's V×h and ``layers`` equal
        transformer layers.

        The tables are capped at half the parameters so that an inconsistent preset never yields
        negative layer sizes.
        """
        params = model.params_b * 1e9
        tables = 1 if model.tied_embeddings else 2
        table = min(float(model.vocab_size) * model.hidden_size, 0.5 * params / tables)
        head = 0.0 if model.tied_embeddings else table
        return cls(
            params=params,
            layers=model.layers,
            hidden=model.hidden_size,
            heads=model.attention_heads,
            kv_heads=model.kv_heads,
            vocab=model.vocab_size,
            embedding_params=table,
            head_params=head,
            layer_params=(params - table - head) / model.layers,
            ffn_hidden=model.ffn_hidden_size,
        )


__all__ = ["Fabric", "GpuSpec", "Hardware", "Job", "ModelShape", "island_gpus", "scale_up_link"]
