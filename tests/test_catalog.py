"""The built-in catalog and price books: integrity, physical coherence, and `topoopt catalog`.

The cable rules mirror the ones the designer and checker apply (a part fits a cage only when it
carries exactly that cage's logical ports at its speed; ends pair by equal form-factor strings),
written out here again so that these tests stay independent of the solver.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt.catalog import KINDS, load_builtin_catalog
from topoopt.cli.app import app
from topoopt.cli.catalog_cmd import KINDS as CLI_KINDS
from topoopt.models.catalog import Interconnect, LinkPart, Price, Switch
from topoopt.models.instance import Distances

CAT = load_builtin_catalog()
GPUS, SERVERS, NICS = CAT.by_id("gpus"), CAT.by_id("servers"), CAT.by_id("nics")
INTERCONNECTS, SWITCHES = CAT.by_id("interconnects"), CAT.by_id("switches")
BOOKS = {book.id: book for book in CAT.price_books}
COMPUTE_SWITCHES = [s for s in CAT.switches if s.role == "compute"]
COPPER, OPTICAL = {"dac", "acc"}, {"aoc", "mmf", "smf"}
BUYABLE_KINDS = ("servers", "nics", "switches", "cables", "racks", "storage", "control")

NODE_LEAF_RUN_M = Distances().in_row_m + Distances().slack_m
"""Default node-to-leaf cable run (end-of-row leaf): some part per NIC speed must reach it."""
SWITCH_RUN_M = Distances().across_rows_m + Distances().slack_m
"""Default leaf-to-spine run (across rows): some switch-to-switch part must reach it."""

KNOWN_UNCABLED = {
    # A QSFP56 NIC at 25G needs a QSA adapter and SFP28 breakout; not modelled.
    ("cx6-hdr", "tcp-25"),
    ("cx6-en-200g", "tcp-25"),
    # 100G on a single-port OSFP or QSFP112 HCA from a twin-port cage needs 1:4 parts at 100G
    # (MCP7Y70 ends in QSFP56 only); not modelled.
    ("cx7-osfp", "ib-hdr100"),
    ("cx7-osfp", "tcp-100"),
    ("cx7-qsfp112", "ib-hdr100"),
    ("cx8-osfp", "tcp-100"),
}
"""(NIC, interconnect) pairs listed for completeness that no cable in the catalog connects."""

KNOWN_SINGLE_TIER = {
    # 100G on twin-port switches serves only the ConnectX-6 MCP7Y70 splitter; 25G on the ToR
    # only eth-25g breakouts. Neither has a switch-to-switch part at that speed.
    ("qm9700", 100), ("sn5600", 100), ("th5-64x800", 100), ("tor-32x100", 25),
}
"""(switch, speed) pairs that serve node links but cannot build a multi-tier fabric."""


def switch_protocol(interconnect: Interconnect) -> str:
    return "ib" if interconnect.protocol == "ib" else "ethernet"


def fits_switch(part: LinkPart, switch: Switch, gbps: int, end: str) -> bool:
    """The part's end ("a" or "b") plugs into the switch's cage and carries all its ports at gbps."""
    form_factor, ends = (part.a_form_factor, part.a_ends) if end == "a" else (part.b_form_factor, part.b_ends)
    ports = switch.ports_per_cage.get(gbps, 0)
    return part.gbps == gbps and form_factor == switch.cage_form_factor and ports > 0 and part.links == ends * ports


def fits_node(part: LinkPart, form_factor: str, ports_per_cage: int, gbps: int) -> bool:
    """The part's b end plugs into a node cage (a NIC: 1 port; a DGX twin cage: 2) at gbps."""
    return part.gbps == gbps and part.b_form_factor == form_factor and part.links == part.b_ends * ports_per_cage


def node_links(form_factor: str, ports_per_cage: int, interconnect: Interconnect) -> Iterator[tuple[Switch, LinkPart]]:
    """Every (compute switch, part) that can carry ``interconnect`` down to a node cage."""
    for switch in COMPUTE_SWITCHES:
        if switch_protocol(interconnect) not in switch.protocols:
            continue
        for part in CAT.cables:
            if fits_switch(part, switch, interconnect.gbps, "a") and fits_node(part, form_factor, ports_per_cage, interconnect.gbps):
                yield switch, part


# ------------------------------------------------------------------------------------------- ids


