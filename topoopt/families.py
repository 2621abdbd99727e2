"""The registry of constraint families.

Each rule of a design has one snake_case id, used alike by the solver function that adds it,
the checker rule that verifies it, the assumption literal that explains infeasibility, its tests
and the words the user reads.
"""

from __future__ import annotations

FAMILIES: dict[str, str] = {
    "memory_fits": "Weights, gradients, optimizer state and activations fit in GPU memory under the parallelism.",
    "deadline_met": "The predicted time to train is within the deadline.",
    "budget_cap": "The total cost stays within the budget.",
    "allowed_by_lists": "Every chosen item is allowed by the instance's allow and deny lists.",
    "priced_in_book": "Every chosen item has a price in the selected price book.",
    "pins_respected": "Every pinned decision takes its pinned value.",
    "nic_fits_server": "The compute and storage NIC models and counts fit the server's slots.",
    "nic_supports_interconnect": "The NIC, the switch and the interconnect speak the same protocol at the link speed.",
    "link_speed": "A link runs at the slower of its two ends; the design reports that speed.",
    "leaf_ports_cover_endpoints": "Leaf down-ports cover every node NIC port (one switch only when it has enough ports).",
    "spine_ports_cover_uplinks": "Spine ports cover every leaf uplink (and core uplinks in three tiers).",
    "core_ports_cover_uplinks": "Core ports cover every spine uplink.",
    "oversubscription_within_limit": "Leaf down-ports per uplink stay within the allowed oversubscription.",
    "uplinks_balanced": "Every leaf reaches every spine of its pod with the same number of links, likewise spine to core.",
    "port_form_factor_match": "Each end of each cable or transceiver fits the cage it plugs into.",
    "cable_reach": "Each cable's maximum reach covers its link's length.",
    "rack_power_within_limit": "Nodes, switches and optics in a rack stay within the rack class's power.",
    "rack_units_within_limit": "Devices in a rack fit in its rack units.",
    "racks_available": "The design uses no more racks than the site has.",
    "site_power_within_limit": "Total IT power stays within the site's power cap.",
    "storage_bandwidth_met": "Storage reads feed the GPUs and writes save a checkpoint within the allowed time.",
    "storage_capacity_met": "Storage holds the dataset and the retained checkpoints.",
    "storage_latency_ok": "Workloads with many small files use a low-latency storage tier.",
    "storage_nic_bandwidth_met": "The nodes' storage ports (storage NICs, or compute NICs when converged) carry the storage traffic.",
    "storage_fabric_ports_cover": "Storage switch (or converged compute leaf) ports cover every node and storage-unit port, at a speed and protocol the units run.",
    "cold_storage_met": "The cold tier holds the archived data and checkpoints and takes one checkpoint per interval.",
    "management_ports_cover": "Management leaves cover every in-band and out-of-band management port; aggregation pairs cover the leaves.",
}
