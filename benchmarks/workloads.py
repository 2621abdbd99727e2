"""The instances the benchmarks solve: one 70B job at every cluster size, the catalog grown with
vendor variants, and a ladder of small instances for exhaustive enumeration."""

from __future__ import annotations

import random

from topoopt.catalog import load_builtin_catalog
from topoopt.models.instance import Instance

GPUS_PER_NODE = 8
SCALE_GPUS = (8, 64, 512, 4_096, 32_768, 131_072)
SCALE_SERVER = "dgx-b200"
"""A DGX-class server: 8 × 192 GB holds the 70B job's weights and Adam state even on one node."""
PRICE_BOOK = "usd-capex"

# The 70B job: Llama 3 70B continued pre-training on 200B tokens. On one DGX B200 it takes about
# 131 days, so a 180-day deadline is feasible at every size (binding at none: the node count is pinned).
JOB = {
    "model": "llama3-70b",
    "training": {"tokens": 2.0e11, "sequence_length": 4096, "global_batch_sequences": 1024},
}
DEADLINE_DAYS = 180
SITE = {"max_racks": 50_000, "distances": {"in_row_m": 30, "across_rows_m": 300, "slack_m": 5}}


def scale_instance(gpus: int, server: str | None = SCALE_SERVER, catalog: dict | None = None) -> Instance:
    """The 70B job on ``gpus / 8`` pinned nodes of ``server`` (free when None), built-in catalog
    plus ``catalog`` additions (``{"add": ..., "prices": ...}``); the budget never binds."""
    pins = {"nodes": gpus // GPUS_PER_NODE}
    if server is not None:
        pins["server"] = server
    return Instance.model_validate({
        "name": f"bench-70b-{gpus}-gpus",
        "workload": JOB,
        "goal": {"objective": "min_cost", "deadline_days": DEADLINE_DAYS},
        "budget": {"basis": "capex", "currency": "USD", "max": 1.0e11},
        "site": SITE,
        "catalog": {"price_book": PRICE_BOOK, **(catalog or {})},
        "constraints": {"pins": pins},
    })


# == Catalog growth ================================================================================
VARIANT_KINDS = ("gpus", "servers", "switches", "cables", "storage")
PRICE_CHANGE = (0.05, 0.15)
"""A variant's price differs from the original by 5–15 %, up or down."""
POWER_CHANGE = (0.0, 0.08)
"""And its power by up to 8 %, up or down."""


def _factor(rng: random.Random, low: float, high: float) -> float:
    return 1 + rng.choice((-1, 1)) * rng.uniform(low, high)


def vendor_variants(multiple: int) -> dict:
    """Catalog additions that make the built-in catalog ``multiple`` times as large.

    Vendor ``v`` (2 … ``multiple``) sells a copy of every GPU, server, switch, cable and storage
    tier under the id ``<id>-v<v>``, its price (in the benchmark's price book) 5–15 % above or
    below the original and its power up to 8 % off. Vendor ``v``'s servers carry vendor ``v``'s
    GPUs. Each variant's numbers are seeded by its id, so the ×5 catalog contains the ×4 one.
    """
    catalog = load_builtin_catalog()
    book = next(b for b in catalog.price_books if b.id == PRICE_BOOK)
    add: dict[str, list] = {kind: [] for kind in VARIANT_KINDS}
    prices: dict[str, float] = {}
    for vendor in range(2, multiple + 1):
        suffix = f"-v{vendor}"
        for kind in VARIANT_KINDS:
            for item in getattr(catalog, kind):
                rng = random.Random(f"{item.id}{suffix}")
                data = item.model_dump()
                data.update(id=item.id + suffix, name=f"{item.name} (vendor {vendor})",
                            source=f"estimate: benchmark variant of {item.id} from vendor {vendor}")
                power_field = "tdp_w" if kind == "gpus" else "power_w" if "power_w" in data else None
                if power_field:
                    data[power_field] = round(data[power_field] * _factor(rng, *POWER_CHANGE), 1)
                if kind == "servers":
                    data["gpu"] = item.gpu + suffix
                add[kind].append(data)
                if item.id in book.prices:
                    prices[item.id + suffix] = round(book.prices[item.id].price * _factor(rng, *PRICE_CHANGE))
    return {"add": add, "prices": prices}


def catalog_size(multiple: int) -> int:
    """Items of the grown catalog (all kinds)."""
    catalog = load_builtin_catalog()
    kinds = ("gpus", "servers", "nics", "interconnects", "switches", "cables", "racks", "storage")
    base = sum(len(getattr(catalog, kind)) for kind in kinds)
    return base + (multiple - 1) * sum(len(getattr(catalog, kind)) for kind in VARIANT_KINDS)


# == Enumeration ladder ============================================================================
# The tiny catalog of tests/solver_fixtures.py with an 8-port switch (2 and 3 tiers appear at a few
# nodes) and a 20 kW rack; the 7B job must finish in one day. Each rung widens the node range
# (budget ÷ node price) or the options (NICs per node, oversubscription ratios).
SRC = "estimate: benchmark fixture"
SW8 = {"id": "sw8", "name": "SW 8x400", "source": SRC, "protocols": ["ib"], "cages": 4,
       "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 600, "rack_units": 1}
R20 = {"id": "r20", "name": "20 kW rack", "source": SRC, "power_kw": 20, "rack_units": 42, "cooling": "air"}
ENUMERATION_LADDER = (
    # (budget USD, most NICs per server, max oversubscription); the first rung (782 candidates)
    # is one the literal enumeration, which packs each candidate's mixed racks, finishes in 20 s.
    (1_500_000, 1, 1),
    (2_000_000, 1, 1),
    (4_000_000, 2, 1),
    (8_000_000, 2, 1),
    (10_000_000, 2, 1),
    (8_000_000, 2, 3),
    (12_000_000, 4, 3),
)


def enumeration_instance(budget: float, max_nics: int, max_oversubscription: float) -> Instance:
    from solver_fixtures import TINY_CATALOG, TINY_PRICES, tiny  # tests/ is on the path (run.py)

    return tiny(**{
        "catalog.add.switches": [*TINY_CATALOG["switches"], SW8],
        "catalog.add.racks": [*TINY_CATALOG["racks"], R20],
        "catalog.add.servers": [dict(s, max_compute_nics=max_nics) for s in TINY_CATALOG["servers"]],
        "catalog.prices": {**TINY_PRICES, "sw8": 6_000, "r20": 3_000},
        "site.distances.across_rows_m": 48,
        "goal.deadline_days": 1,
        "budget.max": budget,
        "constraints.max_oversubscription": max_oversubscription,
    })
