"""NetBox bulk-import CSVs: devices and cables, all with status ``planned``.

``netbox-devices.csv`` uses the columns of NetBox's device import (``name, role, device_type,
site, rack, position, face, status``); ``device_type`` is the topoopt catalog id, so create device
types with those model names (and interfaces named as in ``cables.csv``) before importing. Every
device of the three networks is listed, with a role per tier (``leaf``, ``storage-leaf``,
``management-leaf``, ``storage-hot`` …).
``netbox-cables.csv`` has one row per logical link — NetBox terminates a cable on one interface
per side — labelled with its assembly id and lane (``NL-0001.2``), so both files line up with
``cables.csv``.
"""

from __future__ import annotations

from pathlib import Path

from topoopt.fabric.build import Fabric
from topoopt.fabric.csvfile import write_csv

# NetBox cable type choices per catalog media.
CABLE_TYPE = {"dac": "dac-passive", "acc": "dac-active", "aoc": "aoc", "mmf": "mmf", "smf": "smf"}
DEVICE_ROLE = {
    "node": "gpu-node", "leaf": "leaf", "spine": "spine", "core": "core",
    "storage-leaf": "storage-leaf", "storage-spine": "storage-spine",
    "mgmt-leaf": "management-leaf", "mgmt-aggregation": "management-aggregation",
    "storage": "storage-hot", "cold-storage": "storage-cold",
}
# NetBox cable types of twisted-pair (RJ45) patch cords, the management network's, by speed (Gb/s).
COPPER_TYPE = {1: "cat6", 10: "cat6a", 25: "cat8", 40: "cat8"}

DEVICE_COLUMNS = ["name", "role", "device_type", "site", "rack", "position", "face", "status"]
CABLE_COLUMNS = [
    "side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
    "type", "status", "label", "length", "length_unit",
]


def write_netbox(fabric: Fabric, site: str, out_dir: Path) -> list[Path]:
    """Write ``netbox-devices.csv`` and ``netbox-cables.csv``; return their paths."""
    devices = (
        [d.name, DEVICE_ROLE[d.role], d.model, site, d.rack, d.u, "front", "planned"] for d in fabric.devices
    )
    cables = (row for bundle in fabric.links for row in _cable_rows(bundle))
    return [
        write_csv(out_dir / "netbox-devices.csv", DEVICE_COLUMNS, devices),
        write_csv(out_dir / "netbox-cables.csv", CABLE_COLUMNS, cables),
    ]


def _cable_rows(bundle):
    part = bundle.part
    twisted_pair = part.media == "utp" or "rj45" in (part.a_form_factor, part.b_form_factor)
    kind = COPPER_TYPE.get(bundle.gbps, "") if twisted_pair else CABLE_TYPE.get(part.media, "")
    length = f"{bundle.length_m:g}"
    ids = bundle.cable_ids
    previous, lane = -1, 0
    for i, cable in enumerate(bundle.cable):
        lane = lane + 1 if cable == previous else 1
        previous = cable
        yield (
            bundle.a_device[i], "dcim.interface", bundle.a_port[i],
            bundle.b_device[i], "dcim.interface", bundle.b_port[i],
            kind, "planned", f"{ids[cable]}.{lane}", length, "m",
        )
