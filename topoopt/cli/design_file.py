"""Reading a design file (``design.json`` from ``topoopt solve --out``, or a bare design) for
``check`` and ``render``: bounded and strict, every refusal exit 2 with the reason.

A design file comes from elsewhere as often as an instance does, so it is held to the same kind
of limits: its size (:data:`MAX_DESIGN_BYTES`), its nesting (:data:`MAX_DESIGN_DEPTH`), the
counts in its design (:data:`MAX_DESIGN_COUNT`, so drawing it cannot take unbounded memory),
printable strings, and a ``schema_version`` this topoopt reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from topoopt.cli.common import EXIT_INPUT, err

MAX_DESIGN_BYTES = 10_000_000
"""Largest design file read; the design.json of the 131,072-GPU example is under 20 kB."""

MAX_DESIGN_DEPTH = 32
"""Deepest JSON nesting read; a SolveResult is at most 6 levels deep."""

MAX_DESIGN_COUNT = 10_000_000
"""Largest integer in a design: ten times the ports of a million-node cluster's fabric."""


def read_design(path: Path):
    """``(design, cost, performance)`` from a serialized SolveResult, or ``(design, None, None)``
    from a bare Design; a file that cannot be used exits 2 with the reason."""
    from pydantic import ValidationError

    from topoopt.models.design import Design, SolveResult

    data, text = _read_json(path)
    if not isinstance(data, dict):
        _fail(f"{path}: expected a JSON object (a SolveResult or a Design)")
    is_result = "status" in data or "design" in data
    _check_version(path, data.get("schema_version") if is_result else None)
    _check_values(path, data.get("design") if is_result else data)
    try:
        if not is_result:
            return Design.model_validate_json(text), None, None
        result = SolveResult.model_validate_json(text)
    except ValidationError as exc:
        kind = "SolveResult" if is_result else "Design"
        lines = [f"{path}: {'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()]
        _fail("\n".join(lines[:20] + [f"{path}: not a valid {kind}"]))
    if result.design is None:
        _fail(f"{path}: the result has no design to check (status {result.status})")
    return result.design, result.cost, result.performance


def _read_json(path: Path):
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_DESIGN_BYTES + 1)
    except IsADirectoryError:
        _fail(f"{path}: is a directory, not a design file")
    except OSError as exc:
        _fail(f"{path}: cannot read: {exc.strerror or exc}")
    if len(raw) > MAX_DESIGN_BYTES:
        _fail(f"{path}: larger than the {MAX_DESIGN_BYTES:,}-byte limit for a design file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})")
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        _fail(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}")
    except RecursionError:
        _fail(f"{path}: JSON nested deeper than {MAX_DESIGN_DEPTH} levels")


def _check_version(path: Path, version) -> None:
    """The same major version, and a minor one no newer than this topoopt's."""
    from topoopt.models.design import SCHEMA_VERSION

    if version is None:
        return
    major, minor = SCHEMA_VERSION.split(".")
    parts = version.split(".") if isinstance(version, str) else []
    known = len(parts) == 2 and parts[0] == major and parts[1].isdigit() and int(parts[1]) <= int(minor)
    if not known:
        _fail(f"{path}: schema_version {version!r} is not one this topoopt reads ({major}.0 to {SCHEMA_VERSION}); "
              f"solve the instance again with this version")


def _check_values(path: Path, design) -> None:
    """Nesting, counts and strings of the design, walked without recursion."""
    from topoopt.safe_yaml import describe_character, first_unprintable

    stack = [((), design)]
    while stack:
        where, value = stack.pop()
        shown = ".".join(map(str, where)) or "<root>"
        if len(where) > MAX_DESIGN_DEPTH:
            _fail(f"{path}: {shown}: JSON nested deeper than {MAX_DESIGN_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((where + (key,), item) for key, item in value.items())
            stack.extend((where + ("<key>",), key) for key in value)
        elif isinstance(value, list):
            stack.extend((where + (index,), item) for index, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_DESIGN_COUNT:
            _fail(f"{path}: design.{shown}: {value:.3g} is beyond any cluster (counts are at most "
                  f"{MAX_DESIGN_COUNT:,})")
        elif isinstance(value, str) and (char := first_unprintable(value)) is not None:
            _fail(f"{path}: design.{shown}: {describe_character(char)} in a string; design strings must be printable")


def _fail(message: str):
    err(message)
    raise typer.Exit(EXIT_INPUT)
