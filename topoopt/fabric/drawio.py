"""``fabric.drawio``: the fabric drawing as an editable draw.io (diagrams.net) file.

The same view as ``fabric.svg`` (:mod:`topoopt.fabric.views`: one box per switch and per rack in
the detail view, one per tier and block in the summary), in the drawing's rows and colours
(:mod:`topoopt.fabric.draw`), laid out on a grid: a row per tier, boxes left to right in the
view's order, a scalable unit's leaves inside a container. Each line is one draw.io edge labelled
like the SVG's ("32 × 400G mmf ≤ 50 m").

Boxes are draw.io ``object`` cells carrying what they stand for as properties (``role``,
``devices`` and ``nodes``: how many devices and GPU nodes the box holds; ``links`` on edges), so the file can be checked or
scripted without reading labels. The file is uncompressed mxGraph XML, which draw.io opens as is.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from topoopt.fabric.build import Fabric
from topoopt.fabric.draw import CLASS_COLOUR, NETWORK_COLOUR, ROWS, TIER_COLOUR
from topoopt.fabric.views import (
    NETWORK_OF_TIER,
    Box,
    View,
    bundle_text,
    detail_view,
    inventory,
    lines_of,
    summary_view,
    view_name,
)

BOX_W, BOX_H = 180, 70
"""Box size in draw.io units (pixels at 100 %)."""
GAP_X, GAP_Y = 40, 90
FRAME_PAD = 20


def _label(box: Box) -> str:
    """Plain text for a box: its label, or (rack and managed tables, HTML-like for Graphviz) its id and contents."""
    if not box.label.startswith("<"):
        return box.label
    return f"{box.id}\n{inventory(box.devices) or box.tooltip}"


def _layout(view: View) -> dict[str, tuple[int, int]]:
    """Top-left corner of every box: one row per tier group of :data:`~topoopt.fabric.draw.ROWS`."""
    group_of = {tier: group for group, tiers in enumerate(ROWS) for tier in tiers}
    used = sorted({group_of[box.tier] for box in view.boxes})
    row_of = {tier: used.index(group) for tier, group in group_of.items() if group in used}  # no empty rows
    columns: dict[int, int] = {}
    position = {}
    for box in view.boxes:
        row = row_of[box.tier]
        column = columns.get(row, 0)
        columns[row] = column + 1
        position[box.id] = (column * (BOX_W + GAP_X), row * (BOX_H + GAP_Y))
    return position


def drawio_xml(fabric: Fabric) -> str:
    """The draw.io document of the fabric drawing."""
    view = detail_view(fabric, TIER_COLOUR) if view_name(fabric) == "detail" else summary_view(fabric)
    position = _layout(view)
    mxfile = ET.Element("mxfile", host="topoopt")
    diagram = ET.SubElement(mxfile, "diagram", id="fabric", name=f"fabric ({view.name})")
    model = ET.SubElement(diagram, "mxGraphModel", grid="1", gridSize="10")
    root = ET.SubElement(model, "root")
    ET.SubElement(root, "mxCell", id="0")
    ET.SubElement(root, "mxCell", id="1", parent="0")
    cell_id: dict[str, str] = {}
    frames: dict[str, list[str]] = {}
    for box in view.boxes:
        if box.frame:
            frames.setdefault(box.frame, []).append(box.id)
    for frame, members in frames.items():
        xs = [position[m][0] for m in members]
        y = position[members[0]][1]
        cell_id[f"cluster_{frame}"] = f"frame:{frame}"
        _vertex(root, f"frame:{frame}", view.frame_labels.get(frame, frame),
                "rounded=1;dashed=1;fillColor=none;verticalAlign=top;align=left;spacingLeft=6;",
                (min(xs) - FRAME_PAD, y - FRAME_PAD, max(xs) - min(xs) + BOX_W + 2 * FRAME_PAD, BOX_H + 2 * FRAME_PAD),
                role="frame", devices="0", nodes="0")
    for box in view.boxes:
        cell_id[box.id] = f"box:{box.id}"
        colour = NETWORK_COLOUR[NETWORK_OF_TIER[box.tier]]
        style = f"rounded=1;whiteSpace=wrap;html=0;fillColor={TIER_COLOUR[box.tier]};strokeColor={colour};"
        _vertex(root, f"box:{box.id}", _label(box), style, (*position[box.id], BOX_W, BOX_H),
                role=box.tier, devices=str(len(box.devices)),
                nodes=str(sum(device.role == "node" for device in box.devices)))
    for i, line in enumerate(lines_of(fabric, view)):
        bundle = line.bundle
        style = (f"endArrow=none;html=0;strokeColor={CLASS_COLOUR[bundle.between]};"
                 f"fontColor={NETWORK_COLOUR[bundle.network]};labelBackgroundColor=#ffffff;")
        edge = ET.SubElement(root, "object", id=f"line:{i + 1}", label=bundle_text(bundle, line.count),
                             links=str(line.count), link_class=bundle.between, network=bundle.network)
        cell = ET.SubElement(edge, "mxCell", style=style, edge="1", parent="1", source=cell_id[line.a],
                             target=cell_id[line.b])
        ET.SubElement(cell, "mxGeometry", relative="1", **{"as": "geometry"})
    return ET.tostring(mxfile, encoding="unicode", xml_declaration=False)


def _vertex(root: ET.Element, ident: str, label: str, style: str, geometry: tuple, **properties: str) -> None:
    obj = ET.SubElement(root, "object", id=ident, label=label, **properties)
    cell = ET.SubElement(obj, "mxCell", style=style, vertex="1", parent="1")
    x, y, w, h = geometry
    ET.SubElement(cell, "mxGeometry", x=str(x), y=str(y), width=str(w), height=str(h), **{"as": "geometry"})


def write_drawio(fabric: Fabric, path: Path) -> Path:
    """Write ``fabric.drawio``; return its path."""
    path.write_text(drawio_xml(fabric), encoding="utf-8")
    return path
