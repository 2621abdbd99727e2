"""The rack plan: placement, U positions, provisioned power, limits and agreement with the design."""

from __future__ import annotations

import math

import fabric_designs as fd
import pytest

from topoopt.fabric import build_fabric as _build_fabric
from topoopt.fabric.devices import Device
from topoopt.fabric.racks import leaves_first, pairs_apart

CATALOG = fd.CATALOG
DESIGNS = [fd.one_tier_8_gpu, fd.one_tier_converged, fd.two_tier_32_dgx, fd.three_tier_dgx_a100, fd.three_tier_16k]


def build_fabric(design):
    return _build_fabric(design, catalog=CATALOG)


@pytest.fixture(scope="module", params=DESIGNS, ids=lambda f: f.__name__)
def fabric(request):
    return build_fabric(request.param())


def test_every_device_in_exactly_one_rack(fabric):
    placed = [device.name for rack in fabric.racks.racks for device in rack.devices + rack.zero_u]
    assert len(placed) == len(set(placed))
    assert set(placed) == {device.name for device in fabric.devices}
    for rack in fabric.racks.racks:
        assert all(device.rack == rack.name for device in rack.devices + rack.zero_u)
        assert [device.role for device in rack.zero_u] == ["pdu"] * CATALOG.by_id("racks")[rack.rack_class].pdus


def test_racks_hold_one_kind_of_device(fabric):
    switches = {"leaf", "spine", "core", "storage-leaf", "storage-spine", "storage-core", "mgmt-leaf", "mgmt-aggregation"}
    kinds = {"compute": {"node"}, "network": switches, "storage": {"storage", "cold-storage"},
             "mixed": switches | {"node", "storage", "cold-storage"}}
    for rack in fabric.racks.racks:
        assert {device.role for device in rack.devices} <= kinds[rack.role]
        if rack.role in ("network", "storage"):
            assert len({device.model for device in rack.devices}) == 1, rack.name


def test_every_network_is_racked(fabric):
    """Storage and management switches sit in network racks, cold units in storage racks."""
    placed = {device.name: rack.role for rack in fabric.racks.racks for device in rack.devices}
    mixed = fabric.racks.racks[0].role == "mixed"
    for device in fabric.storage_switches.all + fabric.management_switches:
        assert placed[device.name] == ("mixed" if mixed else "network")
    for device in fabric.cold_storage:
        assert placed[device.name] == ("mixed" if mixed else "storage")
    assert fabric.management_switches


def test_switch_racks_are_filled_model_by_model():
    """16k: 1,280 qm9700 at 34 per rack (38 racks), then 129 sn5600 at 19 (7), then 153
    management switches at 48 by height (4); each model starts a fresh rack."""
    fabric = build_fabric(fd.three_tier_16k())
    sizes: dict[str, list[int]] = {}
    for rack in fabric.racks.by_role("network"):
        sizes.setdefault(rack.devices[0].model, []).append(len(rack.devices))
    assert sizes == {"qm9700": [34] * 37 + [22], "sn5600": [19] * 6 + [15], "mgmt-48x1g-10g": [48] * 3 + [9]}
    names = [rack.name for rack in fabric.racks.by_role("network")]
    assert names[0] == "net01" and names[-1] == "net49"


def test_u_positions_stack_from_the_bottom_without_overlap(fabric):
    for rack in fabric.racks.racks:
        taken = set()
        for device in rack.devices:
            units = set(range(device.u, device.u + device.rack_units))
            assert not units & taken and min(units) >= 1 and max(units) <= rack.units
            taken |= units
        assert min(device.u for device in rack.devices) == 1


def test_no_rack_over_power_or_units_and_counts_match_the_design(fabric):
    for rack in fabric.racks.racks:
        assert rack.power_w <= rack.power_limit_w and rack.units_used <= rack.units
    declared = {g.role: g.count for g in fabric.design.racks}
    for role, count in declared.items():
        assert len(fabric.racks.by_role(role)) == count
    fullest = {g.role: g.power_kw for g in fabric.design.racks}
    for role, kw in fullest.items():
        assert max(rack.power_w for rack in fabric.racks.by_role(role)) == pytest.approx(kw * 1000)
    assert fabric.warnings == []


