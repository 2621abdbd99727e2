"""A hand-built valid design for the checker tests, and helpers to mutate it."""

from __future__ import annotations

import copy

from topoopt import perf
from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.models.design import Design
from topoopt.models.instance import Instance
from topoopt.perf.storage import converged_storage_gb_per_step

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
    # No head nodes: the hand-derived designs below count every port and rack without them
    # (test_checker.py checks a design with head nodes on its own).
    "site": {"max_racks": 20, "power_cap_kw": 200.0, "head_nodes": 0},
    "catalog": {"price_book": "usd-capex"},
}

# Provisioned power, from the catalog:
#   node   = dgx-h100 10,200 W (its 8 CX-7 compute NICs and 2 dual-port CX-7 storage NICs are
#            built in, no NIC term)
#            + ceil(8 rails / 2 per cage) = 4 twin-port cages × 17 W
#              (hungriest b-end of a 400G part carrying 2 links into osfp-twin-flat)
#            + 2 storage ports cabled (of the 2 dual-port NICs' 4: storage_ports_max 2, the other
#              two are in-band) = 2 single-port qsfp112 cages × 5 W
#              (hungriest b-end of a 200G part with one link per qsfp112 end: the DR4 splitter kit)  = 10,278 W
#   the same node without a compute fabric (tiers 0): the server and its storage optics    = 10,210 W
#   switch = qm9700 750 W + 32 cages × 17 W (hungriest end that fits an osfp-twin-finned
#            cage at 2 ports × 400G, 4 × 200G or 4 × 100G; the 25 W XDR ends run 800G,
#            which the qm9700 does not)                                                 =  1,294 W
#   management switch = mgmt-48x1g-10g 150 W + 48 RJ45 cages × 0 W (copper cords)        =    150 W
#   storage unit = nvme-of-array 1,600 W
#
# Storage traffic: llama3-8b's checkpoint is 8.03 B params × 14 bytes = 112.42 GB, saved in
# 120 s = 0.937 GB/s; reads are 4 bytes/token × 2e10 tokens / 30 days × 2 = 0.00006 GB/s;
# need = 8 × max(read, write) = 7.4947 Gb/s.
NEED_GBPS = 7.4947

# The dedicated storage network: the DGX's 2 built-in dual-port CX-7 at 200G (ib-ndr200), P = 2
# ports cabled per node (the RA's storage ports), on one qm9700 (k = 32 cages × 4 = 128 ports at
# 200G): E = 4 nodes × 2 + 1 array × 4 = 12 ≤ 128. The DR4 splitter kit fans one twin-port cage out
# to 4 qsfp112 ports. Cabled: 4 × 2 × 200 = 1,600 Gb/s ≤ max(8 × 7.49, 4 × 400) = 1,600 Gb/s.
STORAGE_NETWORK = {
    "mode": "dedicated", "nic": "cx7-qsfp112-2x200g", "nics_per_node": 2, "ports_per_node": 2, "link_gbps": 200,
    "node_gbps": 400.0, "need_gbps": NEED_GBPS, "switch": "qm9700", "tiers": 1, "leaves": 1, "spines": 0,
    "compute_storage_leaves": 0, "unit_ports": 4,
}
STORAGE_KIT = "ndr200-dr4-splitter-kit-qsfp112-50m"
# Management ports: 4 nodes × (1 + 1) + 12 compute qm9700 × 1 + 1 storage qm9700 × 1 + 1 array ×
# (1 + 1) + 5 racks × 2 PDUs = 33 ≤ 46 device ports of one 48-port leaf: no aggregation (a switch
# has one management port and no in-band one).
MANAGEMENT_NETWORK = {"switch": "mgmt-48x1g-10g", "ports": 33, "leaves": 1, "aggregation": 0, "leaf_down_ports": 46,
                      "link_gbps": 1, "uplink_gbps": 10}

