"""The market a design is priced in: price provenance, items a market does not offer, and the
China-market SKUs (topoopt/catalog, topoopt/models/catalog.py ``Price``).

* Resolution: an entry marked not offered is unpriced unless ``catalog.include_not_offered``.
* The demo re-solved with the CNY rental book chooses only items that book offers, each cost line
  carrying its entry's provenance; with the opt-in it may choose more, never at a higher cost; a
  server pinned to a not-offered SKU is infeasible by ``priced_in_book``, and the explanation says why.
* The China-market SKUs equal their originals in everything but the cut scale-up link.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.models.instance import Instance
from topoopt.safe_yaml import parse_yaml

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "instances" / "llama3-70b-roce-cny.yaml"
CAT = load_builtin_catalog()
RENT = {book.id: book for book in CAT.price_books}["cny-monthly-rent"]


def demo_data() -> dict:
    data, _ = parse_yaml(DEMO.read_bytes(), str(DEMO))
    return data


def demo(**catalog_changes) -> Instance:
    data = demo_data()
    data["catalog"].update(catalog_changes)
    return Instance.model_validate(data)


def demo_with_pins(include_not_offered: bool = False, **pins) -> Instance:
    data = demo_data()
    data["constraints"]["pins"] = pins
    data["catalog"]["include_not_offered"] = include_not_offered
    return Instance.model_validate(data)


@cache
def solved(include_not_offered: bool):
    from topoopt.solver import solve

    return solve(demo(include_not_offered=include_not_offered), explain=False)


# == Resolution =====================================================================================
def test_items_not_offered_are_unpriced_without_the_opt_in() -> None:
    withheld = {item for item, entry in RENT.prices.items() if not entry.offered}
    assert withheld, "the CNY rental book marks the SKUs its market does not rent"
    default = resolve_catalog(demo())
    assert withheld.isdisjoint(default.prices)
    assert set(default.prices) == set(RENT.prices) - withheld
    opted = resolve_catalog(demo(include_not_offered=True))
    assert set(opted.prices) == set(RENT.prices)
    assert all(opted.prices[item] == RENT.prices[item] for item in withheld)


def test_a_price_override_is_an_offered_estimate() -> None:
    server = next(item for item, entry in RENT.prices.items() if not entry.offered)
    resolved = resolve_catalog(demo(prices={server: 1234}))
    entry = resolved.prices[server]
    assert (entry.price, entry.provenance, entry.offered) == (1234, "estimate", True)


# == The demo in the CNY rental market ==============================================================
def test_the_demo_chooses_only_what_the_rental_market_offers() -> None:
    result = solved(False)
    assert result.status == "optimal"
    assert RENT.prices[result.design.server].offered
    for line in result.cost.breakdown:
        entry = RENT.prices[line.item]
        assert entry.offered and line.offered, line.item
        assert (line.provenance, line.source) == (entry.provenance, entry.source), line.item


def test_the_opt_in_never_costs_more_and_flags_what_is_not_offered() -> None:
    default, opted = solved(False), solved(True)
    assert opted.status == "optimal"
    assert opted.cost.total <= default.cost.total
    for line in opted.cost.breakdown:
        assert line.offered == RENT.prices[line.item].offered, line.item


def test_a_pinned_server_the_market_does_not_offer_is_infeasible_and_explained() -> None:
    from topoopt.checker import check_design
    from topoopt.solver import solve

    server = next(item for item, entry in RENT.prices.items() if not entry.offered and item in CAT.by_id("servers"))
    result = solve(demo_with_pins(server=server), explain=True)
    assert result.status == "infeasible"
    conflict = {item.family: item.detail for item in result.explanation.conflict}
    assert "priced_in_book" in conflict and server in conflict["priced_in_book"]
    # The checker names the reason on a design that buys the server anyway.
    opted = solve(demo_with_pins(include_not_offered=True, server=server), explain=False)
    violations = check_design(demo_with_pins(server=server), opted.design)
    assert any(v.family == "priced_in_book" and v.item == server and "not offered" in v.detail for v in violations)


# == China-market SKUs =============================================================================
@pytest.mark.parametrize("variant, original", [("a800-80gb-sxm", "a100-80gb-sxm"), ("h800-sxm", "h100-sxm")])
def test_a_china_market_gpu_is_its_original_with_the_scale_up_link_cut(variant: str, original: str) -> None:
    gpus = CAT.by_id("gpus")
    cut, full = gpus[variant].model_dump(), gpus[original].model_dump()
    assert cut["scale_up_gb_per_s"] < full["scale_up_gb_per_s"]
    same = {"memory_gb", "memory_bandwidth_gb_per_s", "dense_tflops", "tdp_w", "scale_up_domain_gpus",
            "matmul_efficiency"}
    assert {k: cut[k] for k in same} == {k: full[k] for k in same}
