"""α–β costs of collectives and of point-to-point transfers, and where a group's traffic flows.

Bandwidths are per-rank *bus* bandwidths in GB/s (nccl-tests' busbw, hardware-facts §B1.1), so the
link-level efficiency is already applied; α is a per-step latency in seconds; sizes are bytes of
the whole buffer (for reduce-scatter/all-gather: the full, un-sharded array).

* ring all-reduce:      2(n−1)·α + 2(n−1)/n · S/B
* tree all-reduce:      2⌈log₂ n⌉·α + 2·S/B   (NCCL double binary tree, pipelined)
* all-reduce:           the faster of the two (NCCL picks by size)
* reduce-scatter / all-gather (ring): (n−1)·α + (n−1)/n · S/B
* point-to-point:       α + S/B
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import gcd

from topoopt.perf.job import Fabric
from topoopt.perf.units import BYTES_PER_GB


def ring_all_reduce_s(size_bytes: float, ranks: int, bus_gb_per_s: float, alpha_s: float) -> float:
    """Ring all-reduce time: 2(n−1)·α + 2(n−1)/n · S/B."""
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    return 2 * (ranks - 1) * alpha_s + 2.0 * (ranks - 1) / ranks * size_bytes / (bus_gb_per_s * BYTES_PER_GB)


def tree_all_reduce_s(size_bytes: float, ranks: int, bus_gb_per_s: float, alpha_s: float) -> float:
    """Double-binary-tree all-reduce time: 2⌈log₂ n⌉·α + 2·S/B."""
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    return 2 * math.ceil(math.log2(ranks)) * alpha_s + 2.0 * size_bytes / (bus_gb_per_s * BYTES_PER_GB)


def all_reduce_s(size_bytes: float, ranks: int, bus_gb_per_s: float, alpha_s: float) -> float:
    """All-reduce time: the faster of ring and tree (latency-bound sizes go to the tree)."""
    return min(
        ring_all_reduce_s(size_bytes, ranks, bus_gb_per_s, alpha_s),
        tree_all_reduce_s(size_bytes, ranks, bus_gb_per_s, alpha_s),
    )


def reduce_scatter_s(size_bytes: float, ranks: int, bus_gb_per_s: float, alpha_s: float) -> float:
    """Ring reduce-scatter of an S-byte array: (n−1)·α + (n−1)/n · S/B. All-gather costs the same."""
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    return (ranks - 1) * alpha_s + (ranks - 1) / ranks * size_bytes / (bus_gb_per_s * BYTES_PER_GB)


all_gather_s = reduce_scatter_s


def p2p_s(size_bytes: float, bus_gb_per_s: float, alpha_s: float) -> float:
    """Point-to-point transfer time: α + S/B."""
    if size_bytes <= 0:
        return 0.0
    return alpha_s + size_bytes / (bus_gb_per_s * BYTES_PER_GB)


@dataclass(frozen=True)
class Link:
    """The bandwidth, latency and level a group's collectives run at."""

    gb_per_s: float
    alpha_s: float
    level: str  # "scale_up" or "scale_out" (a Bottleneck literal)


def group_link(fabric: Fabric, ranks: int, stride: int) -> Link:
    """Where a group of ``ranks`` GPUs spaced ``stride`` apart communicates.

    Ranks are placed TP-innermost (Megatron's order: TP, then DP, then PP), so a TP group has
    stride 1, a DP group stride tp. The group stays on the scale-up link when its span
    ``ranks·stride`` fits in the island and tiles it. Otherwise its ring crosses islands; with
    ``k`` members per island the island's NICs give the group k × the per-GPU scale-out
    bandwidth (the other GPUs of the island run their own groups concurrently), capped by the
    scale-up link that feeds them (NCCL's hierarchical rings: DGX A100 with 8 HDR NICs measures
    192 GB/s ≈ 8 × 24, hardware-facts §B1.2). A group larger than the island pays scale-out
    bandwidth even for tensor parallelism.
    """
    island = fabric.island_gpus
    span = ranks * stride
    if span <= island and island % span == 0:
        return Link(fabric.scale_up_gb_per_s, fabric.scale_up_alpha_s, "scale_up")
    members = max(1, gcd(span, island) // stride) if island % stride == 0 else 1
    members = min(members, ranks)
    if members > 1:
        bandwidth = min(fabric.scale_up_gb_per_s, members * fabric.scale_out_gb_per_s)
    else:
        bandwidth = fabric.scale_out_gb_per_s
    level = "scale_up" if members > 1 and bandwidth == fabric.scale_up_gb_per_s else "scale_out"
    return Link(bandwidth, fabric.scale_out_alpha_s, level)


def p2p_link(fabric: Fabric, span: int) -> Link:
    """Pipeline send/recv: on the scale-up link when the whole model replica (``span`` = tp·dp·pp
    GPUs) fits in one island, otherwise each GPU sends over its share of the node's NICs."""
    island = fabric.island_gpus
    if span <= island and island % span == 0:
        return Link(fabric.scale_up_gb_per_s, fabric.scale_up_alpha_s, "scale_up")
    return Link(fabric.scale_out_gb_per_s, fabric.scale_out_alpha_s, "scale_out")


__all__ = [
    "Link",
    "all_gather_s",
    "all_reduce_s",
    "group_link",
    "p2p_link",
    "p2p_s",
    "reduce_scatter_s",
    "ring_all_reduce_s",
    "tree_all_reduce_s",
]
