"""Small self-contained instances (their own tiny catalogs) for solver tests."""

from __future__ import annotations

import copy

from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance
from topoopt.solver import solve

SRC = "estimate: test fixture"

TINY_CATALOG = {
    "gpus": [
        {"id": "g80", "name": "G80", "source": SRC, "vendor": "nvidia", "memory_gb": 80,
         "memory_bandwidth_gb_per_s": 3350, "dense_tflops": {"bf16": 989, "fp16": 989, "fp8": 1979},
         "matmul_efficiency": 0.8, "matmul_efficiency_source": SRC, "tdp_w": 700,
         "scale_up_gb_per_s": 450, "scale_up_domain_gpus": 8},
        {"id": "g40", "name": "G40", "source": SRC, "vendor": "nvidia", "memory_gb": 40,
         "memory_bandwidth_gb_per_s": 1555, "dense_tflops": {"bf16": 312, "fp16": 312},
         "matmul_efficiency": 0.87, "matmul_efficiency_source": SRC, "tdp_w": 400,
         "scale_up_gb_per_s": 300, "scale_up_domain_gpus": 8},
    ],
    "servers": [
        {"id": "s80", "name": "S80", "source": SRC, "gpu": "g80", "gpus_per_node": 8, "power_w": 10200,
         "rack_units": 8, "nic_options": ["nic400"], "max_compute_nics": 8,
         "storage_nic_options": ["snic100"], "max_storage_nics": 2},
        {"id": "s40", "name": "S40", "source": SRC, "gpu": "g40", "gpus_per_node": 8, "power_w": 6500,
         "rack_units": 6, "nic_options": ["nic400"], "max_compute_nics": 8,
         "storage_nic_options": ["snic100"], "max_storage_nics": 2},
    ],
    "nics": [
        {"id": "nic400", "name": "NIC", "source": SRC, "port_form_factor": "osfp-flat",
         "interconnects": ["ib400"], "power_w": 25},
        {"id": "snic100", "name": "Storage NIC 2x100G", "source": SRC, "port_form_factor": "qsfp28", "ports": 2,
         "interconnects": ["eth100"], "power_w": 15},
    ],
    "interconnects": [
        {"id": "ib400", "name": "IB 400", "source": SRC, "protocol": "ib", "gbps": 400,
         "bus_efficiency": 0.92, "latency_us": 1.5},
        {"id": "eth100", "name": "TCP 100", "source": SRC, "protocol": "tcp", "gbps": 100,
         "bus_efficiency": 0.35, "latency_us": 30},
    ],
    "switches": [
        {"id": "sw64", "name": "SW 64x400", "source": SRC, "protocols": ["ib"], "cages": 32,
         "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 1700, "rack_units": 1},
        {"id": "esw32", "name": "Storage SW 32x100G", "source": SRC, "protocols": ["ethernet"], "cages": 32,
         "cage_form_factor": "qsfp28", "ports_per_cage": {100: 1}, "power_w": 300, "rack_units": 1},
        {"id": "esw256", "name": "Storage SW 256x100G", "source": SRC, "protocols": ["ethernet"], "cages": 256,
         "cage_form_factor": "qsfp28", "ports_per_cage": {100: 1}, "power_w": 2000, "rack_units": 4},
        {"id": "m48", "name": "Mgmt SW 48x1G", "source": SRC, "protocols": ["ethernet"], "cages": 48,
         "cage_form_factor": "rj45", "ports_per_cage": {1: 1, 10: 1}, "power_w": 100, "rack_units": 1,
         "role": "management"},
    ],
    "cables": [
        {"id": "dac3", "name": "DAC 3 m", "source": SRC, "media": "dac", "gbps": 400, "links": 2,
         "a_form_factor": "osfp-twin-finned", "a_ends": 1, "b_form_factor": "osfp-flat", "b_ends": 2,
         "max_reach_m": 3, "power_w_per_a_end": 0.1, "power_w_per_b_end": 0.1},
        {"id": "sr50", "name": "SR4 kit 50 m", "source": SRC, "media": "mmf", "gbps": 400, "links": 2,
         "a_form_factor": "osfp-twin-finned", "a_ends": 1, "b_form_factor": "osfp-flat", "b_ends": 2,
         "max_reach_m": 50, "power_w_per_a_end": 17, "power_w_per_b_end": 9},
        {"id": "sw-sr50", "name": "Twin SR4 kit 50 m", "source": SRC, "media": "mmf", "gbps": 400, "links": 2,
         "a_form_factor": "osfp-twin-finned", "a_ends": 1, "b_form_factor": "osfp-twin-finned", "b_ends": 1,
         "max_reach_m": 50, "power_w_per_a_end": 17, "power_w_per_b_end": 17},
        {"id": "q28-sr100", "name": "100G SR4 kit 100 m", "source": SRC, "media": "mmf", "gbps": 100,
         "a_form_factor": "qsfp28", "b_form_factor": "qsfp28", "max_reach_m": 100,
         "power_w_per_a_end": 3.5, "power_w_per_b_end": 3.5},
        {"id": "cat6", "name": "Cat6 patch cord", "source": SRC, "media": "utp", "gbps": 1,
         "a_form_factor": "rj45", "b_form_factor": "rj45", "max_reach_m": 100,
         "power_w_per_a_end": 0, "power_w_per_b_end": 0},
        {"id": "cat6a", "name": "Cat6a patch cord", "source": SRC, "media": "utp", "gbps": 10,
         "a_form_factor": "rj45", "b_form_factor": "rj45", "max_reach_m": 100,
         "power_w_per_a_end": 0, "power_w_per_b_end": 0},
    ],
    "racks": [
        {"id": "r40", "name": "40 kW rack", "source": SRC, "power_kw": 40, "rack_units": 42, "cooling": "air"},
    ],
    "storage": [
        {"id": "nvme", "name": "NVMe array", "source": SRC, "kind": "nvme_of", "capacity_tb": 500,
         "read_gb_per_s": 50, "write_gb_per_s": 30, "latency_class": "low", "power_w": 2000, "rack_units": 2,
         "network_ports": 4, "port_speeds_gbps": [100], "port_form_factor": "qsfp28", "protocols": ["ethernet"]},
        {"id": "obj", "name": "Object node", "source": SRC, "kind": "object", "capacity_tb": 1000,
         "read_gb_per_s": 5, "write_gb_per_s": 3, "latency_class": "high", "power_w": 800, "rack_units": 2,
         "network_ports": 2, "port_speeds_gbps": [100], "port_form_factor": "qsfp28", "protocols": ["ethernet"]},
    ],
}

TINY_PRICES = {"s80": 300_000, "s40": 150_000, "nic400": 1_500, "sw64": 40_000, "dac3": 300, "sr50": 2_500,
               "sw-sr50": 2_000, "r40": 5_000, "nvme": 200_000, "obj": 30_000, "snic100": 800, "esw32": 15_000, "esw256": 150_000,
               "m48": 2_000, "q28-sr100": 600, "cat6": 5, "cat6a": 10}

TINY = {
    "name": "tiny",
    "workload": {
        "model": {"params_b": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 32,
                  "ffn_hidden_size": 11008, "vocab_size": 32000},
        "training": {"tokens": 2e10, "sequence_length": 4096, "global_batch_sequences": 512},
    },
    "goal": {"objective": "min_cost", "deadline_days": 30},
    "budget": {"basis": "capex", "currency": "USD", "max": 50_000_000},
    "site": {"max_racks": 40},
    "catalog": {"builtin": False, "price_book": "usd-capex", "add": TINY_CATALOG, "prices": TINY_PRICES},
}


def tiny(**changes) -> Instance:
    """The tiny instance with dotted-path changes, e.g. ``tiny(**{"budget.max": 1e6})``."""
    data = copy.deepcopy(TINY)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return Instance.model_validate(data)


def inst(*changes: dict) -> Instance:
    """The tiny instance with the dotted-path changes of each dict applied, later ones winning."""
    merged: dict = {}
    for change in changes:
        merged.update(change)
    return tiny(**merged)


def optimal(instance: Instance) -> SolveResult:
    # explain=False skips the binding-family solves, which these tests do not read.
    result = solve(instance, explain=False)
    assert result.status == "optimal", result.explanation
    assert result.design is not None and result.cost is not None
    assert result.cost.total == result.objective.value
    return result


def infeasible(instance: Instance) -> SolveResult:
    result = solve(instance)
    assert result.status == "infeasible", (result.status, result.design)
    assert result.explanation is not None
    return result


def conflict(result: SolveResult) -> set[str]:
    return {item.family for item in result.explanation.conflict}
