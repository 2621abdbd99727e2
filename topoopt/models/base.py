"""Shared pydantic base: strict, closed, immutable records."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base for every topoopt record.

    ``extra="forbid"`` turns typos into located errors, ``strict=True`` stops YAML's
    ``yes``/``"3"`` from being coerced into numbers, ``frozen=True`` makes records hashable
    and safe to share between the solver, the checker and the fabric builder.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)
