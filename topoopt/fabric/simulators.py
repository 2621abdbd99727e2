"""Simulator inputs for the compute fabric: an ASTRA-sim 2.x analytical network configuration and a
SimAI (ns-3) topology file.

``astra-sim-network.yml`` (ASTRA-sim 2.x analytical backend, ``examples/network/analytical``):
two dimensions, ``topology: [Switch, Switch]`` — the node's scale-up domain (``npus_count`` GPUs
per node, the GPU's scale-up bandwidth) and the scale-out fabric (``npus_count`` nodes, each GPU's
share of the node's NIC bandwidth). Bandwidth in GB/s, latency in ns per link: the scale-out
latency is the interconnect's per-hop latency from the catalog. The analytical backend's
``Switch`` is one non-blocking switch, so leaf/spine/core tiers and oversubscription are not
represented; the SimAI file has them.

``simai-topology.txt`` (SimAI's ns-3 topology format, ``astra-sim-alibabacloud/inputs/topo``):
a header ``<nodes> <GPUs per server> <NVSwitches> <switches> <links> <GPU type>``, the ids of the
NVSwitches then of the switches, then one line per link ``<src> <dst> <rate>Gbps <delay>ms
<error rate>``. Ids: GPUs first (node-major), one NVSwitch per node, then the compute switches in
installation order. Each GPU has an NVLink link to its node's NVSwitch and a link to the leaf of
its rail: with fewer NICs than GPUs the GPUs of a rail share it, each link carrying its share of
the NIC's speed. Every leaf–spine and spine–core link of the installation is a line. SimAI reads
the GPU type ``A100``, ``A800``, ``H100`` or ``H800``; any other GPU is written by its catalog id,
which SimAI treats as an unknown type.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from topoopt.fabric.build import Fabric
from topoopt.fabric.wiring import COMPUTE_CLASSES
from topoopt.models.catalog import Catalog

SIMAI_GPU_TYPES = ("A100", "A800", "H100", "H800")
NVLINK_LATENCY_NS = 936.25
"""Estimate: ASTRA-sim's validated HGX H100 scale-up latency (``examples/network/analytical/HGX-H100-validated.yml``)."""
NVLINK_DELAY_MS = 0.000025
"""Estimate: the GPU–NVSwitch link delay of SimAI's bundled topologies (``inputs/topo``)."""
BITS_PER_BYTE = 8


def gpu_nic_gbps(fabric: Fabric) -> float:
    """Each GPU's share of its node's compute-NIC bandwidth, Gb/s."""
    design = fabric.design
    return design.link_gbps * design.nics_per_node / fabric.hardware.server.gpus_per_node


def astra_sim_network(fabric: Fabric, catalog: Catalog) -> dict:
    """The ASTRA-sim 2.x analytical network configuration (two dimensions: node, fabric)."""
    design = fabric.design
    gpu = catalog.by_id("gpus")[design.gpu]
    interconnect = catalog.by_id("interconnects")[design.interconnect]
    per_node = fabric.hardware.server.gpus_per_node
    return {
        "topology": ["Switch", "Switch"],
        "npus_count": [per_node, len(fabric.nodes)],
        "bandwidth": [float(gpu.scale_up_gb_per_s), gpu_nic_gbps(fabric) / BITS_PER_BYTE],
        "latency": [NVLINK_LATENCY_NS, float(interconnect.latency_us) * 1000],
    }


def simai_topology(fabric: Fabric, catalog: Catalog) -> str:
    """The SimAI / ns-3 topology text of the compute fabric."""
    design = fabric.design
    gpu = catalog.by_id("gpus")[design.gpu]
    delay_ms = catalog.by_id("interconnects")[design.interconnect].latency_us / 1000
    per_node, rails = fabric.hardware.server.gpus_per_node, design.nics_per_node
    gpus = len(fabric.nodes) * per_node
    nvswitch = {node.name: gpus + i for i, node in enumerate(fabric.nodes)}
    switch_base = gpus + len(fabric.nodes)
    switch_id = {s.name: switch_base + i for i, s in enumerate(fabric.compute_switches)}
    first_gpu = {node.name: i * per_node for i, node in enumerate(fabric.nodes)}
    nvlink_gbps = gpu.scale_up_gb_per_s * BITS_PER_BYTE
    links = [(first_gpu[n.name] + g, nvswitch[n.name], nvlink_gbps, NVLINK_DELAY_MS)
             for n in fabric.nodes for g in range(per_node)]
    share = gpu_nic_gbps(fabric) if rails < per_node else design.link_gbps
    for bundle in fabric.links:
        if bundle.network != "compute" or bundle.between not in COMPUTE_CLASSES:
            continue
        if bundle.between == "node-leaf":
            for leaf, node, rail in zip(bundle.a_device, bundle.b_device, bundle.rail):
                for g in _gpus_of_rail(rail - 1, rails, per_node):
                    links.append((first_gpu[node] + g, switch_id[leaf], share, delay_ms))
        else:
            links += [(switch_id[b], switch_id[a], bundle.gbps, delay_ms)
                      for a, b in zip(bundle.a_device, bundle.b_device)]
    kind = next((t for t in SIMAI_GPU_TYPES if t in gpu.name.upper()), design.gpu)
    lines = [f"{switch_base + len(switch_id)} {per_node} {len(nvswitch)} {len(switch_id)} {len(links)} {kind}",
             " ".join(str(i) for i in [*nvswitch.values(), *switch_id.values()])]
    lines += [f"{a} {b} {gbps:g}Gbps {_decimal(delay)}ms 0" for a, b, gbps, delay in links]
    return "\n".join(lines) + "\n"


def _decimal(value: float) -> str:
    """A plain decimal (``0.000025``, never ``2.5e-05``): SimAI hands the text to ns-3's time parser."""
    return f"{value:.9f}".rstrip("0").rstrip(".")


def _gpus_of_rail(rail: int, rails: int, per_node: int) -> range:
    """GPU indices (0-based) a 0-based rail serves: the GPUs whose NIC it is, evenly spread."""
    if rails >= per_node:
        gpu = rail * per_node // rails
        return range(gpu, gpu + 1)
    return range(rail * per_node // rails, (rail + 1) * per_node // rails)


def write_simulator_inputs(fabric: Fabric, catalog: Catalog, out_dir: Path) -> list[Path]:
    """Write ``astra-sim-network.yml`` and ``simai-topology.txt``; none for a design without a fabric."""
    if fabric.design.tiers == 0:
        return []
    astra, simai = out_dir / "astra-sim-network.yml", out_dir / "simai-topology.txt"
    header = (f"# ASTRA-sim 2.x analytical network: {fabric.design.nodes} x {fabric.design.server}, "
              f"{fabric.design.gpus} GPUs. Bandwidth GB/s, latency ns. Generated by topoopt.\n")
    astra.write_text(header + yaml.safe_dump(astra_sim_network(fabric, catalog), sort_keys=False,
                                             default_flow_style=None), encoding="utf-8")
    simai.write_text(simai_topology(fabric, catalog), encoding="utf-8")
    return [astra, simai]
