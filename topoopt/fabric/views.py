"""What the drawing shows: boxes (devices or groups of them) and lines (bundles of links).

Two views, chosen by size:

* **detail** (at most :data:`DETAIL_MAX_DEVICES` nodes and switches): one box per switch and one
  table per compute or storage rack listing its devices by U (highest on top, with the rack's
  power). With several rail groups the leaves of a scalable unit — one per rail group, each box
  naming its rails ("rails 1–4") — share a frame (a rail-only fabric's switches share one frame),
  and links are drawn per rack and per frame — "rack01 → SU 1: 32 × 400G" — so 256 node links
  stay 8 lines;
* **summary** (anything larger): repeated devices collapse into one box per tier and block
  ("256 × dgx-h100", "64 × qm9700 leaf", with the scalable units and rails its leaves serve). A
  block is a run of scalable units (1–2 tiers) or pods
  (3 tiers) for the compute fabric and a run of switches for the storage and management networks,
  at most :data:`MAX_BLOCKS` per tier, so the drawing has the same size at 1,000 and at 1,000,000 GPUs.

In both views the management network ends in one ``managed`` table (what plugs into it, by kind
of device) instead of a line to every device it reaches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from topoopt.checking.units import W_PER_KW
from topoopt.fabric.build import Fabric
from topoopt.fabric.devices import Device, LinkBundle
from topoopt.fabric.wiring import grouped, rail_text, rails_per_leaf

DETAIL_MAX_DEVICES = 60
"""Largest number of nodes + switches (of every network) drawn one box per device."""
MAX_BLOCKS = 8
"""Most boxes per tier in the summary view (one more for the storage leaves holding only units)."""
MANAGEMENT_BLOCKS = 4
"""Most management-leaf boxes in the summary view (a management leaf is a simple star)."""

MANAGED = "managed"
"""Id of the box standing for every device the management network reaches."""

NETWORK_OF_TIER = {
    "core": "compute", "spine": "compute", "leaf": "compute", "node": "compute",
    "storage-leaf": "storage", "storage-spine": "storage", "storage-core": "storage", "storage": "storage", "cold-storage": "storage",
    "mgmt-aggregation": "management", "mgmt-leaf": "management", MANAGED: "management",
}
KIND_OF_ROLE = {"node": "nodes", "leaf": "compute switches", "spine": "compute switches", "core": "compute switches",
                "storage-leaf": "storage switches", "storage-spine": "storage switches",
                "storage-core": "storage switches", "storage": "hot storage",
                "cold-storage": "cold storage", "pdu": "rack PDUs", "head": "head nodes"}
TIER_NAME = {"storage-leaf": "storage leaf", "storage-spine": "storage spine", "storage-core": "storage core",
             "mgmt-leaf": "leaf",
             "mgmt-aggregation": "aggregation", "storage": "hot storage", "cold-storage": "cold storage"}
"""Words for a tier in box labels (management boxes sit in the management network's frame)."""


@dataclass
class Box:
    """One drawn box: a device, a group of identical devices, a rack table or the managed table."""

    id: str
    tier: str
    devices: list[Device]
    label: str
    frame: str = ""
    """Cluster (scalable unit) the box is drawn in; empty for none."""
    tooltip: str = ""
    """Tooltip when it is not the box's inventory."""


@dataclass
class View:
    """Boxes, frames, and where each device's links attach (a box, or a frame around boxes)."""

    name: str
    boxes: list[Box]
    frame_labels: dict[str, str] = field(default_factory=dict)
    end_of: dict[str, str] = field(default_factory=dict)
    """Device name → box id or ``cluster_<frame>`` its data links are drawn to."""


@dataclass
class Line:
    a: str
    b: str
    bundle: LinkBundle
    count: int = 0


def view_name(fabric: Fabric) -> str:
    """``detail`` for small installations, else ``summary``."""
    return "detail" if len(fabric.nodes) + len(fabric.switch_list) <= DETAIL_MAX_DEVICES else "summary"


def span(values: list[int], word: str) -> str:
    low, high = min(values), max(values)
    return f"{word} {low}" if low == high else f"{word}s {low}–{high}"


def count_of(number: int, word: str) -> str:
    return f"{number:,} {word}" + ("" if number == 1 else "s")


def inventory(devices: list[Device]) -> str:
    """``"4 × dgx-h100 (node), 1 × qm9700 (leaf)"``: what a box or rack holds, by model and role."""
    counts: dict[tuple[str, str], int] = {}
    for device in devices:
        counts[(device.model, device.role)] = counts.get((device.model, device.role), 0) + 1
    return ", ".join(f"{count:,} × {model} ({role})" for (model, role), count in counts.items())


def name_range(devices: list[Device]) -> str:
    return devices[0].name if len(devices) == 1 else f"{devices[0].name} – {devices[-1].name}"


# ---------------------------------------------------------------------------------------------
# Detail


def detail_view(fabric: Fabric, colours: dict[str, str]) -> View:
    view = View("detail", [])
    design = fabric.design
    framed, g = grouped(design), rails_per_leaf(design)
    for device in fabric.switch_list:
        frame = f"su{device.su}" if device.role == "leaf" and framed and device.su else ""
        rails = f"{rail_text(device.rail, g)}\n" if device.role == "leaf" and framed and device.rail else ""
        label = f"{device.name}\n{rails}{device.model}\n{device.rack} U{device.u}"
        view.boxes.append(Box(device.name, device.role, [device], label, frame))
        view.end_of[device.name] = f"cluster_{frame}" if frame else device.name
        if frame:
            view.frame_labels[frame] = ("rail-only: one switch per rail group" if design.fabric.rail_only
                                        else f"scalable unit {device.su}")
    for rack in fabric.racks.racks:
        if rack.role == "network":
            continue
        # Switches in a mixed rack keep their own boxes; the rack's table still lists them.
        held = [d for d in rack.devices if d.role in ("node", "storage", "cold-storage")]
        tier = held[0].role if rack.role == "storage" else "node"
        view.boxes.append(Box(rack.name, tier, held, rack_table(rack, colours[tier])))
        for device in held:
            view.end_of[device.name] = rack.name
    view.boxes.append(managed_box(fabric))
    return view


def rack_table(rack, colour: str) -> str:
    """A rack as an HTML-like table: what it holds and its power, then one row per device (top U first)."""
    kinds = inventory(rack.devices).split(", ")
    # Three kinds per line keep a mixed rack's table narrow.
    held = "<br/>".join(escape(", ".join(kinds[i:i + 3])) for i in range(0, len(kinds), 3))
    rows = [f'<tr><td colspan="2" bgcolor="{colour}"><b>{escape(rack.name)}</b> · {held}<br/>'

            f"{rack.power_w / W_PER_KW:.1f} of {rack.power_limit_w / W_PER_KW:.1f} kW · "
            f"{rack.units_used} of {rack.units} U</td></tr>"]
    for device in sorted(rack.devices, key=lambda d: -d.u):
        rows.append(f'<tr><td align="right">U{device.u}</td><td align="left">{escape(device.name)}</td></tr>')
    return '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">' + "".join(rows) + "</table>>"


def managed_box(fabric: Fabric) -> Box:
    """The devices on the management network, by kind, with their ports (in-band + out-of-band)."""
    ports: dict[str, int] = {}
    for bundle in fabric.links:
        if bundle.between == "mgmt":
            for name in bundle.b_device:
                ports[name] = ports.get(name, 0) + 1
    kinds: dict[tuple[str, str], list[int]] = {}
    for device in fabric.devices:
        if device.name in ports:
            entry = kinds.setdefault((KIND_OF_ROLE[device.role], device.model), [0, 0])
            entry[0] += 1
            entry[1] += ports[device.name]
    mn = fabric.design.management_network
    rows = [f'<tr><td colspan="3"><b>on the management network</b> · {sum(ports.values()):,} ports at '
            f"{mn.link_gbps}G</td></tr>"]
    for (kind, model), (devices, count) in kinds.items():
        rows.append(f'<tr><td align="left">{escape(kind)}</td><td align="left">{devices:,} × {escape(model)}</td>'
                    f'<td align="right">{count:,} ports</td></tr>')
    label = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">' + "".join(rows) + "</table>>"
    return Box(MANAGED, MANAGED, [], label, tooltip=f"in-band and out-of-band ports of {len(ports):,} devices")


# ---------------------------------------------------------------------------------------------
# Summary


def _compute_blocks(fabric: Fabric) -> dict[str, int]:
    """Summary block (0-based) of every node, leaf and spine: runs of pods, else of SUs."""
    fs = fabric.design.fabric
    three = fs.tiers == 3
    leaves = fabric.switches.node_leaves
    units = fs.pods if three else max((leaf.su for leaf in leaves), default=1)
    per_block = math.ceil(units / MAX_BLOCKS)
    block = {d.name: ((d.pod if three else d.su) - 1) // per_block for d in fabric.compute_switches
             if d.role != "core" and not d.carries_storage}
    if fs.tiers == 2:
        block.update({s.name: 0 for pod in fabric.switches.spines for s in pod})
    leaf_block: dict[int, int] = {}
    for leaf in leaves:
        leaf_block.setdefault(leaf.su, block[leaf.name])
    for node in fabric.nodes:
        block[node.name] = leaf_block.get(node.su, 0)
    return block


def _runs(devices: list[Device], blocks: int) -> dict[str, int]:
    """Block of each device in runs of consecutive devices, at most ``blocks`` runs."""
    per_block = max(1, math.ceil(len(devices) / blocks))
    return {device.name: index // per_block for index, device in enumerate(devices)}


def _storage_leaf_blocks(fabric: Fabric, block: dict[str, int]) -> dict[str, int | str]:
    """A storage leaf joins the block of the first node wired to it (so node blocks and storage-leaf
    blocks line up); leaves holding storage units only form their own block."""
    first: dict[str, int | str] = {}
    for bundle in fabric.links:
        if bundle.between == "node-storage":
            for leaf, node in zip(bundle.a_device, bundle.b_device):
                if leaf not in first:
                    first[leaf] = block[node]
    return {leaf.name: first.get(leaf.name, "units") for leaf in fabric.storage_switches.leaves}


def summary_view(fabric: Fabric) -> View:
    view = View("summary", [])
    block: dict[str, int | str] = dict(_compute_blocks(fabric))
    block.update(_storage_leaf_blocks(fabric, block))
    block.update(_runs(fabric.mgmt_leaves, MANAGEMENT_BLOCKS))
    groups: dict[tuple[str, int | str], list[Device]] = {}
    for device in fabric.switch_list + fabric.nodes + fabric.units:
        key = "st" if device.carries_storage else block.get(device.name, 0)
        groups.setdefault((device.role, key), []).append(device)
    for (tier, index), devices in groups.items():
        box = Box(f"{tier.replace('-', '_')}_{index}", tier, devices, _summary_label(fabric, tier, devices))
        view.boxes.append(box)
        for device in devices:
            view.end_of[device.name] = box.id
    view.boxes.append(managed_box(fabric))
    return view


def _summary_label(fabric: Fabric, tier: str, devices: list[Device]) -> str:
    fs = fabric.design.fabric
    first = devices[0]
    if tier == "node":
        racks = len({d.rack for d in devices})
        return (f"{span([d.su for d in devices], 'SU')}\n{len(devices):,} × {first.model}\n"
                f"{sum(d.gpus for d in devices):,} GPUs · {count_of(racks, 'rack')}")
    if tier in ("storage", "cold-storage"):
        tier_item = fabric.hardware.storage if tier == "storage" else fabric.hardware.cold_storage
        racks = len({d.rack for d in devices})
        return (f"{len(devices):,} × {first.model}\n{TIER_NAME[tier]} · {len(devices) * tier_item.capacity_tb:,.0f} TB\n"
                f"{count_of(racks, 'rack')}")
    lines = [f"{len(devices):,} × {first.model} {TIER_NAME.get(tier, tier)}"]
    if first.carries_storage:
        lines.append("storage units")
    elif tier == "leaf":
        lines.append(span([d.su for d in devices], "SU"))
        rails = sorted({d.rail for d in devices if d.rail})
        if rails:
            g = rails_per_leaf(fabric.design)
            lines[-1] += f" · {span([rails[0], rails[-1] + g - 1], 'rail')}"
    elif tier == "spine" and fs.tiers == 3:
        lines.append(span([d.pod for d in devices], "pod"))
    elif tier == "core":
        lines.append(f"{fs.spines_per_pod} planes × {fs.cores_per_plane}")
    elif tier in ("storage-leaf", "mgmt-leaf"):
        lines.append(name_range(devices))
    elif tier == "mgmt-aggregation":
        lines.append(count_of(len(devices) // 2, "pair"))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Lines


def lines_of(fabric: Fabric, view: View) -> list[Line]:
    """Links aggregated per (upper end, lower end, bundle), in wiring order. Management links end
    at the managed table."""
    result: list[Line] = []
    end_of = view.end_of
    for bundle in fabric.links:
        index: dict[tuple[str, str], Line] = {}
        managed = bundle.between == "mgmt"
        for a, b in zip(bundle.a_device, bundle.b_device):
            key = (end_of[a], MANAGED if managed else end_of[b])
            line = index.get(key)
            if line is None:
                line = index[key] = Line(key[0], key[1], bundle)
                result.append(line)
            line.count += 1
    return result


def bundle_text(bundle: LinkBundle, count: int) -> str:
    """``"512 × 400G mmf ≤ 50 m"``: bundle size, speed, media and the part's reach."""
    part = bundle.part
    return f"{count:,} × {part.gbps}G {part.media} ≤ {part.max_reach_m:g} m"
