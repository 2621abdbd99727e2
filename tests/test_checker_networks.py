"""The independent checker on the storage and management networks: hand-built designs with a
dedicated storage network in 1 and 2 tiers, a converged one on 1 and 2 compute tiers, a cold tier
and management aggregation are clean; breaking one rule of them is reported under its family,
with the amounts."""

from __future__ import annotations

import pytest
from checker_fixtures import (
    BASE_DESIGN,
    COLD_DESIGN,
    COLD_INSTANCE_CHANGES,
    COLD_KIT,
    CONVERGED_DESIGN,
    CONVERGED_TWO_TIER,
    HGX,
    SINGLE_NODE_DESIGN,
    STORAGE_SWITCH_16,
    STORAGE_TWO_TIER,
    STORAGE_TWO_TIER_INSTANCE_CHANGES,
    THREE_TIER_DESIGN,
    THREE_TIER_INSTANCE_CHANGES,
    apply_changes,
    base_design,
    families,
    hardware,
    instance,
    replaced,
    unpriced_copy,
)

from topoopt import perf
from topoopt.catalog import resolve_catalog
from topoopt.checker import check_design, recompute_cost

# ---------------------------------------------------------------------------------------------
# the valid designs


def test_storage_network_in_two_tiers_is_clean():
    inst = instance(**STORAGE_TWO_TIER_INSTANCE_CHANGES)
    assert check_design(inst, base_design(inst=inst, **STORAGE_TWO_TIER)) == []


def test_converged_storage_network_is_clean():
    assert check_design(instance(), base_design(CONVERGED_DESIGN)) == []


def test_converged_storage_units_add_compute_leaves():
    assert check_design(instance(), base_design(CONVERGED_DESIGN, **CONVERGED_TWO_TIER)) == []


def test_design_with_a_cold_tier_is_clean():
    inst = instance(**COLD_INSTANCE_CHANGES)
    assert check_design(inst, base_design(inst=inst, **COLD_DESIGN)) == []


def test_recomputed_cost_prices_the_storage_and_management_networks():
    inst = instance(**COLD_INSTANCE_CHANGES)
    cost = recompute_cost(inst, base_design(inst=inst, **COLD_DESIGN))
    lines = [(line.category, line.item, line.quantity, line.unit_price) for line in cost.breakdown]
    # The hgx buys its compute NICs and its storage NICs (one dual-port 25G per node); the storage
    # switch and the management switch are switches; hot and cold object nodes are storage lines.
    assert lines == [
        ("server", "hgx-h100", 4, 305_000), ("nic", "cx7-osfp", 32, 1_600), ("nic", "eth-25g-2p", 4, 350),
        ("switch", "qm9700", 12, 36_000), ("switch", "sn2410", 1, 10_000), ("switch", "mgmt-48x1g-10g", 1, 2_000),
        ("cable", "ndr-sr4-kit-50m", 16, 2_720), ("cable", "ndr-dr4-twin-kit-500m", 16, 3_800),
        ("cable", COLD_KIT, 8 + 6, 120), ("cable", "cat6-rj45-1g-100m", 39, 15), ("rack", "air-30kw", 6, 4_500),
        ("storage", "object-store-node", 1, 35_000), ("storage", "object-store-node", 2, 35_000),
    ]
    assert cost.total == sum(q * price for _, _, q, price in lines)


def test_converged_design_buys_no_storage_nic_or_switch():
    lines = {(line.category, line.item): line.quantity for line in recompute_cost(instance(), base_design(CONVERGED_DESIGN)).breakdown}
    assert [key for key in lines if key[0] == "nic"] == [("nic", "cx6-hdr")]
    assert [key for key in lines if key[0] == "switch"] == [("switch", "qm8700"), ("switch", "mgmt-48x1g-10g")]