BASE_DESIGN = {
    "server": "dgx-h100", "gpu": "h100-sxm", "nodes": 4, "gpus": 32,            # 4 × 8 GPUs
    "interconnect": "ib-ndr", "nic": "cx7-osfp", "nics_per_node": 8,           # built-in 8 × CX-7
    "link_gbps": 400, "tiers": 2, "oversubscription": 1.0, "rail_optimized": True,
    "fabric": {
        # k = 32 cages × 2 = 64 ports at 400G. One rail per leaf (g = 1, 8 rail groups), 1 leaf
        # per group: leaves = 8; the fullest leaf uses d = 1 × ceil(4 nodes / 1) = 4 down-ports.
        # 4 spines × 1 link per leaf-spine pair: u = 4 uplinks, d/u = 1; no more uplinks than the
        # ports in use need: 1 leaf × (4 − 4 + 1) = 1 ≤ 1 rail × 4 nodes. A spine uses 8 × 1 = 8 ports.
        "tiers": 2, "switch": "qm9700", "leaves": 8, "spines": 4, "cores": 0,
        "leaf_down_ports": 4, "leaf_up_ports": 4, "links_per_leaf_spine": 1, "rails_per_leaf": 1,
        "pods": 1, "spines_per_pod": 4, "leaves_per_pod": 8, "cores_per_plane": 0,
        "spine_up_ports": 0, "links_per_spine_core": 0, "rail_optimized": True, "leaves_per_rail": 1,
    },
    "switches": [
        {"tier": "leaf", "model": "qm9700", "count": 8, "ports_used": 64},   # 32 node + 8 × 4 up
        {"tier": "spine", "model": "qm9700", "count": 4, "ports_used": 32},  # 8 × 4
        {"network": "storage", "tier": "storage-leaf", "model": "qm9700", "count": 1, "ports_used": 12},
        {"network": "management", "tier": "mgmt-leaf", "model": "mgmt-48x1g-10g", "count": 1, "ports_used": 33},
    ],
    "links": [
        # node-leaf: 15 m in row + 2 m slack; leaf-spine: 3 m in the rack (the 13 qm9700 share one
        # network rack: 13 × 1.6 kW ≤ 30 kW).
        # Node kits: 8 rails × ceil(4 nodes / 2) = 16. Leaf-spine kits by the twin cages they fill:
        # 4 spines × ceil(8 leaves × 1 link / 2) = 16 above, 8 leaves × ceil(4 uplinks / 2) = 16 below.
        {"between": "node-leaf", "count": 32, "part": "ndr-sr4-twin-to-twin-flat-kit-50m",
         "assemblies": 16, "length_m": 17.0, "gbps": 400},
        {"between": "leaf-spine", "count": 32, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 16, "length_m": 3.0, "gbps": 400},
        # Storage links run in the row (17 m). Kits of 4 links: node ports 2 ports × ceil(4 nodes / 4)
        # = 2 kits; unit ports 1 array × ceil(4 ports / 4) = 1 kit.
        {"network": "storage", "between": "node-storage", "count": 8, "part": STORAGE_KIT,
         "assemblies": 2, "length_m": 17.0, "gbps": 200},
        {"network": "storage", "between": "storage-unit", "count": 4, "part": STORAGE_KIT,
         "assemblies": 1, "length_m": 17.0, "gbps": 200},
        {"network": "management", "between": "mgmt", "count": 33, "part": "cat6-rj45-1g-100m",
         "assemblies": 33, "length_m": 17.0, "gbps": 1},
    ],
    "racks": [
        # 30 kW / 10.278 kW = 2 nodes per rack -> 2 racks of 2 × 10,278 W = 20,556 W.
        # Network racks hold one model each: 13 qm9700 (12 compute + 1 storage) × 1,294 W = 16,822 W
        # fit one rack (23 by power); the management switch takes another: 2 racks, the fullest
        # 16.822 kW. The array fits one storage rack.
        {"class": "air-30kw", "role": "compute", "count": 2, "nodes_per_rack": 2, "power_kw": 20.556},
        {"class": "air-30kw", "role": "network", "count": 2, "nodes_per_rack": 0, "power_kw": 16.822},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
    # 40 GB/s × 8 = 320 Gb/s read, 20 × 8 = 160 Gb/s write, 300 TB, 4 data ports.
    "storage": {"tier": "nvme-of-array", "units": 1, "ports": 4, "read_gbps": 320.0, "write_gbps": 160.0,
                "capacity_tb": 300.0},
    "storage_network": STORAGE_NETWORK,
    "management_network": MANAGEMENT_NETWORK,
    "parallelism": None,  # perf's choice for this hardware, filled in by base_design()
}

# Every line at whole-unit usd-capex prices: (quantity, unit price).
BASE_COST = {
    ("server", "dgx-h100"): (4, 317_000),
    ("switch", "qm9700"): (13, 36_000),
    ("switch", "mgmt-48x1g-10g"): (1, 2_000),
    ("cable", "ndr-sr4-twin-to-twin-flat-kit-50m"): (16, 2_520),
    ("cable", "ndr-dr4-twin-kit-500m"): (16, 3_800),
    ("cable", STORAGE_KIT): (3, 5_000),
    ("cable", "cat6-rj45-1g-100m"): (33, 15),
    ("rack", "air-30kw"): (5, 4_500),
    ("storage", "nvme-of-array"): (1, 90_000),
}
BASE_TOTAL = 1_967_115

# A 3-tier design on a small 8-port switch, so pods and planes stay small:
# k = 4 cages × 2 = 8; the ratio-1 split D = 4, u = 4; 6 nodes × 8 rails, one rail per leaf, 2 leaves
# per rail group (x·floor(4/1) = 8 ≥ 6): leaves = 8 × 2 = 16, the fullest using d = ceil(6/2) = 3
# down-ports (oversubscription 3/4 = 0.75); no more uplinks than needed: 2 × (4 − 4 + 1) ≤ 6;
# pods of P = 4 leaves: ceil(16/4) = 4 pods of Q = 4 spines = 16 spines; spine uplinks u2 = 8 − 4 = 4;
# 2 cores per plane (2 divides 4): 2 links per spine-core pair, a core uses 4 pods × 2 = 8 ports;
# cores = 4 planes × 2 = 8. Switch power 300 W + 4 cages × 17 W (hungriest end that fits a
# twin-finned cage at 2 × 400G) = 368 W.
SMALL_SWITCH = {"id": "sw8", "name": "8-port NDR test switch", "source": SRC, "protocols": ["ib"], "cages": 4,
                "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 300.0,
                "rack_units": 1}
THREE_TIER_DESIGN = {
    **BASE_DESIGN,
    "nodes": 6, "gpus": 48,
    "tiers": 3, "oversubscription": 0.75,
    "fabric": {
        "tiers": 3, "switch": "sw8", "leaves": 16, "spines": 16, "cores": 8,
        "leaf_down_ports": 3, "leaf_up_ports": 4, "links_per_leaf_spine": 1,
        "pods": 4, "spines_per_pod": 4, "leaves_per_pod": 4, "cores_per_plane": 2,
        "spine_up_ports": 4, "links_per_spine_core": 2, "rail_optimized": True, "leaves_per_rail": 2,
    },
    "switches": [
        {"tier": "leaf", "model": "sw8", "count": 16, "ports_used": 112},   # 48 node + 16 × 4 up
        {"tier": "spine", "model": "sw8", "count": 16, "ports_used": 128},  # 64 down + 16 × 4 up
        {"tier": "core", "model": "sw8", "count": 8, "ports_used": 64},
        # Storage: E = 6 nodes × 2 + 4 unit ports = 16 on one qm9700.
        {"network": "storage", "tier": "storage-leaf", "model": "qm9700", "count": 1, "ports_used": 16},
        # Management: 6 nodes × 2 + 40 sw8 × 1 + 1 qm9700 × 1 + 1 array × 2 + 7 racks × 2 PDUs = 69
        # ports: ceil(69 / 46) = 2 leaves, past one leaf 2 × ceil(2 / (48 − 2)) = 2 aggregation switches;
        # every leaf has one uplink to each: 4 uplinks; leaves use 69 + 4 ports, the aggregation 4.
        {"network": "management", "tier": "mgmt-leaf", "model": "mgmt-48x1g-10g", "count": 2, "ports_used": 73},
        {"network": "management", "tier": "mgmt-aggregation", "model": "mgmt-48x1g-10g", "count": 2, "ports_used": 4},
    ],
    "links": [
        # whole kits: node-leaf 8 rails × 2 leaves × ceil(3 nodes / 2) = 32 (a kit's twin module
        # sits on one leaf, so each leaf's third node takes a kit of its own); between switches a kit is
        # counted by the twin cages it fills: leaf-spine 16 spines × ceil(4 leaves × 1 link / 2)
        # = 32 above, 16 leaves × ceil(4 uplinks / 2) = 32 below, so 32 (one twin module's two
        # ports reach two spines); spine-core 8 cores × ceil(4 pods × 2 / 2) = 32 = 16 spines ×
        # ceil(4 / 2). The 40 small switches share one network rack: runs between them are in the
        # rack (3 m).
        {"between": "node-leaf", "count": 48, "part": "ndr-sr4-twin-to-twin-flat-kit-50m",
         "assemblies": 32, "length_m": 17.0, "gbps": 400},
        {"between": "leaf-spine", "count": 64, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 32, "length_m": 3.0, "gbps": 400},
        {"between": "spine-core", "count": 64, "part": "ndr-dr4-twin-kit-500m",
         "assemblies": 32, "length_m": 3.0, "gbps": 400},
        # node-storage 2 ports × ceil(6 nodes / 4) = 4 kits; storage-unit 1 kit.
        {"network": "storage", "between": "node-storage", "count": 12, "part": STORAGE_KIT,
         "assemblies": 4, "length_m": 17.0, "gbps": 200},
        {"network": "storage", "between": "storage-unit", "count": 4, "part": STORAGE_KIT,
         "assemblies": 1, "length_m": 17.0, "gbps": 200},
        {"network": "management", "between": "mgmt", "count": 69, "part": "cat6-rj45-1g-100m",
         "assemblies": 69, "length_m": 17.0, "gbps": 1},
        # Uplinks at the 10G uplink speed, across rows: 50 + 2 = 52 m.
        {"network": "management", "between": "mgmt-uplink", "count": 4, "part": "cat6a-rj45-10g-100m",
         "assemblies": 4, "length_m": 52.0, "gbps": 10},
    ],
    "racks": [
        # 2 nodes per rack (as above): ceil(6 / 2) = 3 racks, the fullest at 2 × 10,278 W = 20,556 W.
        {"class": "air-30kw", "role": "compute", "count": 3, "nodes_per_rack": 2, "power_kw": 20.556},
        # One model per rack: 40 sw8 × 368 W = 14,720 W ≤ 30 kW and 40 U ≤ 42 U; the storage
        # qm9700; 4 management switches: 3 racks, the fullest 14.72 kW.
        {"class": "air-30kw", "role": "network", "count": 3, "nodes_per_rack": 0, "power_kw": 14.72},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
    "storage_network": {**STORAGE_NETWORK},
    "management_network": {**MANAGEMENT_NETWORK, "ports": 69, "leaves": 2, "aggregation": 2},
}
# One DGX H100 without a compute fabric (tiers 0): no compute switches or links, no compute NICs
# bought; its storage network (E = 2 + 4 = 6 ports on one qm9700) and management network
# (1 node × 2 + 1 qm9700 × 1 + 1 array × 2 + 4 racks × 2 PDUs = 13 ports) remain.
SINGLE_NODE_DESIGN = {
    **BASE_DESIGN,
    "nodes": 1, "gpus": 8, "tiers": 0, "rail_optimized": False,
    "fabric": {
        "tiers": 0, "switch": "none", "leaves": 0, "spines": 0, "cores": 0, "leaf_down_ports": 0,
        "leaf_up_ports": 0, "links_per_leaf_spine": 0, "pods": 0, "spines_per_pod": 0, "leaves_per_pod": 0,
        "cores_per_plane": 0, "spine_up_ports": 0, "links_per_spine_core": 0, "rail_optimized": False,
        "leaves_per_rail": 0,
    },
    "switches": [
        {"network": "storage", "tier": "storage-leaf", "model": "qm9700", "count": 1, "ports_used": 6},
        {"network": "management", "tier": "mgmt-leaf", "model": "mgmt-48x1g-10g", "count": 1, "ports_used": 13},
    ],
    "links": [
        # node-storage 2 ports × ceil(1 node / 4) = 2 kits.
        {"network": "storage", "between": "node-storage", "count": 2, "part": STORAGE_KIT,
         "assemblies": 2, "length_m": 17.0, "gbps": 200},
        {"network": "storage", "between": "storage-unit", "count": 4, "part": STORAGE_KIT,
         "assemblies": 1, "length_m": 17.0, "gbps": 200},
        {"network": "management", "between": "mgmt", "count": 13, "part": "cat6-rj45-1g-100m",
         "assemblies": 13, "length_m": 17.0, "gbps": 1},
    ],
    "racks": [
        # Without a compute fabric the node draws its server's 10,200 W plus its 2 storage optics
        # × 5 W = 10,210 W (no compute optics, no bought NICs); 30 kW / 10.21 kW = 2 nodes per
        # rack, the one node fills 10.21 kW of it. The storage qm9700 and the management switch
        # take a network rack each (one model per rack), the fullest 1.294 kW.
        {"class": "air-30kw", "role": "compute", "count": 1, "nodes_per_rack": 2, "power_kw": 10.21},
        {"class": "air-30kw", "role": "network", "count": 2, "nodes_per_rack": 0, "power_kw": 1.294},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 1.6},
    ],
    "management_network": {**MANAGEMENT_NETWORK, "ports": 13},
}
THREE_TIER_INSTANCE_CHANGES = {"catalog.add.switches": [SMALL_SWITCH], "catalog.prices": {"sw8": 5_000.0}}

# hgx-h100 with 8 bought cx7-osfp (single-port osfp-flat cages): 10,000 W + 8 NICs × 25 W
# + 8 cages × 9 W (hungriest b-end of a 400G part with one link per osfp-flat end) = 10,272 W;
# its storage NICs are bought too (the hgx has none built in): 2 × cx7-qsfp112-2x200g at 25 W
# + 2 storage ports cabled × 5 W = 60 W; 10,332 W in all. 30 kW / 10,332 W = 2 nodes per rack, the
# fullest rack 2 × 10,332 W = 20,664 W. The node-leaf kits break one twin-port switch cage out to
# two NIC cages: 8 rails × ceil(4 nodes / 2) = 16.
HGX = {"server": "hgx-h100", "links.0.part": "ndr-sr4-kit-50m", "racks.0.power_kw": 20.664}


# ---- storage network variants

# The base design's storage network in 2 tiers, on a small 16-port switch (4 twin-port cages × 4
# ports at 200G), non-blocking leaves (ratio 1: d = 16 · 1 // 2 = 8, u = 8): E = 12, ceil(12 / 8)
# = 2 leaves; 2 spines (2 divides 8), 4 links per leaf-spine pair, a spine uses 2 × 4 = 8 ≤ 16
# ports. Leaves use 12 + 2 × 8 = 28 ports, spines 16. Uplinks 2 × 8 × 200G ≥ the need.
# Leaf-spine: 2 × 8 = 16 links across rows (52 m) in 4-link twin-port kits: 2 leaves × 2 spines ×
# ceil(4 / 4) = 4 kits. Switch power 300 W + 4 cages × 17 W = 368 W.
# Management ports: 33 − 1 + 4 × 1 + 1 more rack × 2 PDUs = 38 ≤ 46, one leaf. Network racks: 12
# qm9700 (15.528 kW), 4 st16 and the management switch: 3 racks.
STORAGE_SWITCH_16 = {"id": "st16", "name": "16-port NDR200 test switch", "source": SRC, "protocols": ["ib"],
                     "cages": 4, "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {200: 4},
                     "power_w": 300.0, "rack_units": 1}
STORAGE_TWO_TIER_INSTANCE_CHANGES = {"catalog.add.switches": [STORAGE_SWITCH_16], "catalog.prices": {"st16": 6_000.0}}
STORAGE_TWO_TIER = {
    "storage_network.switch": "st16", "storage_network.tiers": 2, "storage_network.leaves": 2,
    "storage_network.spines": 2, "storage_network.leaf_down_ports": 8, "storage_network.leaf_up_ports": 8,
    "switches": [*BASE_DESIGN["switches"][:2],
                 {"network": "storage", "tier": "storage-leaf", "model": "st16", "count": 2, "ports_used": 28},
                 {"network": "storage", "tier": "storage-spine", "model": "st16", "count": 2, "ports_used": 16},
                 {**BASE_DESIGN["switches"][3], "ports_used": 38}],
    "links": [*BASE_DESIGN["links"][:4],
              {"network": "storage", "between": "storage-leaf-spine", "count": 16, "part": "ndr200-dr4-twin-kit-500m",
               "assemblies": 4, "length_m": 52.0, "gbps": 200},
              {**BASE_DESIGN["links"][4], "count": 38, "assemblies": 38}],
    "management_network.ports": 38,
    "racks.1.count": 3, "racks.1.power_kw": 15.528,
}

# A converged storage network: 4 hgx-h100 with 8 bought cx6-hdr each on HDR InfiniBand (200G),
# the storage units on the compute fabric. One qm8700 (40 ports at 200G) holds the 32 node ports
# and the 8 ports of one parallel-file-system block: 40 ≤ 40. HDR AOCs (one link each) run in the
# row, 17 m. Node: 10,000 W + 8 NICs × 20 W + 8 cages × 6 W (hungriest qsfp56 end at 200G) =
# 10,208 W, 2 per 30 kW rack (20.416 kW); qm8700 300 W + 40 cages × 6 W = 540 W. Management ports:
# 4 nodes × 2 + 1 qm8700 × 1 + 1 block × 2 + 5 racks × 2 PDUs = 21. Storage traffic rides the 8 × 200G compute ports
# of a node: 1,600 Gb/s.
CONVERGED_DESIGN = {
    **BASE_DESIGN,
    "server": "hgx-h100", "interconnect": "ib-hdr", "nic": "cx6-hdr", "link_gbps": 200, "tiers": 1,
    "rail_optimized": False,
    # All 8 rails on the one switch (g = r = 8): d = 8 × 4 nodes = 32 node ports.
    "fabric": {**BASE_DESIGN["fabric"], "tiers": 1, "switch": "qm8700", "leaves": 1, "spines": 0, "leaf_down_ports": 32,
               "leaf_up_ports": 0, "links_per_leaf_spine": 0, "spines_per_pod": 0, "leaves_per_pod": 1,
               "rail_optimized": False, "rails_per_leaf": 8},
    "switches": [
        {"tier": "leaf", "model": "qm8700", "count": 1, "ports_used": 40},  # 32 node + 8 storage-unit ports
        {"network": "management", "tier": "mgmt-leaf", "model": "mgmt-48x1g-10g", "count": 1, "ports_used": 21},
    ],
    "links": [
        {"between": "node-leaf", "count": 32, "part": "hdr-aoc-30m", "assemblies": 32, "length_m": 17.0, "gbps": 200},
        {"network": "storage", "between": "storage-unit", "count": 8, "part": "hdr-aoc-30m", "assemblies": 8,
         "length_m": 17.0, "gbps": 200},
        {"network": "management", "between": "mgmt", "count": 21, "part": "cat6-rj45-1g-100m", "assemblies": 21,
         "length_m": 17.0, "gbps": 1},
    ],
    "racks": [
        {"class": "air-30kw", "role": "compute", "count": 2, "nodes_per_rack": 2, "power_kw": 20.416},
        {"class": "air-30kw", "role": "network", "count": 2, "nodes_per_rack": 0, "power_kw": 0.54},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 2.5},
    ],
    # 100 GB/s × 8 = 800 Gb/s read, 70 × 8 = 560 Gb/s write, 500 TB, 8 data ports.
    "storage": {"tier": "pfs-building-block", "units": 1, "ports": 8, "read_gbps": 800.0, "write_gbps": 560.0,
                "capacity_tb": 500.0},
    "storage_network": {
        "mode": "converged", "nic": None, "nics_per_node": 0, "ports_per_node": 8, "link_gbps": 200,
        "node_gbps": 1600.0, "need_gbps": NEED_GBPS, "switch": None, "tiers": 0, "leaves": 0, "spines": 0,
        "compute_storage_leaves": 0, "unit_ports": 8,
    },
    "management_network": {**MANAGEMENT_NETWORK, "ports": 21},
}
# The same in 2 tiers, one rail per leaf: 8 rail groups of 1 leaf (d = ceil(4/1) = 4), 4 spines ×
# 1 link (u = 4; 1 × (4 − 4 + 1) ≤ 4), plus ceil(8 unit ports / (40 − 4)) = 1 storage leaf whose 4
# uplinks carry 4 × 200 = 800 Gb/s ≥ 7.49 Gb/s of storage traffic: 9 leaves; a spine uses 9 × 1 = 9
# ports. Leaves use 32 + 8 + 9 × 4 = 76 ports, spines 36; leaf-spine 36 HDR AOCs of 3 m within the
# network rack (9 × 4 × ceil(1 / 1); the 2 m DAC falls short of the 3 m in-rack run). Management ports 4 × 2 + 13 qm8700 × 1 + 1 × 2 + 5 racks × 2 = 33. The 13 qm8700 ×
# 540 W = 7.02 kW share one network rack; the management switch has its own.
CONVERGED_TWO_TIER = {
    "tiers": 2, "rail_optimized": True,
    "fabric": {**CONVERGED_DESIGN["fabric"], "tiers": 2, "leaves": 9, "spines": 4, "leaf_down_ports": 4,
               "leaf_up_ports": 4, "links_per_leaf_spine": 1, "spines_per_pod": 4, "leaves_per_pod": 9,
               "rail_optimized": True, "rails_per_leaf": 1},
    "switches": [
        {"tier": "leaf", "model": "qm8700", "count": 9, "ports_used": 76},
        {"tier": "spine", "model": "qm8700", "count": 4, "ports_used": 36},
        {"network": "management", "tier": "mgmt-leaf", "model": "mgmt-48x1g-10g", "count": 1, "ports_used": 33},
    ],
    "links": [
        CONVERGED_DESIGN["links"][0],
        {"between": "leaf-spine", "count": 36, "part": "hdr-aoc-3m", "assemblies": 36, "length_m": 3.0, "gbps": 200},
        CONVERGED_DESIGN["links"][1],
        {**CONVERGED_DESIGN["links"][2], "count": 33, "assemblies": 33},
    ],
    "storage_network.compute_storage_leaves": 1, "management_network.ports": 33, "racks.1.power_kw": 7.02,
}