def test_catalog_has_the_agreed_ids() -> None:
    """Other modules, instances and tests name these ids; renaming one breaks them."""
    expected = {
        "gpus": {"a100-40gb-sxm", "a100-80gb-sxm", "h100-sxm", "h100-pcie", "h200-sxm", "b200", "l40s",
                 "rtx-4090", "rtx-3090", "v100s-pcie", "t4", "mi300x", "mi325x", "a800-80gb-sxm", "a800-40gb-pcie", "h800-sxm"},
        "servers": {"dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200", "hgx-h100", "hgx-h200",
                    "pcie-8x-l40s", "pcie-8x-rtx4090", "pcie-8x-rtx3090", "pcie-8x-v100s", "pcie-4x-t4",
                    "pcie-8x-h100-pcie", "mi300x-8x", "hgx-a800-80gb", "hgx-h800", "pcie-8x-a800-40gb"},
        "nics": {"cx6-hdr", "cx6-en-200g", "cx7-osfp", "cx7-qsfp112", "bf3-qsfp112", "cx8-osfp", "eth-25g",
                 "eth-10g-2p", "eth-25g-2p", "cx6-dx-2x100g", "cx6-vpi-2x200g", "cx7-qsfp112-2x200g", "bf3-2x200g"},
        "interconnects": {"ib-hdr", "ib-hdr100", "ib-ndr", "ib-ndr200", "ib-xdr", "roce-100", "roce-200",
                          "roce-400", "roce-800", "tcp-10", "tcp-25", "tcp-100"},
        "switches": {"qm8700", "qm9700", "qm9700-liquid", "q3400", "sn4700", "sn5600", "th5-64x800",
                     "th4-64x400", "tor-32x100", "sn2410", "mgmt-48x1g-10g", "mgmt-48x1g-4x10g",
                         "mgmt-48x10g-sfpplus"},
        "racks": {"air-15kw", "air-30kw", "air-45kw", "rear-door-50kw", "liquid-80kw", "liquid-130kw"},
        "storage": {"nvme-of-array", "nvme-of-array-400g", "pfs-building-block", "object-store-node", "nfs-server"},
        "models": {"llama2-7b", "llama3-8b", "llama3-70b", "llama3-405b", "mpt-7b", "mpt-30b", "mpt-70b",
                   "gpt3-175b", "qwen2.5-7b", "bloom-176b"},
    }
    for kind, ids in expected.items():
        assert set(CAT.by_id(kind)) == ids, kind
    assert set(BOOKS) == {"cny-monthly-rent", "usd-capex", "usd-monthly-rent"}
    for cable_id in ("hdr-dac-2m", "hdr-aoc-30m", "hdr-splitter-dac-3m", "ndr-dac-twin-to-flat-splitter-3m",
                     "ndr-sr4-kit-50m", "ndr-dr4-kit-100m", "ndr-dr4-kit-500m", "cat6-rj45-1g-100m",
                     "cat6a-rj45-10g-100m"):
        assert cable_id in CAT.by_id("cables")
    assert len(CAT.cables) <= 75, "keep the cable set small enough to review"


@pytest.mark.parametrize("kind", KINDS)
def test_ids_are_unique_per_kind(kind: str) -> None:
    ids = [item.id for item in getattr(CAT, kind)]
    assert ids, f"{kind} is empty"
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


# ------------------------------------------------------------------------------------ references


def test_server_references_resolve() -> None:
    for server in CAT.servers:
        assert server.gpu in GPUS, server.id
        for nic in server.nic_options:
            assert nic in NICS, (server.id, nic)
        if server.builtin_compute_nics is not None:
            assert server.builtin_compute_nics.nic in NICS, server.id
            assert not server.nic_options, f"{server.id}: built-in NICs and options both set"
            assert server.builtin_compute_nics.count <= server.max_compute_nics
        else:
            assert server.nic_options, f"{server.id}: a generic server needs NIC options"


def test_nic_interconnects_resolve() -> None:
    for nic in CAT.nics:
        for interconnect in nic.interconnects:
            assert interconnect in INTERCONNECTS, (nic.id, interconnect)


def test_price_keys_are_catalog_items() -> None:
    known = {item.id for kind in BUYABLE_KINDS for item in getattr(CAT, kind)}
    for book in CAT.price_books:
        assert set(book.prices) <= known, (book.id, sorted(set(book.prices) - known))


# --------------------------------------------------------------------------------------- sources


def all_sources() -> Iterator[tuple[str, str]]:
    for kind in KINDS:
        for item in getattr(CAT, kind):
            yield f"{kind}/{item.id}", item.source
    for gpu in CAT.gpus:
        yield f"gpus/{gpu.id}/matmul_efficiency", gpu.matmul_efficiency_source
        if gpu.matmul_efficiency_fp8_source is not None:
            yield f"gpus/{gpu.id}/matmul_efficiency_fp8", gpu.matmul_efficiency_fp8_source


def test_every_entry_has_a_url_or_a_reasoned_estimate() -> None:
    for where, source in all_sources():
        if source.startswith("estimate:"):
            assert len(source.removeprefix("estimate:").strip()) >= 20, f"{where}: estimate without a reason"
        else:
            assert source.startswith("https://") and " " not in source, f"{where}: {source!r}"


def test_every_price_states_its_provenance() -> None:
    """A quote names a URL and a date; an estimate or a derivation says how, at some length."""
    for book in CAT.price_books:
        for item_id, entry in book.prices.items():
            if entry.provenance == "quoted":
                assert "https://" in entry.source and entry.as_of, (book.id, item_id)
            else:
                reason = entry.source.removeprefix(f"{entry.provenance}:").strip()
                assert entry.source.startswith(f"{entry.provenance}:") and len(reason) >= 20, (book.id, item_id)


@pytest.mark.parametrize("change, message", [
    ({"provenance": "quoted", "as_of": None}, "as_of"),
    ({"provenance": "quoted", "source": "estimate: a list price someone mentioned"}, "URL"),
    ({"provenance": "derived", "source": "estimate: usd-capex x 7.2 / 28 months"}, "'derived:'"),
    ({"provenance": "rumoured"}, "provenance"),
])
def test_a_price_without_its_provenance_is_refused(change: dict, message: str) -> None:
    entry = {"price": 1.0, "provenance": "quoted", "source": "https://example.com/list", "as_of": "2026-09", **change}
    with pytest.raises(ValidationError, match=message):
        Price.model_validate(entry)


def test_the_cny_rental_book_offers_only_what_its_market_rents() -> None:
    """The idc10000 list rents A100, A800, H100, H800, RTX 4090/3090, V100 and T4 servers: any other
    server is marked not offered, and every server price derived from another book is."""
    rent = BOOKS["cny-monthly-rent"].prices
    servers = CAT.by_id("servers")
    rented_gpus = {"a100-40gb-sxm", "a100-80gb-sxm", "a800-40gb-pcie", "a800-80gb-sxm", "h100-sxm", "h800-sxm",
                   "rtx-4090", "rtx-3090", "v100s-pcie", "t4"}
    for item_id, entry in rent.items():
        if item_id in servers:
            assert entry.offered == (servers[item_id].gpu in rented_gpus), item_id
            assert entry.provenance != "derived" or not entry.offered, item_id


