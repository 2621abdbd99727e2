"""The market a design is priced in: price provenance, items a market does not offer, and the
China-market SKUs (topoopt/catalog, topoopt/models/catalog.py ``Price``).

* Resolution: an entry marked not offered is unpriced unless ``catalog.include_not_offered``.
* The demo re-solved with the CNY rental book chooses only items that book offers, each cost line
  carrying its entry's provenance; with the opt-in it may choose more, never at a higher cost; a
  server pinned to a not-offered SKU is infeasible by ``priced_in_book``, and the explanation says why.
* The China-market SKUs equal their originals in everything but the cut scale-up link.
* Rental terms: a quarterly discount prices a job as computed by hand; the solver's billing
  (solver/billing.py) and the checker's (checking/rental.py) agree on any terms.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from solver_fixtures import SRC

from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.checker import check_design
from topoopt.checking.rental import least_billed_months
from topoopt.models.catalog import RentalTerm
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


# == Rental terms ===================================================================================
def _job(terms: list[dict]):
    """One pinned node of the tiny rented catalog training ~2.3 months, under ``terms``."""
    from topoopt.solver import solve

    return solve(_instance_of(terms), explain=False)


def test_a_quarterly_discount_prices_the_job_as_computed_by_hand() -> None:
    """A job of 2–3 months: pro rata it pays its months; with a 1-month minimum it pays 3 whole
    months; with a quarter at 95 % it pays one quarter, 3 × 0.95 = 2.85 months of rent."""
    monthly = [{"months": 1, "factor": 1.0, "source": SRC}]
    quarterly = [*monthly, {"months": 3, "factor": 0.95, "source": SRC}]
    pro_rata, by_month, by_quarter = _job([]), _job(monthly), _job(quarterly)
    assert pro_rata.design == by_month.design == by_quarter.design
    rent, days = by_month.cost.total, by_month.performance.time_to_train_days
    assert 2 < days / (365.25 / 12) <= 3
    assert pro_rata.objective.value == pytest.approx(rent * days / (365.25 / 12), rel=1e-12)
    assert by_month.objective.value == pytest.approx(rent * 3, rel=1e-12)
    assert by_quarter.objective.value == pytest.approx(rent * 3 * 0.95, rel=1e-12)
    assert [(u.months, u.count) for u in by_quarter.cost.rental.terms] == [(3, 1)]
    assert check_design(_instance_of(quarterly), by_quarter.design, by_quarter.cost) == []


def _instance_of(terms: list[dict]) -> Instance:
    from solver_fixtures import tiny
    from test_job_cost import RENTED

    return tiny(**{**RENTED, "constraints.pins.nodes": 1, "goal.deadline_days": None,
                   "workload.training.tokens": 5e11, "catalog.terms": terms})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 24), st.integers(50, 100)), min_size=1, max_size=4,
                unique_by=lambda t: t[0]),
       st.integers(0, 400))
def test_the_solver_and_the_checker_bill_terms_alike(terms: list[tuple[int, int]], months: int) -> None:
    """The solver's billing (reduction past the table) equals the checker's plain table, and the
    solver's run of terms covers the months and bills what it says."""
    from topoopt.solver.billing import Billing

    book_terms = [RentalTerm(months=m, factor=f / 100, source=SRC) for m, f in terms]
    billing = Billing(tuple(sorted((t.months, Fraction(str(t.factor))) for t in book_terms)))
    billed, counts = billing.run(months)
    assert billed == least_billed_months(book_terms, months)
    assert sum(c * m for c, (m, _) in zip(counts, billing.terms)) >= months
    assert billed == sum(c * m * f for c, (m, f) in zip(counts, billing.terms))


# == Price book files ===============================================================================
BOOK = """\
id: my-usd-rent
currency: USD
basis: monthly_rent
description: "our negotiated rents"
terms:
  - {months: 1, factor: 1.0, source: "estimate: our contract"}
  - {months: 12, factor: 0.8, source: "estimate: our contract"}
prices:
  hgx-h100: {price: 20000, provenance: quoted, source: "https://example.com/rents", as_of: "2026-10"}
  cx7-osfp: {price: 40, provenance: estimate, source: "estimate: a tenth of the server rent per rail"}
"""


def _with_book(tmp_path: Path, book_text: str, reference: str = "./prices/my-prices.yaml") -> Path:
    (tmp_path / "prices").mkdir(exist_ok=True)
    (tmp_path / "prices" / "my-prices.yaml").write_text(book_text, encoding="utf-8")
    data = DEMO.read_text(encoding="utf-8")
    data = data.replace("price_book: cny-monthly-rent", f"price_book: {reference}").replace("currency: CNY", "currency: USD")
    path = tmp_path / "instance.yaml"
    path.write_text(data, encoding="utf-8")
    return path


