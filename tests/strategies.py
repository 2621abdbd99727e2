"""Hypothesis strategies: small self-contained instances (own catalog, own prices) and their edits.

An instance is drawn as plain data (the dict an instance file holds) so that tests can edit it —
more budget, a later deadline, an extra catalog option, ids renamed — before validating it with
:func:`build`. Catalogs are tiny (1–3 servers, 1–2 switches of 8 or 16 ports so that 2- and
3-tier fabrics occur at a few dozen nodes, 2–4 cable parts of varying reach, 1–2 rack classes,
1–2 storage tiers, and the storage and management networks' kit of :func:`network_kit`) and
budgets small, so that each solve takes well under a second.

Cable parts are drawn to fit the drawn cages (a part whose ends fit nothing is only a dead option),
except that their speed, reach and form factors vary enough that some instances have no usable
cable for some link class.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from hypothesis import strategies as st

from topoopt.models.instance import Instance

SRC = "estimate: property-test fixture"

# -- hardware pools --------------------------------------------------------------------------------
GPU_POOL = {
    "ga": {"memory_gb": 80, "memory_bandwidth_gb_per_s": 3350, "dense_tflops": {"bf16": 989, "fp16": 989},
           "matmul_efficiency": 0.8, "tdp_w": 700, "scale_up_gb_per_s": 450, "scale_up_domain_gpus": 8},
    "gb": {"memory_gb": 40, "memory_bandwidth_gb_per_s": 1555, "dense_tflops": {"bf16": 312, "fp16": 312},
           "matmul_efficiency": 0.87, "tdp_w": 400, "scale_up_gb_per_s": 300, "scale_up_domain_gpus": 8},
    "gc": {"memory_gb": 24, "memory_bandwidth_gb_per_s": 900, "dense_tflops": {"bf16": 180, "fp16": 180},
           "matmul_efficiency": 0.7, "tdp_w": 350, "scale_up_gb_per_s": 64, "scale_up_domain_gpus": 1},
}
INTERCONNECT_POOL = {
    "ib400": {"protocol": "ib", "gbps": 400, "bus_efficiency": 0.92, "latency_us": 1.5},
    "roce400": {"protocol": "roce", "gbps": 400, "bus_efficiency": 0.85, "latency_us": 3.0},
    "ib200": {"protocol": "ib", "gbps": 200, "bus_efficiency": 0.92, "latency_us": 1.5},
}
# Cage form factors and the logical ports one cage carries.
SWITCH_CAGES = {"osfp-twin": 2, "qsfp112": 1}
NIC_CAGES = ("osfp-flat", "qsfp112")
MEDIA_REACH_M = {"dac": (1, 3, 5), "aoc": (10, 30), "mmf": (30, 50, 100), "smf": (500,)}
MEDIA_END_W = {"dac": 0.1, "aoc": 5.0, "mmf": 9.0, "smf": 15.0}

MODELS = {
    "m1": {"params_b": 1.3, "layers": 24, "hidden_size": 2048, "attention_heads": 16, "kv_heads": 16,
           "ffn_hidden_size": 8192, "vocab_size": 50257},
    "m7": {"params_b": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 32,
           "ffn_hidden_size": 11008, "vocab_size": 32000},
    "m13": {"params_b": 13, "layers": 40, "hidden_size": 5120, "attention_heads": 40, "kv_heads": 40,
            "ffn_hidden_size": 13824, "vocab_size": 32000},
}

KINDS = ("gpus", "servers", "nics", "interconnects", "switches", "cables", "racks", "storage")


@dataclass(frozen=True)
class Size:
    """How big a drawn catalog and budget may get."""

    max_servers: int = 3
    max_nics: int = 2
    max_interconnects: int = 2
    max_switches: int = 2
    max_cables: int = 4
    max_racks: int = 2
    max_storage: int = 2
    max_budget: int = 20_000_000


DEFAULT = Size()
SMALLEST = Size(max_servers=2, max_nics=1, max_interconnects=1, max_switches=2, max_cables=3, max_racks=2,
                max_storage=2, max_budget=6_000_000)
"""Catalogs small enough for exhaustive enumeration in well under a second."""


def one_in(draw, n: int) -> bool:
    """True with probability 1/n; False is the simplest draw, so shrinking drops the option."""
    return draw(st.integers(0, n - 1)) == n - 1


def _subset(draw, pool: list, low: int, high: int) -> list:
    """A non-empty, order-preserving subset of ``pool`` with ``low``–``high`` members."""
    high = min(high, len(pool))
    chosen = draw(st.lists(st.integers(0, len(pool) - 1), min_size=min(low, high), max_size=high, unique=True))
    return [x for i, x in enumerate(pool) if i in chosen]


def _nics(draw, size: Size, interconnects: list[str]) -> list[dict]:
    nics = []
    for i in range(draw(st.integers(1, size.max_nics))):
        # The first NIC runs the first interconnect (so most catalogs have a working node).
        runs = _subset(draw, interconnects, 1, 2)
        if i == 0 and interconnects[0] not in runs:
            runs = [interconnects[0], *runs][:2]
        nics.append({"id": f"nic{i}", "name": f"NIC {i}", "source": SRC,
                     "port_form_factor": draw(st.sampled_from(NIC_CAGES)),
                     "interconnects": runs, "power_w": draw(st.sampled_from([15, 25]))})
    return nics


def _servers(draw, size: Size, gpu_ids: list[str], nics: list[dict]) -> list[dict]:
    servers = []
    for i in range(draw(st.integers(1, size.max_servers))):
        gpus_per_node = draw(st.sampled_from([4, 8]))
        nic_options = _subset(draw, [n["id"] for n in nics], 1, 2)
        if i == 0:  # the first server takes the first NIC (so most catalogs have a working node)
            nic_options = sorted({*nic_options, "nic0"})
        servers.append({
            "id": f"srv{i}", "name": f"Server {i}", "source": SRC, "gpu": draw(st.sampled_from(gpu_ids)),
            "gpus_per_node": gpus_per_node,
            "power_w": draw(st.integers(3, 11)) * 1000 * gpus_per_node // 8,
            "rack_units": draw(st.sampled_from([4, 6, 8])),
            "nic_options": nic_options,
            "max_compute_nics": draw(st.sampled_from([1, 2, 4, 8])),
        })
    return servers


def _switches(draw, size: Size, interconnects: list[str]) -> list[dict]:
    """Switches of 8 or 16 logical ports, so that a few dozen nodes need 2 or 3 tiers."""
    speeds = sorted({INTERCONNECT_POOL[i]["gbps"] for i in interconnects})
    switches = []
    for i in range(draw(st.integers(1, size.max_switches))):
        cage = draw(st.sampled_from(list(SWITCH_CAGES)))
        radix = draw(st.sampled_from([8, 16]))
        switch_speeds = _subset(draw, speeds, 1, 2)
        protocols = draw(st.sampled_from([["ib"], ["ethernet"], ["ethernet", "ib"]]))
        if i == 0 and not one_in(draw, 5):
            # Usually the first switch serves the first interconnect.
            first = INTERCONNECT_POOL[interconnects[0]]
            protocols = sorted({*protocols, "ib" if first["protocol"] == "ib" else "ethernet"})
            switch_speeds = sorted({*switch_speeds, first["gbps"]})
        switches.append({
            "id": f"sw{i}", "name": f"Switch {i}", "source": SRC, "protocols": protocols,
            "cages": radix // SWITCH_CAGES[cage], "cage_form_factor": cage,
            "ports_per_cage": {str(g): SWITCH_CAGES[cage] for g in switch_speeds},
            "power_w": draw(st.sampled_from([300, 600, 1200])), "rack_units": 1,
        })
    return switches


def _cables(draw, size: Size, interconnects: list[str], nics: list[dict], switches: list[dict]) -> list[dict]:
    """Parts whose a-end fits a switch cage and whose b-end fits a NIC (node–leaf) or a switch
    (switch–switch); speed, reach and media vary. Usually cable 0 joins switch 0 to NIC 0 and
    cable 1 joins switch 0 to itself at the first interconnect's speed."""
    speeds = sorted({INTERCONNECT_POOL[i]["gbps"] for i in interconnects})
    nic_cages = sorted({n["port_form_factor"] for n in nics})
    switch_cages = sorted({s["cage_form_factor"] for s in switches})
    cables = []
    for i in range(draw(st.integers(2, size.max_cables))):
        planned = i < 2 and not one_in(draw, 5)
        a_ff = switches[0]["cage_form_factor"] if planned else draw(st.sampled_from(switch_cages))
        node_end = (i == 0) if planned else draw(st.booleans())
        if node_end:
            b_ff = nics[0]["port_form_factor"] if planned else draw(st.sampled_from(nic_cages))
            b_ports = 1
        else:
            b_ff = a_ff if planned else draw(st.sampled_from(switch_cages))
            b_ports = SWITCH_CAGES[b_ff]
        links = SWITCH_CAGES[a_ff]
        media = draw(st.sampled_from(["mmf", "smf"] if planned else list(MEDIA_REACH_M)))
        gbps = INTERCONNECT_POOL[interconnects[0]]["gbps"] if planned else draw(st.sampled_from(speeds))
        cables.append({
            "id": f"cab{i}", "name": f"Cable {i}", "source": SRC, "media": media,
            "gbps": gbps, "links": links, "a_form_factor": a_ff, "a_ends": 1,
            "b_form_factor": b_ff, "b_ends": max(1, links // b_ports),
            "max_reach_m": draw(st.sampled_from(MEDIA_REACH_M[media])),
            "power_w_per_a_end": MEDIA_END_W[media], "power_w_per_b_end": MEDIA_END_W[media],
        })
    return cables


STORAGE_PORTS = {"network_ports": 2, "port_speeds_gbps": [100], "port_form_factor": "qsfp28",
                 "protocols": ["ethernet"]}
STORAGE_POOL = [
    {"id": "nvme", "name": "NVMe array", "source": SRC, "kind": "nvme_of", "capacity_tb": 500,
     "read_gb_per_s": 50, "write_gb_per_s": 30, "latency_class": "low", "power_w": 2000, "rack_units": 2,
     **STORAGE_PORTS},
    {"id": "obj", "name": "Object node", "source": SRC, "kind": "object", "capacity_tb": 1000,
     "read_gb_per_s": 5, "write_gb_per_s": 3, "latency_class": "high", "power_w": 800, "rack_units": 2,
     **STORAGE_PORTS},
]

# The storage and management networks' kit: a 100G Ethernet storage NIC, switch and part, a
# management switch and its RJ45 cords. Drawn catalogs vary the storage NIC's ports, the servers'
# storage slots (none: converged only, where the compute speed allows) and the storage switch's radix.
STORAGE_INTERCONNECT = {"id": "tcp100", "name": "TCP100", "source": SRC, "protocol": "tcp", "gbps": 100,
                        "bus_efficiency": 0.35, "latency_us": 30.0}


def network_kit(storage_nic_ports: int = 2, storage_switch_ports: int = 32) -> dict:
    """Catalog additions (by kind) for the storage and management networks."""
    utp = {"media": "utp", "a_form_factor": "rj45", "b_form_factor": "rj45", "max_reach_m": 100,
           "power_w_per_a_end": 0, "power_w_per_b_end": 0}
    return {
        "nics": [{"id": "snic0", "name": "Storage NIC", "source": SRC, "port_form_factor": "qsfp28",
                  "ports": storage_nic_ports, "interconnects": ["tcp100"], "power_w": 15}],
        "interconnects": [STORAGE_INTERCONNECT],
        "switches": [
            {"id": "ssw0", "name": "Storage switch", "source": SRC, "protocols": ["ethernet"],
             "cages": storage_switch_ports, "cage_form_factor": "qsfp28", "ports_per_cage": {"100": 1},
             "power_w": 300, "rack_units": 1},
            {"id": "msw0", "name": "Management switch", "source": SRC, "protocols": ["ethernet"], "cages": 48,
             "cage_form_factor": "rj45", "ports_per_cage": {"1": 1, "10": 1}, "power_w": 100, "rack_units": 1,
             "role": "management"},
        ],
        "cables": [
            {"id": "scab0", "name": "100G SR4 kit", "source": SRC, "media": "mmf", "gbps": 100,
             "a_form_factor": "qsfp28", "b_form_factor": "qsfp28", "max_reach_m": 100,
             "power_w_per_a_end": 3.5, "power_w_per_b_end": 3.5},
            {"id": "cat6", "name": "Cat6 cord", "source": SRC, "gbps": 1, **utp},
            {"id": "cat6a", "name": "Cat6a cord", "source": SRC, "gbps": 10, **utp},
        ],
    }


NETWORK_PRICES = {"snic0": 800, "ssw0": 15_000, "msw0": 2_000, "scab0": 600, "cat6": 5, "cat6a": 10}


def with_networks(add: dict, prices: dict, storage_nics: int = 1, **kit) -> None:
    """Add the network kit to a catalog in place: its items and prices, storage NIC slots on
    servers that name none, data ports on storage tiers that have none."""
    for kind, items in network_kit(**kit).items():
        add.setdefault(kind, []).extend(items)
    for item_id, price in NETWORK_PRICES.items():
        prices.setdefault(item_id, price)
    for server in add.get("servers", []):
        if "storage_nic_options" not in server and "builtin_storage_nics" not in server:
            server.update(storage_nic_options=["snic0"] if storage_nics else [], max_storage_nics=storage_nics)
    for tier in add.get("storage", []):
        for field, value in STORAGE_PORTS.items():
            tier.setdefault(field, value)
# Price ranges per kind: (low, high, unit) -> a price of low..high units.
PRICE_RANGES = {"servers": (60, 400, 1000), "nics": (1, 3, 500), "switches": (2, 40, 1000), "cables": (1, 30, 100),
                "racks": (0, 8, 1000), "storage": (2, 20, 10_000)}


@st.composite
def catalogs(draw, size: Size = DEFAULT, all_priced: bool = False) -> tuple[dict, dict]:
    """``(catalog.add, prices)``: a tiny consistent catalog and a price for (almost) every item."""
    interconnects = _subset(draw, list(INTERCONNECT_POOL), 1, size.max_interconnects)
    nics = _nics(draw, size, interconnects)
    gpu_ids = _subset(draw, list(GPU_POOL), 1, 2)
    switches = _switches(draw, size, interconnects)
    add = {
        "gpus": [{"id": g, "name": g.upper(), "source": SRC, "vendor": "nvidia", "matmul_efficiency_source": SRC,
                  **GPU_POOL[g]} for g in gpu_ids],
        "servers": _servers(draw, size, gpu_ids, nics),
        "nics": nics,
        "interconnects": interconnects_of(interconnects),
        "switches": switches,
        "cables": _cables(draw, size, interconnects, nics, switches),
        "racks": [{"id": f"rk{i}", "name": f"Rack {i}", "source": SRC,
                   "power_kw": draw(st.sampled_from([12, 20, 30, 40, 60])),
                   "rack_units": draw(st.sampled_from([42, 48])), "cooling": "air"}
                  for i in range(draw(st.integers(1, size.max_racks)))],
        "storage": copy.deepcopy(_subset(draw, STORAGE_POOL, 1, size.max_storage)),
    }
    prices = {}
    for kind, (low, high, unit) in PRICE_RANGES.items():
        for entry in add[kind]:
            prices[entry["id"]] = draw(st.integers(low, high)) * unit
    # Now and then the servers have no storage slot: only a converged network can reach storage.
    with_networks(add, prices, storage_nics=0 if one_in(draw, 10) else draw(st.sampled_from([1, 2])),
                  storage_nic_ports=draw(st.sampled_from([2, 1])), storage_switch_ports=draw(st.sampled_from([32, 16])))
    # Now and then an item has no price (priced_in_book).
    if not all_priced and one_in(draw, 15):
        prices.pop(draw(st.sampled_from(sorted(prices))))
    return add, prices


def interconnects_of(ids: list[str]) -> list[dict]:
    return [{"id": i, "name": i.upper(), "source": SRC, **INTERCONNECT_POOL[i]} for i in ids]


def ids_of(add: dict, kind: str) -> list[str]:
    return [entry["id"] for entry in add[kind]]


@st.composite
def pins_and_lists(draw, add: dict) -> dict:
    """Constraints: sometimes pins (mostly to catalog ids), deny lists and an oversubscription cap."""
    pins: dict = {}
    optional = {
        "server": st.sampled_from(ids_of(add, "servers")),
        "nodes": st.sampled_from([1, 2, 4, 9, 12, 17, 24, 33, 40]),
        "tiers": st.integers(1, 3),
        "nics_per_node": st.sampled_from([1, 2, 4, 8]),
        "leaf_switch": st.sampled_from(ids_of(add, "switches")),
        "rack_class": st.sampled_from(ids_of(add, "racks")),
        "storage": st.sampled_from(ids_of(add, "storage")),
        "interconnect": st.sampled_from(ids_of(add, "interconnects")),
        "gpu": st.sampled_from(ids_of(add, "gpus")),
        "storage_network": st.sampled_from(["dedicated", "converged"]),
    }
    for key, values in optional.items():
        if one_in(draw, 20):
            pins[key] = draw(values)
    constraints: dict = {"max_oversubscription": draw(st.sampled_from([1, 1, 2, 3]))}
    if pins:
        constraints["pins"] = pins
    for kind in ("servers", "switches", "cables", "storage"):
        if len(add[kind]) > 1 and one_in(draw, 8):
            constraints[kind] = {"deny": [draw(st.sampled_from(ids_of(add, kind)))]}
    return constraints


@st.composite
def instance_data(draw, size: Size = DEFAULT, objective: str | None = None, loose: bool = False) -> dict:
    """An instance as the dict its file holds, with its own tiny catalog.

    ``loose`` leaves out what makes most instances infeasible — pins, deny lists, missing prices,
    power caps, small budgets and few racks — for properties that need a design to start from.
    """
    add, prices = draw(catalogs(size, all_priced=loose))
    objective = objective or draw(st.sampled_from(["min_cost", "min_cost", "min_cost", "min_time"]))
    deadline = draw(st.sampled_from([None, 0.1, 0.25, 0.5, 1, 2, 5, 30]))
    goal = {"objective": objective}
    if deadline is not None and objective == "min_cost":
        goal["deadline_days"] = deadline
    # The first step is the simplest draw (and where shrinking goes): a budget most designs fit in.
    budget_steps = [b for b in (2_000_000, 300_000, 500_000, 1_000_000, 3_000_000, 6_000_000, 10_000_000, 20_000_000)
                    if b <= size.max_budget]
    site = {"max_racks": draw(st.integers(10 if loose else 1, 30)),
            "distances": {"in_row_m": draw(st.sampled_from([1, 3, 15, 28, 48])),
                          "across_rows_m": draw(st.sampled_from([20, 48, 48, 98])),
                          "slack_m": draw(st.sampled_from([0, 2]))}}
    if not loose and one_in(draw, 5):
        site["power_cap_kw"] = draw(st.sampled_from([40, 100, 300, 1000]))
    if not loose and len(add["racks"]) > 1 and one_in(draw, 5):
        site["rack_classes"] = [draw(st.sampled_from(ids_of(add, "racks")))]
    constraints = {"max_oversubscription": draw(st.sampled_from([1, 3]))} if loose else draw(pins_and_lists(add))
    budget = size.max_budget if loose else draw(st.sampled_from(budget_steps))
    if one_in(draw, 4):
        # A cluster pinned past one switch's ports, so that 2- and 3-tier fabrics are common.
        constraints.setdefault("pins", {})["nodes"] = draw(st.sampled_from([9, 12, 17, 24, 33, 40, 48, 64]))
        budget = size.max_budget
        goal.pop("deadline_days", None)
    data = {"dataset_tb": draw(st.sampled_from([0, 0, 100, 2000]))}
    if not loose and one_in(draw, 12):
        data["small_files"] = True
    return {
        "name": "property",
        "workload": {
            "model": MODELS[draw(st.sampled_from(list(MODELS)))],
            "training": {"tokens": draw(st.sampled_from([5e9, 2e10, 5e10])), "sequence_length": 4096,
                         "global_batch_sequences": 512},
            "data": data,
            "checkpoint": {"max_save_time_s": draw(st.sampled_from([120, 120, 10]))},
        },
        "goal": goal,
        "budget": {"basis": "capex", "currency": "USD", "max": budget},
        "site": site,
        "catalog": {"builtin": False, "price_book": "usd-capex", "add": add, "prices": prices},
        "constraints": constraints,
    }


@st.composite
def placed(draw, instances: st.SearchStrategy) -> dict:
    """An instance of ``instances`` with, now and then, a row size (racks of one model each in one
    row run their switch links along it), a liquid-cooled server beside a liquid rack class (its
    nodes need that class, the air-cooled switches another: docs/model.md, "Racks and power") and a
    head-node model, with or without ``site.head_nodes`` (docs/model.md, "Control plane")."""
    data = copy.deepcopy(draw(instances))
    if one_in(draw, 3):
        data["site"]["distances"]["racks_per_row"] = draw(st.sampled_from([2, 4, 12]))
    if one_in(draw, 4):
        add = data["catalog"]["add"]
        add["servers"][draw(st.integers(0, len(add["servers"]) - 1))]["cooling"] = "liquid"
        add["racks"].append({"id": "rk-liquid", "name": "Liquid rack", "source": SRC, "rack_units": 48,
                             "power_kw": draw(st.sampled_from([40, 80])), "cooling": "liquid"})
        data["catalog"]["prices"]["rk-liquid"] = draw(st.sampled_from([4_000, 9_000]))
        if data["site"].get("rack_classes"):
            data["site"]["rack_classes"].append("rk-liquid")
    if one_in(draw, 3):
        data["catalog"]["add"]["control"] = [{"id": "hd", "name": "Head node", "source": SRC,
                                              "power_w": draw(st.sampled_from([600, 1100])),
                                              "rack_units": draw(st.sampled_from([1, 2]))}]
        data["catalog"]["prices"]["hd"] = draw(st.sampled_from([5_000, 20_000]))
        if one_in(draw, 2):
            data["site"]["head_nodes"] = draw(st.sampled_from([0, 1, 3]))
    return data


def build(data: dict) -> Instance:
    return Instance.model_validate(copy.deepcopy(data))


# -- edits -----------------------------------------------------------------------------------------
def edited(data: dict, path: str, value) -> dict:
    """A deep copy of ``data`` with the dotted ``path`` set to ``value`` (None removes it)."""
    out = copy.deepcopy(data)
    *parents, leaf = path.split(".")
    node = out
    for key in parents:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(leaf, None)
    else:
        node[leaf] = value
    return out


def renamed(data: dict, mapping: dict[str, str]) -> dict:
    """The instance with every catalog id renamed through ``mapping`` wherever it appears: the items,
    their references to each other, prices, pins, allow/deny lists and rack classes."""
    out = copy.deepcopy(data)

    def r(item_id):
        return mapping.get(item_id, item_id)

    add = out["catalog"]["add"]
    for kind in KINDS:
        for entry in add.get(kind, []):
            entry["id"] = r(entry["id"])
    for server in add.get("servers", []):
        server["gpu"] = r(server["gpu"])
        server["nic_options"] = [r(n) for n in server["nic_options"]]
        server["storage_nic_options"] = [r(n) for n in server.get("storage_nic_options", [])]
        for builtin in ("builtin_compute_nics", "builtin_storage_nics"):
            if builtin in server:
                server[builtin]["nic"] = r(server[builtin]["nic"])
    for nic in add.get("nics", []):
        nic["interconnects"] = [r(i) for i in nic["interconnects"]]
    out["catalog"]["prices"] = {r(k): v for k, v in out["catalog"]["prices"].items()}
    constraints = out.get("constraints", {})
    for key, value in list(constraints.get("pins", {}).items()):
        if isinstance(value, str):
            constraints["pins"][key] = r(value)
    for kind in ("gpus", "servers", "interconnects", "switches", "cables", "storage", "storage_nics"):
        rule = constraints.get(kind)
        if rule:
            rule["deny"] = [r(x) for x in rule.get("deny", [])]
            if rule.get("allow") is not None:
                rule["allow"] = [r(x) for x in rule["allow"]]
    if out["site"].get("rack_classes"):
        out["site"]["rack_classes"] = [r(x) for x in out["site"]["rack_classes"]]
    return out


def reordered(data: dict) -> dict:
    """The instance with every catalog list (and each server's NIC options) in reverse order."""
    out = copy.deepcopy(data)
    add = out["catalog"]["add"]
    for kind in KINDS:
        add[kind] = list(reversed(add.get(kind, [])))
    for server in add["servers"]:
        server["nic_options"] = list(reversed(server["nic_options"]))
        server["storage_nic_options"] = list(reversed(server.get("storage_nic_options", [])))
    for nic in add["nics"]:
        nic["interconnects"] = list(reversed(nic["interconnects"]))
    return out


def id_mapping(data: dict) -> dict[str, str]:
    """A consistent renaming of every catalog id (reversed spelling keeps ids unique and valid)."""
    add = data["catalog"]["add"]
    return {entry["id"]: f"x{entry['id'][::-1]}" for kind in KINDS for entry in add.get(kind, [])}


@st.composite
def extra_options(draw, data: dict) -> tuple[str, dict, int]:
    """One more catalog option for ``data`` — a server, switch, rack class, storage tier or cable —
    as ``(kind, item, price)``. An extra cable draws no power at its ends: provisioned power fills
    every cage with the hungriest module that fits, so a hungrier cable would change every
    design's power, not only add a choice."""
    add = data["catalog"]["add"]
    base, prices = draw(catalogs(Size(max_servers=1, max_nics=1, max_switches=1, max_cables=2, max_racks=1,
                                      max_storage=1)))
    kind = draw(st.sampled_from(["servers", "switches", "racks", "storage", "cables"]))
    # Compute-fabric switches and cables only: the network kit is in every catalog already.
    pool = [i for i in base[kind] if i.get("cage_form_factor", i.get("a_form_factor")) in (*SWITCH_CAGES, None)]
    item = copy.deepcopy(draw(st.sampled_from(pool)))
    price = prices.get(item["id"], 1_000)
    item["id"] = f"new-{item['id']}"
    if kind == "servers":
        item["gpu"] = draw(st.sampled_from(ids_of(add, "gpus")))
        item["nic_options"] = _subset(draw, ids_of(add, "nics"), 1, 2)
    elif kind == "switches":
        speeds = sorted({i["gbps"] for i in add["interconnects"]})
        per_cage = SWITCH_CAGES[item["cage_form_factor"]]
        item["ports_per_cage"] = {str(g): per_cage for g in _subset(draw, speeds, 1, 2)}
    elif kind == "cables":
        cages = sorted({s["cage_form_factor"] for s in add["switches"]} & set(SWITCH_CAGES))
        item["a_form_factor"] = draw(st.sampled_from(cages))
        item["links"] = SWITCH_CAGES[item["a_form_factor"]]
        b_ff = draw(st.sampled_from(cages + sorted({n["port_form_factor"] for n in add["nics"]})))
        item["b_form_factor"] = b_ff
        item["b_ends"] = max(1, item["links"] // SWITCH_CAGES.get(b_ff, 1))
        item["gbps"] = draw(st.sampled_from(sorted({i["gbps"] for i in add["interconnects"]})))
        item["power_w_per_a_end"] = item["power_w_per_b_end"] = 0.0
    elif kind == "storage":
        item["id"] = f"new-{draw(st.sampled_from(['fast', 'bulk']))}"
    return kind, item, price


def with_option(data: dict, kind: str, item: dict, price: int) -> dict:
    out = copy.deepcopy(data)
    out["catalog"]["add"][kind].append(item)
    out["catalog"]["prices"][item["id"]] = price
    return out


# -- vendor copies (exact dominance) ---------------------------------------------------------------
COPIED_KINDS = {"servers": ("power_w",), "switches": ("power_w",), "cables": ("power_w_per_a_end", "power_w_per_b_end"),
                "storage": ("power_w",)}
"""The kinds a vendor copies, with their power fields."""
PRICE_FACTORS = (1.0, 0.9, 1.1)
POWER_FACTORS = (1.0, 0.75, 1.25)
"""A copy's price and power: the original's, lower or higher (equal first: shrinking goes there)."""


@st.composite
def vendor_copies(draw, data: dict) -> dict:
    """``data`` with vendor copies of some of its servers (each with its GPU, or a copy of it),
    switches, cables and storage tiers: the same specs under a new id, price and power each equal
    to the original's, lower or higher (a GPU copy's board power too). A copy is listed after its
    original or, now and then, before it (catalog order breaks ties); now and then it is denied or
    has no price, or a copied server is pinned (the copies' violations differ)."""
    out = copy.deepcopy(data)
    add = out["catalog"]["add"]
    constraints = out.setdefault("constraints", {})
    for kind in COPIED_KINDS:
        for original in list(add[kind]):
            copies = draw(st.integers(0, 2))
            for n in range(copies):
                item = _copy(draw, out, kind, original, n)
                position = add[kind].index(original) + (0 if one_in(draw, 4) else 1 + n)
                add[kind].insert(position, item)
            if kind == "servers" and copies and one_in(draw, 4):
                constraints.setdefault("pins", {}).setdefault("server", original["id"])
    return out


def _copy(draw, data: dict, kind: str, original: dict, n: int) -> dict:
    """Vendor copy ``n`` of ``original`` (its price, and a denial, entered in ``data``)."""
    add, prices = data["catalog"]["add"], data["catalog"]["prices"]
    item = dict(copy.deepcopy(original), id=f"{original['id']}-v{n}")
    power = draw(st.sampled_from(POWER_FACTORS))
    item.update({field: original[field] * power for field in COPIED_KINDS[kind]})
    if kind == "servers" and draw(st.booleans()):
        item["gpu"] = _gpu_copy(draw, add, item["gpu"], n)
    if original["id"] in prices and not one_in(draw, 12):
        prices[item["id"]] = round(prices[original["id"]] * draw(st.sampled_from(PRICE_FACTORS)))
    if one_in(draw, 5):
        data["constraints"].setdefault(kind, {}).setdefault("deny", []).append(item["id"])
    return item


def _gpu_copy(draw, add: dict, gpu_id: str, n: int) -> str:
    """The id of a copy of GPU ``gpu_id`` (its board power perhaps another), added to ``add``."""
    original = next(g for g in add["gpus"] if g["id"] == gpu_id)
    gpu = dict(copy.deepcopy(original), id=f"{gpu_id}-v{n}", tdp_w=original["tdp_w"] * draw(st.sampled_from(POWER_FACTORS)))
    if all(g["id"] != gpu["id"] for g in add["gpus"]):
        add["gpus"].append(gpu)
    return gpu["id"]
