"""Time the fabric build-out and every export for the 131,072-GPU example.

The design is the one ``topoopt solve instances/frontier-131k.yaml`` returns (16,384 × dgx-b200,
8 rails of 400 Gb/s RoCE, 3 tiers, with its storage and management networks); solving it is not
part of the timing. The three networks together have about 440,000 links.

Usage: ``python benchmarks/fabric_scale.py [OUT_DIR]``. Prints the seconds of each step, the
total, and the peak resident memory; exits 1 when the total passes 30 s or the peak 4 GB.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import topoopt
from topoopt.catalog import resolve_catalog
from topoopt.fabric import export
from topoopt.fabric.build import build_fabric
from topoopt.fabric.draw import fabric_dot
from topoopt.fabric.graph import graph_of
from topoopt.loader import load_instance

LIMIT_S = 30.0
LIMIT_RSS_GB = 4.0
INSTANCE = Path(__file__).resolve().parent.parent / "instances" / "frontier-131k.yaml"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="topoopt-fabric-"))
    instance = load_instance(INSTANCE).instance
    result = topoopt.solve(instance)
    if result.design is None:
        print(f"{INSTANCE.name}: {result.status}, no design to build")
        return 1
    design = result.design
    resolve_catalog(instance)  # catalog parsing is not part of the fabric's cost
    steps: list[tuple[str, float, float]] = []
    clock = (time.perf_counter(), time.process_time())

    def lap(name: str) -> None:
        nonlocal clock
        now = (time.perf_counter(), time.process_time())
        steps.append((name, now[0] - clock[0], now[1] - clock[1]))
        clock = now

    fabric = build_fabric(design, instance)
    lap("build installation")
    graph = graph_of(fabric)
    lap(f"networkx graph ({graph.number_of_edges():,} edges)")
    del graph
    fabric_dot(fabric, result)
    lap("drawing (DOT text)")
    outputs = export.write_outputs(result, instance, out)
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