def test_a_price_book_file_loads_relative_to_the_instance(tmp_path: Path) -> None:
    from topoopt.loader import load_instance

    instance = load_instance(_with_book(tmp_path, BOOK)).instance
    resolved = resolve_catalog(instance)
    assert (resolved.price_book.id, resolved.currency, resolved.basis) == ("my-usd-rent", "USD", "monthly_rent")
    assert resolved.prices["hgx-h100"].price == 20000 and resolved.prices["hgx-h100"].provenance == "quoted"
    assert [(t.months, t.factor) for t in resolved.price_book.terms] == [(1, 1.0), (12, 0.8)]


@pytest.mark.parametrize("old, new, at, field", [
    (', as_of: "2026-10"}', "}", "hgx-h100:", "prices.hgx-h100"),
    ("price: 20000", "price: twenty", "twenty", "prices.hgx-h100.price"),
    ("basis: monthly_rent", "basis: monthly", "monthly\n", "basis"),
    ("factor: 0.8", "factor: 1.8", "1.8", "terms[1].factor"),
    ("provenance: estimate", "provenance: guessed", "guessed", "prices.cx7-osfp.provenance"),
    ("currency: USD\n", "currency: USD\ncurrency: CNY\n", "currency: CNY", "currency"),
    ("prices:\n", "prices: [\n", None, None),
])
def test_a_malformed_price_book_file_gets_located_errors(tmp_path: Path, old, new, at, field) -> None:
    """Each message names the book file, the line and column of the offending value (found in the
    text here), and the field."""
    from topoopt.loader import load_instance
    from topoopt.safe_yaml import InputError

    assert old in BOOK
    text = BOOK.replace(old, new, 1)
    path = _with_book(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_instance(path)
    message = info.value.messages[0]
    book = tmp_path / "prices" / "my-prices.yaml"
    assert message.startswith(f"{book}:"), message
    if at is not None:
        offset = text.index(at)
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        assert message.startswith(f"{book}:{line}:{column}: {field}: "), message


def test_a_missing_price_book_file_is_named_at_the_instance_field(tmp_path: Path) -> None:
    from topoopt.loader import load_instance
    from topoopt.safe_yaml import InputError

    path = _with_book(tmp_path, BOOK, reference="./prices/missing.yaml")
    with pytest.raises(InputError) as info:
        load_instance(path)
    message = info.value.messages[0]
    assert message.startswith(f"{path}:") and "catalog.price_book" in message and "missing.yaml" in message


# == Ownership (TCO) of a bought design =============================================================
OPERATION = {"months": 36, "electricity_price_per_kwh": 0.08, "average_load": 0.8,
             "pue": {"air": 1.5, "rear_door": 1.35, "liquid": 1.15}, "facility_per_rack_per_month": 1000}


def test_a_bought_design_reports_its_ownership_and_the_checker_recomputes_it() -> None:
    """Energy = kW × load × PUE × 730.5 h × months × price; facility = racks × monthly cost × months."""
    from solver_fixtures import tiny

    from topoopt.solver import solve

    instance = tiny(**{"site.operation": OPERATION})
    result = solve(instance, explain=False)
    owned = result.cost.ownership
    assert owned is not None and result.cost.rental is None
    rack = resolve_catalog(instance).catalog.by_id("racks")[result.design.racks[0].rack_class]
    assert owned.pue == OPERATION["pue"][rack.cooling]
    hours = 365.25 / 12 * 24
    assert owned.energy_cost == pytest.approx(owned.it_power_kw * 0.8 * owned.pue * hours * 36 * 0.08, rel=1e-12)
    assert owned.facility_cost == sum(g.count for g in result.design.racks) * 1000 * 36
    assert owned.total == pytest.approx(result.cost.total + owned.energy_cost + owned.facility_cost, rel=1e-12)
    assert check_design(instance, result.design, result.cost) == []
    tampered = result.cost.model_copy(update={"ownership": owned.model_copy(update={"energy_cost": owned.energy_cost * 2})})
    violations = check_design(instance, result.design, tampered)
    assert [v.item for v in violations] == ["reported ownership"]
    assert tiny().site.operation is None and solve(tiny(), explain=False).cost.ownership is None


def test_rental_terms_on_a_capex_book_are_a_located_error(tmp_path: Path) -> None:
    from topoopt.loader import load_instance
    from topoopt.safe_yaml import InputError

    text = (REPO / "instances" / "llama3-405b-16k-usd.yaml").read_text(encoding="utf-8")
    text = text.replace("  price_book: usd-capex", "  price_book: usd-capex\n  terms: []", 1)
    path = tmp_path / "capex-terms.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_instance(path)
    line = text[:text.index("  terms: []")].count("\n") + 1
    assert info.value.messages[0].startswith(f"{path}:{line}:{len('  terms: ') + 1}: catalog.terms: rental terms need a monthly_rent"), \
        info.value.messages
