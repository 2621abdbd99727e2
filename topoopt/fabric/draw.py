"""Drawings of the installation: DOT text built with the ``graphviz`` package (no binary needed).

The boxes and lines come from :mod:`topoopt.fabric.views` (one box per device for small
installations, collapsed tiers for large ones). The three networks are drawn apart: each has its
own colours (compute blue, storage orange, management purple, dashed), boxes and lines alike, and
its own frame; the legend lists each network's link classes with their colour.

Rows run top-down: compute core, spine, leaf; the nodes (compute racks); storage leaves; storage
spines and cores beside the storage units (hot, cold); management aggregation, management leaves,
and the table of what the management network reaches. Every line is a bundle labelled with its size,
speed, media and the part's reach ("512 × 400G mmf ≤ 50 m"); boxes and lines carry a tooltip
"<count> × …" for the SVG. The title gives GPUs, cost and time to train.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import graphviz

from topoopt.fabric.build import Fabric
from topoopt.fabric.views import (
    MANAGED,
    NETWORK_OF_TIER,
    Box,
    View,
    bundle_text,
    count_of,
    detail_view,
    inventory,
    lines_of,
    summary_view,
    view_name,
)
from topoopt.fabric.wiring import rail_groups, rails_per_leaf
from topoopt.models.design import SolveResult

RACKS_PER_ROW = 8
"""Racks drawn side by side before the next row starts (detail view)."""

ROWS = (("core",), ("spine",), ("leaf",), ("node",), ("storage-leaf",),
        ("storage-spine", "storage-core", "storage", "cold-storage"),
        ("mgmt-aggregation",), ("mgmt-leaf",), (MANAGED,))
"""Tiers drawn on each row, top to bottom."""

TIER_COLOUR = {
    "core": "#c9dbf5", "spine": "#dbe7fa", "leaf": "#eaf1fd", "node": "#fff4d6",
    "storage-leaf": "#fde3c4", "storage-spine": "#fbd3a5", "storage-core": "#f9c283",
    "storage": "#fff0de", "cold-storage": "#f1e7dc",
    "mgmt-aggregation": "#e4d5f3", "mgmt-leaf": "#efe6f8", MANAGED: "#f8f4fc",
}
NETWORK_COLOUR = {"compute": "#1f4e9e", "storage": "#c2570c", "management": "#7a4cb0"}
NETWORK_NAME = {"compute": "compute fabric", "storage": "storage network", "management": "management network"}
CLASS_COLOUR = {
    "node-leaf": "#3b7dd8", "leaf-spine": "#1f4e9e", "spine-core": "#0f2c63",
    "node-storage": "#e07b00", "storage-unit": "#a64b00", "storage-leaf-spine": "#f0a13a",
    "storage-spine-core": "#c97a12", "mgmt": "#9b6fd0", "mgmt-uplink": "#5b2f8f",
}
CLASS_NAME = {
    "node-leaf": "node–leaf", "leaf-spine": "leaf–spine", "spine-core": "spine–core",
    "node-storage": "node–storage", "storage-unit": "storage unit", "storage-leaf-spine": "storage leaf–spine",
    "storage-spine-core": "storage spine–core", "mgmt": "management", "mgmt-uplink": "management uplink",
}
CLASS_STYLE = {"mgmt": "dashed", "mgmt-uplink": "dashed"}


def _money(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


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


def network_caption(fabric: Fabric, network: str) -> str:
    """One line on what a network is: its technology, speed, switches."""
    d = fabric.design
    if network == "compute":
        text = f"{d.interconnect} · {d.link_gbps}G · {d.tiers} tier" + ("" if d.tiers == 1 else "s")
        g = rails_per_leaf(d)
        if d.fabric.rail_only:
            text += f" · rail-only, {rail_groups(d)} switches of {g} rails"
        elif d.tiers >= 2 and d.nics_per_node > 1:
            text += f" · {g} rail{'' if g == 1 else 's'} per leaf"
        return text
    if network == "storage":
        sn = d.storage_network
        if sn.mode == "converged":
            where = ""
            if d.tiers >= 2:
                where = (f" (units on the {'spines' if d.tiers == 2 else 'cores'})" if sn.converged_attach == "top"
                         else " (units on storage leaves)")
            return f"converged on the compute fabric{where} · {sn.link_gbps}G"
        tiers = f"{sn.tiers} tier" + ("" if sn.tiers == 1 else "s")
        return f"dedicated · {sn.nics_per_node} × {sn.nic} per node · {sn.link_gbps}G · {tiers} of {sn.switch}"
    mn = d.management_network
    return f"{mn.switch} · {mn.link_gbps}G to devices, {mn.uplink_gbps}G uplinks"


def _switch_facts(fabric: Fabric, network: str) -> str:
    tiers: dict[tuple[str, str], int] = {}
    for device in fabric.switch_list:
        if device.network == network:
            tiers[(device.model, device.role)] = tiers.get((device.model, device.role), 0) + 1
    return ", ".join(f"{count:,} × {model} {role}" for (model, role), count in tiers.items()) or "none"


def _legend(fabric: Fabric, view: View) -> str:
    """An HTML-like table: per network its link classes and parts, switches and facts; then racks."""
    design = fabric.design
    rows = ['<tr><td colspan="3"><b>legend</b></td></tr>']
    for network in ("compute", "storage", "management"):
        colour = NETWORK_COLOUR[network]
        rows.append(f'<tr><td colspan="3" align="left"><font color="{colour}"><b>{NETWORK_NAME[network]}</b></font>'
                    f" · {escape(network_caption(fabric, network))}</td></tr>")
        for bundle in fabric.links:
            if bundle.network != network:
                continue
            bought = " + ".join(
                f"{count:,} × {escape(part)} · " + (f"{bundle.length_m:g} m runs" if part == bundle.part.id else "in rack")
                for part, count in fabric.parts_bought(bundle).items())
            rows.append(
                f'<tr><td align="left"><font color="{CLASS_COLOUR[bundle.between]}">■</font> '
                f"{CLASS_NAME[bundle.between]}</td>"
                f'<td align="left">{escape(bundle_text(bundle, len(bundle)))}</td>'
                f'<td align="left">{bought}</td></tr>'
            )
        switches = _switch_facts(fabric, network)
        if network == "storage" and design.storage_network.mode == "converged":
            switches = "none of its own: the storage units sit on the compute fabric"
        facts = [("switches", switches)]
        if network == "storage":
            for choice in (design.storage, design.cold_storage):
                if choice is None:
                    continue
                which = "hot tier" if choice is design.storage else "cold tier"
                facts.append((which, f"{choice.units:,} × {choice.tier} · {choice.capacity_tb:,.0f} TB · "
                                     f"{choice.read_gbps:,.0f} Gb/s read · {choice.write_gbps:,.0f} Gb/s write"))
            sn = design.storage_network
            facts.append(("bandwidth", f"{sn.node_gbps:,.0f} Gb/s per node × {count_of(design.nodes, 'node')}; "
                                       f"{sn.need_gbps:,.0f} Gb/s needed"))
        rows += [f'<tr><td align="left">{k}</td><td align="left" colspan="2">{escape(v)}</td></tr>' for k, v in facts]
    by_class: dict[str, dict[str, int]] = {}
    for rack in fabric.racks.racks:
        roles = by_class.setdefault(rack.rack_class, {})
        roles[rack.role] = roles.get(rack.role, 0) + 1
    racks = " + ".join(f"{sum(roles.values()):,} × {rack_class} ({', '.join(f'{n:,} {r}' for r, n in roles.items())})"
                       for rack_class, roles in by_class.items())
    facts = [("racks", racks)]
    if view.name == "detail":
        facts.append(("lines", "each line carries every link between a rack (or scalable unit) and a switch"))
    rows += [f'<tr><td align="left">{k}</td><td align="left" colspan="2">{escape(v)}</td></tr>' for k, v in facts]
    return '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">' + "".join(rows) + "</table>>"


def fabric_dot(fabric: Fabric, result: SolveResult | None = None, *, title: str | None = None,
               view: str | None = None) -> str:
    """The DOT source of the drawing (``view`` = ``detail``, ``summary``, or chosen by size)."""
    detail = (view or view_name(fabric)) == "detail"
    chosen = detail_view(fabric, TIER_COLOUR) if detail else summary_view(fabric)
    dot = graphviz.Graph("fabric", engine="dot")
    # remincross=false: dot's final crossing pass over clusters ignores the invisible edges that keep
    # each row in order (mgmt-03 would land left of mgmt-01).
    dot.attr(rankdir="TB", newrank="true", compound="true", remincross="false", nodesep="0.3", ranksep="0.9",
             fontname="Helvetica",
             label=headline(fabric, result, title), labelloc="t", fontsize="18", tooltip="topoopt fabric")
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="11")
    dot.attr("edge", fontname="Helvetica", fontsize="10")
    bottoms = _add_boxes(dot, fabric, chosen)
    representative = _representatives(chosen)
    for line in lines_of(fabric, chosen):
        link_class = line.bundle.between
        text = bundle_text(line.bundle, line.count)
        attrs = {"label": text, "tooltip": f"{text} ({CLASS_NAME[link_class]})", "color": CLASS_COLOUR[link_class],
                 "fontcolor": NETWORK_COLOUR[line.bundle.network], "penwidth": f"{1 + math.log10(line.count):.2f}"}
        if link_class in CLASS_STYLE:
            attrs["style"] = CLASS_STYLE[link_class]
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


def _network_of(box: Box) -> str | None:
    """The network frame a box is drawn in; None for nodes and racks of nodes (every network
    reaches them)."""
    return None if box.tier == "node" else NETWORK_OF_TIER[box.tier]


def _rows(view: View) -> list[list[str]]:
    """Box ids per drawn row, top to bottom; racks fill rows of at most RACKS_PER_ROW in the detail
    view, collapsed boxes stay on one row."""
    rows = []
    for tiers in ROWS:
        ids = [box.id for tier in tiers for box in view.boxes if box.tier == tier]
        if not ids:
            continue
        per_row = RACKS_PER_ROW if view.name == "detail" and len(ids) > RACKS_PER_ROW else len(ids)
        rows += [ids[start:start + per_row] for start in range(0, len(ids), per_row)]
    return rows


def _add_boxes(dot: graphviz.Graph, fabric: Fabric, view: View) -> list[str]:
    """Emit every box inside its network's frame (and scalable-unit frame), then one rank per row;
    return the boxes of the lowest row.

    Invisible edges between neighbours of a row keep it in order; dot honours them only inside
    the frame both boxes are drawn in, so they are emitted there."""
    rows = _rows(view)
    right_of = {left: right for row in rows for left, right in zip(row, row[1:])}
    frame_of = {box.id: (_network_of(box), box.frame) for box in view.boxes}

    def emit(graph: graphviz.Graph, boxes: list[Box]) -> None:
        for box in boxes:
            _node(graph, box)
        for box in boxes:
            right = right_of.get(box.id)
            if right is not None and frame_of[right] == frame_of[box.id]:
                graph.edge(box.id, right, style="invis")

    emit(dot, [box for box in view.boxes if _network_of(box) is None])
    for network in ("compute", "storage", "management"):
        members = [box for box in view.boxes if _network_of(box) == network]
        if not members:
            continue
        colour = NETWORK_COLOUR[network]
        caption = f"{NETWORK_NAME[network]} · {network_caption(fabric, network)}"
        with dot.subgraph(name=f"cluster_net_{network}") as frame:
            # Lines enter the storage and management frames from above: their captions go below.
            frame.attr(label=caption, style="dashed,rounded", color=colour, fontcolor=colour, fontsize="12",
                       tooltip=NETWORK_NAME[network], labeljust="l", labelloc="t" if network == "compute" else "b")
            frames: dict[str, list[Box]] = {}
            for box in members:
                frames.setdefault(box.frame, []).append(box)
            for name, boxes in frames.items():
                if not name:
                    emit(frame, boxes)
                    continue
                with frame.subgraph(name=f"cluster_{name}") as sub:
                    label = view.frame_labels.get(name, name)
                    sub.attr(label=label, style="dashed,rounded", color="#888888", fontcolor="#444444", fontsize="10",
                             tooltip=label)
                    emit(sub, boxes)
    for index, row in enumerate(rows):
        with dot.subgraph(name=f"rank_{index}") as rank:
            rank.attr(rank="same")
            for box_id in row:
                rank.node(box_id)
        if index:
            # An invisible edge from the row above keeps the rows in order even without links.
            above = rows[index - 1]
            dot.edge(above[len(above) // 2], row[len(row) // 2], style="invis")
    return rows[-1] if rows else []


def _node(graph: graphviz.Graph, box: Box) -> None:
    table = box.label.startswith("<")
    count = len(box.devices)
    graph.node(box.id, label=box.label, fillcolor=TIER_COLOUR[box.tier],
               shape="plaintext" if table else ("box3d" if count > 1 else "box"),
               style="" if table else "rounded,filled", tooltip=box.tooltip or inventory(box.devices))


def write_drawing(fabric: Fabric, result: SolveResult | None, path: Path, *, title: str | None = None) -> Path:
    """Write the DOT source of the drawing to ``path``."""
    path.write_text(fabric_dot(fabric, result, title=title), encoding="utf-8")
    return path
