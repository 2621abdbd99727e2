"""NetBox bulk-import files, all objects with status ``planned``, importable into an empty NetBox.

Import them in :data:`IMPORT_ORDER` (each file refers only to objects of the files before it):

=============================  ================================================================
``netbox-manufacturers.csv``   Organization → Manufacturers → Import (``name, slug``)
``netbox-device-types.yaml``   Devices → Device Types → Import: one YAML document per model in
                               the device-type library format, with its interfaces and power
                               port (:mod:`topoopt.fabric.netbox_types`)
``netbox-device-roles.csv``    Devices → Device Roles → Import, a role per tier (``leaf``,
                               ``storage-leaf``, ``management-leaf``, ``storage-hot`` …) in
                               the drawing's colour of its network
``netbox-sites.csv``           Organization → Sites → Import: the instance as one site
``netbox-racks.csv``           Racks → Import: every rack with its height; the rack class and
                               the rack's row and position on the floor are the description
``netbox-devices.csv``         Devices → Import: every device of the three networks with its
                               manufacturer, type, role, site, rack, position and face
``netbox-cables.csv``          Connections → Cables → Import
=============================  ================================================================

The columns are fields of the NetBox 4.6 import forms (``dcim/forms/bulk_import.py``). A NetBox
CSV cable row has one termination per side (``CableImportForm`` sets a single termination), so
``netbox-cables.csv`` has one row per logical link, labelled with its assembly id and lane
(``NL-0001.2``): an assembly carrying several links (a twin-port OSFP cable) is several NetBox
cables with one label stem, which lines the file up with ``cables.csv``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from topoopt.fabric.build import Fabric
from topoopt.fabric.csvfile import write_csv
from topoopt.fabric.draw import NETWORK_COLOUR
from topoopt.fabric.netbox_types import device_types, slug
from topoopt.fabric.racks import Rack

# NetBox cable type choices per catalog media.
CABLE_TYPE = {"dac": "dac-passive", "acc": "dac-active", "aoc": "aoc", "mmf": "mmf", "smf": "smf"}
DEVICE_ROLE = {
    "node": "gpu-node", "leaf": "leaf", "spine": "spine", "core": "core",
    "storage-leaf": "storage-leaf", "storage-spine": "storage-spine", "storage-core": "storage-core",
    "mgmt-leaf": "management-leaf", "mgmt-aggregation": "management-aggregation",
    "storage": "storage-hot", "cold-storage": "storage-cold", "pdu": "pdu",
    "head": "head-node",
}
# NetBox cable types of twisted-pair (RJ45) patch cords, the management network's, by speed (Gb/s).
COPPER_TYPE = {1: "cat6", 10: "cat6a", 25: "cat8", 40: "cat8"}
SITE_NAME_MAX = 100
"""``Site.name`` is ``max_length=100`` in NetBox 4.6 (``dcim/models/sites.py``)."""
RACK_WIDTH_IN = 19
"""Racks are 19-inch (EIA-310) in the catalog's rack classes; NetBox's default width too."""

IMPORT_ORDER = ["netbox-manufacturers.csv", "netbox-device-types.yaml", "netbox-device-roles.csv", "netbox-sites.csv",
                "netbox-racks.csv", "netbox-devices.csv", "netbox-cables.csv"]
MANUFACTURER_COLUMNS = ["name", "slug"]
ROLE_COLUMNS = ["name", "slug", "color", "description"]
SITE_COLUMNS = ["name", "slug", "status", "description"]
RACK_COLUMNS = ["site", "name", "status", "width", "u_height", "description"]
DEVICE_COLUMNS = ["name", "role", "manufacturer", "device_type", "site", "rack", "position", "face", "status"]
CABLE_COLUMNS = [
    "side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
    "type", "status", "label", "length", "length_unit",
]


def site_name(name: str) -> tuple[str, str | None]:
    """The NetBox site name for an instance name, and a warning when it had to be shortened."""
    if len(name) <= SITE_NAME_MAX:
        return name, None
    short = name[:SITE_NAME_MAX]
    return short, f"NetBox site names are at most {SITE_NAME_MAX} characters: the site is named {short!r}"


def write_netbox(fabric: Fabric, site: str, out_dir: Path) -> tuple[list[Path], list[str]]:
    """Write the NetBox import files (:data:`IMPORT_ORDER`); return their paths and any warnings."""
    site, warning = site_name(site)
    types = device_types(fabric)
    manufacturer_of = {t["model"]: t["manufacturer"] for t in types}
    manufacturers = sorted({t["manufacturer"] for t in types})
    roles: dict[str, str] = {}
    for device in fabric.devices:
        roles.setdefault(DEVICE_ROLE[device.role], device.network)
    # A zero-U device (a rack PDU) has no position or face in its rack.
    devices = ([d.name, DEVICE_ROLE[d.role], manufacturer_of[d.model], d.model, site, d.rack,
                d.u if d.rack_units else "", "front" if d.rack_units else "", "planned"] for d in fabric.devices)
    racks = ([site, rack.name, "planned", RACK_WIDTH_IN, rack.units, _rack_description(fabric, rack)]
             for rack in fabric.racks.racks)
    types_path = out_dir / "netbox-device-types.yaml"
    types_path.write_text(yaml.safe_dump_all(types, sort_keys=False, allow_unicode=True), encoding="utf-8")
    paths = [
        write_csv(out_dir / "netbox-manufacturers.csv", MANUFACTURER_COLUMNS, ([m, slug(m)] for m in manufacturers)),
        types_path,
        write_csv(out_dir / "netbox-device-roles.csv", ROLE_COLUMNS,
                  ([role, slug(role), NETWORK_COLOUR[network].lstrip("#"), f"{network} network"] for role, network in roles.items())),
        write_csv(out_dir / "netbox-sites.csv", SITE_COLUMNS, [[site, slug(site), "planned", "designed by topoopt"]]),
        write_csv(out_dir / "netbox-racks.csv", RACK_COLUMNS, racks),
        write_csv(out_dir / "netbox-devices.csv", DEVICE_COLUMNS, devices),
        write_csv(out_dir / "netbox-cables.csv", CABLE_COLUMNS, (row for b in fabric.links for row in _cable_rows(fabric, b))),
    ]
    return paths, [warning] if warning else []


def _cable_type(part, gbps: int) -> str:
    """NetBox's cable type of an assembly of ``part`` at ``gbps``."""
    twisted_pair = part.media == "utp" or "rj45" in (part.a_form_factor, part.b_form_factor)
    return COPPER_TYPE.get(gbps, "") if twisted_pair else CABLE_TYPE.get(part.media, "")


def _cable_rows(fabric: Fabric, bundle):
    """One NetBox cable per lane, labelled ``<assembly id>.<lane>``, at its assembly's length and of
    its part's type, as in cables.csv (:meth:`Fabric.assemblies`)."""
    assemblies = fabric.assemblies(bundle)
    length = {cable: f"{length_m:g}" for cable, (_, length_m) in assemblies.items()}
    kind = {cable: _cable_type(part, bundle.gbps) for cable, (part, _) in assemblies.items()}
    ids = bundle.cable_ids
    previous, lane = -1, 0
    for i, cable in enumerate(bundle.cable):
        lane = lane + 1 if cable == previous else 1
        previous = cable
        yield (
            bundle.a_device[i], "dcim.interface", bundle.a_port[i],
            bundle.b_device[i], "dcim.interface", bundle.b_port[i],
            kind[cable], "planned", f"{ids[cable]}.{lane}", length[cable], "m",
        )


def _rack_description(fabric: Fabric, rack: Rack) -> str:
    """``air-45kw (compute), row 2 position 7``: the rack class and where the rack stands."""
    spot = fabric.floor.spots[rack.name]
    return f"{rack.rack_class} ({rack.role}), row {spot.row} position {spot.position}"
