"""ASTRA-sim and SimAI inputs of every bundled example, read as their format documentation says.

Neither simulator is built here: ``astra-sim-network.yml`` is read with PyYAML against the
analytical backend's configuration keys (``examples/network/analytical`` of ASTRA-sim 2.x), and
``simai-topology.txt`` with a reader that follows SimAI's topology parser (header, switch ids,
``src dst rate delay error`` lines). Counts are compared with the design.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import pytest
import yaml
from example_outputs import FEASIBLE, written_example

from topoopt.fabric.wiring import COMPUTE_CLASSES

TOPOLOGIES = {"Ring", "FullyConnected", "Switch"}
LINK = re.compile(r"^(\d+) (\d+) ([0-9.]+)Gbps ([0-9.]+)ms ([0-9.]+)$")


def read_simai(text: str) -> dict:
    lines = text.splitlines()
    node_num, per_server, nvswitches, switches, link_num, gpu_type = lines[0].split()
    node_num, nvswitches, switches, link_num = int(node_num), int(nvswitches), int(switches), int(link_num)
    ids = [int(i) for i in lines[1].split()]
    links = []
    for line in lines[2:]:
        match = LINK.match(line)
        assert match, f"bad link line {line!r}"
        links.append((int(match[1]), int(match[2]), float(match[3]), float(match[4]), float(match[5])))
    return {"nodes": node_num, "per_server": int(per_server), "nvswitch_ids": ids[:nvswitches],
            "switch_ids": ids[nvswitches:], "declared_links": link_num, "links": links, "gpu_type": gpu_type}


@pytest.mark.parametrize("name", FEASIBLE)
def test_astra_sim_network_follows_the_analytical_format(name):
    written = written_example(name)
    design = written.result.design
    config = yaml.safe_load((written.out / "astra-sim-network.yml").read_text(encoding="utf-8"))
    assert set(config) == {"topology", "npus_count", "bandwidth", "latency"}
    assert len({len(v) for v in config.values()}) == 1
    assert set(config["topology"]) <= TOPOLOGIES
    assert math.prod(config["npus_count"]) == design.gpus
    per_node = design.gpus // design.nodes
    assert config["bandwidth"][1] * 8 * per_node == pytest.approx(design.link_gbps * design.nics_per_node)
    assert all(v > 0 for v in config["bandwidth"] + config["latency"])


@pytest.mark.parametrize("name", FEASIBLE)
def test_simai_topology_follows_the_simai_format_and_the_fabric(name):
    written = written_example(name)
    design, fabric = written.result.design, written.fabric
    topo = read_simai((written.out / "simai-topology.txt").read_text(encoding="utf-8"))
    gpus = topo["nodes"] - len(topo["nvswitch_ids"]) - len(topo["switch_ids"])
    assert gpus == design.gpus and topo["per_server"] == design.gpus // design.nodes
    assert len(topo["nvswitch_ids"]) == design.nodes
    assert len(topo["switch_ids"]) == len(fabric.compute_switches)
    ids = topo["nvswitch_ids"] + topo["switch_ids"]
    assert sorted(ids) == list(range(gpus, topo["nodes"]))  # GPUs first, then every switch once
    assert topo["declared_links"] == len(topo["links"])
    nvswitches, switches = set(topo["nvswitch_ids"]), set(topo["switch_ids"])
    to_nvswitch, nic_gbps = Counter(), defaultdict(float)
    between_switches = 0
    for a, b, gbps, delay, error in topo["links"]:
        assert 0 <= a < topo["nodes"] and 0 <= b < topo["nodes"] and gbps > 0 and delay > 0 and error == 0
        if b in nvswitches:
            to_nvswitch[a] += 1
        elif a < gpus:
            nic_gbps[a // topo["per_server"]] += gbps
        else:
            assert a in switches and b in switches
            between_switches += 1
    assert set(to_nvswitch.values()) == {1} and len(to_nvswitch) == gpus
    assert len(nic_gbps) == design.nodes
    assert all(v == pytest.approx(design.link_gbps * design.nics_per_node) for v in nic_gbps.values())
    switch_links = sum(len(b.a_device) for b in fabric.links
                       if b.network == "compute" and b.between in COMPUTE_CLASSES and b.between != "node-leaf")
    assert between_switches == switch_links
