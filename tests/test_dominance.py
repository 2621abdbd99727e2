"""Exact dominance filtering (topoopt/options/dominance.py): dropping dominated options changes no
answer, and the signatures compare every field but the documented ones.

The property solves generated instances with vendor copies (tests/strategies.py
``vendor_copies``: the same specs under new ids, price and power each equal, lower or higher,
some copies listed first, denied or unpriced, some originals pinned) with and without the filter,
and asks for the same status, objective, design, cost, performance and binding families. Its
explicit examples are counterexamples of two broken filters (one blind to power, one to
violations), which ``test_a_broken_filter_is_caught`` shows are caught.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from solver_fixtures import TINY, TINY_CATALOG, TINY_PRICES, tiny
from strategies import build, instance_data, vendor_copies

import topoopt
from topoopt.catalog import load_builtin_catalog
from topoopt.models.instance import Instance
from topoopt.options import dominance
from topoopt.options.dominance import IDENTITY_FIELDS, ITEM_FIELDS_COMPARED_APART, item_signature
from topoopt.options.problem import Problem
from topoopt.solver import search, solved_fields
from topoopt.solver.run import OK, Settings, Stats

ROOT = Path(topoopt.__file__).parent


def answer(instance: Instance, dominance_on: bool) -> dict:
    """What ``solve`` reports of the instance (explanations aside), with or without the filter."""
    found = search(Problem.of(instance, dominance=dominance_on), Settings(), Stats())
    if found.status not in OK:
        return {"status": found.status}
    fields = solved_fields(instance.goal.objective, found)
    return {key: value.model_dump() if hasattr(value, "model_dump") else value for key, value in fields.items()}


def assert_same_answer(instance: Instance) -> None:
    assert answer(instance, True) == answer(instance, False)


def options_dropped(instance: Instance) -> int:
    """How many options of the unfiltered tables the filter drops."""
    def count(on: bool) -> int:
        o = Problem.of(instance, prefilter=frozenset(), dominance=on).options
        tables = [o.node_configs, o.fabrics, *o.parts.values(), o.storage, o.storage_nets, o.cold, o.management]
        return sum(map(len, tables))

    return count(False) - count(True)


# -- the two counterexamples of broken filters ---------------------------------------------------
def _tiny_with(servers: list[dict], prices: dict, **changes) -> dict:
    data = copy.deepcopy(TINY)
    data["catalog"]["add"] = dict(TINY_CATALOG, servers=servers)
    data["catalog"]["prices"] = {**TINY_PRICES, **prices}
    for key, value in changes.items():
        data[key] = value
    return data


S40 = next(s for s in TINY_CATALOG["servers"] if s["id"] == "s40")
LEANER_COPY_LISTED_LATER = _tiny_with([S40, dict(S40, id="s40-lean", power_w=5_000)], {"s40-lean": 150_000})
"""The same price, less power, listed after the original: neither dominates the other, and the tie
on cost goes to the copy's lower power. A filter blind to power drops the copy."""
CHEAPER_COPY_DENIED = _tiny_with([S40, dict(S40, id="s40-cheap")], {"s40-cheap": 140_000},
                                 constraints={"servers": {"deny": ["s40-cheap"]}})
"""A cheaper copy that the deny list rules out: it dominates nothing. A filter blind to violations
drops the original, and the answer with it."""


def power_blind(a: tuple, b: tuple, first: bool) -> bool:
    """A broken :func:`~topoopt.options.dominance.dominates`: rules 2 and 5 without rule 3."""
    (charges_a, _), (charges_b, _) = a, b
    return dominance.at_most(charges_a, charges_b) and (first or dominance.strictly_below(charges_a, charges_b))


def violation_blind(a, b) -> bool:
    """A broken :func:`~topoopt.options.dominance.no_worse`: rule 2 without rule 4."""
    prices, _ = dominance._fields_compared_apart(type(a))
    return dominance.at_most([getattr(a, p) for p in prices], [getattr(b, p) for p in prices])


@settings(max_examples=3 * settings.default.max_examples)
@given(st.booleans().flatmap(lambda loose: instance_data(loose=loose)).flatmap(vendor_copies))
@example(LEANER_COPY_LISTED_LATER)
@example(CHEAPER_COPY_DENIED)
def test_the_filter_changes_no_answer(data):
    instance = build(data)
    event("options dropped" if options_dropped(instance) else "nothing dropped")
    with_filter = answer(instance, True)
    event("feasible" if "design" in with_filter else "infeasible")
    assert with_filter == answer(instance, False)


