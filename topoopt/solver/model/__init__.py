"""The CP-SAT model of a design problem: variables, definitions, and one function per rule family.

``new_model`` assembles it in a fixed order — the variables (core.py), the definitions that tie
them together (definitions.py, network_definitions.py), then every family of
``topoopt.families.FAMILIES`` by the function :data:`RULES` names for it. Each family's module is
named like the checker's (``topoopt.checking``) module for the same rules; docs/architecture.md maps
family → model module → checker module → tests.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.solver.model import (
    cabling,
    cost,
    definitions,
    fabric,
    management,
    node,
    node_leaf,
    racks,
    selection,
    storage,
    storage_network,
    workload,
)
from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.network_definitions import define_networks

RULES: dict[str, Callable[[DesignModel], None]] = {
    "memory_fits": workload.memory_fits,
    "deadline_met": workload.deadline_met,
    "budget_cap": cost.budget_cap,
    "allowed_by_lists": selection.allowed_by_lists,
    "priced_in_book": selection.priced_in_book,
    "pins_respected": selection.pins_respected,
    "nic_fits_server": node.nic_fits_server,
    "nic_supports_interconnect": node.nic_supports_interconnect,
    "link_speed": node.link_speed,
    "leaf_ports_cover_endpoints": fabric.leaf_ports_cover_endpoints,
    "spine_ports_cover_uplinks": fabric.spine_ports_cover_uplinks,
    "core_ports_cover_uplinks": fabric.core_ports_cover_uplinks,
    "oversubscription_within_limit": fabric.oversubscription_within_limit,
    "uplinks_balanced": fabric.uplinks_balanced,
    "rail_only_allowed": fabric.rail_only_allowed,
    "port_form_factor_match": cabling.port_form_factor_match,
    "cable_reach": cabling.cable_reach,
    "rack_power_within_limit": racks.rack_power_within_limit,
    "rack_units_within_limit": racks.rack_units_within_limit,
    "racks_available": racks.racks_available,
    "site_power_within_limit": racks.site_power_within_limit,
    "storage_bandwidth_met": storage.storage_bandwidth_met,
    "storage_capacity_met": storage.storage_capacity_met,
    "storage_latency_ok": storage.storage_latency_ok,
    "storage_nic_bandwidth_met": storage_network.storage_nic_bandwidth_met,
    "storage_fabric_ports_cover": storage_network.storage_fabric_ports_cover,
    "cold_storage_met": storage.cold_storage_met,
    "management_ports_cover": management.management_ports_cover,
    "head_nodes_built": management.head_nodes_built,
}
"""The function that adds each family's rules, every one enforced by the family's assumption
literal. The model adds them in ``FAMILIES`` order."""


def new_model(problem: Problem, families: Collection[str] | None = None) -> DesignModel:
    """The model of ``problem``, every family's assumption literal left free.

    Storage reads are sized at the problem's throughput target (tokens / time limit).
    ``families``: only these families' rules (None: every family's). A family left out holds as
    little as one whose literal is left free, since every rule is enforced by its literal; a
    trial that enforces a few families is spared building the others (the deadline's bounds
    are most of the cost of a model).
    """
    dm = DesignModel(problem, throughput_target_tokens_per_s=problem.throughput_target)
    definitions.choices(dm)
    definitions.fabric_shape(dm)
    definitions.cables(dm)
    define_networks(dm)
    definitions.power_and_units(dm)
    definitions.costs(dm)
    for family in FAMILIES:
        if families is None or family in families:
            RULES[family](dm)
    node_leaf.ceiling_without_the_family(dm, built=families is None or node_leaf.FAMILY in families)
    return dm


def enforce_all(dm: DesignModel, relaxed: frozenset[str] = frozenset()) -> DesignModel:
    """Fix every family's assumption literal to true, except the relaxed ones (left free)."""
    for family, literal in dm.assumption.items():
        if family not in relaxed:
            dm.model.add(literal == 1)
    return dm


def model_for(problem: Problem, relaxed: frozenset[str] = frozenset()) -> DesignModel:
    """The model with every family enforced except ``relaxed`` (whose options it keeps)."""
    if relaxed & problem.prefilter:
        problem = problem.relaxing(relaxed)
    return enforce_all(new_model(problem), relaxed)


__all__ = ["RULES", "DesignModel", "enforce_all", "model_for", "new_model"]
