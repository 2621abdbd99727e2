"""Every output file of write_outputs agrees with the design, the cost and the graph."""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import fabric_designs as fd
import networkx as nx
import pytest
from hostlists import expand

import topoopt
from topoopt.fabric import fabric_graph, render, write_outputs
from topoopt.fabric.draw import CLASS_NAME
from topoopt.fabric.names import hostlist
from topoopt.fabric.rendering import find_dot
from topoopt.fabric.views import MAX_BLOCKS

CATALOG = fd.CATALOG
DESIGNS = [fd.one_tier_8_gpu, fd.two_tier_32_dgx, fd.three_tier_dgx_a100, fd.three_tier_16k, fd.two_tier_hgx_odd,
           fd.odd_uplinks_16_dgx, *fd.WIDENED]


@pytest.fixture(scope="module", params=DESIGNS, ids=lambda f: f.__name__)
def written(request, tmp_path_factory):
    design = request.param()
    result = fd.result_for(design)
    out = tmp_path_factory.mktemp(request.param.__name__)
    outputs = write_outputs(result, None, out, catalog=CATALOG)
    GRAPHS[id(result)] = fabric_graph(design, catalog=CATALOG)
    return result, out, outputs


GRAPHS: dict = {}


def graph_of(result) -> nx.MultiGraph:
    """The graph of a written design, built once per module (several designs share a node count)."""
    return GRAPHS[id(result)]


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def test_every_file_is_written(written):
    _, out, outputs = written
    expected = {"bom.csv", "cables.csv", "racks.csv", "fabric.graphml", "topology.conf", "netbox-devices.csv",
                "netbox-cables.csv", "fabric.dot"}
    assert expected <= {p.name for p in outputs.files}
    assert all((out / name).stat().st_size > 0 for name in expected)


def test_bom_rows_are_the_cost_breakdown_and_sum_to_the_total(written):
    result, out, _ = written
    bom = rows(out / "bom.csv")
    items, total = bom[:-1], bom[-1]
    assert total["category"] == "total" and float(total["extended_price"]) == result.cost.total
    assert sum(float(r["extended_price"]) for r in items) == result.cost.total
    assert [(r["category"], r["part"], int(r["quantity"])) for r in items] == [
        (line.category, line.item, line.quantity) for line in result.cost.breakdown]
    for row in items:
        assert float(row["unit_price"]) * int(row["quantity"]) == float(row["extended_price"])
        assert row["description"] and row["source"]


def test_cable_schedule_has_one_row_per_assembly(written):
    result, out, outputs = written
    design = result.design
    cables = rows(out / "cables.csv")
    per_part = Counter(r["part"] for r in cables)
    bom = {r["part"]: int(r["quantity"]) for r in rows(out / "bom.csv") if r["category"] == "cable"}
    counted = [w for w in outputs.warnings if not w.startswith("floor plan:")]  # lengths apart
    if counted:  # part-filled cages: the schedule has more kits than the model priced
        assert all(per_part[p] >= q for p, q in bom.items())
        assert any("wiring needs" in w for w in counted)
    else:
        assert per_part == Counter(bom)
        declared = Counter()
        for group in design.links:
            declared[group.part] += group.assemblies
        assert per_part == declared
    assert len({r["id"] for r in cables}) == len(cables)
    links = Counter()
    for row in cables:
        part = CATALOG.by_id("cables")[row["part"]]
        b_ports = row["b_port"].split("+")
        a_ports = row["a_port"].split("+")
        assert len(a_ports) == len(b_ports) <= part.links
        b_devices = row["b_device"].split("+")
        assert len(b_devices) in (1, len(b_ports))
        links[row["part"]] += len(b_ports)
    assert sum(links.values()) == sum(g.count for g in design.links)


def test_a_kit_reaching_two_spines_is_one_row(tmp_path):
    """odd_uplinks_16_dgx buys 64 twin kits for its 120 leaf–spine links, 16 of them reaching two
    spines (fabric_designs): 64 rows, those 16 naming both spines joined with ``+`` port by port,
    and the length bins count 64 kits."""
    write_outputs(fd.result_for(fd.odd_uplinks_16_dgx()), None, tmp_path, catalog=CATALOG)
    kits = [r for r in rows(tmp_path / "cables.csv") if r["link_class"] == "leaf-spine"]
    assert len(kits) == len({r["id"] for r in kits}) == 64
    split = [r for r in kits if "+" in r["a_device"]]
    assert len(split) == 16
    for row in split:
        spines = row["a_device"].split("+")
        assert len(spines) == len(row["a_port"].split("+")) == 2 and spines[0] != spines[1]
    binned = sum(int(r["quantity"]) for r in rows(tmp_path / "cable-lengths.csv") if r["part"] == kits[0]["part"])
    assert binned == 64


