"""The Slurm topology of every bundled example, read by the real Slurm controller and by PyYAML.

``topology.conf`` is loaded by ``slurmctld`` itself (:mod:`slurm_controller`: Debian 12 ships
Slurm 22.05, the oldest parser the file must satisfy) and the tree it reports with ``scontrol
show topology`` is compared with the built installation's cables: each leaf-level switch holds
exactly the nodes cabled to the same physical leaves, and the switches above group the leaves
that reach the same spines. ``topology.yaml`` (Slurm 25.05+) is read with PyYAML against the
structure of ``topology.yaml(5)`` and must describe the same tree.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import yaml
from example_outputs import FEASIBLE, written_example
from hostlists import expand
from slurm_controller import expand_hostnames, parse_topology, require_slurm, show_topology

from topoopt.fabric import Fabric


def cabled(fabric: Fabric, between: str) -> dict[str, frozenset[str]]:
    """Lower device -> the upper devices its links of ``between`` reach, from the built links."""
    reach: dict[str, set[str]] = defaultdict(set)
    for bundle in fabric.links:
        if bundle.between == between:
            for upper, lower in zip(bundle.a_device, bundle.b_device):
                reach[lower].add(upper)
    return {lower: frozenset(uppers) for lower, uppers in reach.items()}


def node_groups(fabric: Fabric) -> set[frozenset[str]]:
    """Nodes grouped by the set of leaves they are cabled to: the scheduler's leaf-level switches."""
    groups: dict[frozenset[str], set[str]] = defaultdict(set)
    for node, leaves in cabled(fabric, "node-leaf").items():
        groups[leaves].add(node)
    return {frozenset(nodes) for nodes in groups.values()}


def check_tree(fabric: Fabric, switches: dict[str, dict], members) -> None:
    """``switches`` (name -> level, nodes, child switches) is the tree of ``fabric``'s cables.

    ``members(switch)`` returns ``(nodes, children)`` of a switch as name lists.
    """
    tiers = fabric.design.fabric.tiers
    if tiers == 0:
        assert switches == {}
        return
    node_leaves = cabled(fabric, "node-leaf")
    leaf_spines = cabled(fabric, "leaf-spine")
    children_of = {name: members(name)[1] for name in switches}
    parents = defaultdict(list)
    for name, children in children_of.items():
        for child in children:
            parents[child].append(name)
    leaf_level = [name for name in switches if not children_of[name]]
    groups = [frozenset(members(name)[0]) for name in leaf_level]
    assert sum(len(g) for g in groups) == fabric.design.nodes == len(fabric.nodes)
    assert set(groups) == node_groups(fabric)
    roots = [name for name in switches if not parents[name]]
    if tiers == 1:
        assert roots == leaf_level  # a 1-tier fabric has no switch above the leaf level
        return
    assert len(roots) == 1 and all(len(parents[name]) == 1 for name in switches if name not in roots)
    if tiers == 3:
        # Leaf-level switches share a parent exactly when their physical leaves reach the same spines.
        spines = {name: frozenset().union(*(leaf_spines[leaf] for node in group for leaf in node_leaves[node]))
                  for name, group in zip(leaf_level, groups)}
        by_parent = defaultdict(set)
        for name in leaf_level:
            by_parent[parents[name][0]].add(spines[name])
        assert all(len(sets) == 1 for sets in by_parent.values())
        assert len({next(iter(sets)) for sets in by_parent.values()}) == len(by_parent)
        assert set(children_of[roots[0]]) == set(by_parent)
    else:
        assert set(children_of[roots[0]]) == set(leaf_level)


@pytest.mark.parametrize("name", FEASIBLE)
def test_slurmctld_reads_the_topology_of_every_example(name, tmp_path):
    require_slurm()
    written = written_example(name)
    fabric = written.fabric
    conf = (written.out / "topology.conf").read_text(encoding="utf-8")
    shown = parse_topology(show_topology(conf, [node.name for node in fabric.nodes], tmp_path))
    for fields in shown.values():  # Slurm's own expansion agrees with the test's expander
        expression = fields.get("Switches") or fields["Nodes"]
        assert expand_hostnames(expression, tmp_path) == expand(expression)
        break

    def members(switch):
        fields = shown[switch]
        children = expand(fields.get("Switches", ""))
        return ([] if children else expand(fields["Nodes"])), children

    check_tree(fabric, shown, members)
    levels = {int(fields["Level"]) for fields in shown.values()}
    assert levels == set(range(fabric.design.fabric.tiers))  # leaf level 0 up to the top


@pytest.mark.parametrize("name", FEASIBLE)
def test_topology_yaml_is_the_same_tree_and_its_blocks(name):
    written = written_example(name)
    fabric = written.fabric
    topologies = yaml.safe_load((written.out / "topology.yaml").read_text(encoding="utf-8"))
    assert isinstance(topologies, list)
    assert all(next(iter(t)) == "topology" for t in topologies)  # "Must be the first attribute"
    assert len({t["topology"] for t in topologies}) == len(topologies)
    assert [t["topology"] for t in topologies if t.get("cluster_default")][:1]
    if fabric.design.fabric.tiers == 0:
        assert topologies == [{"topology": "flat", "cluster_default": True, "flat": True}]
        return
    kinds = {t["topology"]: {"tree", "block"} & set(t) for t in topologies}
    assert all(len(kind) == 1 for kind in kinds.values())  # exactly one topology type each
    tree = next(t["tree"] for t in topologies if "tree" in t)
    switches = {s["switch"]: s for s in tree["switches"]}
    assert len(switches) == len(tree["switches"]) and all(len(n) <= 64 for n in switches)
    assert all(("nodes" in s) != ("children" in s) for s in switches.values())
    check_tree(fabric, switches, lambda s: (expand(switches[s].get("nodes", "")), expand(switches[s].get("children", ""))))
    block = next(t["block"] for t in topologies if "block" in t)
    groups = [frozenset(expand(b["nodes"])) for b in block["blocks"]]
    assert set(groups) == node_groups(fabric) and len(groups) == len(set(groups))
    base = block["block_sizes"][0]
    assert all(len(group) >= base for group in groups)  # Slurm: each block holds at least the base size
