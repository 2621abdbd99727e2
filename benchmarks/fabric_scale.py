"""Time the fabric build-out and every export for a synthetic 131,072-GPU design.

The design is written out by hand from docs/model.md (no solver): 16,384 × dgx-b200 with 8
rails of 400 Gb/s RoCE on sn5600 switches (128 logical ports at 400G), 3 tiers:

* leaves 64 down / 64 up; 256 leaves per rail → 2,048 leaves;
* pods of 64 leaves → 32 pods × 64 spines = 2,048 spines; spine uplinks 64;
* 64 planes of 16 cores with 4 links per spine–core pair (a core uses 32 × 4 = 128 ports);
* 131,072 links in each of the three classes (393,216 in all), twin-port kits of 2 links.

Usage: ``python benchmarks/fabric_scale.py [OUT_DIR]``. Prints the seconds of each step, the
total, and the peak resident memory; exits 1 when the total passes 30 s or the peak 4 GB.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from topoopt.catalog import load_builtin_catalog
from topoopt.fabric import export
from topoopt.fabric.build import build_fabric
from topoopt.fabric.draw import fabric_dot
from topoopt.fabric.graph import graph_of
from topoopt.models.design import (
    Cost,
    CostLine,
    Design,
    FabricShape,
    LinkGroup,
    ObjectiveValue,
    RackGroup,
    SolveResult,
    StorageChoice,
    SwitchGroup,
)
from topoopt.models.performance import Parallelism

LIMIT_S = 30.0
LIMIT_RSS_GB = 4.0


def frontier_design() -> Design:
    nodes, rails = 16_384, 8
    links = nodes * rails
    return Design(
        server="dgx-b200", gpu="b200", nodes=nodes, gpus=nodes * 8, interconnect="roce-400", nic="cx7-osfp",
        nics_per_node=rails, link_gbps=400, tiers=3, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=3, switch="sn5600", leaves=2048, spines=2048, cores=1024, leaf_down_ports=64,
                           leaf_up_ports=64, links_per_leaf_spine=1, pods=32, spines_per_pod=64, leaves_per_pod=64,
                           cores_per_plane=16, spine_up_ports=64, links_per_spine_core=4, rail_optimized=True,
                           leaves_per_rail=256),
        switches=[SwitchGroup(tier="leaf", model="sn5600", count=2048, ports_used=2 * links),
                  SwitchGroup(tier="spine", model="sn5600", count=2048, ports_used=2 * links),
                  SwitchGroup(tier="core", model="sn5600", count=1024, ports_used=links)],
        links=[LinkGroup(between="node-leaf", count=links, part="ndr-sr4-twin-to-twin-flat-kit-50m",
                         assemblies=links // 2, length_m=17, gbps=400),
               LinkGroup(between="leaf-spine", count=links, part="ndr-dr4-twin-kit-500m",
                         assemblies=links // 2, length_m=52, gbps=400),
               LinkGroup(between="spine-core", count=links, part="ndr-dr4-twin-kit-500m",
                         assemblies=links // 2, length_m=52, gbps=400)],
        racks=[RackGroup(rack_class="liquid-80kw", role="compute", count=4096, nodes_per_rack=4, power_kw=57.5),
               RackGroup(rack_class="liquid-80kw", role="network", count=214, nodes_per_rack=0, power_kw=60.0),
               RackGroup(rack_class="liquid-80kw", role="storage", count=4, nodes_per_rack=0, power_kw=30.0)],
        storage=StorageChoice(tier="pfs-building-block", units=40, read_gbps=32_000, write_gbps=22_400,
                              capacity_tb=20_000),
        parallelism=Parallelism(tp=8, pp=16, dp=1024, zero_stage=1, microbatch=1),
    )


def frontier_result(design: Design) -> SolveResult:
    """Cost lines at the built-in USD prices (quantities from the design)."""
    book = next(b for b in load_builtin_catalog().price_books if b.id == "usd-capex")
    quantities = [("server", design.server, design.nodes), ("switch", design.fabric.switch, 5120),
                  ("cable", "ndr-sr4-twin-to-twin-flat-kit-50m", 65_536), ("cable", "ndr-dr4-twin-kit-500m", 131_072),
                  ("rack", "liquid-80kw", 4314), ("storage", "pfs-building-block", 40)]
    lines = [CostLine(category=c, item=i, quantity=q, unit_price=round(book.prices[i].price),
                      total=round(book.prices[i].price) * q, source=book.prices[i].source)
             for c, i, q in quantities]
    cost = Cost(basis="capex", currency="USD", total=sum(x.total for x in lines), breakdown=lines)
    return SolveResult(status="optimal", objective=ObjectiveValue(kind="min_cost", value=cost.total,
                                                                  bound=cost.total, gap=0.0),
                       design=design, cost=cost)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="topoopt-fabric-"))
    design = frontier_design()
    result = frontier_result(design)
    load_builtin_catalog()  # catalog parsing is not part of the fabric's cost
    steps: list[tuple[str, float, float]] = []
    clock = (time.perf_counter(), time.process_time())

    def lap(name: str) -> None:
        nonlocal clock
        now = (time.perf_counter(), time.process_time())
        steps.append((name, now[0] - clock[0], now[1] - clock[1]))
        clock = now

    fabric = build_fabric(design)
    lap("build installation")
    graph = graph_of(fabric)
    lap(f"networkx graph ({graph.number_of_edges():,} edges)")
    del graph
    fabric_dot(fabric, result)
    lap("drawing (DOT text)")
    outputs = export.write_outputs(result, None, out)
    lap("write_outputs (builds again; every file, SVG included)")
    wall, cpu = sum(s[1] for s in steps), sum(s[2] for s in steps)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(f"{'wall s':>8} {'cpu s':>8}")
    for name, seconds, cpu_seconds in steps:
        print(f"{seconds:8.2f} {cpu_seconds:8.2f}  {name}")
    print(f"{wall:8.2f} {cpu:8.2f}  total (limit {LIMIT_S:g} s wall)")
    print(f"{peak_gb:8.2f} GB peak RSS (limit {LIMIT_RSS_GB:g} GB)")
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in outputs.files)
    print(f"wrote {out}: {sizes}")
    for warning in outputs.warnings:
        print(f"warning: {warning}")
    return 0 if wall <= LIMIT_S and peak_gb <= LIMIT_RSS_GB else 1


if __name__ == "__main__":
    sys.exit(main())
