"""InfiniBand topology for ibdiagnet / ibdmchk (``-t``) and the point-to-point sheet, for IB fabrics.

``ib-topology.topo`` is an IBDM topology file (``ibdm-topo-file(1)``): a section per switch, its
first line ``<system type> <system name>``, then one line per cable from that switch,
``<port> -<width>-> <remote type> <remote name> <remote port>``, every link written once (under
its upper switch). Port names are the ones of ``cables.csv``; ``ibnl/<type>.ibnl``
(``ibdm-ibnl-file(1)``) declares each system type so the tools map them to the real IB port
numbers: a switch is one ``NODE SW`` whose port *n* is the *n*-th logical port (cage-major, so
``p3/2`` of a twin-port switch is port 6), a server one single-port ``NODE CA`` per rail (``U1`` is
rail 1). Point the tools at the types with ``IBDM_IBNL_PATH=<out>/ibnl`` (what ``ibdiagnet -wt``
itself does for the types it writes).

Width is the lanes a port uses at the design's speed, ``4x`` (or omitted for a 2-lane HDR100 /
NDR200 port, which the IBDM grammar ``1|4|8|12`` cannot express). The IBDM grammar has no lane
speed above 10 Gb/s, so each section says its speed in a comment, and the sheet has it per link.

``ib-links.csv`` has one row per link: cable id, both ends (system, type, IBDM node, port name,
IB port number), width, speed, part and length.

Only the compute fabric is InfiniBand; storage and management networks are Ethernet and are not
in these files. Ethernet designs get none of them.
"""

from __future__ import annotations

from pathlib import Path

from topoopt.fabric.build import Fabric
from topoopt.fabric.csvfile import write_csv
from topoopt.fabric.names import node_port_names, port_names
from topoopt.fabric.wiring import COMPUTE_CLASSES

# Gb/s per lane of each InfiniBand generation: HDR 50G-PAM4, NDR 100G-PAM4, XDR 200G-PAM4
# (NVIDIA LinkX product-line overviews, docs.nvidia.com/networking/display/400g100gpam4ovpub and
# .../800g200gpam4list).
LANE_GBPS = {"ib-hdr": 50, "ib-hdr100": 50, "ib-ndr": 100, "ib-ndr200": 100, "ib-xdr": 200}
TOPO_WIDTHS = {1, 4, 8, 12}
"""Widths the IBDM topology grammar accepts (``-(1|4|8|12)[xX]-``)."""
LINK_COLUMNS = ["cable", "a_system", "a_type", "a_node", "a_port", "a_port_number", "b_system", "b_type", "b_node",
                "b_port", "b_port_number", "width", "speed_gbps", "part", "length_m"]


def is_infiniband(fabric: Fabric) -> bool:
    """True when the compute fabric is InfiniBand (and has switches)."""
    return fabric.design.tiers > 0 and fabric.design.interconnect in LANE_GBPS


