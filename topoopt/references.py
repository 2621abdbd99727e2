"""Catalog references in an instance: every id it names must exist, and the budget must match the book.

Checked against the catalog the instance actually sees (built-in plus ``catalog.add``, see
:func:`topoopt.catalog.resolve_catalog`): the price book, the model preset, allow/deny lists,
pins, ``site.rack_classes``, price overrides, and the ids inside added servers and NICs. The
budget's currency and basis must equal the price book's, since every price is compared with it.
Each problem is a ``(field path, message)`` pair, so the loader can locate it in the file.
"""

from __future__ import annotations

import difflib
from typing import Any

from topoopt.models.catalog import PriceBook
from topoopt.models.instance import Instance

Path_ = tuple[str | int, ...]


def check_references(instance: Instance) -> list[tuple[Path_, str]]:
    """Every id the instance names must exist in its resolved catalog; budget terms must match.

    Returns ``(path, message)`` pairs; empty when all references resolve.
    """
    from topoopt.catalog import load_builtin_catalog, resolve_catalog, terms_problem

    problems: list[tuple[Path_, str]] = []
    books = {book.id: book for book in load_builtin_catalog().price_books}
    chosen = instance.catalog.price_book
    if isinstance(chosen, PriceBook):
        books = {**books, chosen.id: chosen}
        book_id = chosen.id
    else:
        book_id = chosen
    terms = instance.catalog.terms
    if terms is not None and book_id in books:
        problem = terms_problem(books[book_id], terms)
        if problem is not None:
            problems.append((("catalog", "terms"), problem))
            # Resolve with the book's own terms so the remaining ids can still be checked.
            instance = instance.model_copy(update={"catalog": instance.catalog.model_copy(update={"terms": None})})
    if book_id not in books:
        problems.append((("catalog", "price_book"), _unknown("price book", book_id, books)))
        if not books:
            return problems
        # Resolve against any book so the remaining ids can still be checked in the same run.
        substitute = instance.catalog.model_copy(update={"price_book": sorted(books)[0]})
        resolved = resolve_catalog(instance.model_copy(update={"catalog": substitute}))
    else:
        resolved = resolve_catalog(instance)
        problems += budget_term_problems(instance, resolved.price_book)
    ids = {kind: resolved.catalog.by_id(kind) for kind in _KIND_NOUNS}

    def check(path: Path_, kind: str, item_id: str) -> None:
        if item_id not in ids[kind]:
            problems.append((path, _unknown(_KIND_NOUNS[kind], item_id, ids[kind], ids)))

    model = instance.workload.model
    if isinstance(model, str):
        check(("workload", "model"), "models", model)
    for field, kind in _ALLOW_DENY_KINDS.items():
        rule = getattr(instance.constraints, field)
        for i, item_id in enumerate(rule.allow or []):
            check(("constraints", field, "allow", i), kind, item_id)
        for i, item_id in enumerate(rule.deny):
            check(("constraints", field, "deny", i), kind, item_id)
    pins = instance.constraints.pins
    for name, kind in _PIN_KINDS.items():
        value = getattr(pins, name)
        if value is not None:
            check(("constraints", "pins", name), kind, value)
    for i, rack in enumerate(instance.site.rack_classes or []):
        check(("site", "rack_classes", i), "racks", rack)
    every_id = {item_id for table in ids.values() for item_id in table}
    for item_id in instance.catalog.prices:
        if item_id not in every_id:
            problems.append((("catalog", "prices", item_id), _unknown("catalog item", item_id, every_id)))
    asked = instance.site.head_nodes
    if asked and not any(c.role == "head" and resolved.price(c.id) is not None for c in resolved.catalog.control):
        problems.append((("site", "head_nodes"), f"asks for {asked} head nodes, but the catalog prices no head model "
                         f"in book {resolved.price_book.id!r} (catalog kind control, role head)"))
    added = instance.catalog.add
    others = {item_id for kind, table in ids.items() if kind != "control" for item_id in table}
    for i, head in enumerate(added.control):
        if head.id in others:  # a head node is billed and racked beside the nodes and switches by id
            problems.append((("catalog", "add", "control", i, "id"), f"{head.id!r} is already the id of another "
                             "catalog item; a control-plane server needs an id of its own"))
    for i, server in enumerate(added.servers):
        check(("catalog", "add", "servers", i, "gpu"), "gpus", server.gpu)
        for j, nic in enumerate(server.nic_options):
            check(("catalog", "add", "servers", i, "nic_options", j), "nics", nic)
        if server.builtin_compute_nics is not None:
            check(("catalog", "add", "servers", i, "builtin_compute_nics", "nic"), "nics", server.builtin_compute_nics.nic)
        for j, nic in enumerate(server.storage_nic_options):
            check(("catalog", "add", "servers", i, "storage_nic_options", j), "nics", nic)
        if server.builtin_storage_nics is not None:
            check(("catalog", "add", "servers", i, "builtin_storage_nics", "nic"), "nics", server.builtin_storage_nics.nic)
        problems.extend((("catalog", "add", "servers", i, *path), message) for path, message in _storage_nic_slots(server))
    for i, nic in enumerate(added.nics):
        for j, tech in enumerate(nic.interconnects):
            check(("catalog", "add", "nics", i, "interconnects", j), "interconnects", tech)
    return problems


