"""A result's files as one atomically published output set (:func:`publish_outputs`)."""

from __future__ import annotations

from pathlib import Path

from topoopt.fabric.export import Outputs, write_outputs
from topoopt.fabric.output_set import MANIFEST, write_output_set
from topoopt.models.catalog import Catalog
from topoopt.models.design import SolveResult
from topoopt.models.instance import Instance

DESIGN_JSON = "design.json"


def publish_outputs(result: SolveResult, instance: Instance | None, out_dir: str | Path, *, design_json: bool,
                    png: bool = False, catalog: Catalog | None = None, dot_timeout_s: float = 60.0) -> Outputs:
    """Write ``result``'s output set and publish it as ``out_dir`` (see
    :mod:`topoopt.fabric.output_set`): ``design.json`` when ``design_json``, every export of
    :func:`~topoopt.fabric.export.write_outputs` when the result has a design, ``manifest.json``
    last. The returned paths are the published ones.

    Raises :class:`~topoopt.fabric.output_set.OutputError` for an unusable ``out_dir`` and
    :class:`~topoopt.fabric.hardware.FabricError` for a design that cannot be built; either way
    ``out_dir`` is left as it was.
    """
    def fill(staging: Path) -> Outputs:
        outputs = Outputs()
        if design_json:
            path = staging / DESIGN_JSON
            path.write_text(result.model_dump_json(indent=2, by_alias=True) + "\n", encoding="utf-8")
            outputs.files.append(path)
        if result.design is not None or not design_json:
            written = write_outputs(result, instance, staging, png=png, catalog=catalog, dot_timeout_s=dot_timeout_s)
            outputs.files += written.files
            outputs.warnings += written.warnings
        outputs.files = [Path(path.relative_to(staging)) for path in outputs.files] + [Path(MANIFEST)]
        return outputs

    outputs = write_output_set(out_dir, fill)
    target = Path(out_dir)
    outputs.files = [target / relative for relative in outputs.files]
    return outputs