# ------------------------------------------------------------------------------------------ GPUs


def test_tflops_are_dense() -> None:
    """Datasheets print 2:4-sparse figures for Hopper and later; the catalog must not."""
    assert GPUS["h100-sxm"].dense_tflops["bf16"] <= 1000
    assert GPUS["b200"].dense_tflops["bf16"] <= 2500
    for gpu in CAT.gpus:
        tflops = gpu.dense_tflops
        if "bf16" in tflops and "fp16" in tflops:
            assert tflops["bf16"] == tflops["fp16"], gpu.id
        base = tflops.get("bf16", tflops.get("fp16"))
        assert base is not None, gpu.id
        if "fp8" in tflops:
            assert 1.9 <= tflops["fp8"] / base <= 2.1, f"{gpu.id}: FP8 should be ~2x dense BF16"


def test_matmul_efficiency_uses_the_measured_mamf() -> None:
    assert GPUS["a100-40gb-sxm"].matmul_efficiency == pytest.approx(0.869)
    assert GPUS["h100-sxm"].matmul_efficiency == pytest.approx(0.803)
    # AMD's max-achievable FLOPs (ROCm 6.3): BF16 708 and FP8 1,273 TFLOPS on the MI300X, 843 and
    # 1,519 on the MI325X.
    expected_amd = {"mi300x": (708 / 1307, 1273 / 2615), "mi325x": (843 / 1307.4, 1519 / 2614.9)}
    for gpu_id, (bf16, fp8) in expected_amd.items():
        assert GPUS[gpu_id].matmul_efficiency == pytest.approx(bf16, abs=5e-4), gpu_id
        assert GPUS[gpu_id].matmul_efficiency_fp8 == pytest.approx(fp8, abs=5e-4), gpu_id
    # BF16 1,745.0 / 2,250 and FP8 3,432.5 / 4,500 TFLOPS measured on B200; FP8 1,402.6 / 1,979
    # on H100 and 1,453.4 / 1,979 on H200 (stas00 ml-engineering, MAMF tables).
    assert GPUS["b200"].matmul_efficiency == pytest.approx(1745.0 / 2250, abs=5e-4)
    expected_fp8 = {"b200": 3432.5 / 4500, "h100-sxm": 1402.6 / 1979, "h200-sxm": 1453.4 / 1979}
    for gpu_id, efficiency in expected_fp8.items():
        assert GPUS[gpu_id].matmul_efficiency_fp8 == pytest.approx(efficiency, abs=5e-4), gpu_id


def test_scale_up_is_one_direction_per_gpu() -> None:
    expected = {"a100-40gb-sxm": 300, "a100-80gb-sxm": 300, "h100-sxm": 450, "h200-sxm": 450, "b200": 900,
                "mi300x": 448}
    for gpu_id, gb_per_s in expected.items():
        assert GPUS[gpu_id].scale_up_gb_per_s == gb_per_s
        assert GPUS[gpu_id].scale_up_domain_gpus == 8
    for gpu_id in ("h100-pcie", "l40s", "rtx-4090", "rtx-3090", "v100s-pcie", "t4"):
        assert GPUS[gpu_id].scale_up_domain_gpus <= 2
        assert GPUS[gpu_id].scale_up_gb_per_s <= 63, "a PCIe card's scale-up is PCIe x16 one way"


# --------------------------------------------------------------------------------------- servers


def test_dgx_facts() -> None:
    assert SERVERS["dgx-h100"].power_w == 10_200
    assert SERVERS["dgx-a100-40gb"].power_w == 6_500
    assert SERVERS["dgx-b200"].power_w == 14_300
    for server_id in ("dgx-a100-40gb", "dgx-a100-80gb"):
        assert SERVERS[server_id].builtin_compute_nics.model_dump() == {"nic": "cx6-hdr", "count": 8}
    for server_id in ("dgx-h100", "dgx-h200", "dgx-b200"):
        server = SERVERS[server_id]
        assert server.builtin_compute_nics.model_dump() == {"nic": "cx7-osfp", "count": 8}
        assert server.compute_port_form_factor == "osfp-twin-flat"
        assert server.compute_ports_per_cage == 2
        assert server.builtin_compute_nics.count // server.compute_ports_per_cage == 4, "4 twin-port cages"


def test_server_gpu_power_fits_node_power() -> None:
    for server in CAT.servers:
        gpu_w = GPUS[server.gpu].tdp_w * server.gpus_per_node
        assert gpu_w < server.power_w <= 2.5 * gpu_w + 1_000, server.id


# ------------------------------------------------------------------------------ interconnects


def test_every_listed_interconnect_runs_on_some_switch() -> None:
    for nic in CAT.nics:
        for interconnect_id in nic.interconnects:
            ic = INTERCONNECTS[interconnect_id]
            assert any(switch_protocol(ic) in s.protocols and s.radix(ic.gbps) > 0 for s in COMPUTE_SWITCHES), \
                (nic.id, interconnect_id)