def budget_term_problems(instance: Instance, book: Any = None) -> list[tuple[Path_, str]]:
    """The budget's currency and basis must be the price book's (``book``, or the instance's own
    book from the built-in catalog; an unknown book is reported by :func:`check_references`)."""
    if book is None:
        from topoopt.catalog import load_builtin_catalog

        books = {b.id: b for b in load_builtin_catalog().price_books}
        book = books.get(instance.catalog.price_book)
        if book is None:
            return [(("catalog", "price_book"), _unknown("price book", instance.catalog.price_book, books))]
    problems: list[tuple[Path_, str]] = []
    if instance.budget.currency != book.currency:
        problems.append((("budget", "currency"), f"{instance.budget.currency!r} does not match price book "
                         f"{book.id!r}, which is in {book.currency}"))
    if instance.budget.basis != book.basis:
        problems.append((("budget", "basis"), f"{instance.budget.basis!r} does not match price book "
                         f"{book.id!r}, whose prices are {book.basis}"))
    return problems


_ALLOW_DENY_KINDS = {
    "gpus": "gpus",
    "servers": "servers",
    "interconnects": "interconnects",
    "switches": "switches",
    "cables": "cables",
    "storage": "storage",
    "storage_nics": "nics",
}
"""``constraints.<field>`` allow/deny lists and the catalog kind their ids name."""


def _storage_nic_slots(server: Any) -> list[tuple[Path_, str]]:
    """An added server's storage NICs are either built in or chosen from options, and the options
    need at least one free slot (``max_storage_nics``) to be usable."""
    found: list[tuple[Path_, str]] = []
    builtin = server.builtin_storage_nics
    if builtin is not None and server.storage_nic_options:
        found.append((("storage_nic_options",), "give builtin_storage_nics or storage_nic_options, not both: "
                      "built-in storage NICs leave no choice"))
    if server.storage_nic_options and server.max_storage_nics == 0:
        found.append((("max_storage_nics",), "is 0, so none of storage_nic_options can be fitted; "
                      "give the number of free slots for storage NICs"))
    if builtin is not None and builtin.count > server.max_storage_nics:
        found.append((("max_storage_nics",), f"is {server.max_storage_nics}, below the {builtin.count} built-in "
                      "storage NICs (builtin_storage_nics.count)"))
    return found


_KIND_NOUNS = {
    "gpus": "GPU",
    "servers": "server",
    "nics": "NIC",
    "interconnects": "interconnect",
    "switches": "switch",
    "cables": "cable",
    "racks": "rack class",
    "storage": "storage tier",
    "control": "control-plane server",
    "models": "model preset",
}

_PIN_KINDS = {
    "gpu": "gpus",
    "server": "servers",
    "interconnect": "interconnects",
    "nic": "nics",
    "leaf_switch": "switches",
    "rack_class": "racks",
    "storage": "storage",
    "cold_storage": "storage",
    "storage_nic": "nics",
    "management_switch": "switches",
}


def _unknown(noun: str, item_id: str, known: Any, all_kinds: dict | None = None) -> str:
    """'unknown GPU id 'h100'; did you mean 'h100-sxm'?' plus where the id does exist."""
    message = f"unknown {noun} id {item_id!r}"
    other = [_KIND_NOUNS[k] for k, table in (all_kinds or {}).items() if item_id in table]
    if other:
        article = "an" if other[0][0] in "aeiouAEIOU" else "a"
        return f"{message}; {item_id!r} is {article} {other[0]} id"
    close = difflib.get_close_matches(item_id, list(known), n=3, cutoff=0.6)
    if close:
        return f"{message}; did you mean {' or '.join(repr(c) for c in close)}?"
    names = sorted(known)
    if names and len(names) <= 30:
        return f"{message}; expected one of {', '.join(names)}"
    return message


__all__ = ["check_references"]
