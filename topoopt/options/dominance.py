"""Exact dominance: options that no optimal design uses, dropped before the model is built.

A catalog grown with vendor copies (the same specs under new ids, at another price and power)
multiplies every option table, yet of a set of interchangeable options a design only ever wants
the cheapest, least power-hungry one. Option B of a table is *dominated* by option A of the same
table when

1. A and B are interchangeable: their signatures (:meth:`Signatures.option`) are equal — every
   field of the option and of the catalog items it holds, except the identity, price, power and
   violation fields listed below, which are compared by 2–5;
2. every price of A is at most B's (unpriced only against unpriced: the model charges an unpriced
   option 0 when priced_in_book is relaxed);
3. every power figure the model uses for A is at most B's;
4. A violates no family B does not (``violations``, and a management option's
   ``uplink_violations``);
5. A comes first in catalog order, or A is strictly cheaper in every price the model charges per
   unit.

Why dropping B is exact. Let D be a design that uses B, and D' the same design with A in its
place (every count kept). Whatever families are enforced — so in the prefiltered model, the
unfiltered one and every explanation's — D' is valid when D is: a rule reads of an option its
signature (equal, 1), its violations (A's are among B's, 4), and its prices and power, with which
the rules only get looser (budget, rack power — devices per rack never grow with power —, site
power: 2, 3). Identity is read only by the instance's lists and pins and the price book, whose
verdicts are the violations and the prices, by the per-model counts of shared items (below), and
by the reports. D' costs no more and draws no more power, so it ties or beats D on every
objective before the catalog order (cost, GPUs, power in min_cost; time and then the same in
min_time; job cost in min_job_cost). By 5 it beats D: a strictly cheaper unit, bought at least
once when every family holds (nodes ≥ 1; a fabric has a leaf, a cable class in use an assembly, a
storage or management network a leaf, the hot tier a unit, the cold tier a unit when it must hold
something), lowers the cost; otherwise D' ranks first in catalog order, since every table lists
its options in catalog order. So no optimal design uses B after tie-breaking, and the optimum,
its design and every feasibility verdict are those of the full tables. Dominance is a strict
partial order (transitive, and irreflexive by 5), so every dominated option has an undominated
dominator and all of them go at once. They go before prefiltering: a dominator violates nothing
its dominated option does not, so it survives every prefilter B survives.

Where. Node configurations and the compute cable parts of each link class are compared within
their table (:func:`undominated`); nothing else counts their items. A switch model is counted over the compute fabric, the storage network and the
management network together (cost, power, racks per model, management ports), a storage tier
over the hot and the cold tier. Replacing B by A in one table only could split a model's racks
(``ceil(x / c) + ceil(y / c)`` may exceed ``ceil((x + y) / c)``), so switches and storage tiers are
compared as catalog items (:func:`dominated_items`): B leaves every table at once, when the items
meet 1–3 and 5 and each of B's options in each table has an option of A with the same signature
that meets 2 and 4. Replacing B by A everywhere only merges what B and A split, and the argument
above holds table by table. (Storage units attach per switch model and tier, ``unit_links``: the
part and the violations there follow from the cages, speeds and protocols, which 1 compares.)
Not filtered: rack classes; NICs, whose storage choices servers' slots take by id; the parts the
storage and management networks choose per cage (networks.py); ``Options.all_parts``, since every
part of the catalog counts for provisioned power. Explanations read the same tables, so a detail
that counts options (``priced_in_book``) counts the undominated ones.

Left out of the signatures, and why:

* ``id``, ``name``, ``source`` of every item and a GPU's ``matmul_efficiency_source``: identity
  and provenance (read as said above).
* ``Server.gpu``: the GPU's id; a node configuration holds the GPU itself, compared by its own
  signature (everything the performance model reads of it: memory, FLOPs, efficiency, scale-up).
  ``perf_key`` keys cached answers on the GPU's id, which only shares them less.
* ``power_w`` of servers, NICs, switches and storage tiers and a cable part's
  ``power_w_per_a_end`` / ``power_w_per_b_end``: compared by 3 as the figures the model uses (a
  node's provisioned power with and without a fabric, less the modules in its cages, which equal
  signatures share: ``NodeConfig.devices_power_w``; a switch's with its hungriest modules; a
  storage unit's; a part's ends).
* ``Gpu.tdp_w``: only ``topoopt catalog`` lists it (a node's power is its server's ``power_w``,
  GPUs included); tests/test_dominance.py fails when anything else reads it.
* The option fields ``index`` (the catalog order of 5), the violation sets (4) and the prices
  (2): :data:`OPTION_FIELDS_COMPARED_APART`.

Every other field, including any added later, is compared for equality.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from functools import cache

from topoopt.models.base import Record
from topoopt.models.catalog import Gpu, LinkPart, Nic, Server, StorageTier, Switch

IDENTITY_FIELDS = ("id", "name", "source")
ITEM_FIELDS_COMPARED_APART: dict[type, tuple[str, ...]] = {
    Gpu: ("matmul_efficiency_source", "tdp_w"),
    Server: ("gpu", "power_w"),
    Nic: ("power_w",),
    Switch: ("power_w",),
    LinkPart: ("power_w_per_a_end", "power_w_per_b_end"),
    StorageTier: ("power_w",),
}
"""Per item type, the fields besides identity left out of its signature (see the module docstring)."""

VIOLATION_FIELDS = ("violations", "uplink_violations")
PRICE_FIELDS = ("server_price", "nic_price", "unit_price", "switch_price")
OPTION_FIELDS_COMPARED_APART = frozenset({"index", *VIOLATION_FIELDS, *PRICE_FIELDS})
SCALARS = frozenset({str, int, float, bool, type(None), frozenset})
"""Types of field values that are their own signature."""

Figures = Callable[[object], tuple]
"""An option's (or item's) figures of one kind, compared one by one: prices or power in W."""


def item_signature(item: Record) -> str:
    """The item's fields but identity, provenance, power and (a server's) GPU id, as canonical JSON."""
    excluded = {*IDENTITY_FIELDS, *next((f for cls, f in ITEM_FIELDS_COMPARED_APART.items() if isinstance(item, cls)), ())}
    return json.dumps(item.model_dump(mode="json", exclude=excluded), sort_keys=True)


@cache
def _compared_fields(cls: type, top: bool) -> tuple[str, ...]:
    """The fields of an option class a signature holds: all of a nested one's (a chosen part),
    a table's option's but those compared apart."""
    return tuple(f.name for f in fields(cls) if not (top and f.name in OPTION_FIELDS_COMPARED_APART))


class Signatures:
    """Signatures (rule 1), each item's computed once: one build compares thousands of options
    holding the same few hundred catalog items."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Record, str]] = {}  # the item is kept so that its id stays its own

    def item(self, item: Record) -> str:
        """:func:`item_signature`, cached."""
        if id(item) not in self._items:
            self._items[id(item)] = (item, item_signature(item))
        return self._items[id(item)][1]

    def option(self, option, top: bool = True) -> tuple:
        """Every field of the option (of a table's option, all but its catalog position, violations
        and prices), its catalog items by signature: equal for interchangeable options (rule 1)."""
        values = (getattr(option, name) for name in _compared_fields(type(option), top))
        return tuple(value if type(value) in SCALARS else self._frozen(value) for value in values)

    def _frozen(self, value):
        """A hashable image of a field: items by signature, nested options field by field."""
        if type(value) in SCALARS:
            return value
        if isinstance(value, Record):
            return self.item(value)
        if is_dataclass(value):
            return self.option(value, top=False)
        if isinstance(value, dict):
            return tuple(sorted((key, self._frozen(v)) for key, v in value.items()))
        if isinstance(value, list | tuple):
            return tuple(self._frozen(v) for v in value)
        raise TypeError(f"no signature for a {type(value).__name__}")


