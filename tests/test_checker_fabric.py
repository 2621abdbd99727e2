"""The checker on the widened compute fabric (docs/model.md, "Fabric", schema 1.5): rail groups
(``rails_per_leaf``), rail-only 1 tier, uplinks sized to the down-ports in use (2 tiers ``u = S·L``
and the sizing rule R1 ``x·(u − S + 1) ≤ g·n``), the oversubscription ``d/u`` and its class
``ceil(d/u)``, growth (``site.provision_fabric_for_nodes``) and where converged storage units attach.

Every count below is derived by hand in the comments. The DGX H100 designs (8 rails at 400G on
the QM9700, k = 32 twin cages × 2 = 64 ports) change only the compute fabric of the base fixture:
their storage, management and rack records are the base's and are not re-derived, so for them only
the compute fabric's families are asserted (:func:`fabric_violations`). The designs built on the
base fixture's own node count are checked whole.
"""

from __future__ import annotations

import pytest
from checker_fixtures import (
    BASE_DESIGN,
    CONVERGED_DESIGN,
    CONVERGED_TWO_TIER,
    THREE_TIER_DESIGN,
    THREE_TIER_INSTANCE_CHANGES,
    apply_changes,
    base_design,
    families,
    instance,
)

from topoopt.checker import check_design
from topoopt.checking.context import build_context

NODE_KIT = "ndr-sr4-twin-to-twin-flat-kit-50m"  # 2 links, a twin-port kit (cabled fibre by fibre)
SWITCH_KIT = "ndr-dr4-twin-kit-500m"  # 2 links, 1 twin cage each end: kits = cages filled
FABRIC_FAMILIES = {"leaf_ports_cover_endpoints", "spine_ports_cover_uplinks", "core_ports_cover_uplinks",
                   "oversubscription_within_limit", "uplinks_balanced", "port_form_factor_match"}
COMPUTE_LINKS = ("node-leaf", "leaf-spine", "spine-core")


def fabric_violations(found) -> list[str]:
    """The compute fabric's violations: its families, and port_form_factor_match on compute links."""
    return [str(v) for v in found if v.family in FABRIC_FAMILIES
            and (v.family != "port_form_factor_match" or v.item.startswith(COMPUTE_LINKS))]