def test_bus_efficiency_orders_ib_roce_tcp() -> None:
    by_protocol: dict[str, list[float]] = {}
    for ic in CAT.interconnects:
        by_protocol.setdefault(ic.protocol, []).append(ic.bus_efficiency)
    assert min(by_protocol["ib"]) >= 0.9
    assert max(by_protocol["roce"]) < min(by_protocol["ib"])
    assert max(by_protocol["tcp"]) < min(by_protocol["roce"])
    latency = {ic.protocol: ic.latency_us for ic in CAT.interconnects}
    assert latency["ib"] < latency["roce"] < latency["tcp"]


# -------------------------------------------------------------------------------------- cabling


def test_every_nic_has_a_cable_to_some_switch() -> None:
    for nic in CAT.nics:
        found = [
            (switch.id, part.id)
            for interconnect_id in nic.interconnects
            for switch, part in node_links(nic.port_form_factor, 1, INTERCONNECTS[interconnect_id])
        ]
        assert found, f"{nic.id}: no switch/cable pairing at any of its speeds"


def test_nic_speeds_are_cabled_with_copper_and_optics() -> None:
    """Each (NIC, interconnect) has a short copper part and an optical part for an end-of-row leaf;
    the pairs that lack cabling are exactly the documented ones."""
    uncabled = set()
    for nic in CAT.nics:
        for interconnect_id in nic.interconnects:
            parts = [part for _, part in node_links(nic.port_form_factor, 1, INTERCONNECTS[interconnect_id])]
            if not parts:
                uncabled.add((nic.id, interconnect_id))
                continue
            assert any(p.media in COPPER for p in parts), (nic.id, interconnect_id, "no copper part")
            assert any(p.media in OPTICAL and p.max_reach_m >= NODE_LEAF_RUN_M for p in parts), \
                (nic.id, interconnect_id, f"no optical part reaching {NODE_LEAF_RUN_M} m")
    assert uncabled == KNOWN_UNCABLED, "update KNOWN_UNCABLED (and say why) when cabling changes"


def test_dgx_twin_cages_are_cabled() -> None:
    for server in CAT.servers:
        if server.compute_port_form_factor is None:
            continue
        nic = NICS[server.builtin_compute_nics.nic]
        cabled = {
            ic_id for ic_id in nic.interconnects
            if any(node_links(server.compute_port_form_factor, server.compute_ports_per_cage, INTERCONNECTS[ic_id]))
        }
        assert {"ib-ndr", "roce-400"} <= cabled, server.id


def test_liquid_cooled_switch_takes_flat_top_parts_only() -> None:
    liquid = SWITCHES["qm9700-liquid"]
    assert liquid.cooling == "liquid" and liquid.cage_form_factor == "osfp-twin-flat"
    for part in CAT.cables:
        assert "finned" not in part.a_form_factor or not fits_switch(part, liquid, part.gbps, "a")
    for nic in ("cx7-osfp",):
        parts = [p for s, p in node_links(NICS[nic].port_form_factor, 1, INTERCONNECTS["ib-ndr"]) if s.id == liquid.id]
        assert any(p.media in COPPER for p in parts) and any(p.media in OPTICAL for p in parts)


def test_multi_tier_fabrics_have_switch_to_switch_parts() -> None:
    """Every switch speed that serves nodes can also link switches across rows (else documented)."""
    served = {
        (switch.id, INTERCONNECTS[ic_id].gbps)
        for nic in CAT.nics for ic_id in nic.interconnects
        for switch, _ in node_links(nic.port_form_factor, 1, INTERCONNECTS[ic_id])
    }
    single_tier = set()
    for switch_id, gbps in sorted(served):
        switch = SWITCHES[switch_id]
        reaches = [p.max_reach_m for p in CAT.cables
                   if fits_switch(p, switch, gbps, "a") and fits_switch(p, switch, gbps, "b")]
        if not reaches:
            single_tier.add((switch_id, gbps))
        else:
            assert max(reaches) >= SWITCH_RUN_M, (switch_id, gbps, reaches)
    assert single_tier == KNOWN_SINGLE_TIER


def test_every_cable_fits_a_switch_and_something_below() -> None:
    """End a fits a switch cage (a management switch for RJ45 cords); end b fits a switch, a NIC, a
    DGX cage or a storage unit's data port."""
    node_ends = {(nic.port_form_factor, 1) for nic in CAT.nics}
    node_ends |= {(s.compute_port_form_factor, s.compute_ports_per_cage) for s in CAT.servers if s.compute_port_form_factor}
    node_ends |= {(tier.port_form_factor, 1) for tier in CAT.storage}
    for part in CAT.cables:
        upper = [s for s in CAT.switches if fits_switch(part, s, part.gbps, "a")]
        assert upper, f"{part.id}: end a fits no switch cage"
        lower_switch = any(fits_switch(part, s, part.gbps, "b") for s in CAT.switches)
        lower_node = any(fits_node(part, form, ports, part.gbps) for form, ports in node_ends)
        assert lower_switch or lower_node, f"{part.id}: end b fits nothing"


def test_reach_copper_below_optics() -> None:
    """Copper stops at 5 m (an ACC); optics start at 3 m (an AOC within a rack where a 2 m DAC
    falls short)."""
    copper = [p.max_reach_m for p in CAT.cables if p.media in COPPER]
    optics = [p.max_reach_m for p in CAT.cables if p.media in OPTICAL]
    assert max(copper) <= 5 and min(optics) >= 3
    for part in CAT.cables:
        limit = {"dac": 3, "acc": 5, "aoc": 100, "mmf": 100, "smf": 2000, "utp": 100}[part.media]
        if part.media == "mmf" and part.gbps <= 10:
            limit = 300  # 10GBASE-SR over OM3 (IEEE 802.3ae); faster multimode lanes reach 100 m or less
        assert part.max_reach_m <= limit, part.id
        if part.media == "mmf" and part.gbps >= 400 and part.a_form_factor.startswith("osfp"):
            assert part.max_reach_m <= 50, f"{part.id}: 100G-lane multimode is 50 m on OM4"


