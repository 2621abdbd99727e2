"""The registry of constraint families.

Each rule of a design has one snake_case id, used alike by the solver function that adds it,
the checker rule that verifies it, the assumption literal that explains infeasibility, its tests
and the words the user reads. Everything known about a family that is not code lives in its
:class:`Family` record, here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One constraint family."""

    id: str
    description: str
    """One sentence stating the rule, as the user reads it."""
    source: str = ""
    """The instance field its limit comes from (a dotted path); "" when the limit is the catalog's
    hardware."""
    prefilterable: bool = False
    """Its per-option rules (topoopt/options/rules.py) may drop options before the model is built."""
    structural: bool = False
    """Enforced by the construction of the option tables: no design the tables offer breaks it, so
    it never appears in a conflict and has nothing to explain or relax."""


_RECORDS = (
    Family("memory_fits", "Weights, gradients, optimizer state and activations fit in GPU memory under the parallelism.",
           source="workload.model"),
    Family("deadline_met", "The predicted time to train is within the deadline.", source="goal.deadline_days"),
    Family("budget_cap", "The total cost stays within the budget.", source="budget.max"),
    Family("allowed_by_lists", "Every chosen item is allowed by the instance's allow and deny lists.",
           source="constraints", prefilterable=True),
    Family("priced_in_book", "Every chosen item has a price in the selected price book, for an item its market "
                             "offers (others only with catalog.include_not_offered).",
           source="catalog.price_book", prefilterable=True),
    Family("pins_respected", "Every pinned decision takes its pinned value.", source="constraints.pins",
           prefilterable=True),
    Family("nic_fits_server", "The compute and storage NIC models and counts fit the server's slots."),
    Family("nic_supports_interconnect",
           "The NIC, the switch and the interconnect speak the same protocol at the link speed.", prefilterable=True),
    Family("link_speed", "A link runs at the slower of its two ends; the design reports that speed.",
           structural=True),
    Family("leaf_ports_cover_endpoints",
           "Leaf down-ports cover every node NIC port: each leaf (or one-tier switch) carries a group of 1, 2, 4 or 8 "
           "rails of whole nodes within its ports (one switch only when it has enough ports)."),
    Family("spine_ports_cover_uplinks",
           "Spine ports cover every leaf uplink (and core uplinks in three tiers), also for the nodes the fabric is "
           "provisioned for."),
    Family("core_ports_cover_uplinks",
           "Core ports cover every spine uplink, also for the nodes the fabric is provisioned for."),
    Family("oversubscription_within_limit",
           "A leaf's down-ports in use per uplink stay within the allowed oversubscription (a whole class of 1, 2 "
           "or 3 for the performance model).",
           source="constraints.max_oversubscription", prefilterable=True),
    Family("uplinks_balanced",
           "Every leaf reaches every spine of its pod with the same number of links, likewise spine to core, and a "
           "leaf has no more uplinks than its ports in use need (unless the fabric is provisioned for growth)."),
    Family("rail_only_allowed", "A rail-only fabric (one switch per rail group, none joining them) is chosen only "
           "when the instance allows it.", source="constraints.allow_rail_only"),
    Family("port_form_factor_match", "Each end of each cable or transceiver fits the cage it plugs into."),
    Family("cable_reach", "Each cable's maximum reach covers its link's length, and within one rack no one-piece "
           "cable (DAC, ACC, AOC) is longer than the rack allows.", source="site.distances",
           prefilterable=True),
    Family("rack_power_within_limit", "Nodes, switches and optics in a rack stay within the rack class's power.",
           source="site.rack_classes"),
    Family("rack_units_within_limit", "Devices in a rack fit in its rack units.", source="site.rack_classes"),
    Family("racks_available", "The design uses no more racks than the site has.", source="site.max_racks",
           prefilterable=True),
    Family("site_power_within_limit", "Total IT power stays within the site's power cap.",
           source="site.power_cap_kw"),
    Family("storage_bandwidth_met",
           "Storage reads feed the GPUs and writes save a checkpoint within the allowed time.",
           source="workload.checkpoint"),
    Family("storage_capacity_met", "Storage holds the dataset and the retained checkpoints.",
           source="workload.data.dataset_tb"),
    Family("storage_latency_ok", "Workloads with many small files use a low-latency storage tier.",
           source="workload.data.small_files", prefilterable=True),
    Family("storage_nic_bandwidth_met",
           "The nodes' storage ports (storage NICs, or compute NICs when converged) carry the storage traffic.",
           source="workload.data"),
    Family("storage_fabric_ports_cover",
           "Storage switch (or converged compute fabric) ports cover every node and storage-unit port, at a speed and "
           "protocol the units run; converged storage needs a fabric joining every rail and storage leaves whose "
           "uplinks carry its traffic.", source="constraints.storage"),
    Family("cold_storage_met",
           "The cold tier holds the archived data and checkpoints and takes one checkpoint per interval.",
           source="workload.checkpoint.archive_days"),
    Family("management_ports_cover",
           "Management leaves cover every in-band and out-of-band management port; aggregation pairs cover the "
           "leaves.", source="constraints.switches"),
    Family("head_nodes_built", "The design buys the head nodes the site asks for, of the catalog's least-priced "
           "head model.", structural=True),
)

FAMILIES: dict[str, Family] = {family.id: family for family in _RECORDS}
"""Every family by id, in the order the model adds them and the checker reports them."""
