"""What NetBox 4.6.8's bulk import accepts, taken from its source (``netbox/dcim/forms/bulk_import.py``,
``dcim/choices.py``, ``dcim/models``; release 4.6.8, 2026-08-11) for the files topoopt writes.

:func:`import_all` replays an import into an empty NetBox in the documented order: each row is
checked against its form (known columns, required fields, choice values) and each reference
against the objects the earlier files created, by the field NetBox looks it up with
(``to_field_name``), with the validations a real import would fail on (rack height, occupied
units, an interface that does not exist or is already cabled).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Form:
    fields: tuple[str, ...]
    """``Meta.fields`` of the import form."""
    required: frozenset[str]
    choices: dict[str, frozenset[str]] = field(default_factory=dict)


STATUS_SITE = frozenset({"planned", "staging", "active", "decommissioning", "retired"})
STATUS_RACK = frozenset({"reserved", "available", "planned", "active", "deprecated"})
STATUS_DEVICE = frozenset({"offline", "active", "planned", "staged", "failed", "inventory", "decommissioning"})
CABLE_TYPES = frozenset(
    "cat3 cat5 cat5e cat6 cat6a cat7 cat7a cat8 mrj21-trunk dac-active dac-passive coaxial rg-6 rg-8 rg-11 rg-59 "
    "rg-62 rg-213 lmr-100 lmr-200 lmr-400 mmf mmf-om1 mmf-om2 mmf-om3 mmf-om4 mmf-om5 smf smf-os1 smf-os2 aoc power "
    "usb".split())
RACK_U_HEIGHT_MAX = 100  # dcim/constants.py

FORMS = {
    "netbox-manufacturers.csv": Form(("name", "slug", "description", "owner", "comments", "tags"),
                                     frozenset({"name", "slug"})),
    "netbox-device-roles.csv": Form(("name", "slug", "parent", "color", "vm_role", "config_template", "description",
                                     "owner", "comments", "tags"), frozenset({"name", "slug"})),
    "netbox-sites.csv": Form(("name", "slug", "status", "region", "group", "tenant", "facility", "time_zone",
                              "description", "physical_address", "shipping_address", "latitude", "longitude",
                              "owner", "comments", "tags"), frozenset({"name", "slug", "status"}),
                             {"status": STATUS_SITE}),
    # RackImportForm.clean: width and u_height are required without a rack type.
    "netbox-racks.csv": Form(("site", "location", "group", "name", "facility_id", "tenant", "status", "role",
                              "rack_type", "form_factor", "serial", "asset_tag", "width", "u_height", "desc_units",
                              "outer_width", "outer_height", "outer_depth", "outer_unit", "mounting_depth", "airflow",
                              "weight", "max_weight", "weight_unit", "description", "owner", "comments", "tags"),
                             frozenset({"site", "name", "status", "width", "u_height"}),
                             {"status": STATUS_RACK, "width": frozenset({"10", "19", "21", "23"})}),
    "netbox-devices.csv": Form(("name", "role", "tenant", "manufacturer", "device_type", "platform", "serial",
                                "asset_tag", "status", "site", "location", "rack", "position", "face", "latitude",
                                "longitude", "parent", "device_bay", "airflow", "virtual_chassis", "vc_position",
                                "vc_priority", "cluster", "description", "config_template", "owner", "comments",
                                "tags"), frozenset({"role", "manufacturer", "device_type", "site", "status"}),
                               {"status": STATUS_DEVICE, "face": frozenset({"front", "rear"})}),
    "netbox-cables.csv": Form(("side_a_site", "side_a_device", "side_a_power_panel", "side_a_type", "side_a_name",
                               "side_b_site", "side_b_device", "side_b_power_panel", "side_b_type", "side_b_name",
                               "type", "status", "profile", "tenant", "bundle", "label", "color", "length",
                               "length_unit", "description", "owner", "comments", "tags"),
                              frozenset({"side_a_type", "side_a_name", "side_b_type", "side_b_name"}),
                              {"status": frozenset({"connected", "planned", "decommissioning"}),
                               "type": CABLE_TYPES | {""},
                               "length_unit": frozenset({"km", "m", "cm", "mi", "ft", "in", ""}),
                               "side_a_type": frozenset({"dcim.interface"}), "side_b_type": frozenset({"dcim.interface"})}),
}
# DeviceTypeImportForm.Meta.fields plus the component lists DeviceTypeBulkImportView imports with it.
DEVICE_TYPE_KEYS = frozenset({"manufacturer", "default_platform", "model", "slug", "part_number", "u_height",
                              "exclude_from_utilization", "is_full_depth", "subdevice_role", "airflow", "description",
                              "weight", "weight_unit", "owner", "comments", "tags", "console-ports",
                              "console-server-ports", "power-ports", "power-outlets", "interfaces", "rear-ports",
                              "front-ports", "port-mappings", "module-bays", "device-bays", "inventory-items"})


def read_csv(path: Path) -> list[dict[str, str]]:
    # NetBox decodes uploads with utf-8-sig (utilities/forms/bulk_import.py), as this does.
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def check_rows(name: str, rows: list[dict[str, str]]) -> None:
    form = FORMS[name]
    assert rows, f"{name} is empty"
    columns = set(rows[0])
    assert columns <= set(form.fields), f"{name}: columns no form field takes: {columns - set(form.fields)}"
    for row in rows:
        missing = [f for f in form.required if not row.get(f)]
        assert not missing, f"{name}: {missing} required ({row})"
        for column, allowed in form.choices.items():
            # An optional choice field (CSVChoiceField, required=False) takes an empty value.
            if column in row and (row[column] or column in form.required):
                assert row[column] in allowed, f"{name}: {column}={row[column]!r} is not a choice"


def import_all(out: Path) -> dict[str, int]:
    """Replay the import of ``out``'s NetBox files; return the objects created per file."""
    manufacturers = {row["name"] for row in _checked(out, "netbox-manufacturers.csv")}
    types = {}
    for document in yaml.safe_load_all((out / "netbox-device-types.yaml").read_text(encoding="utf-8")):
        assert set(document) <= DEVICE_TYPE_KEYS, set(document) - DEVICE_TYPE_KEYS
        assert document["manufacturer"] in manufacturers, document["manufacturer"]
        key = (document["manufacturer"], document["model"])
        assert key not in types, f"device type {key} twice"
        types[key] = document
    roles = {row["name"] for row in _checked(out, "netbox-device-roles.csv")}
    sites = {row["name"] for row in _checked(out, "netbox-sites.csv")}
    racks = {}
    for row in _checked(out, "netbox-racks.csv"):
        assert row["site"] in sites
        assert 1 <= int(row["u_height"]) <= RACK_U_HEIGHT_MAX
        assert (row["site"], row["name"]) not in racks
        racks[row["site"], row["name"]] = int(row["u_height"])
    interfaces: dict[str, set[str]] = {}
    occupied: set[tuple] = set()
    devices = _checked(out, "netbox-devices.csv")
    for row in devices:
        assert row["role"] in roles and row["site"] in sites
        document = types[row["manufacturer"], row["device_type"]]  # device_type is looked up within its manufacturer
        assert row["name"] not in interfaces, f"device {row['name']} twice"
        interfaces[row["name"]] = {i["name"] for i in document.get("interfaces", [])}
        if row["rack"] and document["u_height"] == 0:
            # Device.clean: a 0U device type cannot take a rack position (nor, without one, a face).
            assert not row["position"] and not row["face"], f"{row['name']}: a 0U device with a rack position"
        elif row["rack"]:
            assert row["face"], f"{row['name']}: a rack position needs a rack face (Device.clean)"
            height = racks[row["site"], row["rack"]]
            low, units = int(row["position"]), document["u_height"]
            assert 1 <= low and low + units - 1 <= height, f"{row['name']} leaves rack {row['rack']}"
            for u in range(low, low + int(units)):
                assert (row["rack"], row["face"], u) not in occupied, f"U{u} of {row['rack']} is already occupied"
                occupied.add((row["rack"], row["face"], u))
    cabled: set[tuple[str, str]] = set()
    cables = _checked(out, "netbox-cables.csv")
    for row in cables:
        for side in ("a", "b"):
            device, port = row[f"side_{side}_device"], row[f"side_{side}_name"]
            assert port in interfaces[device], f"{side.upper()} side termination not found: {device} {port}"
            assert (device, port) not in cabled, f"{device} {port} is already connected"
            cabled.add((device, port))
    return {"manufacturers": len(manufacturers), "device_types": len(types), "roles": len(roles), "sites": len(sites),
            "racks": len(racks), "devices": len(devices), "cables": len(cables)}


def _checked(out: Path, name: str) -> list[dict[str, str]]:
    rows = read_csv(out / name)
    check_rows(name, rows)
    return rows
