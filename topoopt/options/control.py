"""The control plane: the head nodes every cluster buys (docs/model.md, "Control plane").

A rule of the instance, not a choice: ``site.head_nodes`` servers of the catalog's least-priced
head model (at whole-unit prices; ties: least power, fewest rack units, then id) among those some
rack class the site allows cools and holds; unset, 2 for a cluster of more than one node and
none for a single node, which manages itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.models.catalog import ControlNode
from topoopt.options.conventions import whole_units
from topoopt.options.racks import per_rack, rack_cools

HEAD_NODES_DEFAULT = 2
"""The pair of head nodes the DGX BasePOD and SuperPOD reference architectures run their cluster
manager on in HA ("Two nodes are used as the head nodes for Base Command Manager")."""


@dataclass(frozen=True)
class HeadRule:
    """The head nodes a design buys: ``count`` of ``model``, or none for a single node when
    ``clusters_only`` (the count was not given)."""

    model: ControlNode
    count: int
    clusters_only: bool


def head_nodes(resolved, instance) -> HeadRule | None:
    """The instance's head-node rule; None when no design has head nodes."""
    allowed = instance.site.rack_classes
    racks = [r for r in resolved.catalog.racks if allowed is None or r.id in allowed]
    usable = [c for c in resolved.catalog.control if c.role == "head" and resolved.price(c.id) is not None
              and any(rack_cools(r, c.cooling) and per_rack(r, c.power_w, c.rack_units) >= 1 for r in racks)]
    asked = instance.site.head_nodes
    count = HEAD_NODES_DEFAULT if asked is None else asked
    if not usable or count == 0:
        return None
    model = min(usable, key=lambda c: (whole_units(resolved.price(c.id)), c.power_w, c.rack_units, c.id))
    return HeadRule(model, count, clusters_only=asked is None)
