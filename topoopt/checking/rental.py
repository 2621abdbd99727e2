"""A reported rental, recomputed: the rent of the whole job under the price book's terms.

A job of ``D`` months (time to train ÷ 30.4375 days) is billed, in months of list rent, the least
``Σ k_t · months_t · factor_t`` over whole terms with ``Σ k_t · months_t ≥ ⌈D⌉`` — here by a table
over every month count up to ``⌈D⌉`` — or ``D`` itself when the book lists no terms (pro rata). The
reported run of terms must cover ``⌈D⌉`` and bill what it says; the billed months and the total
(``cost.total × billed``) must equal the recomputation.
"""

from __future__ import annotations

import math
from fractions import Fraction

from topoopt.checking.context import CheckContext
from topoopt.checking.text import close, num
from topoopt.models.catalog import RentalTerm
from topoopt.models.design import Rental

DAYS_PER_MONTH = Fraction(36525, 1200)
"""The mean Gregorian month, 365.25 / 12 days."""


def least_billed_months(terms: list[RentalTerm], months_needed: int) -> Fraction:
    """The cheapest cover of ``months_needed`` months by whole terms, in months of list rent."""
    least = [Fraction(0)] * (months_needed + 1)
    for m in range(1, months_needed + 1):
        least[m] = min(least[max(m - t.months, 0)] + t.months * Fraction(str(t.factor)) for t in terms)
    return least[months_needed]


def rental_mismatches(ctx: CheckContext, cost_total: float, reported: Rental) -> list[str]:
    """What in a reported rental disagrees with the book's terms and the recomputed time to train."""
    best = ctx.evaluation
    if best is None:
        return ["a rental is reported for a design with no time to train"]
    terms = ctx.catalog.price_book.terms
    duration = Fraction(best.time_to_train_days) / DAYS_PER_MONTH
    problems = []
    if terms:
        needed = math.ceil(duration)
        billed = least_billed_months(terms, needed)
        factors = {t.months: t.factor for t in terms}
        covered = sum(use.months * use.count for use in reported.terms)
        if any(factors.get(use.months) != use.factor for use in reported.terms):
            problems.append(f"rental terms {[(u.months, u.factor) for u in reported.terms]} are not the book's "
                            f"{[(t.months, t.factor) for t in terms]}")
        if covered < needed:
            problems.append(f"rental terms cover {num(covered)} months; the job needs {num(needed)}")
        said = sum(Fraction(use.count * use.months) * Fraction(str(use.factor)) for use in reported.terms)
        if not close(float(said), reported.billed_months, rel=1e-9):
            problems.append(f"rental terms bill {num(float(said))} months, {num(reported.billed_months)} reported")
    elif reported.terms:
        problems.append("rental terms reported; the price book has none (billed pro rata)")
    else:
        billed = duration
    if not close(reported.billed_months, float(billed), rel=1e-9):
        problems.append(f"rental billed {num(reported.billed_months)} months reported, {num(float(billed))} recomputed")
    if not close(reported.total, cost_total * float(billed), rel=1e-9):
        problems.append(f"rental total {num(reported.total)} reported, {num(cost_total * float(billed))} recomputed")
    if not close(reported.duration_days, best.time_to_train_days, rel=1e-6):
        problems.append(f"rental duration {num(reported.duration_days)} days reported, "
                        f"{num(best.time_to_train_days)} recomputed")
    return problems