def test_compute_racks_take_the_designs_nodes_per_rack(fabric):
    if fabric.racks.racks[0].role == "mixed":
        pytest.skip("one mixed rack")
    per = next(g.nodes_per_rack for g in fabric.design.racks if g.role == "compute")
    sizes = [len(rack.devices) for rack in fabric.racks.by_role("compute")]
    assert sizes[:-1] == [per] * (len(sizes) - 1) and 1 <= sizes[-1] <= per
    assert len(sizes) == math.ceil(fabric.design.nodes / per)


def test_power_is_provisioned_with_the_hungriest_module_in_every_cage():
    """DGX H100: 10,200 W + 4 twin-port cages × the largest node-end power of a 400G part for
    osfp-twin-flat cages; QM9700: 750 W + 32 cages × the largest end power of a part whose end fits
    its osfp-twin-finned cage at a speed it runs (2 × 400G, 4 × 200G or 4 × 100G per cage)."""
    fabric = build_fabric(fd.two_tier_32_dgx())
    node_end = max(p.power_w_per_b_end for p in CATALOG.cables
                   if p.b_form_factor == "osfp-twin-flat" and p.gbps == 400 and p.links == 2 * p.b_ends)
    qm9700 = CATALOG.by_id("switches")["qm9700"]
    cage = max(watts for p in CATALOG.cables
               for form_factor, ends, watts in ((p.a_form_factor, p.a_ends, p.power_w_per_a_end),
                                                (p.b_form_factor, p.b_ends, p.power_w_per_b_end))
               if form_factor == qm9700.cage_form_factor and p.links == ends * qm9700.ports_per_cage.get(p.gbps, 0))
    # 17 W twin-port 2xSR4 / 2xDR4 modules at both; the 25 W XDR modules run 800G, which the QM9700 does not.
    assert (node_end, cage) == (17, 17)
    # The 4 storage cages (2 built-in dual-port QSFP112 NICs at 200G) hold the hungriest 200G QSFP112 end.
    storage_end = max(p.power_w_per_b_end for p in CATALOG.cables
                      if p.b_form_factor == "qsfp112" and p.gbps == 200 and p.links == p.b_ends)
    assert storage_end == 5
    assert fabric.nodes[0].power_w == pytest.approx(10_288)  # 10,200 + 4 × 17 + 4 × 5
    assert fabric.switch_list[0].power_w == pytest.approx(1_294)  # 750 + 32 × 17
    rack = fabric.racks.by_role("compute")[0]
    assert rack.power_w == pytest.approx(4 * 10_288)


def test_bought_nics_are_provisioned_with_the_node():
    # hgx-h100 with 8 bought cx7-osfp: 10,000 W + 8 × 25 W NICs + 8 single-port osfp-flat cages
    # × 9 W (the hungriest 400G module end for one), plus its bought dual-port cx7-qsfp112-2x200g
    # storage NIC (25 W) and that NIC's 2 cages (5 W each): 10,307 W; 4 of them in a 45 kW rack.
    fabric = build_fabric(fd.two_tier_hgx_odd())
    assert [node.power_w for node in fabric.nodes] == pytest.approx([10_307] * 21)
    assert fabric.racks.by_role("compute")[0].power_w == pytest.approx(4 * 10_307)


def test_too_many_nodes_per_rack_is_reported():
    design = fd.two_tier_32_dgx()
    dense = design.model_copy(update={"racks": [
        g.model_copy(update={"nodes_per_rack": 6, "count": 6}) if g.role == "compute" else g for g in design.racks
    ]})
    fabric = build_fabric(dense)
    assert any("rack_power_within_limit" in w and "rack01" in w for w in fabric.warnings)
    too_tall = design.model_copy(update={"racks": [
        g.model_copy(update={"nodes_per_rack": 7, "count": 5}) if g.role == "compute" else g for g in design.racks
    ]})
    assert any("rack_units_within_limit" in w for w in build_fabric(too_tall).warnings)


