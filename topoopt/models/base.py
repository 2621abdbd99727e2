"""Shared pydantic base: strict, closed, immutable records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import PydanticCustomError, core_schema


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


@dataclass(frozen=True)
class Range:
    """A sane range for a number, refused with its reason: ``Annotated[int, Range(1, 1024, "…")]``.

    ``lo <= value <= hi`` (``value > lo`` with ``lo_open``). The bounds keep every accepted
    instance solvable in bounded time and memory; ``why`` says where the bound comes from and is
    part of the message. The JSON Schema gets ``minimum``/``exclusiveMinimum`` and ``maximum``.
    """

    lo: float
    hi: float
    why: str
    lo_open: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> dict:
        out = handler(schema)
        out["exclusiveMinimum" if self.lo_open else "minimum"] = self.lo
        out["maximum"] = self.hi
        return out

    def check(self, value):
        """``value`` when in range; else a ``number_out_of_range`` error naming the bound and why."""
        below = value <= self.lo if self.lo_open else value < self.lo
        if below or value > self.hi:
            bound = (f"above {self.lo:g}" if self.lo_open else f"at least {self.lo:g}") if below else f"at most {self.hi:g}"
            raise PydanticCustomError("number_out_of_range", "must be {bound} ({why})", {"bound": bound, "why": self.why})
        return value