def at_most(a: Iterable[float | None], b: Iterable[float | None]) -> bool:
    """Each figure of ``a`` at most ``b``'s; None (unpriced) only against None (rules 2 and 3)."""
    return all(x == y if x is None or y is None else x <= y for x, y in zip(a, b, strict=True))


def strictly_below(a: Iterable[float | None], b: Iterable[float | None]) -> bool:
    """Each figure of ``a`` below ``b``'s, none of them unpriced (rule 5)."""
    return all(x is not None and y is not None and x < y for x, y in zip(a, b, strict=True))


@cache
def _fields_compared_apart(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The price fields and the violation fields of an option class."""
    names = {f.name for f in fields(cls)}
    return tuple(n for n in PRICE_FIELDS if n in names), tuple(n for n in VIOLATION_FIELDS if n in names)


def no_worse(a, b) -> bool:
    """Option ``a`` prices no higher and violates nothing ``b`` does not (rules 2 and 4), field by
    field among the price and violation fields the options have."""
    prices, violations = _fields_compared_apart(type(a))
    return (at_most([getattr(a, p) for p in prices], [getattr(b, p) for p in prices])
            and all(getattr(a, v) <= getattr(b, v) for v in violations))


def dominates(a: tuple, b: tuple, first: bool) -> bool:
    """Rules 2, 3 and 5 on (charges, power figures) of two interchangeable options or items:
    ``charges`` are the prices the model multiplies by a count, the power figures the W it uses;
    ``first``: ``a`` comes first in catalog order."""
    (charges_a, power_a), (charges_b, power_b) = a, b
    return (at_most(charges_a, charges_b) and at_most(power_a, power_b)
            and (first or strictly_below(charges_a, charges_b)))


def undominated(options: list, power_w: Figures, charges: Figures) -> list:
    """The options of one table that no other option of it dominates, in catalog order. For tables
    whose catalog items no other table counts: node configurations, compute cable parts."""
    signatures = Signatures()
    groups: dict[tuple, list] = {}
    for option in options:
        groups.setdefault(signatures.option(option), []).append((option, (charges(option), power_w(option))))
    dropped = {b.index for group in groups.values() for b, b_figures in group
               if any(a is not b and dominates(a_figures, b_figures, a.index < b.index) and no_worse(a, b)
                      for a, a_figures in group)}
    return [option for option in options if option.index not in dropped]


def dominated_items(items: list[Record], power_w: Figures, charges: Figures,
                    tables: list[tuple[list, Callable]]) -> frozenset[str]:
    """Ids of the shared items (switch models, storage tiers; ``items`` in catalog order) that
    another item dominates in every table: ``tables`` holds each option table with the function
    giving an option's item (or None)."""
    signatures = Signatures()
    groups: dict[str, list] = {}
    for position, item in enumerate(items):
        groups.setdefault(signatures.item(item), []).append((position, item, (charges(item), power_w(item))))
    candidates = {b.id for group in groups.values() if len(group) > 1 for _, b, _ in group}
    uses = [_uses(options, item_of, candidates, signatures) for options, item_of in tables]
    return frozenset(b.id for group in groups.values() for j, b, b_figures in group
                     if any(a is not b and dominates(a_figures, b_figures, i < j) and _no_worse_everywhere(a, b, uses)
                            for i, a, a_figures in group))


def _uses(options: list, item_of: Callable, ids: set[str], signatures: Signatures) -> tuple[dict, dict]:
    """One table's options of the items ``ids``: (signature, option) per item id, and the options
    by (item id, signature)."""
    by_item: dict[str, list] = {}
    by_key: dict[tuple, object] = {}
    for option in options:
        item = item_of(option)
        if item is not None and item.id in ids:
            signature = signatures.option(option)
            by_item.setdefault(item.id, []).append((signature, option))
            by_key[item.id, signature] = option
    return by_item, by_key


def _no_worse_everywhere(a: Record, b: Record, uses: list[tuple[dict, dict]]) -> bool:
    """Each option of item ``b`` in every table has an option of item ``a`` with the same
    signature, pricing no higher and violating nothing more (rules 1, 2 and 4 per table)."""
    for by_item, by_key in uses:
        for signature, option in by_item.get(b.id, []):
            counterpart = by_key.get((a.id, signature))
            if counterpart is None or not no_worse(counterpart, option):
                return False
    return True
