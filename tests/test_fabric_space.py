"""The fabric design space an architect draws by hand (issue: "compute and storage fabrics sized to
what is used"): DGX SuperPOD reference architectures reproduced, partial scalable units with
uplinks sized to the down-ports in use, multi-rail and rail-only leaves, growth, and converged
storage that never adds a pod. Every case is a real-catalog instance (the bundled
``estimate-pinned-h100`` example with its node count and fabric freed), and every expected figure
is derived by hand in the test from the switch's ports and the reference architecture's tables.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest

from topoopt.checker import check_design
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.safe_yaml import parse_yaml
from topoopt.solver import solve

REPO = Path(__file__).resolve().parent.parent
QM9700_PORTS = 64
"""Quantum-2 QM9700: 32 twin-port OSFP cages = 64 NDR ports at 400 Gb/s."""


@cache
def _base() -> dict:
    path = REPO / "instances" / "estimate-pinned-h100.yaml"
    return parse_yaml(path.read_bytes(), str(path))[0]


def dgx(nodes: int, *, server: str = "dgx-h100", storage_network: str = "dedicated", **constraints) -> Instance:
    """``nodes`` DGX on NDR with QM9700 leaves, non-blocking, tiers and layout free, a deadline
    and budget that never bind."""
    data = copy.deepcopy(_base())
    data["name"] = f"{server}-{nodes}"
    data["workload"]["training"]["parallelism"] = "auto"
    data["goal"] = {"objective": "min_cost", "deadline_days": 3650}
    data["budget"]["max"] = 1e11
    data["site"]["max_racks"] = 2000
    site = constraints.pop("site", {})
    data["site"].update(site)
    pins = data["constraints"]["pins"]
    for key in ("tiers", "storage", "gpu", "nic"):
        pins.pop(key)
    pins.update(server=server, nodes=nodes, storage_network=storage_network)
    data["constraints"].update(constraints)
    return Instance.model_validate(data)


@cache
def solved(nodes: int, **kwargs) -> SolveResult:
    frozen = {k: (dict(v) if isinstance(v, tuple) else v) for k, v in kwargs.items()}
    instance = dgx(nodes, **frozen)
    result = solve(instance, time_limit_s=120)
    assert result.status == "optimal", result.explanation
    assert check_design(instance, result.design, result.cost) == []
    return result


def switches(result: SolveResult, network: str = "compute") -> dict[str, int]:
    return {g.tier: g.count for g in result.design.switches if g.network == network}


def links(result: SolveResult, between: str) -> int:
    return sum(g.count for g in result.design.links if g.between == between)


def cost_of(result: SolveResult, category: str) -> float:
    return sum(line.total for line in result.cost.breakdown if line.category == category)


def assert_uplinks_sized(result: SolveResult) -> None:
    """R1: leaf–spine links ≤ the links into the leaves + leaves × (spines per leaf − 1)."""
    f = result.design.fabric
    if f.tiers < 2:
        return
    into_leaves = links(result, "node-leaf")
    if result.design.storage_network.mode == "converged" and result.design.storage_network.converged_attach == "leaves":
        into_leaves += result.design.storage_network.unit_ports
    assert links(result, "leaf-spine") <= into_leaves + f.leaves * (f.spines_per_pod - 1)


# -- the reference architectures -----------------------------------------------------------------

@pytest.mark.parametrize("nodes, leaves, spines, cores", [
    # DGX SuperPOD H100 RA: one scalable unit is 32 nodes, 8 rails, one QM9700 leaf per rail
    # (32 down / 32 up); spines take every leaf's 32 uplinks: 1 SU 4 spines (8 links per leaf),
    # 2 SU 8 (4 links), 3 SU 16 (2 links: 24 × 2 = 48 of 64 ports), 4 SU 16 (32 × 2 = 64).
    (32, 8, 4, 0), (64, 16, 8, 0), (96, 24, 16, 0), (128, 32, 16, 0),
])
def test_dgx_h100_superpod_counts(nodes, leaves, spines, cores):
    result = solved(nodes)
    f = result.design.fabric
    assert (f.leaves, f.spines, f.cores) == (leaves, spines, cores)
    assert f.rails_per_leaf == 1 and result.design.rail_optimized  # rail-optimized first among equals
    assert_uplinks_sized(result)


@pytest.mark.parametrize("nodes, leaves, spines, cores", [
    # DGX SuperPOD B200 RA, "Larger SuperPOD component counts": 8 SU 64/32 (2 tiers: 64 leaves × 1
    # link fill a spine); 16 SU 128/128/64, 32 SU 256/256/128, 64 SU 512/512/256 (3 tiers: pods of
    # 32 leaves and 32 spines, spine j of every pod on core plane j).
    (256, 64, 32, 0), (512, 128, 128, 64), (1024, 256, 256, 128), (2048, 512, 512, 256),
])
def test_dgx_b200_superpod_counts(nodes, leaves, spines, cores):
    result = solved(nodes, server="dgx-b200")
    f = result.design.fabric
    assert (f.leaves, f.spines, f.cores) == (leaves, spines, cores)
    assert_uplinks_sized(result)


# -- partial scalable units ------------------------------------------------------------------------

@pytest.mark.parametrize("nodes", [16, 20, 24, 40, 48])
def test_partial_scalable_units_cable_only_what_is_used(nodes):
    """The lean hand design for n < 32 nodes per rail: each rail's leaf has n down-ports in use and
    n uplinks (non-blocking), over the fewest spines that take 8 leaves' links: ceil(8n / 64).
    For 40 and 48, two leaves per rail of 20 and 24 nodes: 16 leaves × 20 (24) uplinks, spines
    ceil(16 × 20 / 64) = 5 (6). The optimum costs no more than it and cables no more uplinks."""
    result = solved(nodes)
    per_rail = 1 if nodes <= 32 else 2
    down = -(-nodes // per_rail)
    lean_leaves = 8 * per_rail
    lean_spines = -(-lean_leaves * down // QM9700_PORTS)
    compute = switches(result)
    assert sum(compute.values()) <= lean_leaves + lean_spines
    assert links(result, "leaf-spine") <= lean_leaves * down
    assert_uplinks_sized(result)
    assert result.design.oversubscription <= 1.0


def test_sixteen_dgx_cost_no_more_than_the_lean_design():
    """16 × DGX H100: 8 leaves of 16 down / 16 up and 2 spines (8 links from each leaf to each;
    128 leaf–spine links) is the lean rail-optimized design; the optimum is that or cheaper (two
    rails per leaf: 4 leaves of 32 / 32 and 2 spines of 4 × 16 links). The old model's 4 spines
    and 256 uplinks are out."""
    result = solved(16)
    f = result.design.fabric
    assert f.tiers == 2 and f.spines <= 2 and f.leaves <= 8
    assert links(result, "leaf-spine") == links(result, "node-leaf") == 16 * 8


def test_rail_only_is_cheaper_when_allowed_and_off_by_default():
    """Two QM9700, each taking 4 rails of the 16 nodes (4 × 16 = 64 ports): no spine, no
    leaf–spine link, and no slower training (the model's collectives are rail-aligned; one switch hop
    instead of three)."""
    fenced, allowed = solved(16), solved(16, allow_rail_only=True)
    assert not fenced.design.fabric.rail_only
    f = allowed.design.fabric
    assert f.rail_only and f.tiers == 1 and f.leaves == 2 and f.rails_per_leaf == 4
    assert links(allowed, "leaf-spine") == 0
    assert cost_of(allowed, "switch") < cost_of(fenced, "switch")
    assert allowed.cost.total < fenced.cost.total
    assert allowed.performance.time_to_train_days <= fenced.performance.time_to_train_days


def test_growth_sizes_the_spines_for_the_provisioned_nodes():
    """16 nodes built on a fabric provisioned for 128 (4 SU): the spine layer of the 128-node RA
    (16 spines) with leaves only for the 16 nodes built, each with a full leaf's 32 uplinks."""
    result = solved(16, site=(("provision_fabric_for_nodes", 128),))
    f = result.design.fabric
    assert f.provisioned_nodes == 128
    assert f.spines == 16 and f.leaf_up_ports == 32
    assert f.leaves == 8 // f.rails_per_leaf * f.leaves_per_rail
    lean = solved(16)
    assert result.cost.total > lean.cost.total


