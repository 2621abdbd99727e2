"""The rack plan: placement, U positions, provisioned power, limits and agreement with the design."""

from __future__ import annotations

import math

import pytest

import fabric_designs as fd
from topoopt.catalog import load_builtin_catalog
from topoopt.fabric import build_fabric

CATALOG = load_builtin_catalog()
DESIGNS = [fd.one_tier_8_gpu, fd.two_tier_32_dgx, fd.three_tier_dgx_a100, fd.three_tier_16k]


@pytest.fixture(scope="module", params=DESIGNS, ids=lambda f: f.__name__)
def fabric(request):
    return build_fabric(request.param())


def test_every_device_in_exactly_one_rack(fabric):
    placed = [device.name for rack in fabric.racks.racks for device in rack.devices]
    assert len(placed) == len(set(placed))
    assert set(placed) == {device.name for device in fabric.devices}
    for rack in fabric.racks.racks:
        assert all(device.rack == rack.name for device in rack.devices)


def test_racks_hold_one_kind_of_device(fabric):
    kinds = {"compute": {"node"}, "network": {"leaf", "spine", "core"}, "storage": {"storage"}}
    for rack in fabric.racks.racks:
        assert {device.role for device in rack.devices} <= kinds[rack.role]


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
    assert fabric.warnings == []


def test_compute_racks_take_the_designs_nodes_per_rack(fabric):
    per = next(g.nodes_per_rack for g in fabric.design.racks if g.role == "compute")
    sizes = [len(rack.devices) for rack in fabric.racks.by_role("compute")]
    assert sizes[:-1] == [per] * (len(sizes) - 1) and 1 <= sizes[-1] <= per
    assert len(sizes) == math.ceil(fabric.design.nodes / per)


def test_power_is_provisioned_with_the_hungriest_module_in_every_cage():
    """DGX H100: 10,200 W + 4 twin-port cages × the largest node-end power of a 400G part for
    osfp-twin-flat cages; QM9700: 750 W + 32 cages × the largest end power of any osfp-twin-finned part."""
    fabric = build_fabric(fd.two_tier_32_dgx())
    node_end = max(p.power_w_per_b_end for p in CATALOG.cables
                   if p.b_form_factor == "osfp-twin-flat" and p.gbps == 400 and p.links == 2 * p.b_ends)
    cage = max([p.power_w_per_a_end for p in CATALOG.cables if p.a_form_factor == "osfp-twin-finned"]
               + [p.power_w_per_b_end for p in CATALOG.cables if p.b_form_factor == "osfp-twin-finned"])
    assert fabric.nodes[0].power_w == pytest.approx(10_200 + 4 * node_end)
    assert fabric.switch_list[0].power_w == pytest.approx(750 + 32 * cage)
    rack = fabric.racks.by_role("compute")[0]
    assert rack.power_w == pytest.approx(4 * (10_200 + 4 * node_end))


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
    assert "rack plan has 1 network racks, the design counts 3" in build_fabric(wrong).warnings