def test_breakout_rows_join_the_b_ports(written):
    result, out, _ = written
    if result.design.server != "hgx-h100":
        pytest.skip("breakout parts only in the HGX design")
    first = rows(out / "cables.csv")[0]
    assert first["id"] == "NL-01" and first["part"] == "ndr-sr4-kit-50m"
    assert first["b_device"] == "rack01-node01+rack01-node02" and first["b_port"] == "nic1+nic1"
    assert first["a_port"] == "p1/1+p1/2"


def test_racks_csv_lists_every_device_once(written):
    result, out, _ = written
    racks = rows(out / "racks.csv")
    graph = graph_of(result)
    assert sorted(r["device"] for r in racks) == sorted(graph.nodes)
    for row in racks:
        node = graph.nodes[row["device"]]
        assert (row["rack"], int(row["u"]), float(row["power_w"])) == (node["rack"], node["u"], node["power_w"])


def test_every_graph_edge_has_its_cables_part_and_length(written):
    """The graph, the cable schedule and the InfiniBand link sheet agree cable by cable."""
    result, out, _ = written
    listed = {row["id"]: (row["part"], float(row["length_m"])) for row in rows(out / "cables.csv")}
    for _, _, attrs in graph_of(result).edges(data=True):
        assert (attrs["part"], attrs["length_m"]) == listed[attrs["cable"]]
    if (out / "ib-links.csv").exists():
        for row in rows(out / "ib-links.csv"):
            assert (row["part"], float(row["length_m"])) == listed[row["cable"]]


def test_floor_svg_draws_every_rack_where_racks_csv_puts_it(written):
    """floor.svg is well-formed XML with one group per rack at its racks.csv row and position."""
    _, out, outputs = written
    assert out / "floor.svg" in outputs.files
    svg = ET.parse(out / "floor.svg").getroot()
    drawn = {g.get("data-rack"): (int(g.get("data-row")), int(g.get("data-position")))
             for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("data-rack")}
    assert drawn == {row["rack"]: (int(row["row"]), int(row["position"])) for row in rows(out / "racks.csv")}
    assert len(set(drawn.values())) == len(drawn)  # no two racks on one spot


def test_graphml_reads_back_as_the_fabric_graph(written):
    result, out, _ = written
    if result.design.gpus > 10_000:
        pytest.skip("the networkx GraphML reader is slow; smaller designs cover the format")
    expected = graph_of(result)
    read = nx.read_graphml(out / "fabric.graphml", force_multigraph=True)
    assert dict(read.nodes(data=True)) == dict(expected.nodes(data=True))
    edges = lambda g: {(frozenset((u, v)), k): a for u, v, k, a in g.edges(keys=True, data=True)}  # noqa: E731
    assert edges(read) == edges(expected)
    assert {k: v for k, v in read.graph.items() if not k.endswith("_default")} == expected.graph


def test_topology_conf_puts_every_node_under_one_leaf_switch(written):
    result, out, _ = written
    design = result.design
    switches: dict[str, list[str]] = {}
    children: Counter = Counter()
    for line in (out / "topology.conf").read_text().splitlines():
        if line.startswith("#") or not line:
            continue
        match = re.fullmatch(r"SwitchName=(\S+) (Nodes|Switches)=(\S+)", line)
        assert match, line
        name, kind, members = match.groups()
        switches[name] = expand(members)
        if kind == "Switches":
            children.update(switches[name])
        else:
            assert name not in children
    nodes = [n for name, members in switches.items() for n in members if "-node" in n]
    graph_nodes = [n for n, a in graph_of(result).nodes(data=True) if a["role"] == "node"]
    assert sorted(nodes) == sorted(graph_nodes)
    leaf_level = [name for name, members in switches.items() if members and "-node" in members[0]]
    if design.tiers >= 2:
        assert all(children[name] == 1 for name in leaf_level)
        tops = [name for name in switches if children[name] == 0]
        assert len(tops) == 1


def test_netbox_files_match_the_graph(written):
    result, out, _ = written
    graph = graph_of(result)
    devices = rows(out / "netbox-devices.csv")
    assert sorted(d["name"] for d in devices) == sorted(graph.nodes)
    assert {d["status"] for d in devices} == {"planned"}
    cables = rows(out / "netbox-cables.csv")
    assert len(cables) == graph.number_of_edges()
    keys = {k for _, _, k in graph.edges(keys=True)}
    assert {c["label"] for c in cables} == keys
    assert {c["status"] for c in cables} == {"planned"} and {c["length_unit"] for c in cables} == {"m"}


