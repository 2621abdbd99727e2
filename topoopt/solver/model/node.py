"""The node's families: NICs fit the server, speak the interconnect, and set the link speed."""

from __future__ import annotations

from topoopt.options.networks import server_takes
from topoopt.solver.model.core import DesignModel


def nic_fits_server(dm: DesignModel) -> None:
    """Compute NICs: node configurations are enumerated from each server's NIC options and slots
    (options/tables.py), so a compute NIC that does not fit never becomes a variable. Storage NICs: a
    dedicated network's NICs are the server's built-in ones, or 1 … max_storage_nics of one of its
    storage_nic_options; other (server, storage NIC choice) pairs are ruled out."""
    for server_lit, configs in dm.node_groups(lambda c: c.server.id):
        for choice, lit in dm.storage_nic_choices.items():
            if not server_takes(configs[0].server, choice):
                dm.forbid("nic_fits_server", server_lit, lit)


def link_speed(dm: DesignModel) -> None:
    """The link speed is the interconnect's, which NIC, switch and cable all run (options/tables.py and
    nic_supports_interconnect); the design reports it as ``link_gbps``."""


def nic_supports_interconnect(dm: DesignModel) -> None:
    """The fabric's switches run the node configuration's protocol at its speed."""
    v = dm.vars
    dm.forbid_violations("nic_supports_interconnect")
    for speed, lit in dm.fabric_groups(lambda f: f.speed_key if f.tiers else None, "fabric_speed"):
        if speed in v.use_speed:
            dm.model.add_implication(lit, v.use_speed[speed]).only_enforce_if(dm.assumption["nic_supports_interconnect"])
        else:
            # No node configuration of this model runs that (protocol, speed): a model restricted to
            # some configurations (min_time's per-pair solves) still offers such fabrics.
            dm.forbid("nic_supports_interconnect", lit)