# A cold tier: checkpoints kept 7 days (ceil(7 × 24 / 2 h) = 84 of 112.42 GB = 9.443 TB) and
# 1,000 TB of raw data: 1,009.443 TB on 2 object-store nodes (1,800 TB, writing 6 GB/s ≥ 112.42 GB
# per 2 h). The object nodes' ports run 25 or 10 Gb/s, so the storage network runs 25G: the
# hgx-h100 (8 bought cx7-osfp on NDR, as HGX below) takes one dual-port 25G storage NIC (P = 2,
# 50 Gb/s), the hot tier is an object node too, and one sn2410 (48 × 25G) holds E = 4 × 2 + 1 × 2
# + 2 × 2 = 14 ports. 25G SR kits (one link each) run in the row: node-storage 2 × ceil(4 / 1) = 8,
# storage-unit 1 × 2 + 2 × 2 = 6. Node: 10,272 W + 12 W NIC + 2 ports × 1.2 W = 10,286.4 W, 2 per
# rack (20.5728 kW). sn2410 200 W + 48 × 1.2 W = 257.6 W. Management ports 4 × 2 + 12 qm9700 × 1
# + 1 sn2410 × 1 + 3 object nodes × 2 + 6 racks × 2 PDUs = 39. Network racks: 12 qm9700 (15.528 kW), the sn2410, the
# management switch: 3. The 3 object nodes (900 W, 4U) share one storage rack: 2.7 kW.
COLD_INSTANCE_CHANGES = {"workload.data.archive_tb": 1000.0, "workload.checkpoint.archive_days": 7.0}
COLD_KIT = "25g-sfp28-sr-kit-100m"
COLD_DESIGN = {
    "server": "hgx-h100", "links.0.part": "ndr-sr4-kit-50m",
    "storage_network": {**STORAGE_NETWORK, "nic": "eth-25g-2p", "nics_per_node": 1, "ports_per_node": 2, "link_gbps": 25,
                        "node_gbps": 50.0, "switch": "sn2410", "unit_ports": 6},
    "storage": {"tier": "object-store-node", "units": 1, "ports": 2, "read_gbps": 40.0, "write_gbps": 24.0,
                "capacity_tb": 900.0},
    "cold_storage": {"tier": "object-store-node", "units": 2, "ports": 4, "read_gbps": 80.0, "write_gbps": 48.0,
                     "capacity_tb": 1800.0},
    "switches.2": {"network": "storage", "tier": "storage-leaf", "model": "sn2410", "count": 1, "ports_used": 14},
    "switches.3.ports_used": 39,
    "links.2": {"network": "storage", "between": "node-storage", "count": 8, "part": COLD_KIT, "assemblies": 8,
                "length_m": 17.0, "gbps": 25},
    "links.3": {"network": "storage", "between": "storage-unit", "count": 6, "part": COLD_KIT, "assemblies": 6,
                "length_m": 17.0, "gbps": 25},
    "links.4.count": 39, "links.4.assemblies": 39, "management_network.ports": 39,
    "racks": [
        {"class": "air-30kw", "role": "compute", "count": 2, "nodes_per_rack": 2, "power_kw": 20.5728},
        {"class": "air-30kw", "role": "network", "count": 3, "nodes_per_rack": 0, "power_kw": 15.528},
        {"class": "air-30kw", "role": "storage", "count": 1, "nodes_per_rack": 0, "power_kw": 2.7},
    ],
}


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


