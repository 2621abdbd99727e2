"""The storage-network audit cases (issue "fabrics sized to what is used"): solve each and print the
dedicated storage network's figures: switch counts, ports cabled, bandwidth, and its cost
(storage NICs, storage switches, node-storage and storage leaf-spine cables; unit cables are
left out as every design has them).

Usage: python scripts/storage_audit.py [case ...]
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


def load(name: str, **changes) -> Instance:
    path = ROOT / "instances" / name
    data, _ = parse_yaml(path.read_bytes(), str(path))
    data = copy.deepcopy(data)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return Instance.model_validate(data)


DEDICATED = {"constraints.pins.storage_network": "dedicated"}
CASES = {
    "405b-dedicated": lambda: load("llama3-405b-16k-usd.yaml", **DEDICATED),
    "16-dgx-dedicated": lambda: load("estimate-pinned-h100.yaml", **DEDICATED),
    # 256 DGX H100 fine-tuning Llama 2 7B: a small storage need (tens of Gb/s) on many nodes.
    "256-dgx-dedicated": lambda: load(
        "llama2-7b-finetune-8gpu.yaml", **DEDICATED, **{
            "constraints.pins": {"server": "dgx-h100", "nodes": 256, "storage_network": "dedicated"},
            "catalog.price_book": "usd-capex", "budget": {"basis": "capex", "currency": "USD", "max": 2e8},
            "site.max_racks": 200}),
    "frontier-131k-dedicated": lambda: load("frontier-131k.yaml", **DEDICATED),
}


def storage_figures(result) -> dict:
    d = result.design
    sn = d.storage_network
    prices = {(line.category, line.item): line.unit_price for line in result.cost.breakdown}
    switches = [g for g in d.switches if g.network == "storage"]
    links = [g for g in d.links if g.between in ("node-storage", "storage-leaf-spine")]
    switch_cost = sum(g.count * prices.get(("switch", g.model), 0) for g in switches)
    cable_cost = sum(g.assemblies * prices.get(("cable", g.part), 0) for g in links)
    nic_cost = 0 if sn.nic is None else d.nodes * sn.nics_per_node * prices.get(("nic", sn.nic), 0)
    cabled = getattr(sn, "cabled_ports_per_node", sn.ports_per_node)
    return {
        "status": result.status, "total_cost": result.cost.total, "nodes": d.nodes, "server": d.server,
        "mode": sn.mode, "nic": sn.nic, "ports_per_node": sn.ports_per_node, "cabled_ports_per_node": cabled,
        "link_gbps": sn.link_gbps, "need_gbps": round(sn.need_gbps, 1),
        "node_storage_gbps": d.nodes * cabled * sn.link_gbps, "switch": sn.switch, "tiers": sn.tiers,
        "storage_switches": {g.tier: g.count for g in switches},
        "storage_net_cost": round(switch_cost + cable_cost + nic_cost),
        "storage_switch_cost": round(switch_cost), "storage_cable_cost": round(cable_cost),
    }


def main(names: list[str]) -> None:
    for name in names or CASES:
        start = time.perf_counter()
        result = solve(CASES[name](), explain=False)
        took = time.perf_counter() - start
        row = {"case": name, "seconds": round(took, 1)}
        if result.design is None:
            row["status"] = result.status
        else:
            row.update(storage_figures(result))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
