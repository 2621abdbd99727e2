"""The compute-fabric audit cases (issue "fabrics sized to what is used"): DGX H100 clusters of
16 to 256 nodes on NDR with QM9700 leaves, non-blocking, dedicated or converged storage,
rail-only allowed or not, provisioned for growth; and the 405B and 131k-GPU examples. Solve
each and print one JSON line: cost, switch counts per network and tier, leaf ports, rails per
leaf, leaf–spine links.

Usage: python scripts/fabric_audit.py [case ...]
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

from topoopt.models.instance import Instance
from topoopt.safe_yaml import parse_yaml
from topoopt.solver import solve

ROOT = Path(__file__).resolve().parents[1]


def load(name: str) -> dict:
    path = ROOT / "instances" / name
    return copy.deepcopy(parse_yaml(path.read_bytes(), str(path))[0])


def dgx(nodes: int, mode: str = "dedicated", **constraints) -> dict:
    """The pinned 16-DGX example with its node count, storage network mode and constraints, tiers
    and storage tier free, a deadline and budget that never bind."""
    data = load("estimate-pinned-h100.yaml")
    data["workload"]["training"]["parallelism"] = "auto"
    data["goal"] = {"objective": "min_cost", "deadline_days": 365}
    data["budget"]["max"] = 1e10
    data["site"]["max_racks"] = 1000
    data["site"].update(constraints.pop("site", {}))
    pins = data["constraints"]["pins"]
    for key in ("tiers", "storage"):
        pins.pop(key)
    pins.update(nodes=nodes, storage_network=mode)
    data["constraints"].update(constraints)
    return data


def example(name: str, mode: str | None = None) -> dict:
    data = load(name)
    if mode:
        data.setdefault("constraints", {}).setdefault("pins", {})["storage_network"] = mode
    return data


CASES = {
    **{f"dgx{n}": (lambda n=n: dgx(n)) for n in (16, 20, 24, 40, 48, 128, 256)},
    "dgx16-rail-only-allowed": lambda: dgx(16, allow_rail_only=True),
    "dgx16-grown-for-128": lambda: dgx(16, site={"provision_fabric_for_nodes": 128}),
    "dgx16-converged": lambda: dgx(16, "converged"),
    "dgx128-converged": lambda: dgx(128, "converged"),
    "405b": lambda: example("llama3-405b-16k-usd.yaml"),
    "405b-converged": lambda: example("llama3-405b-16k-usd.yaml", "converged"),
    "frontier-131k": lambda: example("frontier-131k.yaml"),
    "frontier-131k-converged": lambda: example("frontier-131k.yaml", "converged"),
}


def figures(name: str) -> dict:
    started = time.perf_counter()
    result = solve(Instance.model_validate(CASES[name]()), time_limit_s=120)
    row = {"case": name, "seconds": round(time.perf_counter() - started, 1), "status": result.status}
    design = result.design
    if design is None:
        return row
    f = design.fabric
    switches: dict[str, int] = {}
    for group in design.switches:
        switches[f"{group.network}:{group.tier}"] = group.count
    row.update(
        cost=round(result.cost.total),
        switch_cost=round(sum(line.total for line in result.cost.breakdown if line.category == "switch")),
        days=round(result.performance.time_to_train_days, 2), tiers=f.tiers, rails_per_leaf=f.rails_per_leaf,
        rail_only=f.rail_only, leaf_down_in_use=f.leaf_down_ports, leaf_up=f.leaf_up_ports,
        oversubscription=design.oversubscription, storage_network=design.storage_network.mode,
        converged_attach=design.storage_network.converged_attach, switches=switches,
        leaf_spine_links=sum(g.count for g in design.links if g.between == "leaf-spine"),
    )
    return row


if __name__ == "__main__":
    for case in sys.argv[1:] or list(CASES):
        print(json.dumps(figures(case)), flush=True)