def test_xdr_has_no_dac_aoc_or_multimode() -> None:
    xdr_switches = [s for s in COMPUTE_SWITCHES if "ib" in s.protocols and s.radix(800) > 0]
    assert [s.id for s in xdr_switches] == ["q3400"]
    xdr_parts = [p for p in CAT.cables if any(fits_switch(p, s, 800, "a") for s in xdr_switches)]
    assert xdr_parts
    for part in xdr_parts:
        assert part.media in {"acc", "smf"}, part.id
        assert not any(fits_switch(part, s, 800, "a") for s in COMPUTE_SWITCHES if "ethernet" in s.protocols), part.id


# ------------------------------------------------------------------ storage and management networks

STORAGE_SPEEDS_GBPS = (10, 25, 100, 200)
"""Storage-network speeds the issue names: 10G (the classic under-sized NIC) up to 200G (DGX)."""
MGMT_SWITCHES = [s for s in CAT.switches if s.role == "management"]


def storage_nics() -> set[str]:
    """Every NIC a server can use on a dedicated storage network."""
    ids = {nic for s in CAT.servers for nic in s.storage_nic_options}
    ids |= {s.builtin_storage_nics.nic for s in CAT.servers if s.builtin_storage_nics is not None}
    return ids


def test_storage_nic_references_resolve() -> None:
    for server in CAT.servers:
        for nic in server.storage_nic_options:
            assert nic in NICS, (server.id, nic)
        builtin = server.builtin_storage_nics
        if builtin is not None:
            assert builtin.nic in NICS, server.id
            assert not server.storage_nic_options, f"{server.id}: built-in storage NICs and options both set"
            assert builtin.count <= server.max_storage_nics, server.id
        else:
            assert server.storage_nic_options, f"{server.id}: no storage NIC at all"
            assert server.max_storage_nics >= 1, f"{server.id}: options but no slot"


def test_storage_nics_are_multi_port_and_not_compute_options() -> None:
    """Storage NICs use all their ports; they are kept out of the compute NIC options so the compute
    fabric's choices stay what they were."""
    for nic_id in storage_nics():
        assert NICS[nic_id].ports == 2, nic_id
    compute = {nic for s in CAT.servers for nic in s.nic_options}
    compute |= {s.builtin_compute_nics.nic for s in CAT.servers if s.builtin_compute_nics is not None}
    assert not compute & storage_nics()


def test_dgx_storage_nics_follow_the_reference() -> None:
    """DGX H100/H200: 2 dual-port QSFP112 ConnectX-7 (2 x 200G each); DGX B200: 2 dual-port
    BlueField-3; DGX A100: 2 dual-port ConnectX-6 (grade U)."""
    expected = {"dgx-h100": "cx7-qsfp112-2x200g", "dgx-h200": "cx7-qsfp112-2x200g", "dgx-b200": "bf3-2x200g",
                "dgx-a100-40gb": "cx6-vpi-2x200g", "dgx-a100-80gb": "cx6-vpi-2x200g"}
    for server_id, nic_id in expected.items():
        assert SERVERS[server_id].builtin_storage_nics.model_dump() == {"nic": nic_id, "count": 2}
    for nic_id in ("cx7-qsfp112-2x200g", "bf3-2x200g"):
        nic = NICS[nic_id]
        assert nic.port_form_factor == "qsfp112" and nic.ports == 2
        assert max(INTERCONNECTS[i].gbps for i in nic.interconnects) == 200
    assert "tcp-10" in NICS["eth-10g-2p"].interconnects and NICS["eth-10g-2p"].port_form_factor == "sfp-plus"


@pytest.mark.parametrize("gbps", STORAGE_SPEEDS_GBPS)
def test_every_storage_speed_has_a_nic_a_switch_and_parts(gbps: int) -> None:
    """At each storage speed some storage NIC reaches some Ethernet switch over copper and over a
    part reaching an end-of-row leaf."""
    links = [
        (switch, part)
        for nic_id in storage_nics()
        for ic_id in NICS[nic_id].interconnects if INTERCONNECTS[ic_id].gbps == gbps
        for switch, part in node_links(NICS[nic_id].port_form_factor, 1, INTERCONNECTS[ic_id])
        if "ethernet" in switch.protocols
    ]
    assert any(p.media in COPPER for _, p in links), gbps
    assert any(p.max_reach_m >= NODE_LEAF_RUN_M for _, p in links), gbps


def test_storage_units_attach_at_every_listed_speed() -> None:
    """A storage unit's data port at each of its speeds and protocols plugs into some data switch,
    over a part reaching an end-of-row leaf."""
    unattached = set()
    for tier in CAT.storage:
        for gbps in tier.port_speeds_gbps:
            for protocol in tier.protocols:
                reaches = [
                    part.max_reach_m
                    for switch in COMPUTE_SWITCHES if protocol in switch.protocols
                    for part in CAT.cables
                    if fits_switch(part, switch, gbps, "a") and fits_node(part, tier.port_form_factor, 1, gbps)
                ]
                if not reaches or max(reaches) < NODE_LEAF_RUN_M:
                    unattached.add((tier.id, gbps, protocol))
    # HDR100 into a QSFP112 port would need a 1:4 NDR-to-100G QSFP112 part (as for cx7-qsfp112 at
    # ib-hdr100 in KNOWN_UNCABLED); the array still attaches at 100G Ethernet and at 200G.
    assert unattached == {("nvme-of-array", 100, "ib")}


