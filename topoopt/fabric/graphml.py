"""GraphML of the installation, streamed straight from the :class:`~topoopt.fabric.build.Fabric`.

The file holds exactly the MultiGraph of :func:`topoopt.fabric.graph.graph_of` (same vertices,
edge keys and attributes — the attribute functions are shared), and reads back with
:func:`networkx.read_graphml`. It is written without building that graph: networkx's own writer
builds the whole XML tree in memory (gigabytes for a 131,072-GPU fabric), and a fabric repeats a
few thousand names, ports and parts hundreds of thousands of times, so every ``<data>`` element is
encoded once and reused.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from topoopt.fabric.build import Fabric
from topoopt.fabric.devices import LinkBundle
from topoopt.fabric.graph import bundle_attributes, cable_attributes, device_attributes, graph_attributes, link_keys

_TYPES = {bool: "boolean", int: "int", float: "double", str: "string"}


def _type_name(value) -> str:
    kind = _TYPES.get(type(value))
    if kind is None:
        raise TypeError(f"GraphML attributes must be scalars, got {type(value).__name__}: {value!r}")
    return kind


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return escape(str(value))


def _keys(items, prefix: str) -> dict[str, tuple[str, str]]:
    """``{attribute: (key id, GraphML type)}`` in first-seen order."""
    keys: dict[str, tuple[str, str]] = {}
    for attrs in items:
        for name, value in attrs.items():
            if name not in keys:
                keys[name] = (f"{prefix}{len(keys)}", _type_name(value))
    return keys


class _Encoder:
    """``<data>`` elements, each distinct (attribute, value) escaped once."""

    def __init__(self, keys: dict[str, tuple[str, str]]) -> None:
        self.keys = keys
        self.cache: dict[str, dict] = {name: {} for name in keys}

    def element(self, name: str, value) -> str:
        cache = self.cache[name]
        element = cache.get(value)
        if element is None:
            element = cache[value] = f'<data key="{self.keys[name][0]}">{_text(value)}</data>'
        return element

    def data(self, attrs: dict) -> str:
        return "".join(self.element(name, value) for name, value in attrs.items())


def write_fabric_graphml(fabric: Fabric, path: Path) -> None:
    """Write the installation's MultiGraph to ``path`` as GraphML."""
    graph_attrs = graph_attributes(fabric)
    nodes = [(device.name, device_attributes(device, fabric)) for device in fabric.devices]
    edge_samples = []
    cables = [cable_attributes(fabric, bundle) for bundle in fabric.links]
    for bundle, of_cable in zip(fabric.links, cables):
        if len(bundle):
            edge_samples.append({**bundle_attributes(bundle), **next(iter(of_cable.values())), "a_device": "",
                                 "a_port": "", "b_device": "", "b_port": "", "cable": "",
                                 **({"rail": 0} if bundle.between == "node-leaf" else {})})
    graph_keys = _keys([graph_attrs], "g")
    node_keys = _keys((attrs for _, attrs in nodes), "n")
    edge_keys = _keys(edge_samples, "e")
    node_data, edge_data = _Encoder(node_keys), _Encoder(edge_keys)
    quoted = {name: quoteattr(name) for name, _ in nodes}
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        write = out.write
        write('<?xml version="1.0" encoding="utf-8"?>\n')
        write('<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
              'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
              'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
              'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
        for domain, keys in (("graph", graph_keys), ("node", node_keys), ("edge", edge_keys)):
            for name, (key_id, kind) in keys.items():
                write(f'  <key id="{key_id}" for="{domain}" attr.name={quoteattr(name)} attr.type="{kind}"/>\n')
        write('  <graph edgedefault="undirected">\n')
        for name, value in graph_attrs.items():
            write(f'    <data key="{graph_keys[name][0]}">{_text(value)}</data>\n')
        out.writelines(f"    <node id={quoted[name]}>{node_data.data(attrs)}</node>\n" for name, attrs in nodes)
        for bundle, of_cable in zip(fabric.links, cables):
            out.writelines(_edge_lines(bundle, of_cable, edge_data, quoted))
        write("  </graph>\n</graphml>\n")


def _edge_lines(bundle: LinkBundle, cables: dict[int, dict], encoder: _Encoder, quoted: dict[str, str]):
    shared = encoder.data(bundle_attributes(bundle))
    element = encoder.element
    cable_elements = {cable: encoder.data(attrs) + element("cable", bundle.cable_ids[cable])
                      for cable, attrs in cables.items()}
    rails = bundle.rail if bundle.between == "node-leaf" else None
    for i, (key, a, a_port, b, b_port, cable) in enumerate(
        zip(link_keys(bundle), bundle.a_device, bundle.a_port, bundle.b_device, bundle.b_port, bundle.cable)
    ):
        rail = element("rail", rails[i]) if rails is not None else ""
        yield (f'    <edge id="{key}" source={quoted[a]} target={quoted[b]}>{shared}'
               f'{element("a_device", a)}{element("a_port", a_port)}{element("b_device", b)}'
               f'{element("b_port", b_port)}{cable_elements[cable]}{rail}</edge>\n')
