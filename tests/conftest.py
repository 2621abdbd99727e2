"""Hypothesis profiles, chosen by the ``HYPOTHESIS_PROFILE`` environment variable.

* ``default`` — quick and reproducible: a fixed number of examples per property, derandomized
  (the same examples on every run, so CI failures reproduce), no per-example deadline (a solve
  takes a varying fraction of a second).
* ``deep`` — thousands of random examples per property (``make test-deep``; the
  ``HYPOTHESIS_DEEP_EXAMPLES`` environment variable changes the base count, default 2000);
  failures are saved in the local example database and replayed first on the next run.

Property tests scale their example counts from the active profile's ``max_examples``.
"""

from __future__ import annotations

import os

import pytest
from example_outputs import share_across_workers
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=20,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep",
    max_examples=int(os.environ.get("HYPOTHESIS_DEEP_EXAMPLES", "2000")),
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session", autouse=True)
def _examples_shared_by_the_workers(tmp_path_factory, pytestconfig):
    """The bundled examples are solved once per run, whichever worker asks first (example_outputs.py)."""
    share_across_workers(tmp_path_factory.getbasetemp(), hasattr(pytestconfig, "workerinput"))
