"""Which instance rules rule out a single option, by family.

These are the per-option halves of the families (allow/deny lists, pins, prices, reach,
oversubscription, rack classes, small files). The model builder forbids an option under each
family it violates, so explanations can name the family; when that family is enforced anyway,
the option is dropped before the model is built (``Problem.of(instance, prefilter=…)``), which keeps the model
small. Either way the rule is stated here, once.
"""

from __future__ import annotations

from topoopt.families import FAMILIES
from topoopt.models.instance import Instance

PREFILTERABLE = frozenset(family.id for family in FAMILIES.values() if family.prefilterable)
"""The families whose per-option rules may drop options before the model is built (their records
in topoopt/families.py say so)."""


def node_config_violations(config, instance: Instance) -> frozenset[str]:
    rules, pins = instance.constraints, instance.constraints.pins
    found = set()
    if not (rules.gpus.admits(config.gpu.id) and rules.servers.admits(config.server.id)
            and rules.interconnects.admits(config.interconnect.id)):
        found.add("allowed_by_lists")
    if config.server_price is None or not config.server_offered:
        found.add("priced_in_book")  # an unpriced NIC rules out only fabric-attached nodes (solver/model/selection.py)
    pinned = ((pins.server, config.server.id), (pins.gpu, config.gpu.id), (pins.interconnect, config.interconnect.id),
              (pins.nic, config.nic.id), (pins.nics_per_node, config.rails))
    if any(want is not None and want != have for want, have in pinned):
        found.add("pins_respected")
    return frozenset(found)


def fabric_violations(fabric, instance: Instance) -> frozenset[str]:
    rules, pins = instance.constraints, instance.constraints.pins
    found = set()
    if fabric.tiers == 0:
        # No switches are bought: a pinned tier count or leaf switch asks for a fabric.
        if pins.tiers is not None or pins.leaf_switch is not None:
            found.add("pins_respected")
        return frozenset(found)
    if not rules.switches.admits(fabric.switch.id):
        found.add("allowed_by_lists")
    if fabric.unit_price is None:
        found.add("priced_in_book")
    if (pins.tiers is not None and fabric.tiers != pins.tiers) or (
        pins.leaf_switch is not None and fabric.switch.id != pins.leaf_switch
    ):
        found.add("pins_respected")
    # Class ρ holds ratios in (ρ−1, ρ]: none within a cap at or below ρ−1 (the model caps the
    # rest at the limit: solver/model/fabric.py).
    if fabric.tiers > 1 and fabric.ratio - 1 >= rules.max_oversubscription - 1e-9:
        found.add("oversubscription_within_limit")
    return frozenset(found)


def too_long_in_rack(part, instance: Instance) -> bool:
    """A one-piece cable (DAC, ACC, AOC) is as long as its reach: between two devices of one rack
    it is used only when no longer than ``in_rack_m + slack_m`` (a 30 m AOC is not coiled in a
    rack). A transceiver kit's fibre or a patch cord is cut to the run."""
    d = instance.site.distances
    return part.one_piece and part.max_reach_m > d.in_rack_m + d.slack_m


def part_violations(option, length_m: float, instance: Instance, *, in_rack: bool = False) -> frozenset[str]:
    """The rules ``option``'s part breaks on a run of ``length_m`` (``in_rack``: between two
    devices of one rack)."""
    found = set()
    if not instance.constraints.cables.admits(option.part.id):
        found.add("allowed_by_lists")
    if option.unit_price is None:
        found.add("priced_in_book")
    if option.part.max_reach_m < length_m or (in_rack and too_long_in_rack(option.part, instance)):
        found.add("cable_reach")
    return frozenset(found)


def rack_violations(rack, price: int | None, instance: Instance) -> frozenset[str]:
    """What rules a rack class out for every rack: its price and the site's classes."""
    found = set()
    if price is None:
        found.add("priced_in_book")
    if instance.site.rack_classes is not None and rack.id not in instance.site.rack_classes:
        found.add("racks_available")
    return frozenset(found)


def rack_node_violations(rack, instance: Instance) -> frozenset[str]:
    """What rules a rack class out for the nodes' racks only: a pinned rack class is the nodes'
    (network and storage racks take any class the site has)."""
    return frozenset({"pins_respected"}) if instance.constraints.pins.rack_class not in (None, rack.id) else frozenset()


def storage_violations(tier, price: int | None, instance: Instance) -> frozenset[str]:
    found = set()
    if not instance.constraints.storage.admits(tier.id):
        found.add("allowed_by_lists")
    if price is None:
        found.add("priced_in_book")
    if instance.constraints.pins.storage not in (None, tier.id):
        found.add("pins_respected")
    if instance.workload.data.small_files and tier.latency_class == "high":
        found.add("storage_latency_ok")
    return frozenset(found)


def storage_net_violations(option, instance: Instance) -> frozenset[str]:
    """A storage network option: the storage NIC and switch lists, prices and pins (mode, NIC)."""
    rules, pins = instance.constraints, instance.constraints.pins
    found = set()
    if pins.storage_network not in (None, option.mode):
        found.add("pins_respected")
    if option.mode == "converged":
        if pins.storage_nic is not None or pins.storage_ports_per_node is not None:
            found.add("pins_respected")  # a pinned storage NIC or port count asks for a dedicated network
        return frozenset(found)
    if pins.storage_nic not in (None, option.nic.id):
        found.add("pins_respected")
    if pins.storage_ports_per_node not in (None, option.ports):
        found.add("pins_respected")
    if not (rules.storage_nics.admits(option.nic.id) and rules.switches.admits(option.switch.id)):
        found.add("allowed_by_lists")
    if option.nic_price is None or option.switch_price is None:
        found.add("priced_in_book")
    return frozenset(found)


def cold_violations(tier, price: int | None, instance: Instance) -> frozenset[str]:
    """A cold tier: the storage lists, its price and the cold-storage pin. ``tier`` None is "no
    cold tier", which a pinned cold tier rules out."""
    pins = instance.constraints.pins
    if tier is None:
        return frozenset({"pins_respected"}) if pins.cold_storage is not None else frozenset()
    found = set()
    if not instance.constraints.storage.admits(tier.id):
        found.add("allowed_by_lists")
    if price is None:
        found.add("priced_in_book")
    if pins.cold_storage not in (None, tier.id):
        found.add("pins_respected")
    return frozenset(found)


def management_violations(switch, price: int | None, instance: Instance, pinned: bool = True) -> frozenset[str]:
    """What a management switch model breaks; ``pinned``: the management switch pin applies (it
    pins the leaves' model, not their aggregation's)."""
    found = set()
    if not instance.constraints.switches.admits(switch.id):
        found.add("allowed_by_lists")
    if price is None:
        found.add("priced_in_book")
    if pinned and instance.constraints.pins.management_switch not in (None, switch.id):
        found.add("pins_respected")
    return frozenset(found)
