"""``topoopt catalog [KIND]``: list the built-in hardware catalog and price books.

No kind prints the number of items per kind; a kind prints one aligned row per item with a few
key columns and the item's source (always the last column, so long sources never break the
alignment); ``--json`` prints the items as a JSON list instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import typer

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_INPUT, err, fit_to_terminal

ITEM_KINDS = ("gpus", "servers", "nics", "interconnects", "switches", "cables", "racks", "storage", "control", "models")
KINDS = (*ITEM_KINDS, "prices")

Column = tuple[str, Callable[[Any], Any]]
"""A table column: its header and how to read the cell from an item."""


def _num(value: float) -> str:
    """Whole numbers without decimals, others with up to three significant decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3g}" if value < 10 else f"{value:,.1f}"


def _speeds(ports_per_cage: dict[int, int]) -> str:
    return " ".join(f"{gbps}G×{ports}" for gbps, ports in sorted(ports_per_cage.items(), reverse=True))


def _server_nics(server: Any) -> str:
    if server.builtin_compute_nics is not None:
        builtin = server.builtin_compute_nics
        cage = f" ({server.compute_port_form_factor})" if server.compute_port_form_factor else ""
        return f"{builtin.count}× {builtin.nic}{cage}"
    return f"≤{server.max_compute_nics} of {', '.join(server.nic_options)}"


COLUMNS: dict[str, list[Column]] = {
    "gpus": [
        ("id", lambda g: g.id),
        ("mem GB", lambda g: _num(g.memory_gb)),
        ("HBM GB/s", lambda g: _num(g.memory_bandwidth_gb_per_s)),
        ("BF16 TF", lambda g: _num(g.dense_tflops["bf16"]) if "bf16" in g.dense_tflops else "-"),
        ("FP16 TF", lambda g: _num(g.dense_tflops["fp16"]) if "fp16" in g.dense_tflops else "-"),
        ("FP8 TF", lambda g: _num(g.dense_tflops["fp8"]) if "fp8" in g.dense_tflops else "-"),
        ("GEMM eff", lambda g: f"{g.matmul_efficiency:.3f}"),
        ("TDP W", lambda g: _num(g.tdp_w)),
        ("scale-up", lambda g: f"{_num(g.scale_up_gb_per_s)} GB/s ×{g.scale_up_domain_gpus}"),
    ],
    "servers": [
        ("id", lambda s: s.id),
        ("gpu", lambda s: f"{s.gpus_per_node}× {s.gpu}"),
        ("power W", lambda s: _num(s.power_w)),
        ("RU", lambda s: s.rack_units),
        ("compute NICs", _server_nics),
    ],
    "nics": [
        ("id", lambda n: n.id),
        ("cage", lambda n: n.port_form_factor),
        ("power W", lambda n: _num(n.power_w)),
        ("interconnects", lambda n: ", ".join(n.interconnects)),
    ],
    "interconnects": [
        ("id", lambda i: i.id),
        ("protocol", lambda i: i.protocol),
        ("Gb/s", lambda i: i.gbps),
        ("bus eff", lambda i: f"{i.bus_efficiency:.2f}"),
        ("latency µs", lambda i: _num(i.latency_us)),
    ],
    "switches": [
        ("id", lambda s: s.id),
        ("protocols", lambda s: ",".join(s.protocols)),
        ("cages", lambda s: f"{s.cages}× {s.cage_form_factor}"),
        ("ports per cage", lambda s: _speeds(s.ports_per_cage)),
        ("power W", lambda s: _num(s.power_w)),
        ("RU", lambda s: s.rack_units),
        ("cooling", lambda s: s.cooling),
        ("role", lambda s: s.role),
    ],
    "cables": [
        ("id", lambda c: c.id),
        ("media", lambda c: c.media),
        ("links", lambda c: f"{c.links}× {c.gbps}G"),
        ("end a", lambda c: f"{c.a_ends}× {c.a_form_factor}"),
        ("end b", lambda c: f"{c.b_ends}× {c.b_form_factor}"),
        ("reach m", lambda c: _num(c.max_reach_m)),
        ("W a/b", lambda c: f"{_num(c.power_w_per_a_end)}/{_num(c.power_w_per_b_end)}"),
    ],
    "racks": [
        ("id", lambda r: r.id),
        ("kW", lambda r: _num(r.power_kw)),
        ("U", lambda r: r.rack_units),
        ("cooling", lambda r: r.cooling),
    ],
    "storage": [
        ("id", lambda s: s.id),
        ("kind", lambda s: s.kind),
        ("TB", lambda s: _num(s.capacity_tb)),
        ("read GB/s", lambda s: _num(s.read_gb_per_s)),
        ("write GB/s", lambda s: _num(s.write_gb_per_s)),
        ("latency", lambda s: s.latency_class),
        ("power W", lambda s: _num(s.power_w)),
        ("RU", lambda s: s.rack_units),
    ],
    "control": [
        ("id", lambda c: c.id),
        ("role", lambda c: c.role),
        ("power W", lambda c: _num(c.power_w)),
        ("RU", lambda c: c.rack_units),
        ("cooling", lambda c: c.cooling),
    ],
    "models": [
        ("id", lambda m: m.id),
        ("params B", lambda m: _num(m.params_b)),
        ("layers", lambda m: m.layers),
        ("hidden", lambda m: m.hidden_size),
        ("heads/kv", lambda m: f"{m.attention_heads}/{m.kv_heads}"),
        ("ffn", lambda m: m.ffn_hidden_size),
        ("vocab", lambda m: m.vocab_size),
    ],
}


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns padded to their widest cell, two spaces apart; the last column unpadded."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(headers[i]), *(len(row[i]) for row in cells)) if cells else len(headers[i])
              for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        padded = [value.ljust(widths[i]) for i, value in enumerate(values[:-1])]
        return "  ".join([*padded, values[-1]]).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths]), *(line(row) for row in cells)])


