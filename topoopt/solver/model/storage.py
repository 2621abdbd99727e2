"""The storage families: bandwidth, capacity and latency of the hot tier, and the cold tier."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.integers import thousandths, thousandths_up


def storage_bandwidth_met(dm: DesignModel) -> None:
    """units × read ≥ data-loading need at the throughput target; units × write ≥ checkpoint need."""
    needs = dm.problem.storage_needs(dm.target or 0.0)
    for s in dm.options.storage:
        lit = dm.vars.use_storage[s.index]
        for need, per_unit in ((needs.read_gb_per_s, s.tier.read_gb_per_s), (needs.write_gb_per_s, s.tier.write_gb_per_s)):
            dm.add("storage_bandwidth_met",
                   dm.model.add(thousandths(per_unit) * dm.vars.storage_units >= thousandths_up(need)), lit)


def storage_capacity_met(dm: DesignModel) -> None:
    need_gb = thousandths_up(dm.problem.storage_needs(dm.target or 0.0).capacity_tb)
    for s in dm.options.storage:
        dm.add("storage_capacity_met",
               dm.model.add(thousandths(s.tier.capacity_tb) * dm.vars.storage_units >= need_gb), dm.vars.use_storage[s.index])


def storage_latency_ok(dm: DesignModel) -> None:
    dm.forbid_violations("storage_latency_ok")


def cold_storage_met(dm: DesignModel) -> None:
    """Cold units × capacity ≥ archived data + archived checkpoints; cold units × write rate ≥ one
    checkpoint per interval. Nothing archived: no cold tier; something archived: a cold tier."""
    m, n, o = dm.model, dm.net, dm.options
    family = "cold_storage_met"
    dm.forbid_violations(family)
    needs = dm.problem.storage_needs(0.0)
    capacity, write = thousandths_up(needs.cold_capacity_tb), thousandths_up(needs.cold_write_gb_per_s)
    for c in o.cold:
        if c.tier is None:
            continue
        lit = n.use_cold[c.index]
        dm.add(family, m.add(thousandths(c.tier.capacity_tb) * n.cold_units >= capacity), lit)
        dm.add(family, m.add(thousandths(c.tier.write_gb_per_s) * n.cold_units >= write), lit)