def dgx(nodes: int, fabric: dict, leaf_used: int, spine_used: int = 0, leaf_spine: tuple[int, int] | None = None,
        oversubscription: float = 1.0) -> dict:
    """``nodes`` × DGX H100 on QM9700 with ``fabric`` (merged over the base's); node-leaf twin kits
    8 rails × ceil(n / 2); ``leaf_spine`` = (links, kits), run in the rack (3 + 2 m: every case
    here has its switches in one network rack)."""
    tiers = fabric["tiers"]
    shape = {**BASE_DESIGN["fabric"], "spines": 0, "cores": 0, "leaf_up_ports": 0, "links_per_leaf_spine": 0,
             "spines_per_pod": 0, "pods": 1, **fabric}
    switches = [{"tier": "leaf", "model": "qm9700", "count": shape["leaves"], "ports_used": leaf_used}]
    if shape["spines"]:
        switches.append({"tier": "spine", "model": "qm9700", "count": shape["spines"], "ports_used": spine_used})
    links = [{"between": "node-leaf", "count": nodes * 8, "part": NODE_KIT, "assemblies": 8 * -(-nodes // 2),
              "length_m": 17.0, "gbps": 400}]
    if leaf_spine:
        links.append({"between": "leaf-spine", "count": leaf_spine[0], "part": SWITCH_KIT,
                      "assemblies": leaf_spine[1], "length_m": 3.0, "gbps": 400})
    return apply_changes(BASE_DESIGN, {
        "nodes": nodes, "gpus": 8 * nodes, "tiers": tiers, "oversubscription": oversubscription,
        "rail_optimized": shape["rail_optimized"], "fabric": shape,
        "switches": switches + BASE_DESIGN["switches"][2:], "links": links + BASE_DESIGN["links"][2:],
    })


# 16 × DGX H100 non-blocking (docs/model.md's example): one rail per leaf, 1 leaf per rail group:
# 8 leaves, d = 1 × ceil(16/1) = 16 down-ports in use; 2 spines × 8 links: u = 16, d/u = 1;
# R1: 1 × (16 − 2 + 1) = 15 ≤ 1 × 16. A spine uses 8 leaves × 8 = 64 ≤ 64 ports. Leaves use 128 +
# 8 × 16 = 256 ports, spines 128; leaf-spine 8 × 16 = 128 links in twin kits: 2 spines ×
# ceil(8 × 8 / 2) = 64 cages above, 8 × ceil(16 / 2) = 64 below: 64 kits.
SIXTEEN_NON_BLOCKING = dgx(16, {
    "tiers": 2, "leaves": 8, "spines": 2, "leaf_down_ports": 16, "leaf_up_ports": 16, "links_per_leaf_spine": 8,
    "spines_per_pod": 2, "leaves_per_pod": 8, "rail_optimized": True, "leaves_per_rail": 1, "rails_per_leaf": 1,
}, leaf_used=256, spine_used=128, leaf_spine=(128, 64))

# Rail-only: 16 × DGX H100 with 4 rails per switch: 2 rail groups, one 64-port switch each using
# 4 × 16 = 64 ports; no spine. Leaves (the 2 switches) use 128 ports.
SIXTEEN_RAIL_ONLY = dgx(16, {
    "tiers": 1, "leaves": 2, "leaf_down_ports": 64, "leaves_per_pod": 2, "rail_optimized": False,
    "rail_only": True, "leaves_per_rail": 1, "rails_per_leaf": 4,
}, leaf_used=128)

# Multi-rail leaves, 4 rails per leaf (2 rail groups) in 2 tiers, 16 × DGX H100: a leaf of
# D = 64 − u down-ports takes floor(D/4) nodes. Non-blocking, 2 spines × 16 links: u = 32, x = 2
# leaves per group (2 × floor(32/4) = 16 ≥ 16), d = 4 × ceil(16/2) = 32, d/u = 1; R1: 2 × (32 − 2
# + 1) = 62 ≤ 4 × 16 = 64. 4 leaves; a spine uses 4 × 16 = 64 ports. Leaves use 128 + 4 × 32 = 256,
# spines 128; 128 leaf-spine links, kits 2 × ceil(4 × 16 / 2) = 64 = 4 × ceil(32 / 2).
SIXTEEN_MULTI_RAIL = dgx(16, {
    "tiers": 2, "leaves": 4, "spines": 2, "leaf_down_ports": 32, "leaf_up_ports": 32, "links_per_leaf_spine": 16,
    "spines_per_pod": 2, "leaves_per_pod": 4, "rail_optimized": True, "leaves_per_rail": 2, "rails_per_leaf": 4,
}, leaf_used=256, spine_used=128, leaf_spine=(128, 64))
# ... and 2:1, 2 spines × 8 links: u = 16, d = 32 (32 + 16 ≤ 64), d/u = 2; R1: 2 × (16 − 2 + 1) =
# 30 ≤ 64. A spine uses 4 × 8 = 32 ports. Leaves use 128 + 4 × 16 = 192, spines 64; 64 leaf-spine
# links, kits 2 × ceil(4 × 8 / 2) = 32 = 4 × ceil(16 / 2).
SIXTEEN_MULTI_RAIL_2_TO_1 = dgx(16, {
    "tiers": 2, "leaves": 4, "spines": 2, "leaf_down_ports": 32, "leaf_up_ports": 16, "links_per_leaf_spine": 8,
    "spines_per_pod": 2, "leaves_per_pod": 4, "rail_optimized": True, "leaves_per_rail": 2, "rails_per_leaf": 4,
}, leaf_used=192, spine_used=64, leaf_spine=(64, 32), oversubscription=2.0)

# The DGX SuperPOD H100 reference architecture, 128 nodes (4 scalable units): 4 leaves per rail,
# 32 leaves of d = ceil(128/4) = 32 down / 32 up; 16 spines × 2 links: u = 32; R1: 4 × (32 − 16 +
# 1) = 68 ≤ 128. A spine uses 32 × 2 = 64 ports. Leaves use 1,024 + 32 × 32 = 2,048 ports, spines
# 1,024; 1,024 leaf-spine links, kits 16 × ceil(32 × 2 / 2) = 512 = 32 × ceil(32 / 2).
SUPERPOD_128 = dgx(128, {
    "tiers": 2, "leaves": 32, "spines": 16, "leaf_down_ports": 32, "leaf_up_ports": 32, "links_per_leaf_spine": 2,
    "spines_per_pod": 16, "leaves_per_pod": 32, "rail_optimized": True, "leaves_per_rail": 4, "rails_per_leaf": 1,
}, leaf_used=2048, spine_used=1024, leaf_spine=(1024, 512))

# 160 nodes (5 scalable units) near-balanced: 5 leaves per rail, 40 leaves of 32 down / 32 up;
# 1,280 leaf-spine links over 20 spines (20 does not divide 32): every leaf 2 links to 12 spines
# and 1 to 8, every spine 1,280 / 20 = 64 links (full). R1: 5 × (32 − 20 + 1) = 65 ≤ 160. Leaves
# use 1,280 + 1,280 = 2,560 ports; kits 20 × ceil(64 / 2) = 640 = 40 × ceil(32 / 2).
NEAR_BALANCED_160 = dgx(160, {
    "tiers": 2, "leaves": 40, "spines": 20, "leaf_down_ports": 32, "leaf_up_ports": 32, "links_per_leaf_spine": 1,
    "spines_per_pod": 20, "leaves_per_pod": 40, "rail_optimized": True, "leaves_per_rail": 5, "rails_per_leaf": 1,
}, leaf_used=2560, spine_used=1280, leaf_spine=(1280, 640))

# 16 nodes, 8 leaves of 16 down / 16 up over 10 spines: every leaf 2 links to 6 spines and 1 to 4
# (R1: 1 × (16 − 10 + 1) = 7 ≤ 16). 128 = 10 × 12 + 8 links dealt round-robin: 8 spines carry 13
# (7 twin cages), 2 carry 12 (6): 68 spine cages > 8 leaves × 8 = 64 leaf cages, so 68 kits.
SIXTEEN_NEAR_BALANCED = dgx(16, {
    "tiers": 2, "leaves": 8, "spines": 10, "leaf_down_ports": 16, "leaf_up_ports": 16, "links_per_leaf_spine": 1,
    "spines_per_pod": 10, "leaves_per_pod": 8, "rail_optimized": True, "leaves_per_rail": 1, "rails_per_leaf": 1,
}, leaf_used=256, spine_used=128, leaf_spine=(128, 68))

ACCEPTED = {
    "16-dgx-non-blocking": (SIXTEEN_NON_BLOCKING, {}),
    "16-dgx-rail-only-4-rails-per-switch": (SIXTEEN_RAIL_ONLY, {"constraints.allow_rail_only": True}),
    "16-dgx-4-rails-per-leaf-non-blocking": (SIXTEEN_MULTI_RAIL, {}),
    "16-dgx-4-rails-per-leaf-2-to-1": (SIXTEEN_MULTI_RAIL_2_TO_1, {"constraints.max_oversubscription": 2.0}),
    "128-dgx-superpod": (SUPERPOD_128, {"budget.max": 1e9}),
    "160-dgx-near-balanced": (NEAR_BALANCED_160, {"budget.max": 1e9}),
    "16-dgx-near-balanced": (SIXTEEN_NEAR_BALANCED, {}),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_hand_derived_fabric_is_accepted(name):
    design, changes = ACCEPTED[name]
    inst = instance(**changes)
    assert fabric_violations(check_design(inst, base_design(design, inst))) == []


def test_hand_derived_counts_are_the_checkers():
    ctx = build_context(instance(), base_design(SUPERPOD_128, instance(**{"budget.max": 1e9})))
    c = ctx.counts
    assert (c.rail_groups, c.leaves, c.down, c.up, c.spines, c.leaf_spine_links) == (8, 32, 32, 32, 16, 1024)
    ctx = build_context(instance(), base_design(SIXTEEN_RAIL_ONLY))
    assert (ctx.counts.rail_groups, ctx.counts.leaves, ctx.counts.down, ctx.counts.spines) == (2, 2, 64, 0)


# ---------------------------------------------------------------------------------------------
# tampered fabrics are rejected, with the amounts

TAMPERED = {
    # docs/model.md: "not 4 spines and 32 uplinks per leaf". 4 spines × 8 links (spines use 8 × 8 =
    # 64 ports, leaves 16 + 32 = 48): 1 × (32 − 4 + 1) = 29 > 16 node ports.
    "too-many-uplinks-for-r1": (
        SIXTEEN_NON_BLOCKING, {}, {"fabric.spines": 4, "fabric.spines_per_pod": 4, "fabric.leaf_up_ports": 32,
                                   "oversubscription": 0.5, "switches.0.ports_used": 128 + 256,
                                   "switches.1.count": 4, "switches.1.ports_used": 256, "links.1.count": 256,
                                   "links.1.assemblies": 128},
        "uplinks_balanced: leaf uplinks: 1 leaves per rail group × (32 uplinks − 4 spines + 1) = 29 > 1 rails × "
        "16 nodes = 16: more uplinks than the ports in use need"),
    "down-ports-recorded-as-the-split": (
        SIXTEEN_NON_BLOCKING, {}, {"fabric.leaf_down_ports": 32},
        "leaf_ports_cover_endpoints: fabric.leaf_down_ports: recorded 32, the rules give 16 (fullest leaf: 1 rails × "
        "ceil(16 nodes / 1 leaves per group))"),
    "rails-per-leaf-not-dividing-the-rails": (
        SIXTEEN_MULTI_RAIL, {}, {"fabric.rails_per_leaf": 3},
        "leaf_ports_cover_endpoints: fabric.rails_per_leaf: 3 rails per leaf: a leaf carries 1, 2, 4 or 8 rails "
        "dividing the node's 8"),
    "rails-per-leaf-beyond-the-rails": (
        SIXTEEN_MULTI_RAIL, {}, {"fabric.rails_per_leaf": 16},
        "leaf_ports_cover_endpoints: fabric.rails_per_leaf: 16 rails per leaf: a leaf carries 1, 2, 4 or 8 rails "
        "dividing the node's 8"),
    "rail-only-not-recorded": (
        SIXTEEN_RAIL_ONLY, {}, {"fabric.rail_only": False},
        "leaf_ports_cover_endpoints: fabric.rail_only: recorded False, the rules give True (8 rails per node in "
        "groups of 4, 1 tier(s))"),
    "rail-only-switch-count": (
        SIXTEEN_RAIL_ONLY, {}, {"fabric.leaves": 1, "switches.0.count": 1},
        "leaf_ports_cover_endpoints: fabric.leaves: recorded 1, the rules give 2 (one switch per rail group: 8 rails "
        "/ 4 per leaf = 2 rail group(s))"),
    "rail-only-switch-overfull": (
        SIXTEEN_RAIL_ONLY, {}, {"fabric.rails_per_leaf": 8, "fabric.leaves": 1, "fabric.rail_only": False,
                                "fabric.leaf_down_ports": 128, "switches.0.count": 1},
        "leaf_ports_cover_endpoints: leaf switch (qm9700): 16 nodes × 8 rails = 128 ports > 64 ports of one switch"),
    "empty-leaves": (
        SIXTEEN_NON_BLOCKING, {}, {"fabric.leaves_per_rail": 17},
        "leaf_ports_cover_endpoints: fabric.leaves_per_rail: 17 leaves per rail group > 16 nodes: a leaf would carry "
        "no node"),
    "uplinks-not-spines-times-links": (
        # 20 uplinks over 2 spines are 10 per pair, not the recorded 8.
        SIXTEEN_NON_BLOCKING, {}, {"fabric.leaf_up_ports": 20},
        "uplinks_balanced: fabric.links_per_leaf_spine: recorded 8, the rules give 10 (floor(20 uplinks / 2 "
        "spines), the fewest links of a pair)"),
    "uplinks-uneven-beyond-two-per-pair": (
        # 17 uplinks over 2 spines: 8 and 9 links per pair; uneven pairs take 1 or 2 links only.
        SIXTEEN_NON_BLOCKING, {}, {"fabric.leaf_up_ports": 17},
        "uplinks_balanced: leaf-spine links: 17 uplinks per leaf do not divide over 2 spines: uneven pairs only "
        "with 1 or 2 links each (17/2 < spines < 17)"),
    "leaf-missing-a-spine": (
        # 16 uplinks per leaf cannot reach each of 17 spines.
        SIXTEEN_NON_BLOCKING, {}, {"fabric.spines": 17, "fabric.spines_per_pod": 17, "fabric.links_per_leaf_spine": 0},
        "uplinks_balanced: leaf-spine links: 17 spines > 16 uplinks per leaf: a leaf would miss a spine"),
    "uplinks-beyond-half-the-ports": (
        SIXTEEN_MULTI_RAIL, {}, {"fabric.links_per_leaf_spine": 17, "fabric.leaf_up_ports": 34},
        "uplinks_balanced: leaf-spine links: 34 uplinks per leaf > floor(64/2) = 32"),
    "multi-rail-leaf-overfull": (
        # 1 leaf per group of 4 rails: d = 4 × 16 = 64, + 32 up > 64.
        SIXTEEN_MULTI_RAIL, {}, {"fabric.leaves_per_rail": 1, "fabric.leaves": 2, "fabric.leaf_down_ports": 64},
        "leaf_ports_cover_endpoints: leaf switches (qm9700): 64 down-ports in use + 32 up = 96 ports > 64"),
    "oversubscription-recorded-as-its-class": (
        # 2 spines × 12 links: 32 down-ports in use / 24 up = 1.333:1, whose class is 2.
        SIXTEEN_MULTI_RAIL, {"constraints.max_oversubscription": 2.0},
        {"fabric.links_per_leaf_spine": 12, "fabric.leaf_up_ports": 24, "oversubscription": 2.0},
        "oversubscription_within_limit: design: oversubscription 2 ≠ 32 down-ports in use / 24 up = 1.333"),
    "oversubscription-beyond-class-3": (
        # 1 spine × 4 links for 32 down-ports in use: 8:1, class 8.
        SIXTEEN_MULTI_RAIL, {"constraints.max_oversubscription": 16.0},
        {"fabric.spines": 1, "fabric.spines_per_pod": 1, "fabric.links_per_leaf_spine": 4, "fabric.leaf_up_ports": 4,
         "oversubscription": 8.0},
        "oversubscription_within_limit: leaf split: 32 down-ports in use / 4 up: class ceil(8) = 8; the performance "
        "model knows 1, 2 and 3"),
    "near-balanced-kits-counted-as-even": (
        # 128 links / 2 = 64 kits ignores the part-filled cages of the 13-link spines.
        SIXTEEN_NEAR_BALANCED, {}, {"links.1.assemblies": 64},
        "port_form_factor_match: leaf-spine links (ndr-dr4-twin-kit-500m): 64 assemblies recorded; max(ceil(2 spines "
        "× ceil(12 links / 2) + 8 spines × ceil(13 links / 2) cages / 1), ceil(8 leaves × ceil(16 uplinks / 2) cages "
        "/ 1)) (kits by cages filled) = 68"),
    "near-balanced-spines-overfull": (
        # 19 spines for 1,280 links: ceil(1,280 / 19) = 68 ports on the busiest > 64.
        NEAR_BALANCED_160, {"budget.max": 1e9}, {"fabric.spines": 19, "fabric.spines_per_pod": 19},
        "spine_ports_cover_uplinks: spine switches (qm9700): ceil(40 leaves × 32 uplinks / 19 spines) = 68 ports in "
        "use per spine > 64"),
    "2-tier-spine-overfull": (
        # 2 spines × 16 links for the 8 leaves of one rail per leaf: 8 × 16 = 128 ports per spine.
        SIXTEEN_NON_BLOCKING, {}, {"fabric.links_per_leaf_spine": 16, "fabric.leaf_up_ports": 32},
        "spine_ports_cover_uplinks: spine switches (qm9700): ceil(8 leaves × 32 uplinks / 2 spines) = 128 ports in "
        "use per spine > 64"),
}


@pytest.mark.parametrize("name", list(TAMPERED))
def test_tampered_fabric_is_rejected(name):
    base, instance_changes, changes, expected = TAMPERED[name]
    inst = instance(**{"budget.max": 1e9, **instance_changes})
    found = fabric_violations(check_design(inst, base_design(base, inst, **changes)))
    assert expected in found, found


def test_three_tier_sizing_rule_uses_the_spines_per_pod():
    # 5 nodes, 2 leaves per rail group, 2 links per leaf-spine pair: Q = 4/2 = 2 spines per pod,
    # 2 × (4 − 2 + 1) = 6 > 5 node ports per group; with 1 link per pair (Q = 4) 2 × 1 = 2 ≤ 5.
    inst = instance(**THREE_TIER_INSTANCE_CHANGES)
    two = {"fabric.links_per_leaf_spine": 2, "fabric.pods": 8, "fabric.spines_per_pod": 2, "fabric.leaves_per_pod": 2,
           "fabric.cores_per_plane": 4, "fabric.links_per_spine_core": 1, "links.1.assemblies": 32,
           "links.2.assemblies": 32}
    found = fabric_violations(check_design(inst, base_design(THREE_TIER_DESIGN, inst, nodes=5, gpus=40, **two)))
    assert ("uplinks_balanced: leaf uplinks: 2 leaves per rail group × (4 uplinks − 2 spines per pod + 1) = 6 > "
            "1 rails × 5 nodes = 5: more uplinks than the ports in use need") in found
    found = fabric_violations(check_design(inst, base_design(THREE_TIER_DESIGN, inst, nodes=5, gpus=40)))
    assert not [v for v in found if v.startswith("uplinks_balanced")]


def test_three_tier_down_ports_stay_within_the_split():
    # 1 leaf per rail group: d = 6 > the ratio-1 split's D = 4 of the 8-port switch.
    inst = instance(**THREE_TIER_INSTANCE_CHANGES)
    found = fabric_violations(check_design(inst, base_design(THREE_TIER_DESIGN, inst, **{
        "fabric.leaves_per_rail": 1, "fabric.leaf_down_ports": 6, "oversubscription": 1.5})))
    assert "leaf_ports_cover_endpoints: leaf switches (sw8): 6 down-ports in use > the split's 4 down-ports (4 up)" in found


# ---------------------------------------------------------------------------------------------
# the performance model's oversubscription class


def test_performance_model_sees_the_oversubscription_class():
    inst = instance(**{"constraints.max_oversubscription": 2.0})
    design = base_design(SIXTEEN_MULTI_RAIL, inst, **{"fabric.links_per_leaf_spine": 12, "fabric.leaf_up_ports": 24,
                                                      "oversubscription": 1.3333, "parallelism": None})
    ctx = build_context(inst, design)
    assert ctx.hardware.oversubscription == 2.0  # ceil(32 / 24), not 1.333
    assert build_context(inst, base_design(SIXTEEN_MULTI_RAIL, inst)).hardware.oversubscription == 1.0
    # 3 tiers, 3 down-ports in use per 4 up (0.75:1): class 1.
    three = instance(**THREE_TIER_INSTANCE_CHANGES)
    assert build_context(three, base_design(THREE_TIER_DESIGN, three)).hardware.oversubscription == 1.0


# ---------------------------------------------------------------------------------------------
# growth: site.provision_fabric_for_nodes

# The base fixture's 4 DGX with 4 spines × 8 links (u = 32, 4 down-ports in use: 0.125:1) is sized
# for 32 nodes: leaves of D = 64 − 32 = 32 down-ports take 32 nodes (x_N = 1), whose fullest leaf's
# 32 down-ports are within 1 × 32 up, and 8 leaves × 8 links = 64 spine ports. Leaves use 32 + 8 × 32
# = 288 ports, spines 256; twin kits 4 × ceil(8 × 8 / 2) = 128 = 8 × ceil(32 / 2).
GROWN = {"fabric.provisioned_nodes": 32, "fabric.links_per_leaf_spine": 8, "fabric.leaf_up_ports": 32,
         "oversubscription": 0.125, "switches.0.ports_used": 288, "switches.1.ports_used": 256, "links.1.count": 256,
         "links.1.assemblies": 128}


def test_growth_design_is_clean_and_waives_the_sizing_rule():
    grow = instance(**{"site.provision_fabric_for_nodes": 32})
    assert check_design(grow, base_design(inst=grow, **GROWN)) == []
    # Without growth, 1 × (32 − 4 + 1) = 29 > 4 node ports: far more uplinks than 4 nodes need.
    found = check_design(instance(), base_design(**{**GROWN, "fabric.provisioned_nodes": 0}))
    assert families(found) == {"uplinks_balanced"}, [str(v) for v in found]


def test_growth_target_is_recorded():
    grow = instance(**{"site.provision_fabric_for_nodes": 32})
    found = [str(v) for v in check_design(grow, base_design(inst=grow, **{**GROWN, "fabric.provisioned_nodes": 0}))]
    assert ("leaf_ports_cover_endpoints: fabric.provisioned_nodes: recorded 0, the rules give 32 "
            "(site.provision_fabric_for_nodes)") in found


def test_growth_keeps_the_oversubscription_class():
    # The base's 4 uplinks per leaf: 8 nodes fill one leaf of D = 60 down-ports per rail group with
    # 8 > 1 × 4 up.
    grow = instance(**{"site.provision_fabric_for_nodes": 8})
    found = [str(v) for v in check_design(grow, base_design(inst=grow, **{"fabric.provisioned_nodes": 8}))]
    assert ("oversubscription_within_limit: leaf split: growth to 8 nodes: the fullest of 1 leaves per rail group has "
            "8 down-ports in use > ρ 1 × 4 up") in found


def test_growth_on_one_tier_needs_the_ports_at_n():
    # One 64-port switch carrying all 8 rails: 9 nodes would need 72 ports.
    one = {"tiers": 1, "rail_optimized": False, "fabric.tiers": 1, "fabric.rails_per_leaf": 8, "fabric.leaves": 1,
           "fabric.spines": 0, "fabric.spines_per_pod": 0, "fabric.leaves_per_pod": 1, "fabric.leaf_down_ports": 32,
           "fabric.leaf_up_ports": 0, "fabric.links_per_leaf_spine": 0, "fabric.rail_optimized": False,
           "fabric.provisioned_nodes": 9}
    grow = instance(**{"site.provision_fabric_for_nodes": 9})
    found = fabric_violations(check_design(grow, base_design(inst=grow, **one)))
    assert "leaf_ports_cover_endpoints: leaf switch (qm9700): growth to 9 nodes × 8 rails = 72 ports > 64 ports of one switch" in found


# ---------------------------------------------------------------------------------------------
# converged storage: where the units attach

CONVERGED_2 = apply_changes(CONVERGED_DESIGN, CONVERGED_TWO_TIER)
# The converged 2-tier fixture with its 8 unit ports on the spine instead of a storage leaf: 8
# leaves, 1 spine × 4 links (u = 4 for d = 4; 1 × (4 − 1 + 1) ≤ 4); the spine uses 8 × 4 = 32 leaf
# ports + 8 unit ports = 40 ≤ 1 × 40. Leaves use 32 + 8 × 4 = 64 ports; 32 leaf-spine AOCs (8 × 1
# × ceil(4 / 1)). Management ports 4 × 2 + 9 qm8700 × 1 + 1 × 2 + 5 racks × 2 PDUs = 29; 9 × 540 W = 4.86 kW of switches.
ON_SPINES = {
    "fabric.leaves": 8, "fabric.spines": 1, "fabric.spines_per_pod": 1, "fabric.links_per_leaf_spine": 4,
    "fabric.leaves_per_pod": 8,
    "switches": [{"tier": "leaf", "model": "qm8700", "count": 8, "ports_used": 64},
                 {"tier": "spine", "model": "qm8700", "count": 1, "ports_used": 40},
                 {**CONVERGED_TWO_TIER["switches"][2], "ports_used": 29}],
    "links.1.count": 32, "links.1.assemblies": 32, "links.3.count": 29, "links.3.assemblies": 29,
    "storage_network.compute_storage_leaves": 0, "storage_network.converged_attach": "top",
    "management_network.ports": 29, "racks.1.power_kw": 4.86,
}


def test_converged_units_on_the_top_tier_are_clean():
    assert check_design(instance(), base_design(CONVERGED_2, **ON_SPINES)) == []


def test_converged_units_on_the_top_tier_need_free_ports():
    # Two parallel-file-system blocks: 16 unit ports + 32 leaf uplinks = 48 > 1 spine × 40 ports.
    found = check_design(instance(), base_design(CONVERGED_2, **ON_SPINES, **{
        "storage.units": 2, "storage.ports": 16, "storage.read_gbps": 1600.0, "storage.write_gbps": 1120.0,
        "storage.capacity_tb": 1000.0, "storage_network.unit_ports": 16, "links.2.count": 16, "links.2.assemblies": 16,
        "switches.1.ports_used": 48}))
    assert ("storage_fabric_ports_cover: spine switches (qm8700): 16 storage-unit ports + 8 leaves × 4 uplinks = 48 > "
            "1 spines × 40 = 40 ports") in [str(v) for v in found]


def test_converged_storage_leaves_uplinks_carry_the_need():
    # 1e7 bytes per token: 8 × 154.321 GB/s = 1,234.568 Gb/s > 1 storage leaf × 4 uplinks × 200 Gb/s.
    inst = instance(**{"workload.data.bytes_per_token": 1.0e7})
    found = check_design(inst, base_design(CONVERGED_2, inst, **{"storage_network.need_gbps": 1234.568}))
    assert ("storage_fabric_ports_cover: storage leaves (qm8700): 1 storage leaves × 4 uplinks × 200 Gb/s = 800 Gb/s "
            "< 1,234.568 Gb/s needed") in [str(v) for v in found]


def test_converged_storage_is_not_offered_on_a_rail_only_fabric():
    # 4 hgx-h100 with 4 of their 8 HDR rails per switch: 2 qm8700, each 4 × 4 = 16 node ports.
    rail_only = {"fabric.rails_per_leaf": 4, "fabric.rail_only": True, "fabric.leaves": 2, "fabric.leaf_down_ports": 16,
                 "switches.0.count": 2}
    found = check_design(instance(), base_design(CONVERGED_DESIGN, **rail_only))
    assert ("storage_fabric_ports_cover: storage network (converged): a rail-only fabric (8 rails in groups of 4, no "
            "switch joining the groups): a storage unit would reach one rail group only") in [str(v) for v in found]
    assert "storage_fabric_ports_cover" in families(found)


def test_rail_only_needs_the_instance_to_allow_it():
    inst = instance(**{"budget.max": 1e9})
    found = [str(v) for v in check_design(inst, base_design(SIXTEEN_RAIL_ONLY, inst))]
    assert ("rail_only_allowed: fabric: rail-only (4 of 8 rails per switch) but constraints.allow_rail_only is "
            "false") in found
