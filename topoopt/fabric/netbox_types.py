"""NetBox prerequisites of an installation: manufacturers, device types, slugs and interface types.

Device types are written in the NetBox device-type library's YAML format (one document per type,
``manufacturer``, ``model``, ``slug``, ``u_height``, ``is_full_depth``, ``interfaces``,
``power-ports``), which NetBox's device-type import accepts with its interface templates. Each
type's interfaces are the ports its devices use in ``cables.csv`` (a switch port never cabled in
the design is not listed), with NetBox's interface type for the port's protocol, speed and cage:

* InfiniBand ports: the generation of the design's interconnect (``ib-ndr`` and ``ib-ndr200`` →
  ``infiniband-ndr``);
* Ethernet ports: speed and cage (``400gbase-x-osfp``, ``100gbase-x-qsfp28``, ``1000base-t``);
* anything without a NetBox type of its own (a 200 Gb/s lane of an OSFP cage): ``other``.

The catalog names no manufacturer: a model whose catalog name begins with a GPU vendor of the
catalog schema (``NVIDIA``, ``AMD``) gets that manufacturer, every other model ``Generic``.
``is_full_depth`` is not in the catalog either: it is written ``true``, NetBox's default
(``DeviceType.is_full_depth``, NetBox 4.6), except for a zero-U rack PDU.
"""

from __future__ import annotations

import hashlib
import re
import typing

from topoopt.fabric.build import Fabric
from topoopt.fabric.devices import LinkBundle
from topoopt.models.catalog import Gpu

GENERIC = "Generic"
VENDORS = typing.get_args(Gpu.model_fields["vendor"].annotation)
SLUG_MAX = 100
"""NetBox ``SlugField`` length (manufacturer, device type, role, site: ``max_length=100``)."""

# NetBox InterfaceTypeChoices per InfiniBand interconnect of the catalog.
IB_TYPE = {"ib-hdr": "infiniband-hdr", "ib-hdr100": "infiniband-hdr", "ib-ndr": "infiniband-ndr",
           "ib-ndr200": "infiniband-ndr", "ib-xdr": "infiniband-xdr"}
# NetBox InterfaceTypeChoices per (Gb/s, cage family) of an Ethernet port.
ETHERNET_TYPE = {
    (1, "rj45"): "1000base-t", (10, "rj45"): "10gbase-t", (1, "sfp-plus"): "1000base-x-sfp",
    (10, "sfp-plus"): "10gbase-x-sfpp", (25, "sfp28"): "25gbase-x-sfp28", (100, "qsfp28"): "100gbase-x-qsfp28",
    (200, "qsfp56"): "200gbase-x-qsfp56", (400, "qsfp112"): "400gbase-x-qsfp112", (400, "qsfp-dd"): "400gbase-x-qsfpdd",
    (800, "qsfp-dd"): "800gbase-x-qsfpdd", (400, "osfp"): "400gbase-x-osfp", (800, "osfp"): "800gbase-x-osfp",
}


def slug(text: str) -> str:
    """A NetBox slug (``^[-a-zA-Z0-9_]+$``, at most 100 characters) for ``text``.

    Lower case, every run of other characters one ``-``; a name with no ASCII letter or digit
    gets ``x-`` and the start of its SHA-1, so distinct names keep distinct slugs.

    >>> slug("Llama 3 405B / 16k (USD)")
    'llama-3-405b-16k-usd'
    """
    cleaned = re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")
    if not cleaned:
        cleaned = "x-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
    return cleaned[:SLUG_MAX].strip("-")


def manufacturer(catalog_name: str) -> str:
    """The manufacturer of a catalog item: its name's first word when that is a GPU vendor, else Generic."""
    first = catalog_name.split(" ", 1)[0]
    return first if first.lower() in VENDORS else GENERIC


def cage_family(form_factor: str) -> str:
    """``osfp-twin-finned`` → ``osfp``: NetBox types name the cage family, not its heat sink."""
    return "osfp" if form_factor.startswith("osfp") else form_factor


def interface_type(bundle: LinkBundle, side: str, interconnect: str) -> str:
    """NetBox interface type of the ``side`` (``a`` or ``b``) ports of ``bundle``."""
    form_factor = bundle.part.a_form_factor if side == "a" else bundle.part.b_form_factor
    if bundle.network == "compute" and interconnect in IB_TYPE:
        return IB_TYPE[interconnect]
    return ETHERNET_TYPE.get((bundle.gbps, cage_family(form_factor)), "other")


def model_names(fabric: Fabric) -> dict[str, str]:
    """Catalog id → catalog name of every device model of the installation."""
    hw = fabric.hardware
    items = [hw.server, hw.switch, hw.storage_net.switch, hw.management.switch, hw.management.aggregation,
             hw.storage, hw.cold_storage, hw.head]
    return {item.id: item.name for item in items if item is not None}


def device_types(fabric: Fabric) -> list[dict]:
    """One device-library document per device model, in the order devices first appear."""
    names = model_names(fabric)
    interconnect = fabric.design.interconnect
    interfaces: dict[str, dict[str, dict]] = {}
    model_of = {device.name: device.model for device in fabric.devices}
    for bundle in fabric.links:
        for side, devices, ports in (("a", bundle.a_device, bundle.a_port), ("b", bundle.b_device, bundle.b_port)):
            kind = interface_type(bundle, side, interconnect)
            management = bundle.between == "mgmt" and side == "b"  # a device's management port
            for device, port in zip(devices, ports):
                entry = {"name": port, "type": kind}
                if management:
                    entry["mgmt_only"] = True
                interfaces.setdefault(model_of[device], {}).setdefault(port, entry)
    first: dict[str, object] = {}
    for device in fabric.devices:
        first.setdefault(device.model, device)
    documents = []
    for model, device in first.items():
        name = names.get(model, model)
        document = {
            "manufacturer": manufacturer(name), "model": model, "slug": slug(model), "description": name[:200],
            "u_height": device.rack_units, "is_full_depth": device.rack_units > 0,  # a zero-U PDU is not
            "power-ports": [{"name": "psu", "type": "other", "maximum_draw": max(1, round(device.power_w))}],
            "interfaces": sorted(interfaces.get(model, {}).values(), key=lambda i: _natural(i["name"])),
        }
        documents.append(document)
    return documents


def _natural(name: str) -> list:
    """Sort key that orders ``p2`` before ``p10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