@pytest.mark.parametrize(("name", "broken", "counterexample"), [
    ("dominates", power_blind, LEANER_COPY_LISTED_LATER),
    ("no_worse", violation_blind, CHEAPER_COPY_DENIED),
])
def test_a_broken_filter_is_caught(name, broken, counterexample, monkeypatch):
    monkeypatch.setattr(dominance, name, broken)
    with pytest.raises(AssertionError):
        assert_same_answer(build(counterexample))


# -- what is dropped ---------------------------------------------------------------------------
def server_ids(instance: Instance) -> set[str]:
    """The servers of the node configurations left, none prefiltered."""
    return {c.server.id for c in Problem.of(instance, prefilter=frozenset()).options.node_configs}


def with_servers(*servers: dict, prices: dict, **changes) -> Instance:
    return tiny(**{"catalog.add.servers": [*TINY_CATALOG["servers"], *servers],
                   "catalog.prices": {**TINY_PRICES, **prices}, **changes})


def test_a_copy_no_cheaper_and_no_leaner_is_dropped_and_one_leaner_is_kept():
    instance = with_servers(dict(S40, id="s40-dear"), dict(S40, id="s40-dear-lean", power_w=6_000),
                            prices={"s40-dear": 160_000, "s40-dear-lean": 160_000})
    assert server_ids(instance) == {"s80", "s40", "s40-dear-lean"}


def test_equal_copies_keep_the_first_in_catalog_order():
    instance = tiny(**{"catalog.add.servers": [dict(S40, id="s40-first"), *TINY_CATALOG["servers"]],
                       "catalog.prices": {**TINY_PRICES, "s40-first": 150_000}})
    assert server_ids(instance) == {"s80", "s40-first"}


def test_a_copy_with_other_specs_or_violations_is_kept():
    instance = with_servers(dict(S40, id="s40-7u", rack_units=7), dict(S40, id="s40-pinned"),
                            prices={"s40-7u": 160_000, "s40-pinned": 160_000},
                            **{"constraints.pins.server": "s40-pinned"})
    # s40 is cheaper than the pinned copy but violates pins_respected, which the copy does not.
    assert server_ids(instance) == {"s80", "s40", "s40-7u", "s40-pinned"}


def test_a_switch_model_is_dropped_from_every_table_or_none():
    """sn5600 has th5-64x800's specs at a higher price and power: gone from the compute fabrics
    and the storage networks, unless a pin keeps it in one of them, which keeps it in both."""
    def switches(instance: Instance, table: str) -> set[str]:
        return {o.switch.id for o in getattr(Problem.of(instance).options, table) if o.switch}

    free = Instance.model_validate({**copy.deepcopy(TINY), "catalog": {"price_book": "usd-capex"}})
    assert "sn5600" not in switches(free, "fabrics") | switches(free, "storage_nets")
    pinned = Instance.model_validate({**copy.deepcopy(TINY), "catalog": {"price_book": "usd-capex"},
                                      "constraints": {"pins": {"leaf_switch": "sn5600"}}})
    assert "sn5600" in switches(pinned, "fabrics") & switches(pinned, "storage_nets")


# -- signatures ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gpus", "servers", "nics", "interconnects", "switches", "cables", "storage"])
def test_a_signature_holds_every_field_but_identity_price_and_power(kind):
    """Any field a catalog type gains is compared unless listed in ITEM_FIELDS_COMPARED_APART."""
    for item in getattr(load_builtin_catalog(), kind):
        apart = next((f for cls, f in ITEM_FIELDS_COMPARED_APART.items() if isinstance(item, cls)), ())
        assert set(json.loads(item_signature(item))) == set(type(item).model_fields) - {*IDENTITY_FIELDS, *apart}


def test_a_gpus_board_power_is_read_nowhere():
    """Signatures leave Gpu.tdp_w out because only the catalog listing shows it (a node's power is
    its server's): code that starts reading it must compare it in options/dominance.py first."""
    readers = [path.relative_to(ROOT) for path in ROOT.rglob("*.py") if "tdp_w" in path.read_text()]
    assert sorted(map(str, readers)) == ["cli/catalog_cmd.py", "models/catalog.py", "options/dominance.py"]
