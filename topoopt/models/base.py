"""Shared pydantic base: strict, closed, immutable records."""

from __future__ import annotations

from pydantic import BaseModel, BeforeValidator, ConfigDict


class Record(BaseModel):
    """Base for every topoopt record.

    ``extra="forbid"`` turns typos into located errors, ``strict=True`` stops YAML's
    ``yes``/``"3"`` from being coerced into numbers, ``frozen=True`` makes records hashable
    and safe to share between the solver, the checker and the fabric builder.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


def _not_a_boolean(value):
    """Integer literals (``Literal[1, 2, 3]``) accept True and False, which equal 1 and 0, even in
    strict mode; YAML's ``true`` is not a tier count or a ZeRO stage."""
    if isinstance(value, bool):
        raise ValueError("expected an integer, not a boolean")
    return value


NoBoolean = BeforeValidator(_not_a_boolean)
"""Annotate integer ``Literal`` fields with it: ``Annotated[Literal[0, 1], NoBoolean]``."""
