"""The built-in hardware catalog and price books, and their merge with an instance's additions.

Data files live in ``topoopt/catalog/data/``: one YAML file per kind (``gpus.yaml`` …) holding
a list of items, and one file per price book (``prices-<id>.yaml``). Every item has a source.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from topoopt.models.catalog import Catalog, ModelArchitecture, Price, PriceBook, RentalTerm, Server
from topoopt.models.instance import Instance

# The packaged data is trusted and needs no line numbers, so the C parser (when PyYAML has it) reads
# it with the same safe constructor several times faster than the pure-Python one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

KINDS = ("gpus", "servers", "nics", "interconnects", "switches", "cables", "racks", "storage", "control", "models")


class CatalogError(ValueError):
    """An instance refers to something the catalog does not have."""


@lru_cache(maxsize=1)
def load_builtin_catalog() -> Catalog:
    """Read and validate the packaged catalog (cached; the result is immutable)."""
    data_dir = resources.files("topoopt.catalog") / "data"
    raw: dict[str, list] = {kind: [] for kind in KINDS}
    raw["price_books"] = []
    for entry in sorted(data_dir.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        content = yaml.load(entry.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
        if entry.name.startswith("prices-"):
            raw["price_books"].append(content)
        else:
            raw[entry.name.removesuffix(".yaml")] = content or []
    return Catalog.model_validate(raw)


@dataclass(frozen=True)
class ResolvedCatalog:
    """The catalog an instance actually sees: built-in (optional) + additions, one price book."""

    catalog: Catalog
    price_book: PriceBook
    prices: dict[str, Price]
    withheld: frozenset[str] = frozenset()
    """Items the book lists but its market does not offer (without ``catalog.include_not_offered``):
    absent from ``prices``, so unpriced for every design."""

    @property
    def currency(self) -> str:
        return self.price_book.currency

    @property
    def basis(self) -> str:
        return self.price_book.basis

    def price(self, item_id: str) -> float | None:
        entry = self.prices.get(item_id)
        return None if entry is None else entry.price

    def listed_price(self, item_id: str) -> float | None:
        """The price a withheld item would cost (the book's entry), else :meth:`price`: what the
        model charges when ``priced_in_book`` is relaxed, as explanations do."""
        if item_id in self.withheld:
            return self.price_book.prices[item_id].price
        return self.price(item_id)


def offered_prices(book: PriceBook, include_not_offered: bool) -> dict[str, Price]:
    """The book's prices a design may use: those its market offers, and with ``include_not_offered``
    also the entries marked ``offered: false``. An item left out is unpriced, so the
    ``priced_in_book`` family keeps it out of every design."""
    return {item_id: entry for item_id, entry in book.prices.items() if entry.offered or include_not_offered}


def terms_problem(book: PriceBook, terms: list[RentalTerm]) -> str | None:
    """Why ``terms`` cannot replace the book's rental terms, or None: terms belong to a
    ``monthly_rent`` book, one term per length."""
    if book.basis != "monthly_rent":
        return f"rental terms need a monthly_rent price book; {book.id!r} is {book.basis}"
    lengths = [term.months for term in terms]
    if len(set(lengths)) != len(lengths):
        return f"two terms of the same length ({sorted(lengths)} months)"
    return None


def resolve_catalog(instance: Instance) -> ResolvedCatalog:
    """Merge the built-in catalog with the instance's additions and price overrides.

    An added item with an existing id replaces the built-in one. Items the book marks as not offered
    are unpriced unless ``catalog.include_not_offered`` (:func:`offered_prices`). Price overrides
    are estimates sourced as "instance price override"; ``catalog.terms`` replaces the book's
    rental terms.
    """
    builtin = load_builtin_catalog()
    selection = instance.catalog
    merged: dict[str, list] = {}
    for kind in KINDS:
        items = {item.id: item for item in getattr(builtin, kind)} if selection.builtin else {}
        for item in getattr(selection.add, kind):
            items[item.id] = item
        merged[kind] = list(items.values())
    if isinstance(selection.price_book, PriceBook):
        book = selection.price_book
    else:
        books = {book.id: book for book in builtin.price_books}
        book = books.get(selection.price_book)
        if book is None:
            raise CatalogError(
                f"catalog.price_book: unknown price book {selection.price_book!r}; expected one of "
                f"{', '.join(sorted(books))}, or a price book file read by load_instance"
            )
    if selection.terms is not None:
        problem = terms_problem(book, selection.terms)
        if problem is not None:
            raise CatalogError(f"catalog.terms: {problem}")
        book = book.model_copy(update={"terms": selection.terms})
    prices = offered_prices(book, selection.include_not_offered)
    for item_id, value in selection.prices.items():
        prices[item_id] = Price(price=value, provenance="estimate", source="estimate: instance price override")
    catalog = Catalog(**merged, price_books=[book])
    withheld = frozenset(book.prices) - set(prices)
    return ResolvedCatalog(catalog=catalog, price_book=book, prices=prices, withheld=withheld)


def storage_nic_counts(server: Server) -> dict[str, list[int]]:
    """Storage NICs a server can carry on a dedicated storage network, ``{nic id: counts}``.

    Built-in storage NICs come in their fixed count; otherwise each of ``storage_nic_options`` in
    1..``max_storage_nics``. Empty when the server has neither (no dedicated option).
    """
    if server.builtin_storage_nics is not None:
        return {server.builtin_storage_nics.nic: [server.builtin_storage_nics.count]}
    return {nic: list(range(1, server.max_storage_nics + 1)) for nic in server.storage_nic_options
            if server.max_storage_nics >= 1}


def workload_model(instance: Instance, catalog: Catalog) -> ModelArchitecture:
    """The workload's architecture: the preset named in the instance, or the inline one."""
    model = instance.workload.model
    if isinstance(model, ModelArchitecture):
        return model
    presets = catalog.by_id("models")
    if model not in presets:
        raise CatalogError(
            f"workload.model: unknown model preset {model!r}; expected one of {', '.join(sorted(presets))}"
        )
    preset = presets[model]
    return ModelArchitecture(**preset.model_dump(include=set(ModelArchitecture.model_fields)))


__all__ = [
    "CatalogError",
    "KINDS",
    "ResolvedCatalog",
    "load_builtin_catalog",
    "offered_prices",
    "resolve_catalog",
    "storage_nic_counts",
    "terms_problem",
    "workload_model",
]