def test_cold_tier_candidates_exist() -> None:
    assert any(tier.kind == "object" for tier in CAT.storage)


def test_management_switch_speeds_and_cords() -> None:
    """A management switch runs 1G device ports and faster uplinks (on uplink cages of its own, or
    on its device cages); a Cat6 cord (with a 1000BASE-T module in an SFP+ cage) reaches an
    end-of-row leaf at the device speed, and Cat6a (RJ45 cages) or fibre (SFP+ cages) an
    aggregation switch of some management model across rows at the uplink speed."""
    assert MGMT_SWITCHES
    assert any(s.uplink_cages for s in MGMT_SWITCHES), "a management leaf with fibre uplink cages"
    for switch in MGMT_SWITCHES:
        device = min(switch.ports_per_cage)
        if switch.uplink_cages:
            uplink = max(switch.uplink_ports_per_cage)
            lower = (switch.uplink_cage_form_factor, switch.uplink_ports_per_cage[uplink])
        else:
            uplink = max(switch.ports_per_cage)
            lower = (switch.cage_form_factor, switch.ports_per_cage[uplink])
        assert device == 1 and uplink == 10, switch.id
        assert switch.radix(device) > 2, switch.id
        down = [p for p in CAT.cables if fits_switch(p, switch, device, "a") and p.b_form_factor == "rj45"]
        up = [p for p in CAT.cables for agg in MGMT_SWITCHES
              if fits_switch(p, agg, uplink, "a") and fits_node(p, *lower, uplink)]
        assert any(p.media == "utp" and p.max_reach_m >= NODE_LEAF_RUN_M for p in down), switch.id
        assert any(p.media in {"utp", *OPTICAL} and p.max_reach_m >= SWITCH_RUN_M for p in up), switch.id


@pytest.mark.parametrize("change, message", [
    ({"uplink_cages": 4}, "go together"),
    ({"uplink_cage_form_factor": "sfp-plus", "uplink_ports_per_cage": {10: 1}}, "go together"),
    ({"uplink_cages": 4, "uplink_cage_form_factor": "sfp-plus", "uplink_ports_per_cage": {10: 1}, "role": "compute"},
     "management switches"),
])
def test_uplink_cages_are_whole_and_for_management_switches(change: dict, message: str) -> None:
    leaf = next(s for s in MGMT_SWITCHES if s.uplink_cages).model_dump()
    for key in ("uplink_cages", "uplink_cage_form_factor", "uplink_ports_per_cage"):
        leaf.pop(key)
    with pytest.raises(ValidationError, match=message):
        Switch.model_validate({**leaf, **change})


def test_rj45_cords_serve_only_management_switches() -> None:
    for part in CAT.cables:
        if "rj45" in (part.a_form_factor, part.b_form_factor):
            assert part.media == "utp", part.id
            assert not any(fits_switch(part, s, part.gbps, "a") for s in COMPUTE_SWITCHES), part.id


# ----------------------------------------------------------------------------------------- prices


@pytest.mark.parametrize("book_id", sorted(BOOKS))
def test_every_buyable_item_is_priced(book_id: str) -> None:
    book = BOOKS[book_id]
    for kind in BUYABLE_KINDS:
        for item in getattr(CAT, kind):
            assert item.id in book.prices, f"{book_id}: no price for {kind}/{item.id}"
            entry = book.prices[item.id]
            assert entry.price > 0 or entry.source.startswith("estimate: included in"), item.id


def test_price_books_are_what_they_say() -> None:
    rent, capex, cloud = BOOKS["cny-monthly-rent"], BOOKS["usd-capex"], BOOKS["usd-monthly-rent"]
    assert (rent.currency, rent.basis) == ("CNY", "monthly_rent")
    assert (capex.currency, capex.basis) == ("USD", "capex")
    assert (cloud.currency, cloud.basis) == ("USD", "monthly_rent")


def test_usd_rent_follows_the_capacity_block_list() -> None:
    """AWS Capacity Blocks, January 2025: US$ per GPU-hour × 8 GPUs × 730 hours a month."""
    price = {item: entry.price for item, entry in BOOKS["usd-monthly-rent"].prices.items()}
    assert price["dgx-h100"] == round(4.916 * 8 * 730)
    assert price["dgx-h200"] == round(5.408 * 8 * 730)
    assert price["dgx-a100-40gb"] == round(1.844 * 8 * 730)


def test_cny_rent_follows_the_published_list() -> None:
    price = {item: entry.price for item, entry in BOOKS["cny-monthly-rent"].prices.items()}
    assert price["dgx-a100-40gb"] == 8 * 2_800
    assert price["pcie-8x-rtx3090"] == 8 * 1_750
    assert price["pcie-8x-v100s"] == 8 * 1_500
    assert price["pcie-4x-t4"] == 4 * 900
    assert 80_000 <= price["hgx-h100"] <= 120_000
    assert 5_000 <= price["qm8700"] <= 8_000
    assert 15_000 <= price["qm9700"] <= 30_000


def test_rent_and_capex_agree_on_order() -> None:
    """No equipment's rent is out of line with its price: payback between 5 and 80 months.
    Racks are excluded: their rent is colocation (space and power), not the enclosure."""
    rent, capex = BOOKS["cny-monthly-rent"].prices, BOOKS["usd-capex"].prices
    racks = set(CAT.by_id("racks"))
    for item_id in set(rent) - racks:
        months = capex[item_id].price * 7.2 / rent[item_id].price
        assert 5 <= months <= 80, f"{item_id}: {months:.0f}-month payback"