def hardware(inst: Instance, design: dict) -> perf.Hardware:
    """The hardware perf evaluates for ``design``; a converged storage network's reads share the
    compute NICs."""
    catalog = resolve_catalog(inst).catalog
    server = catalog.by_id("servers")[design["server"]]
    job = perf.Job.from_instance(inst, catalog)
    converged = design["storage_network"]["mode"] == "converged"
    return perf.Hardware(
        gpu=catalog.by_id("gpus")[server.gpu], gpus_per_node=server.gpus_per_node, nodes=design["nodes"],
        nics_per_node=design["nics_per_node"], link_gbps=design["link_gbps"],
        interconnect=catalog.by_id("interconnects")[design["interconnect"]], tiers=max(design["tiers"], 1),
        oversubscription=design["oversubscription"],
        converged_storage_gb_per_step=converged_storage_gb_per_step(job) if converged else 0.0,
    )


def _parallelism(inst: Instance, design: dict) -> dict:
    """perf's layout for the design's hardware: the layout is perf's to choose, the checker compares."""
    job = perf.Job.from_instance(inst, resolve_catalog(inst).catalog)
    return perf.evaluate(job, hardware(inst, design)).parallelism.model_dump()


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


def replaced(kind: str, item_id: str, /, **fields) -> dict:
    """A built-in item with some fields changed (an instance addition with the same id replaces it)."""
    item = load_builtin_catalog().by_id(kind)[item_id]
    return {**item.model_dump(), **fields}
