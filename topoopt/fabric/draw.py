"""Drawings of the installation: DOT text built with the ``graphviz`` package (no binary needed).

Two views, chosen by size:

* **detail** (at most :data:`DETAIL_MAX_DEVICES` nodes and switches): one box per switch and one
  table per rack listing its devices by U (highest on top, with the rack's power). The leaves of a
  rail-optimized scalable unit share a frame, and links are drawn per rack and per frame —
  "rack01 → SU 1: 32 × 400G" — so 256 node links stay 8 lines; racks wrap after
  :data:`RACKS_PER_ROW`;
* **summary** (anything larger): repeated devices collapse into one box per tier and block
  ("256 × dgx-h100", "64 × qm9700 leaf"). A block is a run of scalable units (1–2 tiers) or pods
  (3 tiers), at most :data:`MAX_BLOCKS` per tier, so the drawing has the same size at 1,000 and at
  1,000,000 GPUs.

Tiers run top-down: core, spine, leaf, nodes (with storage beside them). Every line is a bundle
labelled with its size, speed, media and the part's reach ("512 × 400G mmf ≤ 50 m"); boxes and
lines carry a tooltip "<count> × …" for the SVG. A legend lists the link classes and parts,
switches, racks and storage; the title gives GPUs, cost and time to train.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import graphviz

from topoopt.fabric.build import Fabric
from topoopt.fabric.wiring import Device, rail_optimized
from topoopt.models.design import SolveResult

DETAIL_MAX_DEVICES = 60
"""Largest number of nodes + switches drawn one box per device."""
MAX_BLOCKS = 8
"""Most boxes per tier in the summary view."""
RACKS_PER_ROW = 8
"""Racks drawn side by side before the next row starts."""

TIER_ORDER = ("core", "spine", "leaf", "node", "storage")
TIER_COLOUR = {"core": "#fde2e4", "spine": "#e2ecfd", "leaf": "#e4f5e1", "node": "#fff4d6", "storage": "#eeeeee"}
CLASS_COLOUR = {"node-leaf": "#4a7f3f", "leaf-spine": "#2f5d9e", "spine-core": "#9e2f4a"}
CLASS_NAME = {"node-leaf": "node–leaf", "leaf-spine": "leaf–spine", "spine-core": "spine–core"}


@dataclass
class Box:
    """One drawn box: a device, or a group of identical devices."""

    id: str
    tier: str
    devices: list[Device]
    label: str
    frame: str = ""
    """Cluster (rack or scalable unit) the box is drawn in; empty for none."""


@dataclass
class View:
    """Boxes, frames, and where each device's links attach (a box, or a frame around boxes)."""

    name: str
    boxes: list[Box]
    frame_labels: dict[str, str] = field(default_factory=dict)
    end_of: dict[str, str] = field(default_factory=dict)
    """Device name → box id or ``cluster_<frame>`` its links are drawn to."""


@dataclass
class Line:
    a: str
    b: str
    link_class: str
    count: int = 0


def view_name(fabric: Fabric) -> str:
    """``detail`` for small installations, else ``summary``."""
    return "detail" if len(fabric.nodes) + len(fabric.switch_list) <= DETAIL_MAX_DEVICES else "summary"


def _span(values: list[int], word: str) -> str:
    low, high = min(values), max(values)
    return f"{word} {low}" if low == high else f"{word}s {low}–{high}"


def _count(number: int, word: str) -> str:
    return f"{number:,} {word}" + ("" if number == 1 else "s")


