"""Tests that run a real consumer program (Slurm, ibutils) skip where it is missing — with the
reason — or fail when ``TOPOOPT_REQUIRE_CONSUMERS`` is set: CI sets it after installing them, so
a CI machine without them fails rather than skipping."""

from __future__ import annotations

import os

import pytest

REQUIRE = "TOPOOPT_REQUIRE_CONSUMERS"


def require(reason: str | None) -> None:
    """Skip with ``reason`` (or fail under ``TOPOOPT_REQUIRE_CONSUMERS``); nothing when ``reason`` is None."""
    if reason is None:
        return
    if os.environ.get(REQUIRE):
        pytest.fail(f"{REQUIRE} is set but {reason}")
    pytest.skip(reason)