def test_deadline_counts_converged_storage_reads_on_the_compute_nics():
    # Heavy samples (1e5 bytes per token): on a converged network the reads share the compute
    # NICs, so the same hardware trains more slowly than it would with its own storage network.
    heavy = {"workload.data.bytes_per_token": 1.0e5}
    inst = instance(**heavy)
    job = perf.Job.from_instance(inst, resolve_catalog(inst).catalog)
    converged_s = perf.time_to_train_s(job, hardware(inst, CONVERGED_DESIGN))
    dedicated_s = perf.time_to_train_s(job, hardware(inst, apply_changes(CONVERGED_DESIGN, {"storage_network.mode": "dedicated"})))
    assert dedicated_s < converged_s
    between = instance(**heavy, **{"goal.deadline_days": (dedicated_s + converged_s) / 2 / 86_400})
    missed = [str(v) for v in check_design(between, base_design(CONVERGED_DESIGN, between)) if v.family == "deadline_met"]
    assert len(missed) == 1 and missed[0].startswith("deadline_met: time to train: "), missed
    after = instance(**heavy, **{"goal.deadline_days": converged_s * 1.001 / 86_400})
    assert [v for v in check_design(after, base_design(CONVERGED_DESIGN, after)) if v.family == "deadline_met"] == []


def test_hot_and_cold_units_may_have_link_groups_of_their_own():
    # The 2 hot ports and the 4 cold ports in two groups of the same 25G kit, in either order.
    inst = instance(**COLD_INSTANCE_CHANGES)
    unit_link = COLD["links"][3]
    for counts in ((2, 4), (4, 2)):
        links = [*COLD["links"], {**unit_link, "count": counts[1], "assemblies": counts[1]}]
        links[3] = {**unit_link, "count": counts[0], "assemblies": counts[0]}
        assert check_design(inst, base_design(COLD, inst, links=links)) == []
    links = [*COLD["links"], {**unit_link, "count": 3, "assemblies": 3}]
    links[3] = {**unit_link, "count": 3, "assemblies": 3}
    found = [str(v) for v in check_design(inst, base_design(COLD, inst, links=links))]
    assert ("storage_fabric_ports_cover: storage-unit links (25g-sfp28-sr-kit-100m): 3 recorded for hot "
            "object-store-node, whose units have 2 ports") in found, found


# The same network racks recorded one group per model (compute and storage qm9700, then the
# management switch): each group gives its model's racks and fullest rack.
PER_MODEL_RACKS = {"racks": [BASE_DESIGN["racks"][0],
                             {**BASE_DESIGN["racks"][1], "count": 1, "power_kw": 16.822},
                             {**BASE_DESIGN["racks"][1], "count": 1, "power_kw": 0.15},
                             BASE_DESIGN["racks"][2]]}


def test_racks_may_be_recorded_per_model():
    assert check_design(instance(), base_design(**PER_MODEL_RACKS)) == []
    # (the extra rack's 2 PDUs recorded on the management network)
    found = [str(v) for v in check_design(instance(), base_design(**{**PER_MODEL_RACKS, "racks.2.count": 2,
                                                                      **management_ports(35, 3, 4)}))]
    assert found == ["racks_available: network racks of mgmt-48x1g-10g (air-30kw): 2 recorded; "
                     "ceil(1 × mgmt-48x1g-10g / 42 per rack) = 1"]
    found = [str(v) for v in check_design(instance(), base_design(**{**PER_MODEL_RACKS, "racks.2.power_kw": 0.3}))]
    assert found == ["rack_power_within_limit: network racks of mgmt-48x1g-10g (air-30kw): 0.3 kW recorded for the "
                     "fullest rack; 1 × mgmt-48x1g-10g at 0.15 kW = 0.15 kW"]
    three = [*PER_MODEL_RACKS["racks"][:3], PER_MODEL_RACKS["racks"][2], BASE_DESIGN["racks"][2]]
    found = [str(v) for v in check_design(instance(), base_design(racks=three))]
    assert ("racks_available: network racks (air-30kw): 3 groups; one for the role or one per model "
            "(qm9700, mgmt-48x1g-10g)") in found


def test_switch_models_do_not_share_network_racks():
    # 13 qm9700 and the management switch in one network rack: each model needs racks of its own.
    found = check_design(instance(), base_design(**{"racks.1.count": 1, **management_ports(31, 3, 4)}))
    assert families(found) == {"rack_power_within_limit", "rack_units_within_limit", "racks_available"}
    assert ("rack_power_within_limit: network racks (air-30kw): 1 racks of one model each; within 30.0 kW per rack "
            "they need ceil(13 × qm9700 / 23) + ceil(1 × mgmt-48x1g-10g / 200) = 2") in [str(v) for v in found]


# ---- the storage and management networks (id: family, instance changes, design changes, fragment)

