"""A hand-built valid design for the checker tests, and helpers to mutate it."""

from __future__ import annotations

import copy

from topoopt import perf
from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.models.design import Design
from topoopt.models.instance import Instance

SRC = "estimate: checker test fixture"

# 4 × DGX H100 on NDR InfiniBand, llama3-8b, built-in catalog and the usd-capex price book.
BASE_INSTANCE = {
    "name": "checker-base",
    "workload": {
        "model": "llama3-8b",
        "training": {"tokens": 2.0e10, "sequence_length": 4096, "global_batch_sequences": 512},
        "data": {"bytes_per_token": 4.0, "dataset_tb": 20.0},
    },
    "goal": {"objective": "min_cost", "deadline_days": 30.0},
    "budget": {"basis": "capex", "currency": "USD", "max": 20_000_000.0},
    "site": {"max_racks": 20, "power_cap_kw": 200.0},
    "catalog": {"price_book": "usd-capex"},
}

# Provisioned power, from the catalog:
#   node   = dgx-h100 10,200 W (its 8 CX-7 are built in, no NIC term)
#            + ceil(8 rails / 2 per cage) = 4 twin-port cages × 17 W
#              (hungriest b-end of a 400G part carrying 2 links into osfp-twin-flat)     = 10,268 W
#   the same node without a fabric (tiers 0): the server alone                         = 10,200 W
#   switch = qm9700 750 W + 32 cages × 17 W (hungriest end that fits an osfp-twin-finned
#            cage at 2 ports × 400G, 4 × 200G or 4 × 100G; the 25 W XDR ends run 800G,
#            which the qm9700 does not)                                                 =  1,294 W
#   storage unit = nvme-of-array 1,600 W

