"""The solve summary reports the storage network, the management network and the cold tier."""

from __future__ import annotations

import re

import fabric_designs as fd

from topoopt.cli.summary import solved_summary


def summary(design) -> list[str]:
    return solved_summary(fd.result_for(design), "test").splitlines()


def line(lines: list[str], head: str) -> int:
    return next(i for i, text in enumerate(lines) if text.startswith(head))


def test_dedicated_storage_network_against_the_need():
    lines = summary(fd.two_tier_32_dgx())
    at = line(lines, "Storage net")
    assert lines[at] == ("Storage net  dedicated, 2 × cx7-qsfp112-2x200g per node, 4 port(s) cabled at 200G = "
                         "800 Gb/s per node; need 3,200 Gb/s for 32 nodes")
    # A record without a storage leaf split (schema 1.4) is non-blocking.
    assert lines[at + 1].strip() == ("2 tiers of qm9700: 3 leaves (non-blocking), 2 spines · 128 node ports "
                                     "+ 8 storage-unit ports")


def test_converged_storage_network_says_it_shares_the_compute_ports():
    lines = summary(fd.three_tier_dgx_a100())
    at = line(lines, "Storage net")
    assert "converged on the compute fabric, 8 × 200G compute ports per node = 1,600 Gb/s per node" in lines[at]
    assert "shared with training traffic; need 2,000 Gb/s for 48 nodes" in lines[at]
    assert lines[at + 1].strip() == "8 storage-unit ports on 1 extra compute leaf"


def test_management_network_and_tiers():
    lines = summary(fd.one_tier_8_gpu())
    assert lines[line(lines, "Management")] == (
        "Management   10 ports (in-band + out-of-band) on 1 leaf of mgmt-48x1g-10g · 1G to devices")
    at = line(lines, "Storage      hot:")
    assert lines[at] == "Storage      hot: 1 × nvme-of-array: 40.0 GB/s read, 20.0 GB/s write, 300 TB"
    assert lines[at + 1].strip() == "cold: 1 × test-object-200g: 1,000 TB for archived checkpoints and data, 6.0 GB/s write"
    big = summary(fd.three_tier_16k())
    assert big[line(big, "Management")].endswith("on 145 leaves of mgmt-48x1g-10g + 8 aggregation · 1G to devices, "
                                                 "10G uplinks")
    assert "cold: none (nothing is archived)" in "\n".join(big)


def test_every_link_group_is_listed():
    lines = summary(fd.two_tier_32_dgx())
    links = [re.match(r"\s*(\S+)\s+[\d,]+ × \d+G via", text[13:]) for text in lines[line(lines, "Links"):]]
    links = [match.group(1) for match in links if match]
    assert links == ["node-leaf", "leaf-spine", "node-storage", "storage-unit", "storage-leaf-spine", "mgmt",
                     "mgmt-uplink"]