STORAGE_2 = apply_changes(BASE_DESIGN, STORAGE_TWO_TIER)
STORAGE_SWITCH_8 = {**STORAGE_SWITCH_16, "id": "st8", "name": "8-port NDR200 test switch", "cages": 2}
CONVERGED_2 = apply_changes(CONVERGED_DESIGN, CONVERGED_TWO_TIER)
COLD = apply_changes(BASE_DESIGN, COLD_DESIGN)
UNPRICED_OBJECT = unpriced_copy("object-store-node", "object-unpriced")


def management_ports(ports: int, switch_group: int, link_group: int) -> dict:
    """Design changes for ``ports`` management ports on one management leaf."""
    return {"management_network.ports": ports, f"switches.{switch_group}.ports_used": ports,
            f"links.{link_group}.count": ports, f"links.{link_group}.assemblies": ports}


STORAGE_MUTATIONS = {
    # Converged: the compute ports carry the storage traffic. A faster block (1,000 GB/s) fed
    # 5.3136e7 bytes per token: 820 GB/s × 8 = 6,560 Gb/s > 4 nodes × 8 × 200G.
    "storage_nic_bandwidth_met-converged": (
        "storage_nic_bandwidth_met",
        {"catalog.add.storage": [replaced("storage", "pfs-building-block", read_gb_per_s=1000.0)],
         "workload.data.bytes_per_token": 5.3136e7},
        {"base": CONVERGED_DESIGN, "storage.read_gbps": 8000.0, "storage_network.need_gbps": 6560.0},
        "compute NICs 8×200G per node × 4 nodes = 6,400 Gb/s < 6,560 Gb/s needed"),
    # Two blocks: 32 node ports + 16 unit ports overflow the one 40-port qm8700. Records follow:
    # 16 unit links, management ports 11 + 2 = 13, storage rack 2 × 2.5 kW.
    "storage_fabric_ports_cover-converged-one-switch": (
        "storage_fabric_ports_cover", {},
        {"base": CONVERGED_DESIGN, "storage.units": 2, "storage.ports": 16, "storage.read_gbps": 1600.0,
         "storage.write_gbps": 1120.0, "storage.capacity_tb": 1000.0, "storage_network.unit_ports": 16,
         "switches.0.ports_used": 48, "links.1.count": 16, "links.1.assemblies": 16, "racks.2.power_kw": 5.0,
         **management_ports(23, 1, 2)},
        "leaf switch (qm8700): 32 node ports + 16 storage-unit ports = 48 > 40 ports of one switch"),
    "leaf_ports_cover_endpoints-converged-storage-leaf": (
        "leaf_ports_cover_endpoints", {}, {"base": CONVERGED_2, "fabric.leaves": 8},
        "fabric.leaves: recorded 8, the rules give 9 (8 rail groups × 1 leaves + 1 leaves of storage units)"),
    "storage_fabric_ports_cover-compute-storage-leaves": (
        "storage_fabric_ports_cover", {}, {"base": CONVERGED_2, "storage_network.compute_storage_leaves": 0},
        "storage_network.compute_storage_leaves: recorded 0, the rules give 1 (ceil(8 unit ports / (40 − 4 up) free ports))"),
    # A single node has no compute fabric to converge on (its storage ports would be its 8 rails
    # × 400G; the node draws 10,200 W; management ports 1 × 2 + 1 × 2 + 3 racks × 2 PDUs).
    "storage_fabric_ports_cover-converged-without-a-fabric": (
        "storage_fabric_ports_cover", {},
        {"base": SINGLE_NODE_DESIGN, "storage_network": {**CONVERGED_DESIGN["storage_network"], "ports_per_node": 8,
                                                         "link_gbps": 400, "node_gbps": 3200.0, "unit_ports": 4},
         "switches": [{**SINGLE_NODE_DESIGN["switches"][1], "ports_used": 10}],
         "links": [{**SINGLE_NODE_DESIGN["links"][2], "count": 10, "assemblies": 10}],
         "management_network.ports": 10, "racks.0.power_kw": 10.2, "racks.1.count": 1, "racks.1.power_kw": 0.15,
         "parallelism": None},
        "a single node without a compute fabric has no fabric to converge on"),
    # 3 storage spines do not divide the 8 uplinks of a storage leaf; kits per pair ceil(8/3) = 3
    # links: 3 × 3 × ceil(3 / 4) = 9; management ports 38 + 1.
    "uplinks_balanced-storage-spines": (
        "uplinks_balanced", STORAGE_TWO_TIER_INSTANCE_CHANGES,
        {"base": STORAGE_2, "storage_network.spines": 3, "switches.3.count": 3, "links.4.assemblies": 6,
         **management_ports(39, 4, 5)},
        "8 uplinks per storage leaf do not divide evenly over 3 storage spines"),
    # 8 down / 4 up leaves a leaf's 4 ports idle: the splits of 16 ports are 8/8 and 12/4 (up =
    # k − down). The 8 uplinks fill 2 spine cages and 2 leaf cages: 2 kits.
    "storage_fabric_ports_cover-storage-leaf-split": (
        "storage_fabric_ports_cover", STORAGE_TWO_TIER_INSTANCE_CHANGES,
        {"base": STORAGE_2, "storage_network.leaf_down_ports": 8, "storage_network.leaf_up_ports": 4,
         "links.4.count": 8, "links.4.assemblies": 2, "switches.2.ports_used": 20, "switches.3.ports_used": 8},
        "8 down / 4 up ports is not a split of its 16 ports"),
    # Fewer storage switches than the ports need.
    "storage_fabric_ports_cover-storage-leaves": (
        "storage_fabric_ports_cover", STORAGE_TWO_TIER_INSTANCE_CHANGES, {"base": STORAGE_2, "storage_network.leaves": 1},
        "storage_network.leaves: recorded 1, the rules give 2 (ceil((8 node ports + 4 unit ports) / 8 down-ports))"),
    # One 8-port storage switch for 12 ports (network racks: 12 qm9700, 1 st8, 1 management).
    "storage_fabric_ports_cover-one-storage-switch": (
        "storage_fabric_ports_cover", {"catalog.add.switches": [STORAGE_SWITCH_8], "catalog.prices": {"st8": 3_000.0}},
        {"storage_network.switch": "st8", "switches.2.model": "st8", "racks.1.count": 3, "racks.1.power_kw": 15.528,
         **management_ports(35, 3, 4)},  # the third network rack's 2 PDUs
        "storage switch (st8): 8 node ports + 4 unit ports = 12 > 8 ports of one switch"),
    "storage_fabric_ports_cover-unit-protocol": (
        "storage_fabric_ports_cover",
        {"catalog.add.storage": [replaced("storage", "pfs-building-block", protocols=["ethernet"])]},
        {"base": CONVERGED_DESIGN},
        "hot storage (1 × pfs-building-block): speaks ethernet; the storage network (qm8700 at 200 Gb/s) runs ib"),
    "storage_fabric_ports_cover-storage-switch-role": (
        "storage_fabric_ports_cover",
        {"catalog.add.switches": [{**STORAGE_SWITCH_16, "role": "management"}], "catalog.prices": {"st16": 6_000.0}},
        {"base": STORAGE_2}, "storage switch st16: role management; storage networks use data-fabric (compute) switches"),
    "nic_fits_server-storage-nic-built-in": (
        "nic_fits_server", {}, {"storage_network.nic": "bf3-2x200g"},
        "dgx-h100 has built-in storage NIC cx7-qsfp112-2x200g, not bf3-2x200g"),
    "nic_fits_server-converged-with-a-storage-nic": (
        "nic_fits_server", {}, {"base": CONVERGED_DESIGN, "storage_network.nic": "cx6-dx-2x100g"},
        "a converged storage network uses no storage NIC"),
    "nic_fits_server-storage-nic-option": (
        "nic_fits_server",
        {**COLD_INSTANCE_CHANGES,
         "catalog.add.servers": [replaced("servers", "hgx-h100", storage_nic_options=["cx7-qsfp112-2x200g"])]},
        {"base": COLD}, "eth-25g-2p is not among hgx-h100's storage NIC options (cx7-qsfp112-2x200g)"),
    "nic_supports_interconnect-storage-speed": (
        "nic_supports_interconnect",
        {"catalog.add.nics": [replaced("nics", "cx7-qsfp112-2x200g", interconnects=["roce-100", "tcp-100"])]}, {},
        "storage NIC cx7-qsfp112-2x200g: runs roce-100, tcp-100, none at 200 Gb/s"),
    "nic_supports_interconnect-storage-switch-protocol": (
        "nic_supports_interconnect",
        {"catalog.add.switches": [{**STORAGE_SWITCH_16, "protocols": ["ethernet"]}], "catalog.prices": {"st16": 6_000.0},
         "catalog.add.nics": [replaced("nics", "cx7-qsfp112-2x200g", interconnects=["ib-ndr200", "tcp-100"])]},
        {"base": STORAGE_2}, "storage switch st16: speaks ethernet; cx7-qsfp112-2x200g at 200 Gb/s runs ib"),
    "management_ports_cover-role": (
        "management_ports_cover", {"catalog.add.switches": [replaced("switches", "mgmt-48x1g-10g", role="compute")]}, {},
        "management switch mgmt-48x1g-10g: role compute; the management network uses management switches"),
    "management_ports_cover-aggregation": (
        "management_ports_cover", THREE_TIER_INSTANCE_CHANGES,
        {"base": THREE_TIER_DESIGN, "management_network.aggregation": 0},
        "management_network.aggregation: recorded 0, the rules give 2 (2 × ceil(2 leaves / (48 − 2 kept for the "
        "core) per pair))"),
    "management_ports_cover-uplinks": (
        "management_ports_cover", THREE_TIER_INSTANCE_CHANGES,
        {"base": THREE_TIER_DESIGN, "links": THREE_TIER_DESIGN["links"][:6]}, "mgmt-uplink links: missing; 4 links needed"),
    "cold_storage_met-capacity": (
        "cold_storage_met", {**COLD_INSTANCE_CHANGES, "workload.data.archive_tb": 2000.0}, {"base": COLD},
        "holds 1,800 TB < 2,009.443 TB for 2,000 TB of raw data and 84 archived checkpoints of 112.42 GB"),
    # A checkpoint every 18 s, each kept 86.4 s (ceil(0.001 × 24 / 0.005) = 5 archived):
    # 112.42 GB / 18 s = 6.246 GB/s > 2 nodes × 3 GB/s.
    "cold_storage_met-write": (
        "cold_storage_met", {**COLD_INSTANCE_CHANGES, "workload.checkpoint.archive_days": 0.001,
                             "workload.checkpoint.interval_hours": 0.005},
        {"base": COLD}, "writes 6 GB/s < 6.246 GB/s needed to archive a 112.42 GB checkpoint every 0.005 h"),
    "cold_storage_met-nothing-archived": (
        "cold_storage_met", {}, {"base": COLD},
        "nothing is archived (no archive_tb, no archive_days), so there is no cold tier"),
    "cold_storage_met-kind": (
        "cold_storage_met", {**COLD_INSTANCE_CHANGES, "catalog.add.storage": [replaced("storage", "object-store-node",
                                                                                      kind="nfs")]},
        {"base": COLD}, "kind nfs; the cold tier is an object store"),
    "cold_storage_met-record": (
        "cold_storage_met", COLD_INSTANCE_CHANGES, {"base": COLD, "cold_storage.capacity_tb": 900.0},
        "capacity_tb 900 TB recorded; 2 units give 1,800 TB"),
    "allowed_by_lists-storage-nic": (
        "allowed_by_lists", {"constraints.storage_nics.deny": ["cx7-qsfp112-2x200g"]}, {},
        "storage_nics cx7-qsfp112-2x200g: on constraints.storage_nics.deny"),
    "allowed_by_lists-storage-nic-allow": (
        "allowed_by_lists", {"constraints.storage_nics.allow": ["eth-10g-2p"]}, {},
        "storage_nics cx7-qsfp112-2x200g: not on constraints.storage_nics.allow (eth-10g-2p)"),
    "allowed_by_lists-management-switch": (
        "allowed_by_lists", {"constraints.switches.deny": ["mgmt-48x1g-10g"]}, {},
        "switches mgmt-48x1g-10g: on constraints.switches.deny"),
    "allowed_by_lists-cold-tier": (
        "allowed_by_lists", {**COLD_INSTANCE_CHANGES, "constraints.storage.deny": ["object-store-node"]}, {"base": COLD},
        "storage object-store-node: on constraints.storage.deny"),
    "pins_respected-storage-network": (
        "pins_respected", {"constraints.pins.storage_network": "converged"}, {},
        "constraints.pins.storage_network: pinned converged, design has dedicated"),
    "pins_respected-storage-nic": (
        "pins_respected", {"constraints.pins.storage_nic": "cx6-dx-2x100g"}, {"base": CONVERGED_DESIGN},
        "constraints.pins.storage_nic: pinned cx6-dx-2x100g, design has no storage NIC (converged)"),
    "pins_respected-cold-storage": (
        "pins_respected", {"constraints.pins.cold_storage": "object-store-node"}, {},
        "constraints.pins.cold_storage: pinned object-store-node, design has no cold tier"),
    "pins_respected-management-switch": (
        "pins_respected", {"constraints.pins.management_switch": "sn2410"}, {},
        "constraints.pins.management_switch: pinned sn2410, design has mgmt-48x1g-10g"),
    "priced_in_book-storage-nic": (
        "priced_in_book",
        {"catalog.add.nics": [unpriced_copy("cx7-qsfp112-2x200g", "cx7-unpriced")],
         "catalog.add.servers": [replaced("servers", "hgx-h100", storage_nic_options=["cx7-unpriced"])]},
        {**HGX, "storage_network.nic": "cx7-unpriced"}, "cx7-unpriced: no price in usd-capex"),
    # The unpriced cold tier is another model: its 2 units take a storage rack of their own.
    "priced_in_book-cold-tier": (
        "priced_in_book", {**COLD_INSTANCE_CHANGES, "catalog.add.storage": [UNPRICED_OBJECT]},
        {"base": COLD, "cold_storage.tier": "object-unpriced", "racks.2.count": 2, "racks.2.power_kw": 1.8,
         **management_ports(41, 3, 4)},  # the second storage rack's 2 PDUs
        "object-unpriced: no price in usd-capex"),
    "port_form_factor_match-storage-unit": (
        "port_form_factor_match", {}, {"links.3.part": "ndr200-dr4-splitter-kit-osfp-50m"},
        "end b is osfp-flat, hot storage nvme-of-array cages are qsfp112"),
    "port_form_factor_match-storage-unit-assemblies": (
        "port_form_factor_match", {}, {"links.3.assemblies": 4},
        "4 assemblies recorded; 1 units × ceil(4 ports / 4 per assembly) = 1"),
    "port_form_factor_match-node-storage-assemblies": (
        "port_form_factor_match", {}, {"links.2.assemblies": 16},
        "16 assemblies recorded; 2 ports × ceil(4 nodes / 4 per assembly) = 2"),
    "port_form_factor_match-mgmt-speed": (
        "port_form_factor_match", {}, {"links.4.part": "cat6a-rj45-10g-100m"}, "part runs 10 Gb/s, links run 1 Gb/s"),
    "cable_reach-storage-leaf-spine": (
        "cable_reach", {**STORAGE_TWO_TIER_INSTANCE_CHANGES, "site.distances.across_rows_m": 600.0}, {"base": STORAGE_2},
        "storage-leaf-spine links (ndr200-dr4-twin-kit-500m): reach 500 m < 602 m run"),
    "cable_reach-mgmt-length": (
        "cable_reach", {}, {"links.4.length_m": 52.0}, "length 52 m recorded, the site gives 17 m"),
    "link_speed-management-uplinks": (
        "link_speed", {}, {"management_network.uplink_gbps": 1},
        "uplink_gbps 1 Gb/s ≠ mgmt-48x1g-10g's highest speed 10 Gb/s"),
    "link_speed-link-network": (
        "link_speed", {}, {"links.2.network": "compute"}, "network compute; the class belongs to the storage network"),
    "link_speed-converged-speed": (
        "link_speed", {}, {"base": CONVERGED_DESIGN, "storage_network.link_gbps": 100},
        "link_gbps 100 Gb/s ≠ compute link speed 200 Gb/s"),
    "racks_available-storage-racks-pooled": (
        "racks_available", COLD_INSTANCE_CHANGES, {"base": COLD, "racks.2.count": 2, **management_ports(41, 3, 4)},
        "2 recorded; ceil(3 × object-store-node / 10 per rack) = 1"),
}


@pytest.mark.parametrize("family, instance_changes, design_changes, fragment", list(STORAGE_MUTATIONS.values()),
                         ids=list(STORAGE_MUTATIONS))
def test_mutation_is_reported_under_its_family(family, instance_changes, design_changes, fragment):
    inst = instance(**instance_changes)
    changes = dict(design_changes)
    base = changes.pop("base", BASE_DESIGN)
    found = check_design(inst, base_design(base, inst, **changes))
    assert families(found) == {family}, [str(v) for v in found]
    assert any(fragment in str(v) for v in found), [str(v) for v in found]