# -- converged storage -------------------------------------------------------------------------------

def test_converged_storage_never_adds_a_pod():
    """2,048 DGX H100 on 3 tiers: the nodes alone fill 8 pods (256 leaves, 256 spines); the storage
    units take free core ports or storage leaves, never a pod of their own."""
    result = solved(2048, server="dgx-b200", storage_network="converged")
    f = result.design.fabric
    assert f.tiers == 3
    node_pods = -(-(f.leaves - result.design.storage_network.compute_storage_leaves) // f.leaves_per_pod)
    assert f.pods == node_pods
    assert_uplinks_sized(result)


def test_converged_storage_on_sixteen_nodes_adds_no_spine():
    """16 DGX converged: the storage units' few ports fit free spine ports (or one storage leaf);
    the compute switches stay within the lean design's 8 + 2."""
    result = solved(16, storage_network="converged")
    assert sum(switches(result).values()) <= 10
    assert_uplinks_sized(result)


# -- near-balanced spine tiers ---------------------------------------------------------------------

def test_converged_storage_on_128_dgx_takes_one_spine_not_a_spine_tier():
    """128 DGX H100 (4 SU) converged: the nodes need the RA's 32 leaves × 32 uplinks = 1,024 links,
    which fill 16 spines of 64 ports exactly. The storage units' ports then need one spine more:
    17 spines hold 17 × 64 = 1,088 ports, 64 free for the units; 32 uplinks do not divide over 17
    spines, so every leaf reaches 15 spines with 2 links and 2 with 1 (2·15 + 2 = 32), and the
    spines carry 60 or 61 leaf links (1,024 = 17 × 60 + 4). 32 + 17 = 49 ≤ 50 compute switches,
    where the even shapes need 32 spines (32 × 1 link): 64."""
    result = solved(128, storage_network="converged")
    f, sn = result.design.fabric, result.design.storage_network
    assert sum(switches(result).values()) <= 50
    assert (f.leaves - sn.compute_storage_leaves, f.leaf_up_ports) == (32, 32)
    assert f.leaves * f.leaf_up_ports + (sn.unit_ports if sn.converged_attach == "top" else 0) <= f.spines * 64
    assert_uplinks_sized(result)


def test_near_balanced_spines_between_scalable_units():
    """160 DGX H100 (5 SU, dedicated storage): 40 leaves × 32 uplinks = 1,280 links need
    ceil(1,280 / 64) = 20 spines. 32 uplinks over 20 spines: 12 pairs of 2 links and 8 of 1 per
    leaf, every spine 1,280 / 20 = 64 links. The even shapes (20 does not divide 32) would take
    32 spines of 1 link (40 ports each)."""
    result = solved(160)
    f = result.design.fabric
    assert (f.tiers, f.leaves, f.spines, f.leaf_up_ports, f.links_per_leaf_spine) == (2, 40, 20, 32, 1)
    assert links(result, "leaf-spine") == 1_280
    assert_uplinks_sized(result)
