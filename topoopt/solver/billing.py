"""What a rented job is billed under a price book's rental terms (solver side).

A monthly_rent book may list terms (1 month at 100 %, 3 months at 95 %, 12 months at 85 % …). A job
of duration ``D`` months is billed the cheapest run of whole terms that covers it::

    billed(D) = min Σ_t k_t · months_t · factor_t   over k_t ∈ ℕ with Σ_t k_t · months_t ≥ ⌈D⌉

in months of list rent; its rent is ``cost per month × billed(D)``. The shortest term is the minimum
rental period: a 5-hour job pays for it whole. A book without terms bills pro rata: ``billed(D) = D``.
``billed`` never decreases as ``D`` grows, which the ``min_job_cost`` search's bounds rely on.

Exactness at any length: some optimal run uses each term other than the cheapest per month ``b`` fewer
than ``months_b`` times (``months_b`` copies of a term ``t`` cover as much as ``months_t`` copies of
``b``, at no lower cost), so those cover less than ``R = months_b · Σ_t months_t``. Beyond ``R`` months
the cheapest run therefore holds ``q = ⌈(M − R) / months_b⌉`` terms ``b`` and the cheapest run for the
remaining ``M − q · months_b ≤ R`` months, solved by a table over ``0..R``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from topoopt.models.catalog import PriceBook
from topoopt.models.design import Rental, TermUse
from topoopt.options.problem import SECONDS_PER_DAY

DAYS_PER_MONTH = 30.4375
"""The mean Gregorian month: 365.25 days / 12. Rent is quoted per month; training lasts days."""
SECONDS_PER_MONTH = DAYS_PER_MONTH * SECONDS_PER_DAY


@dataclass(frozen=True)
class Billing:
    """A book's terms as ``(months, factor)`` pairs, exact; empty: pro rata."""

    terms: tuple[tuple[int, Fraction], ...]

    @classmethod
    def of(cls, book: PriceBook) -> Billing:
        return cls(tuple(sorted((t.months, Fraction(str(t.factor))) for t in book.terms)))

    @cached_property
    def _cheapest(self) -> tuple[int, Fraction]:
        """The term with the lowest rent per month (the longest among equals)."""
        return min(self.terms, key=lambda t: (t[1], -t[0]))

    @cached_property
    def _table(self) -> list[tuple[Fraction, tuple[int, ...]]]:
        """``[(billed months, counts per term)]`` of the cheapest run covering ``m`` months, ``m`` in ``0..R + months_b``."""
        reach = self._cheapest[0] * (sum(months for months, _ in self.terms) + 1)
        table: list[tuple[Fraction, tuple[int, ...]]] = [(Fraction(0), (0,) * len(self.terms))]
        for m in range(1, reach + 1):
            best = None
            for i, (months, factor) in enumerate(self.terms):
                billed, counts = table[max(m - months, 0)]
                option = (billed + months * factor, counts[:i] + (counts[i] + 1,) + counts[i + 1:])
                if best is None or option[0] < best[0]:
                    best = option
            table.append(best)
        return table

    def run(self, months_needed: int) -> tuple[Fraction, tuple[int, ...]]:
        """The cheapest run of whole terms covering ``months_needed``: its billed months and counts."""
        table = self._table
        if months_needed < len(table):
            return table[months_needed]
        months_b, factor_b = self._cheapest
        q = math.ceil((months_needed - (len(table) - 1)) / months_b)
        billed, counts = table[months_needed - q * months_b]
        i = self.terms.index(self._cheapest)
        return billed + q * months_b * factor_b, counts[:i] + (counts[i] + q,) + counts[i + 1:]

    def months(self, seconds: float) -> Fraction:
        """Months of list rent billed for a job of ``seconds``."""
        duration = Fraction(seconds) / Fraction(SECONDS_PER_MONTH)
        if not self.terms:
            return duration
        return self.run(math.ceil(duration))[0]

    def rental(self, cost_per_month: float, seconds: float) -> Rental:
        """The job's rental record: its terms, billed months and total."""
        billed = self.months(seconds)
        uses = []
        if self.terms:
            _, counts = self.run(math.ceil(Fraction(seconds) / Fraction(SECONDS_PER_MONTH)))
            uses = [TermUse(months=months, count=count, factor=float(factor))
                    for (months, factor), count in zip(self.terms, counts) if count]
        return Rental(duration_days=seconds / SECONDS_PER_DAY, terms=uses, billed_months=float(billed),
                      total=float(Fraction(cost_per_month) * billed))
