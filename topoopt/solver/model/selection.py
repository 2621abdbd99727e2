"""The selection families: allow and deny lists, prices in the book, pins.

Their per-option halves are stated once in options/rules.py; here each forbids the options it
rules out (when not already dropped by the prefilter) and the rules that combine options."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel


def allowed_by_lists(dm: DesignModel) -> None:
    dm.forbid_violations("allowed_by_lists")


def priced_in_book(dm: DesignModel) -> None:
    """Unpriced options are ruled out; a node whose bought NIC is unpriced may only stand alone."""
    dm.forbid_violations("priced_in_book")
    for c in dm.options.node_configs:
        if c.nic_price is None:
            dm.forbid("priced_in_book", dm.vars.use_config[c.index], dm.vars.use_tier[0].Not())


def pins_respected(dm: DesignModel) -> None:
    dm.forbid_violations("pins_respected")
    nodes = dm.problem.instance.constraints.pins.nodes
    if nodes is not None:
        dm.add("pins_respected", dm.model.add(dm.vars.nodes == nodes))