def test_rack_count_disagreement_is_reported():
    design = fd.two_tier_32_dgx()
    wrong = design.model_copy(update={"racks": [
        g.model_copy(update={"count": 3}) if g.role == "network" else g for g in design.racks
    ]})
    assert "rack plan has 2 network racks, the design counts 3" in build_fabric(wrong).warnings


def _switches(names: list[str]) -> list:
    return [Device(name=name, role="leaf" if name.startswith("l") else "spine", model="sw", rack_units=1,
                   power_w=1000.0, ports=64) for name in names]


def test_leaves_and_spines_take_racks_of_their_own_when_that_adds_no_rack():
    """The 405B's th5: 96 leaves and 49 spines at 13 to a rack. Packed on, 12 racks with one of 5
    leaves and 8 spines; apart, ceil(96/13) + ceil(49/13) = 8 + 4 = 12 racks too (the 5 leftover
    leaves do not fit the 3 free places of the spines' last rack), so apart."""
    leaves = _switches([f"l{i:02d}" for i in range(96)])
    racks = leaves_first(leaves + _switches([f"s{i:02d}" for i in range(49)]), 13,
                         {leaf.name: i for i, leaf in enumerate(leaves)})
    assert [len(rack) for rack in racks] == [13] * 7 + [5] + [13] * 3 + [10]
    assert all(len({d.role for d in rack}) == 1 for rack in racks)


def test_a_rack_of_leaves_and_spines_takes_the_leaves_of_the_middle_nodes():
    """10 leaves (each serving nodes around position i, given out of order) and 5 spines at 4 to a
    rack: apart 3 + 2 = 5 racks, packed on ceil(15/4) = 4, so one rack holds both. The leftover
    2 leaves are those of the middle nodes: 5 leaves serve positions below the middle 4.5, so
    they are the 4th and 5th from 0 (positions 4 and 5), not the last (8 and 9)."""
    names = [f"l{i}" for i in (3, 9, 0, 5, 1, 7, 2, 8, 4, 6)]
    above = {name: float(name[1:]) for name in names}
    racks = leaves_first(_switches(names + ["s1", "s2", "s3", "s4", "s5"]), 4, above)
    assert [[d.name for d in rack] for rack in racks] == [
        ["l0", "l1", "l2", "l3"], ["l6", "l7", "l8", "l9"], ["l4", "l5", "s1", "s2"], ["s3", "s4", "s5"]]


def test_the_two_switches_of_an_aggregation_pair_stand_in_different_racks():
    """frontier-131k: 46 aggregation switches (23 pairs) in 2 racks of up to 42: 23 first sides in
    one, 23 second sides in the other, not 42 and 4. In one rack they stay together."""
    switches = [Device(name=f"agg-{i:02d}", role="mgmt-aggregation", model="m", rack_units=1, power_w=100.0,
                       ports=48) for i in range(46)]
    racks = [[d.name for d in rack] for rack in pairs_apart(switches, 2)]
    assert racks == [[f"agg-{i:02d}" for i in range(0, 46, 2)], [f"agg-{i:02d}" for i in range(1, 46, 2)]]
    assert [[d.name for d in rack] for rack in pairs_apart(switches[:4], 1)] == [["agg-00", "agg-02", "agg-01", "agg-03"]]
    # 60 pairs in 3 racks: 40 each; pair p's first side in rack p // 40, its second elsewhere.
    more = [Device(name=f"agg-{i:03d}", role="mgmt-aggregation", model="m", rack_units=1, power_w=100.0, ports=48)
            for i in range(120)]
    where = {d.name: i for i, rack in enumerate(pairs_apart(more, 3)) for d in rack}
    assert all(where[more[2 * p].name] != where[more[2 * p + 1].name] for p in range(60))
