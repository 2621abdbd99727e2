"""The InfiniBand topology (ibdiagnet / ibdmchk ``-t``), its IBNL system types and the
point-to-point sheet, read by the IBDM grammar and by the real ``ibdmchk`` (ibutils, Debian 12)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import fabric_designs as fd
import pytest
from consumers import require
from example_outputs import FEASIBLE, written_example

from topoopt.fabric import Fabric, build_fabric
from topoopt.fabric.ibtopo import is_infiniband, write_ib_topology
from topoopt.fabric.wiring import COMPUTE_CLASSES

# IBFabric::parseTopology (ibdm, ibutils 1.5.7): a system line, then port lines.
SYSTEM_LINE = re.compile(r"^[ \t]*([^/ \t]+)[ \t]+([^/ \t]+)[ \t]*( CFG:(.*))?$")
PORT_LINE = re.compile(r"^[ \t]+([^ \t]+)[ \t]+-((1|4|8|12)[xX]-)?((2.5|5|10)G-)?[>][ \t]+([^ \t]+)[ \t]+([^ \t]+)"
                       r"[ \t]+([^ \t]+)[ \t]*$")
IBNL_PORT = re.compile(r"^\s+(\d+)\s+-(?:\S+-)?>\s+(\S+)\s*$|^\s+(\d+)\s+->\s+(\S+)\s*$")
SMALL = [fd.one_tier_8_gpu, fd.two_tier_32_dgx, fd.three_tier_dgx_a100, fd.rail_only_16_dgx,
         fd.converged_on_spines_16_dgx]
IB_EXAMPLES = ["estimate-pinned-h100.yaml"]


def parse_topology(text: str) -> list[tuple]:
    """``(type, system, port, width, remote type, remote system, remote port)`` per link line."""
    links, system = [], None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        port = PORT_LINE.match(line)
        if port:
            assert system is not None, line
            links.append((*system, port.group(1), port.group(3), port.group(6), port.group(7), port.group(8)))
            continue
        header = SYSTEM_LINE.match(line)
        assert header, f"bad syntax: {line!r}"
        system = header.group(1), header.group(2)
    return links


def ibnl_ports(directory: Path) -> dict[str, set[str]]:
    """System type -> its front-panel port names, from the IBNL files."""
    ports = {}
    for path in directory.glob("*.ibnl"):
        text = path.read_text(encoding="utf-8")
        kind = re.search(r"^TOPSYSTEM (\S+)", text, re.M).group(1)
        ports[kind] = {m.group(2) or m.group(4) for m in map(IBNL_PORT.match, text.splitlines()) if m}
    return ports


def compute_links(fabric: Fabric) -> int:
    return sum(len(b.a_device) for b in fabric.links if b.network == "compute" and b.between in COMPUTE_CLASSES)


def written_fabric(design_fn, tmp_path) -> tuple[Fabric, Path]:
    fabric = build_fabric(design_fn(), catalog=fd.CATALOG)
    write_ib_topology(fabric, tmp_path)
    return fabric, tmp_path


def check_files(fabric: Fabric, out: Path) -> None:
    links = parse_topology((out / "ib-topology.topo").read_text(encoding="utf-8"))
    assert len(links) == compute_links(fabric)
    ends = Counter((system, port) for _, system, port, *_ in links)
    ends.update((system, port) for *_, system, port in (link[4:] for link in links))
    assert max(ends.values()) == 1  # every port cabled once
    ports = ibnl_ports(out / "ibnl")
    for kind, _, port, width, remote_kind, _, remote_port in links:
        assert port in ports[kind] and remote_port in ports[remote_kind]
        assert width == "4"  # every IB link of these designs is 4 lanes
    with open(out / "ib-links.csv", newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(links)
    numbers = Counter((r["a_system"], r["a_node"], r["a_port_number"]) for r in rows)
    numbers.update((r["b_system"], r["b_node"], r["b_port_number"]) for r in rows)
    assert max(numbers.values()) == 1  # real port numbers are unique per device
    switch_ports = len(ports[fabric.hardware.switch.id])
    assert all(1 <= int(r["a_port_number"]) <= switch_ports for r in rows)


@pytest.mark.parametrize("design_fn", [*SMALL, fd.three_tier_16k], ids=lambda f: f.__name__)
def test_topology_follows_the_ibdm_grammar_and_the_cables(design_fn, tmp_path):
    fabric, out = written_fabric(design_fn, tmp_path)
    check_files(fabric, out)


@pytest.mark.parametrize("name", FEASIBLE)
def test_examples_write_the_ib_files_exactly_when_infiniband(name):
    written = written_example(name)
    assert (written.out / "ib-topology.topo").exists() == is_infiniband(written.fabric)
    if is_infiniband(written.fabric):
        check_files(written.fabric, written.out)


def test_the_examples_include_an_infiniband_one():
    assert all(is_infiniband(written_example(name).fabric) for name in IB_EXAMPLES)


def ibdmchk(out: Path, sm: str) -> str:
    """Run ``ibdmchk`` in design mode; its output (it crashes at exit after its last report in
    ibutils 1.5.7 on Debian 12, so the exit status is not read; the report must be complete)."""
    env = {**os.environ, "IBDM_IBNL_PATH": str(out / "ibnl")}
    run = subprocess.run(["ibdmchk", "-t", "ib-topology.topo", "-n", f"{sm}/U1", "-p", "1"], cwd=out, env=env,
                         capture_output=True, text=True, timeout=600)
    return run.stdout + run.stderr


@pytest.mark.parametrize("design_fn", SMALL, ids=lambda f: f.__name__)
def test_ibdmchk_loads_the_fabric_and_routes_every_ca_pair(design_fn, tmp_path):
    require(None if shutil.which("ibdmchk") else "ibdmchk is missing (apt-get install ibutils)")
    fabric, out = written_fabric(design_fn, tmp_path)
    report = ibdmchk(out, fabric.nodes[0].name)
    assert "-I- no credit loops found" in report, report[-2000:]
    assert not [line for line in report.splitlines() if line.startswith("-E-")]
    switches, nodes, rails = len(fabric.compute_switches), len(fabric.nodes), fabric.hardware.rails
    assert f"-I- Defined {switches + nodes}/{switches + nodes * rails} systems/nodes" in report
    # The subnet manager reaches every CA, or only its own rail group in a rail-only fabric.
    reachable = nodes * (fabric.design.fabric.rails_per_leaf if fabric.design.fabric.rail_only else rails)
    assert f"-I- Scanned:{reachable * (reachable - 1)} CA to CA paths" in report
    hops = re.search(r"Found worst min hops:(\d+)", report)
    assert int(hops.group(1)) == 2 * fabric.design.tiers
