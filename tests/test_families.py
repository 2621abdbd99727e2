"""The family registry: every constraint family has one record (topoopt/families.py) and, under its
id, a model rule, a checker rule and — unless it is structural, so never in a conflict — a detail
stating the instance values behind its limit. A new family lacking any of them fails here.
"""

from __future__ import annotations

import functools
import re

import pytest
from solver_fixtures import tiny

from topoopt.checker import CHECKER_RULES
from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.solver.explain.detail import DETAILS
from topoopt.solver.model import RULES

IN_CONFLICTS = [family.id for family in FAMILIES.values() if not family.structural]
# The tiny instance with every limit a detail reads set: pins, allow/deny lists, a site power cap,
# small files and archived data (a detail is only asked for when its limit is in a conflict).
WITH_EVERY_LIMIT = tiny(**{
    "constraints.pins.nodes": 2,
    "constraints.servers": {"deny": ["s40"]},
    "site.power_cap_kw": 70,
    "workload.data": {"small_files": True, "archive_tb": 500, "dataset_tb": 20},
})


@pytest.fixture(scope="module")
def problem() -> Problem:
    return Problem.of(WITH_EVERY_LIMIT)


def field(source: str) -> object:
    """The value of a dotted instance field ("workload.data.small_files") on the instance."""
    return functools.reduce(getattr, source.split("."), WITH_EVERY_LIMIT)


def test_every_family_has_one_record_a_model_rule_and_a_checker_rule():
    assert all(family_id == family.id for family_id, family in FAMILIES.items())
    assert list(RULES) == list(FAMILIES)
    assert set(CHECKER_RULES) == set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
def test_a_record_states_its_rule_and_names_an_instance_field(family):
    assert re.fullmatch(r"[a-z]+(_[a-z]+)+", family.id)
    assert family.description[0].isupper() and family.description.endswith(".")
    if family.source:
        field(family.source)  # an instance field
    if family.structural:
        assert not (family.prefilterable or family.source), "a structural family has no limit to relax"


def test_every_family_that_can_be_in_a_conflict_has_a_detail():
    assert list(DETAILS) == IN_CONFLICTS
    assert all(function.__name__ == family for family, function in DETAILS.items())


def yes_or_no_field(family: str) -> str | None:
    """The words of the yes/no instance field a family's limit comes from ("small files"), if any."""
    source = FAMILIES[family].source
    if source and isinstance(field(source), bool):
        return source.split(".")[-1].replace("_", " ")
    return None


@pytest.mark.parametrize("family", IN_CONFLICTS)
def test_a_detail_states_the_instance_values(family, problem):
    """A number, or for a yes/no limit the words of its instance field, set on the instance."""
    text = DETAILS[family](problem, None)
    named = yes_or_no_field(family)
    assert text != FAMILIES[family].description
    assert re.search(r"\d", text) or (named is not None and named in text), text
