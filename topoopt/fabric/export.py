"""Every output file of a design, written by :func:`write_outputs`.

=====================  ================================================================
``bom.csv``            bill of materials: the cost breakdown with catalog descriptions; a
                       final ``total`` row equals ``cost.total``
``bom.xlsx``           the same as a workbook, a sheet per network (see :mod:`topoopt.fabric.xlsx`)
``cables.csv``         cable schedule: one row per assembly (cable or transceiver kit) of
                       all three networks (``network`` and ``link_class`` columns); ports of a
                       multi-link assembly are joined with ``+`` (and its devices, where its links
                       reach several at one end); its length is the in-rack
                       run when its ends share a rack, else from where their racks stand
                       (:mod:`topoopt.fabric.floor`)
``cable-lengths.csv``  assemblies per part and length, as installers order them
``racks.csv``          rack plan: one row per device with its rack's row and position, its U
                       position and power
``floor.svg``          the floor plan drawn: a rectangle per rack at its row and position
                       (see :mod:`topoopt.fabric.floor_svg`)
``fabric.graphml``     the MultiGraph of :func:`topoopt.fabric.fabric_graph`
``topology.conf``      Slurm topology/tree, every Slurm from 22.05 (see :mod:`topoopt.fabric.slurm`)
``topology.yaml``      Slurm 25.05+ tree and block topologies
``ib-topology.topo``   InfiniBand fabrics: ibdiagnet/ibdmchk topology, ``ibnl/`` types and the
                       point-to-point sheet ``ib-links.csv`` (see :mod:`topoopt.fabric.ibtopo`)
``astra-sim-network.yml``  ASTRA-sim 2.x analytical network and ``simai-topology.txt`` SimAI/ns-3
                       topology of the compute fabric (see :mod:`topoopt.fabric.simulators`)
``netbox-*``           NetBox bulk import in its import order, status planned (see :mod:`topoopt.fabric.netbox`)
``fabric.dot/.svg``    the drawing (and ``fabric.png`` on request; see :mod:`topoopt.fabric.draw`)
``fabric.drawio``      the drawing as an editable draw.io file (see :mod:`topoopt.fabric.drawio`)
=====================  ================================================================
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from topoopt.fabric.build import Fabric, build_fabric
from topoopt.fabric.csvfile import write_csv
from topoopt.fabric.draw import write_drawing
from topoopt.fabric.drawio import write_drawio
from topoopt.fabric.floor_svg import write_floor_svg
from topoopt.fabric.graphml import write_fabric_graphml
from topoopt.fabric.hardware import FabricError, catalog_for
from topoopt.fabric.ibtopo import write_ib_topology
from topoopt.fabric.netbox import write_netbox
from topoopt.fabric.rendering import render_dot
from topoopt.fabric.simulators import write_simulator_inputs
from topoopt.fabric.slurm import write_topology
from topoopt.fabric.xlsx import write_bom_xlsx
from topoopt.models.catalog import Catalog
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance

BOM_COLUMNS = ["category", "part", "description", "quantity", "unit_price", "extended_price", "provenance", "source"]
CABLE_COLUMNS = ["id", "a_device", "a_port", "b_device", "b_port", "part", "media", "gbps", "length_m",
                 "network", "link_class"]
LENGTH_COLUMNS = ["part", "length_m", "quantity"]
RACK_COLUMNS = ["rack", "row", "position", "u", "device", "power_w", "model", "rack_units", "rack_class", "role", "network"]


@dataclass
class Outputs:
    """What :func:`write_outputs` wrote, and what the user should be told about."""

    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def write_outputs(result: SolveResult, instance: Instance | None, out_dir: str | Path, *, png: bool = False,
                  catalog: Catalog | None = None, dot_timeout_s: float = 60.0) -> Outputs:
    """Build the installation of ``result.design`` and write every output file into ``out_dir``.

    Never fails because Graphviz is missing or slow (the DOT file is kept and a warning returned).
    Raises :class:`~topoopt.fabric.hardware.FabricError` when the result has no design or the
    design cannot be built.
    """
    if result.design is None:
        raise FabricError(f"the result has no design to render (status {result.status})")
    fabric = build_fabric(result.design, instance, catalog=catalog)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    outputs = Outputs(warnings=fabric.warnings + fabric.floor_warnings)
    outputs.files.append(write_csv(out / "bom.csv", BOM_COLUMNS, bom_rows(result, fabric)))
    if result.cost is not None:
        total = sum(line.total for line in result.cost.breakdown)
        if abs(total - result.cost.total) > 0.5:
            outputs.warnings.append(f"cost breakdown sums to {total:g}, the result's total is {result.cost.total:g}")
    title = instance.name if instance else f"{result.design.nodes} x {result.design.server}"
    outputs.files.append(write_bom_xlsx(out / "bom.xlsx", result, fabric, _descriptions(fabric), _counts(fabric), title))
    cables = list(cable_rows(fabric))
    outputs.files.append(write_csv(out / "cables.csv", CABLE_COLUMNS, cables))
    outputs.files.append(write_csv(out / "cable-lengths.csv", LENGTH_COLUMNS, length_rows(cables)))
    outputs.files.append(write_csv(out / "racks.csv", RACK_COLUMNS, rack_rows(fabric)))
    outputs.files.append(write_floor_svg(fabric, out / "floor.svg"))
    graphml = out / "fabric.graphml"
    write_fabric_graphml(fabric, graphml)
    outputs.files.append(graphml)
    outputs.files.extend(write_topology(fabric, out))
    outputs.files.extend(write_ib_topology(fabric, out))
    outputs.files.extend(write_simulator_inputs(fabric, catalog if catalog is not None else catalog_for(instance), out))
    netbox_files, netbox_warnings = write_netbox(fabric, instance.name if instance else "topoopt", out)
    outputs.files.extend(netbox_files)
    outputs.warnings.extend(netbox_warnings)
    outputs.files.append(write_drawio(fabric, out / "fabric.drawio"))
    dot_path = write_drawing(fabric, result, out / "fabric.dot", title=instance.name if instance else None)
    outputs.files.append(dot_path)
    for fmt in ("svg", "png") if png else ("svg",):
        rendered, warning = render_dot(dot_path, fmt, timeout_s=dot_timeout_s)
        if rendered is not None:
            outputs.files.append(rendered)
        if warning:
            outputs.warnings.append(warning)
    return outputs


def _descriptions(fabric: Fabric) -> dict[str, str]:
    hw = fabric.hardware
    parts = [part for _, part in hw.groups] + list(hw.in_rack_parts.values())
    items = [hw.server, hw.nic, hw.switch, hw.rack_class, hw.infra_rack_class, hw.storage, hw.cold_storage, hw.storage_net.nic,
             hw.storage_net.switch, hw.management.switch, hw.management.aggregation, hw.head, *parts]
    text = {item.id: item.name for item in items if item is not None}
    for part in parts:
        if part.components:
            text[part.id] = f"{part.name}: {part.components}"
    return text


def _counts(fabric: Fabric) -> list[tuple[str, str, int]]:
    """``(category, item, quantity)`` of everything installed, for a design without a cost."""
    design, hw = fabric.design, fabric.hardware
    counts = [("server", design.server, len(fabric.nodes))]
    if fabric.heads:
        counts.append(("server", fabric.heads[0].model, len(fabric.heads)))
    sn = design.storage_network
    if hw.storage_net.nic is not None and hw.storage_net.nics_bought:
        counts.append(("nic", hw.storage_net.nic.id, len(fabric.nodes) * sn.nics_per_node))
    switches: dict[str, int] = {}
    for device in fabric.switch_list:
        switches[device.model] = switches.get(device.model, 0) + 1
    counts += [("switch", model, count) for model, count in switches.items()]
    assemblies: dict[str, int] = {}
    for bundle in fabric.links:
        for part, count in fabric.parts_bought(bundle).items():
            assemblies[part] = assemblies.get(part, 0) + count
    counts += [("cable", part, count) for part, count in assemblies.items()]
    racks: dict[str, int] = {}
    for rack in fabric.racks.racks:
        racks[rack.rack_class] = racks.get(rack.rack_class, 0) + 1
    counts += [("rack", rack_class, count) for rack_class, count in racks.items()]
    units: dict[str, int] = {}
    for device in fabric.units:
        units[device.model] = units.get(device.model, 0) + 1
    counts += [("storage", model, count) for model, count in units.items()]
    return counts


def bom_rows(result: SolveResult, fabric: Fabric) -> list[list]:
    """One row per cost line, then a ``total`` row; without a cost, quantities only."""
    describe = _descriptions(fabric)
    if result.cost is None:
        return [[c, item, describe.get(item, ""), q, "", "", "", ""] for c, item, q in _counts(fabric)]
    cost = result.cost
    rows = [
        [line.category, line.item, describe.get(line.item, ""), line.quantity, _money(line.unit_price),
         _money(line.total), line.provenance + ("" if line.offered else ", not offered"), line.source]
        for line in cost.breakdown
    ]
    rows.append(["total", "", f"total, {cost.currency} ({cost.basis})", "", "", _money(cost.total), "", ""])
    return rows


def _money(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def cable_rows(fabric: Fabric):
    """One row per assembly: its upper device(s) and ports, its lower device(s) and ports, its
    part and its length (:meth:`Fabric.assemblies`). Several devices at one end (a breakout's
    nodes; a kit counted by the cages it fills whose links reach two switches,
    :attr:`LinkBundle.kits_by_cage`) are joined with ``+``, port by port."""
    for bundle in fabric.links:
        assemblies = fabric.assemblies(bundle)
        links: dict[int, list[int]] = {}
        for i, cable in enumerate(bundle.cable):
            links.setdefault(cable, []).append(i)
        for cable, at in links.items():
            part, length_m = assemblies[cable]
            yield (
                bundle.cable_ids[cable],
                _joined([bundle.a_device[i] for i in at]), "+".join(bundle.a_port[i] for i in at),
                _joined([bundle.b_device[i] for i in at]), "+".join(bundle.b_port[i] for i in at),
                part.id, part.media, bundle.gbps, f"{length_m:g}", bundle.network, bundle.between,
            )


def _joined(devices: list[str]) -> str:
    """One device's name, or each link's device joined with ``+`` when they differ."""
    return devices[0] if devices.count(devices[0]) == len(devices) else "+".join(devices)


def length_rows(rows) -> list[tuple]:
    """How many assemblies of each part at each run, as installers order them (from ``cable_rows``)."""
    bins = Counter((row[5], row[8]) for row in rows)
    return [(part, length, count) for (part, length), count in sorted(bins.items(), key=lambda x: (x[0][0], float(x[0][1])))]


def rack_rows(fabric: Fabric):
    for rack in fabric.racks.racks:
        spot = fabric.floor.spots[rack.name]
        for device in rack.devices + rack.zero_u:
            yield (rack.name, spot.row, spot.position, device.u, device.name, f"{device.power_w:g}", device.model, device.rack_units,
                   rack.rack_class, device.role, device.network)
