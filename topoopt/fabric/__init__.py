"""Design → concrete installation: devices, ports, links, racks, exports and drawings.

Nothing here knows CP-SAT: the installation is generated deterministically from the design's
counts — its three networks: the compute fabric, the storage network (dedicated storage NICs and
switches, or converged on the compute fabric) and the management network.

* :func:`fabric_graph` — the installation as a networkx MultiGraph;
* :func:`render` — every output file (BOM, cable schedule, rack plan, GraphML, Slurm topology,
  NetBox CSVs, DOT/SVG drawing) of a solved design.
"""

from __future__ import annotations

from pathlib import Path

from topoopt.fabric.build import Fabric, build_fabric
from topoopt.fabric.export import Outputs, write_outputs
from topoopt.fabric.graph import fabric_graph, graph_of
from topoopt.fabric.hardware import FabricError
from topoopt.fabric.output_set import OutputError
from topoopt.fabric.publish import publish_outputs
from topoopt.models.catalog import Catalog
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance


def render(result: SolveResult, instance: Instance | None = None, out_dir: str | Path = "out", *,
           png: bool = False, catalog: Catalog | None = None) -> Outputs:
    """Write every output of ``result``'s design as one output set in ``out_dir``; return the
    files and warnings.

    The set is published atomically with a ``manifest.json`` of every file's hash (see
    :mod:`topoopt.fabric.output_set`): ``out_dir`` must be missing, empty or an earlier output
    set, else :class:`OutputError`. The SVG (and PNG with ``png=True``) needs Graphviz's ``dot``; without it the DOT file is kept
    and a warning returned. Raises :class:`FabricError` when there is no design or it cannot be
    built from the catalog.

    Examples
    --------
    >>> import topoopt
    >>> outputs = topoopt.render(result, instance, "out/demo")  # doctest: +SKIP
    >>> [p.name for p in outputs.files][:3]  # doctest: +SKIP
    ['bom.csv', 'cables.csv', 'racks.csv']
    """
    return publish_outputs(result, instance, out_dir, design_json=False, png=png, catalog=catalog)


__all__ = ["Fabric", "FabricError", "OutputError", "Outputs", "build_fabric", "fabric_graph", "graph_of", "publish_outputs", "render",
           "write_outputs"]
