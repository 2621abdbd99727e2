"""The NetBox files of every bundled example import into an empty NetBox in the documented order.

No NetBox runs in CI: the import is replayed against NetBox 4.6.8's import-form requirements
(:mod:`netbox_forms`), and the device types are validated against the device-type library's JSON
Schema (``tests/data/devicetype-library``). Counts are compared with the design.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from example_outputs import FEASIBLE, written_example
from jsonschema import Draft202012Validator
from netbox_forms import import_all, read_csv
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from topoopt.fabric.netbox import IMPORT_ORDER, SITE_NAME_MAX, site_name
from topoopt.fabric.netbox_types import slug

SCHEMA_DIR = Path(__file__).parent / "data" / "devicetype-library"
SCHEMA_URNS = {"devicetype.json": "urn:devicetype-library:device-type",
               "components.json": "urn:devicetype-library:components",
               "generated_schema.json": "urn:devicetype-library:generated-schema",
               "reusable.json": "urn:devicetype-library:reusable"}


def device_type_validator() -> Draft202012Validator:
    resources = {urn: Resource.from_contents(json.loads((SCHEMA_DIR / name).read_text()), default_specification=DRAFT202012)
                 for name, urn in SCHEMA_URNS.items()}
    registry = Registry().with_resources(resources.items())
    return Draft202012Validator(resources["urn:devicetype-library:device-type"].contents, registry=registry)


@pytest.mark.parametrize("name", FEASIBLE)
def test_netbox_files_import_in_order_and_match_the_design(name):
    written = written_example(name)
    fabric, design = written.fabric, written.result.design
    assert all((written.out / file).exists() for file in IMPORT_ORDER)
    created = import_all(written.out)
    assert created["devices"] == len(fabric.devices)
    assert created["cables"] == sum(len(bundle.a_device) for bundle in fabric.links)
    assert created["racks"] == len(fabric.racks.racks) == sum(group.count for group in design.racks)
    assert created["sites"] == 1
    roles = Counter(row["role"] for row in read_csv(written.out / "netbox-devices.csv"))
    assert roles["gpu-node"] == design.nodes
    assert (roles["leaf"], roles["spine"], roles["core"]) == (design.fabric.leaves, design.fabric.spines,
                                                              design.fabric.cores)
    # Every assembly of cables.csv is one or more NetBox cables labelled with its id.
    assemblies = {row["id"] for row in read_csv(written.out / "cables.csv")}
    stems = {row["label"].rsplit(".", 1)[0] for row in read_csv(written.out / "netbox-cables.csv")}
    assert stems == assemblies


@pytest.mark.parametrize("name", FEASIBLE)
def test_device_types_are_valid_device_library_documents(name):
    written = written_example(name)
    validator = device_type_validator()
    documents = list(yaml.safe_load_all((written.out / "netbox-device-types.yaml").read_text(encoding="utf-8")))
    for document in documents:
        errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(document)]
        assert not errors, (document["model"], errors[:5])
    models = {d["model"] for d in documents}
    assert models == {device.model for device in written.fabric.devices}
    node_type = next(d for d in documents if d["model"] == written.result.design.server)
    types = {i["type"] for i in node_type["interfaces"] if not i.get("mgmt_only")}
    if written.result.design.interconnect.startswith("ib-") and written.result.design.tiers:
        assert any(t.startswith("infiniband-") for t in types)


def test_the_validator_rejects_what_the_library_rejects():
    validator = device_type_validator()
    good = {"manufacturer": "Generic", "model": "m", "slug": "m", "u_height": 1, "is_full_depth": True,
            "interfaces": [{"name": "p1", "type": "400gbase-x-osfp"}]}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "interfaces": [{"name": "p1", "type": "400g-osfp"}]})
    assert not validator.is_valid({**good, "slug": "Has Space"})
    assert not validator.is_valid({k: v for k, v in good.items() if k != "is_full_depth"})


def test_long_instance_names_become_a_100_character_site_with_a_warning():
    name, warning = site_name("x" * 150)
    assert len(name) == SITE_NAME_MAX and warning and str(SITE_NAME_MAX) in warning
    assert site_name("demo") == ("demo", None)


def test_slugs_follow_netbox_and_stay_distinct():
    assert slug("NVIDIA") == "nvidia"
    assert slug("a" * 300) == "a" * 100
    assert slug("模型一") != slug("模型二") and slug("模型一").startswith("x-")
