"""The floor plan: rows, where leaf racks stand, and each cable's length from the racks of its ends
(docs/model.md, "Floor plan and cable lengths")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from topoopt.checking.derive import floor_diagonal_m
from topoopt.fabric.devices import Device, LinkBundle
from topoopt.fabric.floor import Spot, plan_floor, row_length
from topoopt.fabric.racks import Rack
from topoopt.models.instance import Distances
from topoopt.options.tables import floor_racks_within, floor_run_m


def _rack(name: str, role: str, *devices: Device) -> Rack:
    rack = Rack(name=name, role=role, rack_class="air-45kw", units=42, power_limit_w=45_000.0)
    for device in devices:
        device.rack = name
        rack.devices.append(device)
    return rack


def _device(name: str, role: str) -> Device:
    return Device(name=name, role=role, model=role, rack_units=1, power_w=1.0, ports=8)


def _site() -> tuple[list[Rack], list[LinkBundle], list[Device]]:
    """Six compute racks of one node each, a leaf rack serving all six, a storage rack whose unit
    plugs into the leaf, a spine rack."""
    nodes = [_device(f"node{i}", "node") for i in range(1, 7)]
    leaf, spine, unit = _device("leaf1", "leaf"), _device("spine1", "spine"), _device("unit1", "storage")
    racks = [_rack(f"rack{i}", "compute", node) for i, node in enumerate(nodes, 1)]
    racks += [_rack("net01", "network", leaf), _rack("net02", "network", spine), _rack("stor01", "storage", unit)]
    links = [LinkBundle(between="node-leaf", part=None, gbps=400, length_m=17.0,
                        a_device=["leaf1"] * 6, b_device=[n.name for n in nodes]),
             LinkBundle(between="leaf-spine", part=None, gbps=400, length_m=52.0,
                        a_device=["spine1"], b_device=["leaf1"]),
             LinkBundle(between="storage-unit", part=None, gbps=400, length_m=17.0, network="storage",
                        a_device=["leaf1"], b_device=["unit1"])]
    return racks, links, [*nodes, leaf, spine, unit]


def test_a_row_holds_the_racks_the_in_row_run_reaches():
    """(15 − 3) / 0.6 = 20 racks from the row's end, 21 in the row; the site's number wins."""
    assert row_length(Distances()) == 21
    assert row_length(Distances(in_row_m=20, in_rack_m=3)) == 29
    assert row_length(Distances(racks_per_row=4)) == 4


def test_leaf_racks_stand_in_the_middle_of_their_nodes_and_spines_in_the_middle_row():
    """Rows of four. In order: rack1–rack3, net01 (after the median rack of its six), stor01 (its
    unit plugs into net01 only), rack4–rack6; net02 in a row of its own between the two rows of
    nodes, at position 2 (a short network row stands mid-row). Then net01 trades places with the
    rack of its nodes whose spot makes its longest cable shortest once that rack has moved to
    net01's spot (1, 4): from its own spot stor01's (3, 1) is 1.8 + 4.8 = 6.6 m; from rack2's
    (1, 2) at most 6.0 m (rack6 at (3, 4)), as from rack3's, rack4's and rack5's, and rack2 comes
    first. stor01, 5.4 m from net01's new spot, trades places with the nearest rack of nodes,
    rack1 (0.6 m; rack3 too, and rack1 comes first)."""
    racks, links, devices = _site()
    floor = plan_floor(racks, links, devices, Distances(racks_per_row=4))
    assert floor.spots == {
        "stor01": Spot(1, 1), "net01": Spot(1, 2), "rack3": Spot(1, 3), "rack2": Spot(1, 4),
        "net02": Spot(2, 2),
        "rack1": Spot(3, 1), "rack4": Spot(3, 2), "rack5": Spot(3, 3), "rack6": Spot(3, 4),
    }


def test_a_cable_is_as_long_as_its_racks_are_apart():
    """Defaults: 3 m in a rack, 0.6 m per rack along a row, 2.4 m per row, 2 m slack, whole metres
    up. rack1–net01 (2 rows, 1 position): 3 + 0.6 + 4.8 + 2 = 10.4 → 11 m; rack6–net01 (2 rows, 2
    positions): 3 + 1.2 + 4.8 + 2 = 11 m; net01–net02 (1 row): 3 + 2.4 + 2 = 7.4 → 8 m; stor01–net01
    3 + 0.6 + 2 = 5.6 → 6 m; within one rack 3 m (or the class's run, if shorter). A class's run
    does not shorten a cable between racks."""
    racks, links, devices = _site()
    floor = plan_floor(racks, links, devices, Distances(racks_per_row=4))
    assert floor.run_m({"rack1", "net01"}, 17.0) == 11
    assert floor.run_m({"rack6", "net01"}, 17.0) == 11
    assert floor.run_m({"net01", "net02"}, 52.0) == 8
    assert floor.run_m({"stor01", "net01"}, 17.0) == 6
    assert floor.run_m({"rack2"}, 17.0) == 3 and floor.run_m({"rack2"}, 2.0) == 2
    assert floor.run_m({"rack1", "net01"}, 5.0) == 11


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(1, 60), st.integers(1, 6), st.integers(0, 9), st.integers(1, 12))
def test_no_two_racks_stand_farther_apart_than_the_floors_diagonal(per_row, compute, leaves, others, span):
    """Whatever racks of nodes, racks of leaves (each serving ``span`` racks of nodes from some
    start) and network racks the plan stands, it uses at most ``ceil(racks / per_row) + 2`` rows,
    so no two racks are farther apart than derive.floor_diagonal_m (docs/model.md, "Cable runs"),
    which the solver's and the checker's runs take across rows."""
    nodes = [_device(f"node{i}", "node") for i in range(compute)]
    switches = [_device(f"leaf{j}", "leaf") for j in range(leaves)] + [_device(f"sp{j}", "spine") for j in range(others)]
    racks = [_rack(f"rack{i}", "compute", node) for i, node in enumerate(nodes)]
    racks += [_rack(f"net{j}", "network", switch) for j, switch in enumerate(switches)]
    served = [nodes[(j * 7 + i) % compute].name for j in range(leaves) for i in range(min(span, compute))]
    links = [LinkBundle(between="node-leaf", part=None, gbps=400, length_m=17.0,
                        a_device=[f"leaf{j}" for j in range(leaves) for _ in range(min(span, compute))],
                        b_device=served)]
    d = Distances(racks_per_row=per_row)
    floor = plan_floor(racks, links, [*nodes, *switches], d)
    spots = list(floor.spots.values())
    assert len(spots) == len(racks) and all(1 <= s.position <= per_row for s in spots)
    longest = max(floor.run_m({a, b}, 1e9) for a in floor.spots for b in floor.spots if a < b) if len(racks) > 1 else 0
    diagonal = floor_diagonal_m(len(racks), d)
    assert longest <= diagonal
    assert diagonal == floor_run_m(d, len(racks))  # the solver's formula, its own home, agrees


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.sampled_from([2, 3, 5, 30, 50, 100, 500, 2000]),
       st.sampled_from([0.6, 0.75, 1.0]), st.sampled_from([2.4, 3.0, 0.5]), st.sampled_from([0.0, 2.0, 5.0]))
def test_the_most_racks_a_part_spans_is_the_last_count_its_reach_covers(per_row, reach, width, pitch, slack):
    """floor_racks_within is the largest rack count whose floor diagonal a part of ``reach`` m
    covers (the solver's cap on a part across rows): that count is within reach, one more is not."""
    d = Distances(racks_per_row=per_row, rack_width_m=width, row_pitch_m=pitch, slack_m=slack)
    most = floor_racks_within(d, reach)
    if most:
        assert floor_run_m(d, most) <= reach
    assert floor_run_m(d, most + 1) > reach