# ----------------------------------------------------------------------------------------- models

GATED_MLP = {"llama2-7b", "llama3-8b", "llama3-70b", "llama3-405b", "qwen2.5-7b"}


@pytest.mark.parametrize("model_id", sorted(CAT.by_id("models")))
def test_model_params_match_the_architecture(model_id: str) -> None:
    """params ≈ layers·(attention + MLP) + embeddings, within 2% (biases and norms ignored)."""
    m = CAT.by_id("models")[model_id]
    h, head_dim = m.hidden_size, m.hidden_size // m.attention_heads
    attention = 2 * h * h + 2 * h * m.kv_heads * head_dim
    mlp = (3 if model_id in GATED_MLP else 2) * h * m.ffn_hidden_size
    embeddings = (1 if m.tied_embeddings else 2) * m.vocab_size * h
    estimate_b = (m.layers * (attention + mlp) + embeddings) / 1e9
    assert m.params_b == pytest.approx(estimate_b, rel=0.02)
    assert m.hidden_size % m.attention_heads == 0 and m.attention_heads % m.kv_heads == 0


# -------------------------------------------------------------------------------------------- CLI

runner = CliRunner()


def test_cli_kinds_match_the_catalog() -> None:
    assert CLI_KINDS == (*KINDS, "prices")


@pytest.mark.parametrize("kind", KINDS)
def test_cli_lists_each_kind(kind: str) -> None:
    result = runner.invoke(app, ["catalog", kind])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[0] == "id" and lines[0].split()[-1] == "source"
    listed = [line.split()[0] for line in lines[2:]]
    assert listed == [item.id for item in getattr(CAT, kind)]