def test_drawing_labels_agree_with_the_counts(written):
    result, out, _ = written
    design = result.design
    dot = (out / "fabric.dot").read_text()
    links, devices = Counter(), Counter()
    entries = [e for tip in re.findall(r'tooltip="([^"]+)"', dot) for e in tip.split(", ")]
    for count, text in (re.fullmatch(r"([\d,]+) × (.+)", e).groups() for e in entries if " × " in e):
        number = int(count.replace(",", ""))
        if text.endswith(")") and "G " in text:
            links[text.rsplit("(", 1)[1].rstrip(")")] += number
        else:
            devices[text.rsplit("(", 1)[1].rstrip(")")] += number
    declared = Counter()
    for group in design.links:
        declared[CLASS_NAME[group.between]] += group.count
    assert links == declared
    for group in design.switches:
        assert devices[group.tier] == group.count
    assert devices["node"] == design.nodes and devices["storage"] == design.storage.units
    assert devices["cold-storage"] == (design.cold_storage.units if design.cold_storage else 0)
    assert f"{design.gpus:,} × {design.gpu}" in dot
    assert f"cost {result.cost.total:,.0f} {result.cost.currency}" in dot


def test_large_designs_are_drawn_as_a_summary(written):
    result, out, _ = written
    dot = (out / "fabric.dot").read_text()
    boxes = re.findall(r'^\s*(\w+) \[label=', dot, flags=re.M)
    if result.design.nodes + sum(g.count for g in result.design.switches) > 60:
        assert "rack001-node01" not in dot
        per_tier = Counter(box.rsplit("_", 1)[0] for box in boxes)
        # at most MAX_BLOCKS boxes per tier (one more for storage leaves holding only units)
        assert max(per_tier.values()) <= MAX_BLOCKS + 1, per_tier
        assert per_tier["node"] <= MAX_BLOCKS
    else:
        assert all(f"rack01-node{n:02d}" in dot for n in range(1, min(result.design.nodes, 4) + 1))


@pytest.mark.skipif(find_dot() is None, reason="Graphviz dot is not installed")
def test_svg_is_rendered_when_dot_is_present(written):
    _, out, outputs = written
    assert (out / "fabric.svg") in outputs.files
    assert "<svg" in (out / "fabric.svg").read_text()[:2000]


def test_missing_dot_keeps_the_dot_file_and_warns(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPOOPT_DOT", "")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    outputs = render(fd.result_for(fd.one_tier_8_gpu()), None, tmp_path, png=True, catalog=CATALOG)
    assert (tmp_path / "fabric.dot").exists() and not (tmp_path / "fabric.svg").exists()
    assert any("dot' not found" in w for w in outputs.warnings)


def test_slow_dot_times_out_with_a_warning(tmp_path, monkeypatch):
    slow = tmp_path / "slow-dot"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setenv("TOPOOPT_DOT", str(slow))
    outputs = write_outputs(fd.result_for(fd.one_tier_8_gpu()), None, tmp_path, dot_timeout_s=0.5, catalog=CATALOG)
    assert any("took over 0.5 s" in w for w in outputs.warnings)
    assert (tmp_path / "fabric.dot").exists() and not (tmp_path / "fabric.svg").exists()


def test_render_is_the_public_entry_point(tmp_path):
    outputs = topoopt.render(fd.result_for(fd.one_tier_8_gpu()), None, tmp_path, catalog=CATALOG)
    assert (tmp_path / "bom.csv") in outputs.files


def test_hostlist_compresses_racks_and_keeps_every_name():
    names = [f"rack{r:02d}-node{s:02d}" for r in range(1, 9) for s in range(1, 5)] + ["rack09-node01"]
    assert hostlist(names) == "rack[01-08]-node[01-04],rack09-node01"
    assert expand(hostlist(names)) == names
    leaves = ["leaf-r1-01", "leaf-r2-01", "leaf-r3-01", "leaf-r5-01"]
    assert hostlist(leaves) == "leaf-r[1-3,5]-[01]"
    assert expand(hostlist(leaves)) == leaves


def test_hostlist_terms_end_with_a_bracket_for_slurm_before_23_11():
    """Slurm 22.05 rejects ``rack[01-06]-node01`` (text after the last bracket): one node per rack
    is written ``rack[01-06]-node[01]``."""
    names = [f"rack{r:02d}-node01" for r in range(1, 7)]
    expression = hostlist(names)
    assert expression == "rack[01-06]-node[01]"
    assert expand(expression) == names
    mixed = names + ["rack07-node01", "rack07-node02", "rack08-node01"]
    for term in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", hostlist(mixed)):
        assert "[" not in term or term.endswith("]"), term
    assert expand(hostlist(mixed)) == mixed