def port_numbers(fabric: Fabric) -> dict[str, dict[str, tuple[str, int]]]:
    """System type → port name → (IBDM node, IB port number): a switch's ``U1`` and its logical port
    index, a server's rail CA ``U<rail>`` and its one port."""
    hw = fabric.hardware
    switch_ports = port_names(hw.radix // hw.switch_ports_per_cage, hw.switch_ports_per_cage)
    node_ports = node_port_names(hw.rails, hw.node_ports_per_cage)
    return {hw.switch.id: {name: ("U1", i + 1) for i, name in enumerate(switch_ports)},
            hw.server.id: {name: (f"U{rail}", 1) for rail, name in enumerate(node_ports, start=1)}}


def ibnl_files(fabric: Fabric) -> dict[str, str]:
    """File name → text of the IBNL definition of each system type."""
    hw = fabric.hardware
    switch_ports = port_names(hw.radix // hw.switch_ports_per_cage, hw.switch_ports_per_cage)
    lines = [f"TOPSYSTEM {hw.switch.id}", "", f"NODE SW {len(switch_ports)} {hw.switch.id} U1"]
    lines += [f"   {i + 1} -> {name}" for i, name in enumerate(switch_ports)]
    switch = "\n".join(lines) + "\n"
    lines = [f"TOPSYSTEM {hw.server.id}"]
    for rail, name in enumerate(node_port_names(hw.rails, hw.node_ports_per_cage), start=1):
        lines += ["", f"NODE CA 1 {hw.nic.id} U{rail}", f"   1 -> {name}"]
    server = "\n".join(lines) + "\n"
    return {f"{hw.switch.id}.ibnl": switch, f"{hw.server.id}.ibnl": server}


def links(fabric: Fabric):
    """``(a, b, cable, width, speed, bundle)`` per compute-fabric link, ``a`` and ``b`` as (system, type, port)."""
    design = fabric.design
    model_of = {device.name: device.model for device in fabric.devices}
    lane = LANE_GBPS[design.interconnect]
    for bundle in fabric.links:
        if bundle.network != "compute" or bundle.between not in COMPUTE_CLASSES:
            continue
        width = bundle.gbps // lane
        for i, (a, a_port, b, b_port) in enumerate(zip(bundle.a_device, bundle.a_port, bundle.b_device,
                                                       bundle.b_port)):
            yield ((a, model_of[a], a_port), (b, model_of[b], b_port), bundle.cable_ids[bundle.cable[i]], width,
                   bundle.gbps, bundle)


def topology_text(fabric: Fabric) -> str:
    """The IBDM topology file: a section per upper switch, one line per link."""
    design = fabric.design
    sections: dict[tuple[str, str], list[str]] = {}
    for (a, a_type, a_port), (b, b_type, b_port), _, width, _, _ in links(fabric):
        arrow = f"-{width}x->" if width in TOPO_WIDTHS else "->"
        sections.setdefault((a_type, a), []).append(f"   {a_port} {arrow} {b_type} {b} {b_port}")
    lane = LANE_GBPS[design.interconnect]
    out = [f"# IBDM topology of the {design.interconnect} compute fabric: {design.nodes} x {design.server}, "
           f"{design.fabric.tiers} tiers. Generated by topoopt.",
           f"# Links run at {design.link_gbps} Gb/s ({design.link_gbps // lane} lanes x {lane} Gb/s); "
           f"system types are defined in ibnl/ (IBDM_IBNL_PATH).", ""]
    for (kind, name), lines in sections.items():
        out += [f"{kind} {name}", *lines, ""]
    return "\n".join(out)


def write_ib_topology(fabric: Fabric, out_dir: Path) -> list[Path]:
    """Write ``ib-topology.topo``, ``ibnl/*.ibnl`` and ``ib-links.csv`` for an IB fabric; none otherwise."""
    if not is_infiniband(fabric):
        return []
    topo = out_dir / "ib-topology.topo"
    topo.write_text(topology_text(fabric), encoding="utf-8")
    written = [topo]
    ibnl_dir = out_dir / "ibnl"
    ibnl_dir.mkdir(exist_ok=True)
    for name, text in ibnl_files(fabric).items():
        (ibnl_dir / name).write_text(text, encoding="utf-8")
        written.append(ibnl_dir / name)
    numbers = port_numbers(fabric)
    assembly = {bundle.cable_ids[cable]: (part.id, f"{length_m:g}") for bundle in fabric.links
                if bundle.network == "compute" for cable, (part, length_m) in fabric.assemblies(bundle).items()}
    rows = ([cable, a, a_type, *_numbered(numbers, a_type, a_port), b, b_type, *_numbered(numbers, b_type, b_port),
             f"{width}x", gbps, *assembly[cable]]
            for (a, a_type, a_port), (b, b_type, b_port), cable, width, gbps, _ in links(fabric))
    written.append(write_csv(out_dir / "ib-links.csv", LINK_COLUMNS, rows))
    return written


def _numbered(numbers: dict, kind: str, port: str) -> tuple[str, str, int]:
    node, number = numbers[kind][port]
    return node, port, number