@pytest.mark.parametrize("kind", KINDS)
def test_cli_json_is_the_items(kind: str) -> None:
    result = runner.invoke(app, ["catalog", kind, "--json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)
    assert [item["id"] for item in items] == [item.id for item in getattr(CAT, kind)]
    assert all(item["source"] for item in items)


def test_cli_summary_counts_each_kind() -> None:
    result = runner.invoke(app, ["catalog", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {**{k: len(getattr(CAT, k)) for k in KINDS}, "price_books": len(CAT.price_books)}
    table = runner.invoke(app, ["catalog"])
    assert table.exit_code == 0 and f"cables         {len(CAT.cables)}" in table.stdout


def test_cli_prices_of_one_book() -> None:
    result = runner.invoke(app, ["catalog", "prices", "--price-book", "usd-capex", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert {row["book"] for row in rows} == {"usd-capex"}
    assert len(rows) == len(BOOKS["usd-capex"].prices)
    both = json.loads(runner.invoke(app, ["catalog", "prices", "--json"]).stdout)
    assert len(both) == sum(len(book.prices) for book in CAT.price_books)


def test_cli_price_column() -> None:
    result = runner.invoke(app, ["catalog", "servers", "--price-book", "cny-monthly-rent"])
    assert result.exit_code == 0
    assert "price CNY" in result.stdout.splitlines()[0]
    dgx_line = next(line for line in result.stdout.splitlines() if line.startswith("dgx-a100-40gb "))
    assert "22,400" in dgx_line


def test_cli_unknown_kind_exits_2_and_lists_kinds() -> None:
    result = runner.invoke(app, ["catalog", "gpu"])
    assert result.exit_code == 2
    assert result.stdout == ""
    for kind in (*KINDS, "prices"):
        assert kind in result.stderr


def test_cli_unknown_price_book_exits_2() -> None:
    result = runner.invoke(app, ["catalog", "switches", "--price-book", "eur-capex"])
    assert result.exit_code == 2
    assert "cny-monthly-rent" in result.stderr and "usd-capex" in result.stderr


# ---------------------------------------------------------- instance references to the new items

INSTANCE = """\
name: refs
workload:
  model: llama3-8b
  training: {tokens: 1.0e10, sequence_length: 4096, global_batch_sequences: 256}
budget: {basis: capex, currency: USD, max: 1.0e7}
site: {max_racks: 4}
catalog:
  price_book: usd-capex
"""


def load_problems(extra: str) -> list[str]:
    from topoopt.loader import InputError, load_instance

    with pytest.raises(InputError) as caught:
        load_instance("refs.yaml", text=INSTANCE + extra)
    return caught.value.messages


def test_new_catalog_ids_are_accepted_in_pins_and_lists() -> None:
    from topoopt.loader import load_instance

    text = INSTANCE + (
        "constraints:\n"
        "  storage_nics: {allow: [cx7-qsfp112-2x200g, eth-10g-2p], deny: [bf3-2x200g]}\n"
        "  switches: {allow: [sn2410, qm9700, mgmt-48x1g-10g]}\n"
        "  cables: {deny: [cat6a-rj45-10g-100m]}\n"
        "  pins: {storage_nic: eth-25g-2p, cold_storage: object-store-node, management_switch: mgmt-48x1g-10g,"
        " storage_network: dedicated}\n"
    )
    loaded = load_instance("refs.yaml", text=text)
    assert loaded.instance.constraints.pins.storage_nic == "eth-25g-2p"


@pytest.mark.parametrize("block,field,words", [
    ("constraints:\n  storage_nics: {allow: [cx7-2x200g]}\n", "constraints.storage_nics.allow[0]", "unknown NIC id"),
    ("constraints:\n  storage_nics: {deny: [sn2410]}\n", "constraints.storage_nics.deny[0]", "'sn2410' is a switch id"),
    ("constraints:\n  pins: {storage_nic: eth-10g}\n", "constraints.pins.storage_nic", "did you mean"),
    ("constraints:\n  pins: {cold_storage: s3}\n", "constraints.pins.cold_storage", "unknown storage tier id 's3'"),
    ("constraints:\n  pins: {management_switch: mgmt-48x1g}\n", "constraints.pins.management_switch",
     "did you mean 'mgmt-48x1g-10g'"),
])
def test_bad_storage_references_are_located(block: str, field: str, words: str) -> None:
    line = len(INSTANCE.splitlines()) + len(block.splitlines())
    messages = load_problems(block)
    assert any(m.startswith(f"refs.yaml:{line}:") and f": {field}: " in m and words in m for m in messages), messages


ADDED_SERVER = (
    "    - {{id: my-node, name: My node, source: 'estimate: quote', gpu: h100-sxm, gpus_per_node: 8, "
    "power_w: 10000, rack_units: 8, max_compute_nics: 8, nic_options: [cx7-osfp], {storage}}}\n"
)


@pytest.mark.parametrize("storage,field,words", [
    ("storage_nic_options: [eth-10g-2p, cx7-2x200g], max_storage_nics: 1",
     "catalog.add.servers[0].storage_nic_options[1]", "unknown NIC id 'cx7-2x200g'"),
    ("builtin_storage_nics: {nic: bf3-2x200, count: 2}, max_storage_nics: 2",
     "catalog.add.servers[0].builtin_storage_nics.nic", "did you mean 'bf3-2x200g'"),
    ("storage_nic_options: [eth-10g-2p]",
     "catalog.add.servers[0].max_storage_nics", "none of storage_nic_options can be fitted"),
    ("builtin_storage_nics: {nic: bf3-2x200g, count: 2}, max_storage_nics: 1",
     "catalog.add.servers[0].max_storage_nics", "below the 2 built-in storage NICs"),
    ("builtin_storage_nics: {nic: bf3-2x200g, count: 2}, storage_nic_options: [eth-10g-2p], max_storage_nics: 2",
     "catalog.add.servers[0].storage_nic_options", "not both"),
])
def test_added_server_storage_nics_are_checked(storage: str, field: str, words: str) -> None:
    block = "  add:\n    servers:\n" + ADDED_SERVER.format(storage=storage)
    messages = load_problems(block)
    assert any(f": {field}: " in m and words in m for m in messages), messages


# --------------------------------------------------------------------- storage NIC helpers


def test_storage_nic_counts() -> None:
    from topoopt.catalog import storage_nic_counts

    assert storage_nic_counts(SERVERS["dgx-h100"]) == {"cx7-qsfp112-2x200g": [2]}
    hgx = storage_nic_counts(SERVERS["hgx-h100"])
    assert set(hgx) == set(SERVERS["hgx-h100"].storage_nic_options)
    assert all(counts == [1, 2] for counts in hgx.values())
    bare = SERVERS["pcie-4x-t4"].model_copy(update={"storage_nic_options": [], "max_storage_nics": 0})
    assert storage_nic_counts(bare) == {}


def test_storage_nic_power() -> None:
    """Bought NICs add their power, built-in ones do not; every storage port adds its hungriest
    fitting module end at the running speed."""
    from topoopt.catalog.power import storage_nic_power_w

    parts = CAT.cables
    dgx, cx7 = SERVERS["dgx-h100"], NICS["cx7-qsfp112-2x200g"]
    end_200_w = max(p.power_w_per_b_end for p in parts
                    if p.gbps == 200 and p.b_form_factor == "qsfp112" and p.links == p.b_ends)
    assert storage_nic_power_w(dgx, cx7, 2, 200, parts, 4) == pytest.approx(4 * end_200_w)
    # Only cabled ports hold a module: a DGX cabling its 2 storage ports draws 2 modules' power.
    assert storage_nic_power_w(dgx, cx7, 2, 200, parts, 2) == pytest.approx(2 * end_200_w)
    hgx = SERVERS["hgx-h100"]
    assert storage_nic_power_w(hgx, cx7, 2, 200, parts, 4) == pytest.approx(2 * cx7.power_w + 4 * end_200_w)
    assert storage_nic_power_w(hgx, cx7, 1, 200, parts, 2) < storage_nic_power_w(hgx, cx7, 2, 200, parts, 4)
    ten = NICS["eth-10g-2p"]
    assert storage_nic_power_w(hgx, ten, 1, 10, parts, 2) == pytest.approx(ten.power_w + 2 * 1.0)
    assert storage_nic_power_w(hgx, ten, 1, 10, parts, 1) == pytest.approx(ten.power_w + 1.0)


@pytest.mark.parametrize("book", sorted(BOOKS))
def test_no_part_reaching_less_for_no_more_draws_more_power(book):
    """Between parts of the same ends, speed and links, one that reaches less for no more money
    draws no more power at either end. An explanation's fewest racks rest on it (docs/model.md,
    "Explaining no"): a shorter run, whose cheapest part is then no dearer, never raises a rack's
    power."""
    prices = BOOKS[book].prices

    def ends(part: LinkPart) -> tuple:
        return part.a_form_factor, part.a_ends, part.b_form_factor, part.b_ends, part.gbps, part.links
    priced = [part for part in CAT.cables if part.id in prices]
    compared, found = 0, []
    for short in priced:
        for long in priced:
            if ends(short) == ends(long) and short.max_reach_m < long.max_reach_m:
                compared += 1
                if prices[short.id].price <= prices[long.id].price and (
                        short.power_w_per_a_end > long.power_w_per_a_end or short.power_w_per_b_end > long.power_w_per_b_end):
                    found.append((short.id, long.id))
    assert compared and found == []