def _fail(message: str) -> None:
    err(message)
    raise typer.Exit(EXIT_INPUT)


@app.command("catalog", help="List the built-in catalog: KIND is one of " + ", ".join(KINDS)
             + "; without KIND, count the items of each kind.")
def catalog(
    kind: str | None = typer.Argument(None, metavar="KIND", help="What to list: " + ", ".join(KINDS) + "."),
    price_book: str | None = typer.Option(
        None, "--price-book", metavar="ID",
        help="Add a price column from this price book ('prices': list only this book).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the items as a JSON list on stdout."),
) -> None:
    if kind is not None and kind not in KINDS:
        _fail(f"unknown catalog kind {kind!r}; expected one of: {', '.join(KINDS)}")

    from topoopt.catalog import load_builtin_catalog

    cat = load_builtin_catalog()
    books = {book.id: book for book in cat.price_books}
    if price_book is not None and price_book not in books:
        _fail(f"unknown price book {price_book!r}; expected one of: {', '.join(sorted(books))}")

    if kind is None:
        counts = {name: len(getattr(cat, name)) for name in ITEM_KINDS}
        counts["price_books"] = len(cat.price_books)
        if json_out:
            typer.echo(json.dumps(counts, indent=2))
        else:
            typer.echo(render_table(["kind", "items"], list(counts.items())))
        return

    if kind == "prices":
        selected = [books[price_book]] if price_book else list(books.values())
        rows = [
            {"book": book.id, "item": item_id, "price": entry.price, "currency": book.currency,
             "basis": book.basis, "provenance": entry.provenance, "as_of": entry.as_of, "offered": entry.offered,
             "source": entry.source}
            for book in selected for item_id, entry in book.prices.items()
        ]
        if json_out:
            typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        else:
            table = [[r["book"], r["item"], _num(r["price"]), f"{r['currency']} {r['basis']}",
                      r["provenance"] + (f" {r['as_of']}" if r["as_of"] else "") + ("" if r["offered"] else ", not offered"),
                      r["source"]] for r in rows]
            typer.echo(fit_to_terminal(render_table(["book", "item", "price", "unit", "provenance", "source"], table), clip=True))
        return

    items = getattr(cat, kind)
    if json_out:
        typer.echo(json.dumps([item.model_dump(mode="json") for item in items], indent=2, ensure_ascii=False))
        return
    columns = list(COLUMNS[kind])
    if price_book is not None:
        book = books[price_book]
        columns.append((f"price {book.currency}", lambda item: _num(book.prices[item.id].price)
                        if item.id in book.prices else "-"))
        columns.append(("provenance", lambda item: (book.prices[item.id].provenance
                                                     + ("" if book.prices[item.id].offered else ", not offered"))
                        if item.id in book.prices else "-"))
    columns.append(("source", lambda item: item.source))
    table = render_table([header for header, _ in columns], [[read(item) for _, read in columns] for item in items])
    typer.echo(fit_to_terminal(table, clip=True))  # the long column, the source, is the last one
