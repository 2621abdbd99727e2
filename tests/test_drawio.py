"""``fabric.drawio`` of every bundled example, read with an XML parser: a valid draw.io document
whose boxes hold every device and whose lines carry every link of the installation."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from example_outputs import FEASIBLE, written_example


def cells(path):
    root = ET.parse(path).getroot()
    assert root.tag == "mxfile"
    model = root.find("diagram/mxGraphModel/root")
    assert model is not None
    ids = [c.get("id") for c in model]
    assert ids[:2] == ["0", "1"] and len(ids) == len(set(ids))  # draw.io's two root cells, unique ids
    return list(model)[2:]


@pytest.mark.parametrize("name", FEASIBLE)
def test_drawio_boxes_hold_every_device_and_lines_every_link(name):
    written = written_example(name)
    fabric = written.fabric
    objects = cells(written.out / "fabric.drawio")
    vertices = {o.get("id"): o for o in objects if o.find("mxCell").get("vertex") == "1"}
    edges = [o for o in objects if o.find("mxCell").get("edge") == "1"]
    assert len(vertices) + len(edges) == len(objects)
    for edge in edges:
        cell = edge.find("mxCell")
        assert cell.get("source") in vertices and cell.get("target") in vertices
        assert edge.get("label").startswith(f"{int(edge.get('links')):,} × ")
    links = Counter()
    for edge in edges:
        links[edge.get("link_class")] += int(edge.get("links"))
    expected = Counter()
    for bundle in fabric.links:
        expected[bundle.between] += len(bundle.a_device)
    assert links == expected
    held, nodes = Counter(), 0
    for vertex in vertices.values():
        held[vertex.get("role")] += int(vertex.get("devices"))
        nodes += int(vertex.get("nodes"))
        geometry = vertex.find("mxCell/mxGeometry")
        assert float(geometry.get("width")) > 0 and float(geometry.get("height")) > 0
    assert nodes == written.result.design.nodes
    switches = sum(held[role] for role in ("leaf", "spine", "core", "storage-leaf", "storage-spine", "storage-core",
                                           "mgmt-leaf", "mgmt-aggregation"))
    assert switches == len(fabric.switch_list)
    labels = " ".join(v.get("label") for v in vertices.values())
    assert not re.search(r"<table|<tr", labels)  # plain text, not Graphviz's HTML-like labels