BASE_DESIGN = {
    "server": "dgx-h100", "gpu": "h100-sxm", "nodes": 4, "gpus": 32,            # 4 × 8 GPUs
    "interconnect": "ib-ndr", "nic": "cx7-osfp", "nics_per_node": 8,           # built-in 8 × CX-7
    "link_gbps": 400, "tiers": 2, "oversubscription": 1.0, "rail_optimized": True,
    "fabric": {
        # k = 32 cages × 2 = 64 ports at 400G; ratio 1: d = 32, u = 32.
        # leaves per rail = ceil(4 / 32) = 1; leaves = 8 rails × 1 = 8.
        # 4 spines (4 divides 32): 8 links per leaf-spine pair; a spine uses 8 × 8 = 64 ≤ 64 ports.
        "tiers": 2, "switch": "qm9700", "leaves": 8, "spines": 4, "cores": 0,
        "leaf_down_ports": 32, "leaf_up_ports": 32, "links_per_leaf_spine": 8,
        "pods": 1, "spines_per_pod": 4, "leaves_per_pod": 8, "cores_per_plane": 0,
        "spine_up_ports": 0, "links_per_spine_core": 0, "rail_optimized": True, "leaves_per_rail": 1,
    },
    "switches": [
        {"tier": "leaf", "model": "qm9700", "count": 8, "ports_used": 288},   # 32 node + 8 × 32 up
        {"tier": "spine", "model": "qm9700", "count": 4, "ports_used": 256},  # 8 × 32
    ],
    "links": [
        # node-leaf: 15 m in row + 2 m slack; leaf-spine: 50 m across rows + 2 m slack.
        # Whole kits per device pair: 8 rails × ceil(4 nodes / 2) = 16; 8 leaves × 4 spines × ceil(8 / 2) = 128.
        {"between": "node-leaf", "count": 32, "part": "ndr-sr4-twin-to-twin-flat-kit-50m",
         "assemblies": 16, "length_m": 17.0, "gbps": 400},
        {"between": "leaf-spine", "count": 256, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 128, "length_m": 52.0, "gbps": 400},
    ],
    "racks": [
        # 30 kW / 10.268 kW = 2 nodes per rack -> 2 racks of 2 × 10,268 W = 20,536 W;
        # 12 switches × 1,294 W = 15,528 W and 1 array fit one rack each.
        {"class": "air-30kw", "role": "compute", "count": 2, "nodes_per_rack": 2, "power_kw": 20.536},
        {"class": "air-30kw", "role": "network", "count": 1, "nodes_per_rack": 0, "power_kw": 15.528},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
    # 40 GB/s × 8 = 320 Gb/s read, 20 × 8 = 160 Gb/s write, 300 TB.
    "storage": {"tier": "nvme-of-array", "units": 1, "read_gbps": 320.0, "write_gbps": 160.0, "capacity_tb": 300.0},
    "parallelism": None,  # perf's choice for this hardware, filled in by base_design()
}

# Every line at whole-unit usd-capex prices: (quantity, unit price).
BASE_COST = {
    ("server", "dgx-h100"): (4, 317_000),
    ("switch", "qm9700"): (12, 36_000),
    ("cable", "ndr-sr4-twin-to-twin-flat-kit-50m"): (16, 2_520),
    ("cable", "ndr-dr4-twin-kit-500m"): (128, 3_800),
    ("rack", "air-30kw"): (4, 4_500),
    ("storage", "nvme-of-array"): (1, 90_000),
}
BASE_TOTAL = 2_334_720

# A 3-tier design on a small 8-port switch, so pods and planes stay small:
# k = 4 cages × 2 = 8; ratio 1: d = 4, u = 4; 5 nodes × 8 rails: leaves = 8 × ceil(5/4) = 16;
# pods of P = 4 leaves: ceil(16/4) = 4 pods of Q = 4 spines = 16 spines; spine uplinks u2 = 8 − 4 = 4;
# 2 cores per plane (2 divides 4): 2 links per spine-core pair, a core uses 4 pods × 2 = 8 ports;
# cores = 4 planes × 2 = 8. Switch power 300 W + 4 cages × 17 W (hungriest end that fits a
# twin-finned cage at 2 × 400G) = 368 W.
SMALL_SWITCH = {"id": "sw8", "name": "8-port NDR test switch", "source": SRC, "protocols": ["ib"], "cages": 4,
                "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 300.0,
                "rack_units": 1}
THREE_TIER_DESIGN = {
    **BASE_DESIGN,
    "nodes": 5, "gpus": 40,
    "tiers": 3,
    "fabric": {
        "tiers": 3, "switch": "sw8", "leaves": 16, "spines": 16, "cores": 8,
        "leaf_down_ports": 4, "leaf_up_ports": 4, "links_per_leaf_spine": 1,
        "pods": 4, "spines_per_pod": 4, "leaves_per_pod": 4, "cores_per_plane": 2,
        "spine_up_ports": 4, "links_per_spine_core": 2, "rail_optimized": True, "leaves_per_rail": 2,
    },
    "switches": [
        {"tier": "leaf", "model": "sw8", "count": 16, "ports_used": 104},   # 40 node + 16 × 4 up
        {"tier": "spine", "model": "sw8", "count": 16, "ports_used": 128},  # 64 down + 16 × 4 up
        {"tier": "core", "model": "sw8", "count": 8, "ports_used": 64},
    ],
    "links": [
        # whole kits per device pair: node-leaf 8 rails × ceil(5 nodes / 2) = 24; leaf-spine
        # 16 leaves × 4 spines × ceil(1 link / 2) = 64 (half-used twin kits); spine-core
        # 16 spines × 2 cores × ceil(2 links / 2) = 32.
        {"between": "node-leaf", "count": 40, "part": "ndr-sr4-twin-to-twin-flat-kit-50m",
         "assemblies": 24, "length_m": 17.0, "gbps": 400},
        {"between": "leaf-spine", "count": 64, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 64, "length_m": 52.0, "gbps": 400},
        {"between": "spine-core", "count": 64, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 32, "length_m": 52.0, "gbps": 400},
    ],
    "racks": [
        # 2 nodes per rack (as above): ceil(5 / 2) = 3 racks, the fullest at 2 × 10,268 W = 20,536 W.
        {"class": "air-30kw", "role": "compute", "count": 3, "nodes_per_rack": 2, "power_kw": 20.536},
        # 40 switches × 368 W = 14,720 W ≤ 30 kW and 40 U ≤ 42 U: one rack.
        {"class": "air-30kw", "role": "network", "count": 1, "nodes_per_rack": 0, "power_kw": 14.72},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
}
# One DGX H100 without a compute fabric (tiers 0): no switches, no links, no network rack.
SINGLE_NODE_DESIGN = {
    **BASE_DESIGN,
    "nodes": 1, "gpus": 8, "tiers": 0, "rail_optimized": False,
    "fabric": {
        "tiers": 0, "switch": "none", "leaves": 0, "spines": 0, "cores": 0, "leaf_down_ports": 0,
        "leaf_up_ports": 0, "links_per_leaf_spine": 0, "pods": 0, "spines_per_pod": 0, "leaves_per_pod": 0,
        "cores_per_plane": 0, "spine_up_ports": 0, "links_per_spine_core": 0, "rail_optimized": False,
        "leaves_per_rail": 0,
    },
    "switches": [],
    "links": [],
    "racks": [
        # Without a fabric the node draws its server's 10,200 W only (no optics, no bought NICs);
        # 30 kW / 10.2 kW = 2 nodes per rack, the one node fills 10.2 kW of it.
        {"class": "air-30kw", "role": "compute", "count": 1, "nodes_per_rack": 2, "power_kw": 10.2},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
}
THREE_TIER_INSTANCE_CHANGES = {"catalog.add.switches": [SMALL_SWITCH], "catalog.prices": {"sw8": 5_000.0}}


def apply_changes(data: dict, changes: dict) -> dict:
    """Deep copy of ``data`` with dotted-path changes (``"racks.0.count"``); missing dicts are created."""
    data = copy.deepcopy(data)
    for path, value in changes.items():
        *head, last = path.split(".")
        node = data
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = copy.deepcopy(value)
    return data


def instance(**changes) -> Instance:
    return Instance.model_validate(apply_changes(BASE_INSTANCE, changes))


def _parallelism(inst: Instance, design: dict) -> dict:
    """perf's layout for the design's hardware: the layout is perf's to choose, the checker compares."""
    catalog = resolve_catalog(inst).catalog
    server = catalog.by_id("servers")[design["server"]]
    hw = perf.Hardware(
        gpu=catalog.by_id("gpus")[server.gpu], gpus_per_node=server.gpus_per_node, nodes=design["nodes"],
        nics_per_node=design["nics_per_node"], link_gbps=design["link_gbps"],
        interconnect=catalog.by_id("interconnects")[design["interconnect"]], tiers=max(design["tiers"], 1),
        oversubscription=design["oversubscription"],
    )
    return perf.evaluate(perf.Job.from_instance(inst, catalog), hw).parallelism.model_dump()


def base_design(base: dict = BASE_DESIGN, inst: Instance | None = None, **changes) -> Design:
    data = apply_changes(base, changes)
    if data["parallelism"] is None:
        data["parallelism"] = _parallelism(inst or instance(), data)
    return Design.model_validate(data)


def families(violations) -> set[str]:
    return {v.family for v in violations}


def unpriced_copy(kind_id: str, new_id: str) -> dict:
    """A catalog item identical to a built-in one under a new id that no price book lists."""
    catalog = load_builtin_catalog()
    for kind in ("storage", "switches", "cables", "racks", "nics"):
        item = catalog.by_id(kind).get(kind_id)
        if item is not None:
            return {**item.model_dump(), "id": new_id}
    raise KeyError(kind_id)


def replaced(kind: str, item_id: str, **fields) -> dict:
    """A built-in item with some fields changed (an instance addition with the same id replaces it)."""
    item = load_builtin_catalog().by_id(kind)[item_id]
    return {**item.model_dump(), **fields}
