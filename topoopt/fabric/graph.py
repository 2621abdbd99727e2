"""The installation as a networkx MultiGraph.

Vertices are devices of the three networks — every node (with its GPUs), every compute, storage
and management switch, every hot and cold storage unit — keyed by name, with scalar attributes
only (so the graph writes to GraphML as is):

=================  ================================================================================
``role``           ``node``; ``leaf``, ``spine``, ``core`` (compute); ``storage-leaf``,
                   ``storage-spine``, ``storage-core``; ``mgmt-leaf``, ``mgmt-aggregation``; ``storage`` (hot unit),
                   ``cold-storage`` (cold unit)
``network``        ``compute`` (nodes, compute switches), ``storage`` (storage switches and units)
                   or ``management``
``model``          catalog id of the server, switch or storage tier
``rack``, ``u``    rack name and lowest rack unit (from U1 at the bottom)
``rack_units``     height; ``power_w`` provisioned power
``ports``          logical data ports (node rails, switch radix at its network's speed, unit data ports)
``gpus``, ``gpu``, ``nic``  nodes; ``storage_nic``, ``storage_ports`` nodes of a dedicated storage network
``su``             scalable unit (nodes and leaves); ``rail`` leaves of a rail-optimized fabric;
                   ``pod``/``plane`` leaves, spines, cores; ``carries_storage`` compute leaves
                   holding the storage units of a converged storage network
``capacity_tb``    storage units
=================  ================================================================================

Every logical link is its own edge, keyed ``<cable id>.<lane>``, with ``link_class``, ``network``,
``a_device``/``a_port`` (upper end: the switch) and ``b_device``/``b_port`` (lower end), ``gbps``,
``cable`` (the assembly id in ``cables.csv``) with that assembly's ``part``, ``media`` and
``length_m`` as ``cables.csv`` lists them, and, on node links, ``rail``. Every node port — compute rails, storage-NIC ports, management ports — and every storage
unit port is the ``b_port`` of exactly one edge, so the whole graph is connected.
"""

from __future__ import annotations

import networkx as nx

from topoopt.fabric.build import Fabric, build_fabric
from topoopt.fabric.devices import Device, LinkBundle
from topoopt.models.catalog import Catalog
from topoopt.models.design import Design
from topoopt.models.instance import Instance


def fabric_graph(design: Design, instance: Instance | None = None, *, catalog: Catalog | None = None) -> nx.MultiGraph:
    """The concrete installation of ``design`` as a MultiGraph (devices, and one edge per link).

    The catalog is ``catalog`` when given, else the instance's resolved catalog, else the built-in
    one. The result is deterministic: the same design always gives the same names, ports and
    cables.

    Examples
    --------
    >>> import topoopt
    >>> g = topoopt.fabric_graph(result.design, instance)  # doctest: +SKIP
    >>> sum(d["gpus"] for _, d in g.nodes(data=True) if d["role"] == "node")  # doctest: +SKIP
    8
    """
    return graph_of(build_fabric(design, instance, catalog=catalog))


def graph_attributes(fabric: Fabric) -> dict:
    """Graph-level attributes: what the installation is."""
    design = fabric.design
    return {
        "name": f"{design.nodes} x {design.server}",
        "gpus": design.gpus,
        "nodes": design.nodes,
        "gpu": design.gpu,
        "server": design.server,
        "interconnect": design.interconnect,
        "link_gbps": design.link_gbps,
        "tiers": design.tiers,
        "switch": design.fabric.switch,
        "storage_network": design.storage_network.mode,
        "storage_switch": design.storage_network.switch or "",
        "management_switch": design.management_network.switch,
        "management_aggregation_switch": design.management_network.aggregation_switch or "",
    }


def graph_of(fabric: Fabric) -> nx.MultiGraph:
    """The MultiGraph of an already built installation."""
    graph = nx.MultiGraph(**graph_attributes(fabric))
    graph.add_nodes_from((device.name, device_attributes(device, fabric)) for device in fabric.devices)
    for bundle in fabric.links:
        graph.add_edges_from(_edges(bundle, cable_attributes(fabric, bundle)))
    return graph


def device_attributes(device: Device, fabric: Fabric) -> dict:
    """Scalar attributes of one device vertex."""
    attrs = {
        "role": device.role,
        "network": device.network,
        "model": device.model,
        "rack": device.rack,
        "u": device.u,
        "rack_units": device.rack_units,
        "power_w": float(device.power_w),
    }
    if device.role == "node":
        attrs.update(gpus=device.gpus, gpu=fabric.design.gpu, nic=fabric.hardware.nic.id,
                     ports=device.ports, su=device.su)
        storage_nic = fabric.hardware.storage_net.nic
        if storage_nic is not None:
            attrs.update(storage_nic=storage_nic.id, storage_ports=fabric.design.storage_network.ports_per_node)
    elif device.role in ("storage", "cold-storage"):
        tier = fabric.hardware.storage if device.role == "storage" else fabric.hardware.cold_storage
        attrs.update(ports=device.ports, capacity_tb=float(tier.capacity_tb))
    else:
        attrs["ports"] = device.ports
        if device.role == "leaf":
            attrs["su"] = device.su
            if device.rail:
                attrs["rail"] = device.rail
            if device.carries_storage:
                attrs["carries_storage"] = True
        if device.pod:
            attrs["pod"] = device.pod
        if device.plane:
            attrs["plane"] = device.plane
    return attrs


def bundle_attributes(bundle: LinkBundle) -> dict:
    """Edge attributes shared by every link of a link class."""
    return {"link_class": bundle.between, "network": bundle.network, "gbps": bundle.gbps}


def cable_attributes(fabric: Fabric, bundle: LinkBundle) -> dict[int, dict]:
    """Edge attributes of every link an assembly carries, per assembly: its part, as
    ``cables.csv`` lists it (the in-rack part within one rack), and its length."""
    return {cable: {"part": part.id, "media": part.media, "length_m": float(length_m)}
            for cable, (part, length_m) in fabric.assemblies(bundle).items()}


def link_keys(bundle: LinkBundle) -> list[str]:
    """Edge key of every link: ``<cable id>.<lane>``, unique over the whole graph."""
    keys = []
    cable_ids = bundle.cable_ids
    previous, lane = -1, 0
    for cable in bundle.cable:
        lane = lane + 1 if cable == previous else 1
        previous = cable
        keys.append(f"{cable_ids[cable]}.{lane}")
    return keys


def _edges(bundle: LinkBundle, cables: dict[int, dict]):
    """(a, b, key, attrs) per link, ``cables`` the attributes of each assembly."""
    shared = bundle_attributes(bundle)
    cable_ids, rails = bundle.cable_ids, bundle.rail
    node_links = bundle.between == "node-leaf"
    for i, (key, a, a_port, b, b_port, cable) in enumerate(
        zip(link_keys(bundle), bundle.a_device, bundle.a_port, bundle.b_device, bundle.b_port, bundle.cable)
    ):
        attrs = {**shared, **cables[cable], "a_device": a, "a_port": a_port, "b_device": b, "b_port": b_port, "cable": cable_ids[cable]}
        if node_links:
            attrs["rail"] = rails[i]
        yield a, b, key, attrs
