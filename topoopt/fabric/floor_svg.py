"""``floor.svg``: the floor plan drawn, one rectangle per rack at its row and position.

Racks are coloured by role (compute, network, storage, mixed), a compute rack holding a
management leaf marked with a bar at its top; each carries a tooltip (SVG
``<title>``) with its name, class, provisioned power and what it holds, and ``data-rack``,
``data-row`` and ``data-position`` attributes, so a script can read the plan back. Every string
is XML-escaped (rack class and model ids may come from an instance's own catalog).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from topoopt.checking.units import W_PER_KW
from topoopt.fabric.build import Fabric
from topoopt.fabric.racks import Rack

ROLE_COLOUR = {"compute": "#8c8c8c", "network": "#1f4e9e", "storage": "#c2570c", "mixed": "#7a4cb0"}
LEAF_MARK = "#2e8b57"
"""The bar on a compute rack that holds a management leaf."""
RACK_W, RACK_H, GAP, ROW_GAP, MARGIN, LABEL_W = 14, 22, 2, 10, 12, 52
"""Drawing units (px): a rack's width and depth, the gap between racks and between rows."""
LABELLED_RACKS = 64
"""Racks are labelled with their names up to this many; beyond, the tooltips name them."""


def write_floor_svg(fabric: Fabric, path: Path) -> Path:
    """Write the floor plan of ``fabric`` to ``path``."""
    spots = fabric.floor.spots
    rows = max((spot.row for spot in spots.values()), default=1)
    per_row = max([fabric.floor.racks_per_row, *(spot.position for spot in spots.values())])
    width = max(MARGIN * 2 + LABEL_W + per_row * (RACK_W + GAP), 600)  # room for the caption and legend
    top = MARGIN + 28  # the legend
    height = top + rows * (RACK_H + ROW_GAP) + MARGIN
    labelled = len(fabric.racks.racks) <= LABELLED_RACKS
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="9">',
           f"<title>{escape(_caption(fabric, rows))}</title>",
           f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="11">{escape(_caption(fabric, rows))}</text>']
    x = MARGIN
    for role, colour in ROLE_COLOUR.items():
        out.append(f'<rect x="{x}" y="{MARGIN + 14}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{x + 13}" y="{MARGIN + 23}">{role}</text>')
        x += 70
    out.append(f'<rect x="{x}" y="{MARGIN + 14}" width="10" height="3" fill="{LEAF_MARK}"/>'
               f'<text x="{x + 13}" y="{MARGIN + 23}">management leaf in a compute rack</text>')
    for row in range(1, rows + 1):
        out.append(f'<text x="{MARGIN}" y="{top + (row - 1) * (RACK_H + ROW_GAP) + RACK_H // 2 + 3}">row {row}</text>')
    for rack in fabric.racks.racks:
        spot = spots[rack.name]
        rx = MARGIN + LABEL_W + (spot.position - 1) * (RACK_W + GAP)
        ry = top + (spot.row - 1) * (RACK_H + ROW_GAP)
        out.append(f'<g data-rack={quoteattr(rack.name)} data-row="{spot.row}" data-position="{spot.position}">'
                   f"<title>{escape(_tooltip(rack))}</title>"
                   f'<rect x="{rx}" y="{ry}" width="{RACK_W}" height="{RACK_H}" fill="{ROLE_COLOUR[rack.role]}"/>'
                   + (f'<rect x="{rx}" y="{ry}" width="{RACK_W}" height="3" fill="{LEAF_MARK}"/>'
                      if rack.role == "compute" and any(d.role == "mgmt-leaf" for d in rack.devices) else "")
                   + (f'<text x="{rx + 1}" y="{ry + RACK_H + 8}" font-size="6">{escape(rack.name)}</text>'
                      if labelled else "") + "</g>")
    out.append("</svg>\n")
    path.write_text("\n".join(out), encoding="utf-8")
    return path


def _caption(fabric: Fabric, rows: int) -> str:
    d = fabric.floor.distances
    return (f"Floor plan: {len(fabric.racks.racks):,} racks in {rows:,} row{'s' if rows > 1 else ''} of up to "
            f"{fabric.floor.racks_per_row}; "
            f"{d.rack_width_m:g} m a rack along a row, {d.row_pitch_m:g} m from row to row")


def _tooltip(rack: Rack) -> str:
    held = Counter(f"{device.model} {device.role}" for device in rack.devices)
    return (f"{rack.name} · {rack.role} · {rack.rack_class} · {rack.power_w / W_PER_KW:.1f} kW · "
            + ", ".join(f"{count} × {what}" for what, count in held.items()))