def _money(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


# ---------------------------------------------------------------------------------------------
# Views


def detail_view(fabric: Fabric) -> View:
    view = View("detail", [])
    grouped = rail_optimized(fabric.design)
    for device in fabric.switch_list:
        frame = f"su{device.su}" if device.role == "leaf" and grouped else ""
        label = f"{device.name}\n{device.model}\n{device.rack} U{device.u}"
        view.boxes.append(Box(device.name, device.role, [device], label, frame))
        view.end_of[device.name] = f"cluster_{frame}" if frame else device.name
        if frame:
            view.frame_labels[frame] = f"scalable unit {device.su}"
    for rack in fabric.racks.racks:
        if rack.role == "network":
            continue
        # Switches in a mixed rack keep their own boxes; the rack's table still lists them.
        held = [d for d in rack.devices if d.role in ("node", "storage")]
        tier = "storage" if rack.role == "storage" else "node"
        view.boxes.append(Box(rack.name, tier, held, _rack_table(rack)))
        for device in held:
            view.end_of[device.name] = rack.name
    return view


def _rack_table(rack) -> str:
    """A rack as an HTML-like table: what it holds and its power, then one row per device (top U first)."""
    colour = TIER_COLOUR["storage" if rack.role == "storage" else "node"]
    rows = [f'<tr><td colspan="2" bgcolor="{colour}"><b>{escape(rack.name)}</b> · '
            f"{escape(_inventory(rack.devices))}<br/>"
            f"{rack.power_w / 1000:.1f} of {rack.power_limit_w / 1000:.1f} kW · "
            f"{rack.units_used} of {rack.units} U</td></tr>"]
    for device in sorted(rack.devices, key=lambda d: -d.u):
        rows.append(f'<tr><td align="right">U{device.u}</td><td align="left">{escape(device.name)}</td></tr>')
    return '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">' + "".join(rows) + "</table>>"


def _inventory(devices: list[Device]) -> str:
    """``"4 × dgx-h100 (node), 1 × qm9700 (leaf)"``: what a box or rack holds, by model and role."""
    counts: dict[tuple[str, str], int] = {}
    for device in devices:
        counts[(device.model, device.role)] = counts.get((device.model, device.role), 0) + 1
    return ", ".join(f"{count:,} × {model} ({role})" for (model, role), count in counts.items())


def _block_of(fabric: Fabric) -> dict[str, int]:
    """Summary block (0-based) of every node, leaf and spine: runs of pods, else of SUs."""
    fs = fabric.design.fabric
    three = fs.tiers == 3
    units = fs.pods if three else max((leaf.su for leaf in fabric.switches.leaves), default=1)
    per_block = math.ceil(units / MAX_BLOCKS)
    block = {d.name: ((d.pod if three else d.su) - 1) // per_block for d in fabric.switch_list if d.role != "core"}
    if fs.tiers == 2:
        block.update({s.name: 0 for pod in fabric.switches.spines for s in pod})
    leaf_block: dict[int, int] = {}
    for leaf in fabric.switches.leaves:
        leaf_block.setdefault(leaf.su, block[leaf.name])
    for node in fabric.nodes:
        block[node.name] = leaf_block[node.su]
    return block


def summary_view(fabric: Fabric) -> View:
    view = View("summary", [])
    block = _block_of(fabric)
    groups: dict[tuple[str, int], list[Device]] = {}
    for device in fabric.switch_list + fabric.nodes:
        groups.setdefault((device.role, block.get(device.name, 0)), []).append(device)
    for (tier, index), devices in groups.items():
        box = Box(f"{tier}_{index}", tier, devices, _summary_label(fabric, tier, devices))
        view.boxes.append(box)
        for device in devices:
            view.end_of[device.name] = box.id
    if fabric.storage:
        storage = fabric.hardware.storage
        label = (f"{len(fabric.storage):,} × {storage.id}\n"
                 f"{len(fabric.storage) * storage.capacity_tb:,.0f} TB · {_count(len(fabric.racks.by_role('storage')), 'rack')}")
        view.boxes.append(Box("storage_0", "storage", fabric.storage, label))
    return view


def _summary_label(fabric: Fabric, tier: str, devices: list[Device]) -> str:
    fs = fabric.design.fabric
    if tier == "node":
        racks = len({d.rack for d in devices})
        return (f"{_span([d.su for d in devices], 'SU')}\n{len(devices):,} × {devices[0].model}\n"
                f"{sum(d.gpus for d in devices):,} GPUs · {_count(racks, 'rack')}")
    lines = [f"{len(devices):,} × {devices[0].model} {tier}"]
    if tier == "leaf":
        lines.append(_span([d.su for d in devices], "SU"))
        rails = sorted({d.rail for d in devices if d.rail})
        if rails:
            lines[-1] += f" · {_span(rails, 'rail')}"
    elif tier == "spine" and fs.tiers == 3:
        lines.append(_span([d.pod for d in devices], "pod"))
    elif tier == "core":
        lines.append(f"{fs.spines_per_pod} planes × {fs.cores_per_plane}")
    return "\n".join(lines)


def lines_of(fabric: Fabric, view: View) -> list[Line]:
    """Links aggregated per (upper end, lower end, link class), in wiring order."""
    result: list[Line] = []
    for bundle in fabric.links:
        index: dict[tuple[str, str], Line] = {}
        end_of = view.end_of
        for a, b in zip(bundle.a_device, bundle.b_device):
            key = (end_of[a], end_of[b])
            line = index.get(key)
            if line is None:
                line = index[key] = Line(key[0], key[1], bundle.between)
                result.append(line)
            line.count += 1
    return result


def bundle_text(fabric: Fabric, link_class: str, count: int) -> str:
    """``"512 × 400G mmf ≤ 50 m"``: bundle size, speed, media and the part's reach."""
    part = fabric.bundle(link_class).part
    return f"{count:,} × {part.gbps}G {part.media} ≤ {part.max_reach_m:g} m"


# ---------------------------------------------------------------------------------------------
# DOT


def headline(fabric: Fabric, result: SolveResult | None, title: str | None) -> str:
    """Title lines: name, GPUs and hardware, cost, time to train."""
    d = fabric.design
    lines = [title] if title else []
    fabric_text = (f"{d.tiers}-tier {d.interconnect} on {d.fabric.switch}, {d.oversubscription:g}:1" if d.tiers
                   else "no compute fabric")
    lines.append(f"{d.gpus:,} × {d.gpu} GPUs in {d.nodes:,} × {d.server} · {fabric_text}")
    facts = []
    if result is not None and result.cost is not None:
        per = "/month" if result.cost.basis == "monthly_rent" else ""
        facts.append(f"cost {_money(result.cost.total)} {result.cost.currency}{per}")
    if result is not None and result.performance is not None:
        facts.append(f"{result.performance.time_to_train_days:,.1f} days to train")
    if facts:
        lines.append(" · ".join(facts))
    return "\n".join(lines)


def _legend(fabric: Fabric, view: View) -> str:
    """An HTML-like table: link classes and parts, switches per tier, racks, storage."""
    rows = ['<tr><td colspan="3"><b>legend</b></td></tr>']
    for bundle in fabric.links:
        rows.append(
            f'<tr><td align="left"><font color="{CLASS_COLOUR[bundle.between]}">■</font> '
            f"{CLASS_NAME[bundle.between]}</td>"
            f'<td align="left">{escape(bundle_text(fabric, bundle.between, len(bundle)))}</td>'
            f'<td align="left">{bundle.assemblies:,} × {escape(bundle.part.id)} · {bundle.length_m:g} m runs</td></tr>'
        )
    tiers: dict[str, int] = {}
    for device in fabric.switch_list:
        tiers[device.role] = tiers.get(device.role, 0) + 1
    per_tier = ", ".join(f"{count:,} {tier}" for tier, count in tiers.items())
    by_role: dict[str, int] = {}
    for rack in fabric.racks.racks:
        by_role[rack.role] = by_role.get(rack.role, 0) + 1
    per_role = ", ".join(f"{count:,} {role}" for role, count in by_role.items())
    storage = fabric.design.storage
    switches = f"{len(fabric.switch_list):,} × {fabric.design.fabric.switch} ({per_tier})" if tiers else "none"
    facts = [
        ("switches", switches),
        ("racks", f"{len(fabric.racks.racks):,} × {fabric.hardware.rack_class.id} ({per_role})"),
        ("storage", f"{storage.units:,} × {storage.tier} · {storage.capacity_tb:,.0f} TB · "
                    f"{storage.read_gbps:,.0f} Gb/s read (its network is not part of the design)"),
    ]
    if view.name == "detail":
        facts.append(("lines", "each line carries every link between a rack (or scalable unit) and a switch"))
    rows += [f'<tr><td align="left">{k}</td><td align="left" colspan="2">{escape(v)}</td></tr>' for k, v in facts]
    return '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">' + "".join(rows) + "</table>>"


def fabric_dot(fabric: Fabric, result: SolveResult | None = None, *, title: str | None = None,
               view: str | None = None) -> str:
    """The DOT source of the drawing (``view`` = ``detail``, ``summary``, or chosen by size)."""
    chosen = detail_view(fabric) if (view or view_name(fabric)) == "detail" else summary_view(fabric)
    dot = graphviz.Graph("fabric", engine="dot")
    dot.attr(rankdir="TB", newrank="true", compound="true", nodesep="0.3", ranksep="1.0", fontname="Helvetica",
             label=headline(fabric, result, title), labelloc="t", fontsize="18", tooltip="topoopt fabric")
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="11")
    dot.attr("edge", fontname="Helvetica", fontsize="10")
    bottoms = _add_boxes(dot, chosen)
    representative = _representatives(chosen)
    for line in lines_of(fabric, chosen):
        text = bundle_text(fabric, line.link_class, line.count)
        attrs = {"label": text, "tooltip": f"{text} ({CLASS_NAME[line.link_class]})",
                 "color": CLASS_COLOUR[line.link_class], "penwidth": f"{1 + math.log10(line.count):.2f}"}
        if line.a.startswith("cluster_"):
            attrs["ltail"] = line.a
        if line.b.startswith("cluster_"):
            attrs["lhead"] = line.b
        dot.edge(representative.get(line.a, line.a), representative.get(line.b, line.b), **attrs)
    dot.node("legend", label=_legend(fabric, chosen), shape="plaintext", style="", tooltip="legend")
    # Invisible edges from the bottom of every column keep the legend under the drawing.
    for bottom in bottoms:
        dot.edge(bottom, "legend", style="invis")
    return dot.source


def _representatives(view: View) -> dict[str, str]:
    """The box an edge to a frame attaches to: the middle box of the frame."""
    members: dict[str, list[Box]] = {}
    for box in view.boxes:
        if box.frame:
            members.setdefault(f"cluster_{box.frame}", []).append(box)
    return {frame: boxes[len(boxes) // 2].id for frame, boxes in members.items()}


def _add_boxes(dot: graphviz.Graph, view: View) -> list[str]:
    """Emit every box by tier and frame, one row per tier; return the boxes of the lowest row."""
    for tier in TIER_ORDER:
        boxes = [box for box in view.boxes if box.tier == tier]
        if not boxes:
            continue
        frames: dict[str, list[Box]] = {}
        for box in boxes:
            frames.setdefault(box.frame, []).append(box)
        for frame, members in frames.items():
            target = dot.subgraph(name=f"cluster_{frame}") if frame else _Same(dot)
            with target as sub:
                if frame:
                    sub.attr(label=view.frame_labels.get(frame, frame), style="dashed,rounded", color="#888888",
                             fontsize="10", tooltip=view.frame_labels.get(frame, frame))
                for box in members:
                    count = len(box.devices)
                    table = box.label.startswith("<")
                    sub.node(box.id, label=box.label, fillcolor=TIER_COLOUR[tier],
                             shape="plaintext" if table else ("box3d" if count > 1 else "box"),
                             style="" if table else "rounded,filled", tooltip=_inventory(box.devices))
        if tier not in ("node", "storage"):
            _row(dot, f"rank_{tier}", [box.id for box in boxes])
    # Racks (or node blocks) and storage fill rows of at most RACKS_PER_ROW under the switches.
    lowest = [box.id for box in view.boxes if box.tier == "node"] + [box.id for box in view.boxes if box.tier == "storage"]
    per_row = RACKS_PER_ROW if view.name == "detail" else max(len(lowest), 1)
    rows = [lowest[i:i + per_row] for i in range(0, len(lowest), per_row)]
    for index, row in enumerate(rows):
        _row(dot, f"rank_racks_{index}", row)
        if index:
            for upper, lower in zip(rows[index - 1], row):
                dot.edge(upper, lower, style="invis")
    return rows[-1] if rows else []


def _row(dot: graphviz.Graph, name: str, ids: list[str]) -> None:
    """One rank, left to right in the given order (invisible edges stop dot from reordering it)."""
    with dot.subgraph(name=name) as rank:
        rank.attr(rank="same")
        for box_id in ids:
            rank.node(box_id)
        for left, right in zip(ids, ids[1:]):
            rank.edge(left, right, style="invis")


class _Same:
    """Context manager yielding the graph itself, for boxes outside any frame."""

    def __init__(self, graph: graphviz.Graph) -> None:
        self.graph = graph

    def __enter__(self) -> graphviz.Graph:
        return self.graph

    def __exit__(self, *exc) -> None:
        return None


def write_drawing(fabric: Fabric, result: SolveResult | None, path: Path, *, title: str | None = None) -> Path:
    """Write the DOT source of the drawing to ``path``."""
    path.write_text(fabric_dot(fabric, result, title=title), encoding="utf-8")
    return path
