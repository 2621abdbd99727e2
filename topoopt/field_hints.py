"""Hints for schema messages: the field a misspelt key meant (its unit too), and what an empty
section needs. Read from the instance models themselves, so they never go stale."""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any

from pydantic import BaseModel

from topoopt.models.instance import Instance

UNIT_SCALES = {
    "time": {"ms": 1e-3, "s": 1.0, "min": 60.0, "hours": 3600.0, "days": 86400.0},
    "power": {"w": 1.0, "kw": 1e3},
    "bytes": {"gb": 1.0, "tb": 1e3},
}
"""Unit suffixes of field names, and their size in one unit of their kind (exact by definition)."""

_UNIT_KIND = {suffix: kind for kind, scales in UNIT_SCALES.items() for suffix in scales}
_SUFFIX = re.compile(r"^(?P<stem>.+?)_(?P<unit>" + "|".join(sorted(_UNIT_KIND, key=len, reverse=True)) + ")$")


def model_at(path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class of the mapping at ``path`` in an instance (list indices skipped), or None
    when the path leads to something that is not a model.

    >>> model_at(("goal",)).__name__, model_at(("catalog", "add", "servers", 0)).__name__
    ('Goal', 'Server')
    """
    model: type[BaseModel] | None = Instance
    for part in path:
        if isinstance(part, int):
            continue
        fields = _fields(model)
        if part not in fields:
            return None
        model = _model_in(fields[part].annotation)
        if model is None:
            return None
    return model


def unknown_field_hint(parent: tuple[str | int, ...], key: str, value: Any) -> str | None:
    """For an unknown ``key`` in the mapping at ``parent``: the same quantity in another unit
    (``deadline_hours`` -> ``deadline_days``, with the value converted), or the closest field
    names; None when nothing is close.

    >>> unknown_field_hint(("goal",), "deadline_hours", 96)
    "did you mean 'deadline_days'? It is in days (96 hours = 4 days)"
    >>> unknown_field_hint(("budget",), "maxx", 3)
    "did you mean 'max'?"
    """
    model = model_at(parent)
    if model is None:
        return None
    names = list(_fields(model))
    match = _SUFFIX.match(key)
    if match:
        stem, unit = match.group("stem"), match.group("unit")
        for name in names:
            other = _SUFFIX.match(name)
            if other and other.group("stem") == stem and _UNIT_KIND[other.group("unit")] == _UNIT_KIND[unit]:
                target = other.group("unit")
                hint = f"did you mean {name!r}? It is in {target}"
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    scales = UNIT_SCALES[_UNIT_KIND[unit]]
                    hint += f" ({value:g} {unit} = {value * scales[unit] / scales[target]:g} {target})"
                return hint
    close = difflib.get_close_matches(key, names, n=2, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(repr(name) for name in close) + "?"
    return None


def empty_section_hint(path: tuple[str | int, ...]) -> str | None:
    """For a section left empty (``site:`` with nothing under it): the fields it needs.

    >>> empty_section_hint(("site",))
    'the section is empty; it needs max_racks'
    """
    model = model_at(path)
    if model is None:
        return None
    required = [field.alias or name for name, field in model.model_fields.items() if field.is_required()]
    if not required:
        return "the section is empty; remove it or give its fields"
    return "the section is empty; it needs " + ", ".join(required)


def _fields(model: type[BaseModel]) -> dict:
    """Fields by the name an instance file uses (the alias where there is one)."""
    return {field.alias or name: field for name, field in model.model_fields.items()}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model class inside an annotation (through Optional, unions, lists, Annotated)."""
    pending = [annotation]
    while pending:
        current = pending.pop(0)
        if isinstance(current, type) and issubclass(current, BaseModel):
            return current
        origin = typing.get_origin(current)
        if origin is dict:
            continue  # values keyed by id or speed: no field names to suggest
        if origin is not None or isinstance(current, types.UnionType):
            pending.extend(typing.get_args(current))
    return None
