"""``bom.xlsx`` read back with openpyxl, and every CSV's encoding, for every bundled example."""

from __future__ import annotations

import csv
from collections import Counter

import pytest
from example_outputs import FEASIBLE, written_example
from openpyxl import load_workbook
from solver_fixtures import optimal, tiny

from topoopt.fabric import render
from topoopt.fabric.xlsx import NETWORKS


def sheet_rows(sheet, header: str = "category") -> list[dict]:
    """Rows below the header row (the first row whose first cell is ``header``)."""
    rows = list(sheet.iter_rows(values_only=True))
    start = next(i for i, row in enumerate(rows) if row[0] == header)
    names = rows[start]
    return [dict(zip(names, row)) for row in rows[start + 1:]]


@pytest.mark.parametrize("name", FEASIBLE)
def test_bom_xlsx_is_the_bom_with_typed_numbers_and_a_sheet_per_network(name):
    written = written_example(name)
    book = load_workbook(written.out / "bom.xlsx")
    assert not [c.coordinate for s in book.worksheets for row in s.iter_rows() for c in row if c.data_type == "f"]
    lines = sheet_rows(book["bom"])
    with open(written.out / "bom.csv", newline="", encoding="utf-8-sig") as handle:
        expected = list(csv.DictReader(handle))
    assert [(r["category"], r["part"] or "") for r in lines] == [(r["category"], r["part"]) for r in expected]
    cost = written.result.cost
    for line, row in zip(lines, expected):
        if line["category"] != "total":
            assert isinstance(line["quantity"], int) and line["quantity"] == int(row["quantity"])
            assert isinstance(line["unit_price"], (int, float))
    assert lines[-1]["extended_price"] == pytest.approx(cost.total)
    assert sum(r["extended_price"] for r in lines[:-1]) == pytest.approx(cost.total)
    # The network sheets split the installed equipment; with nothing part-filled they add up to the BOM.
    assert {s.title for s in book.worksheets} - {"bom"} <= set(NETWORKS)
    assert "compute" in book.sheetnames
    split: Counter = Counter()
    for network in set(book.sheetnames) & set(NETWORKS):
        rows = sheet_rows(book[network])
        for row in rows[:-1]:
            split[row["category"], row["part"]] += row["quantity"]
            assert row["extended_price"] == pytest.approx(row["quantity"] * row["unit_price"])
        assert rows[-1]["extended_price"] == pytest.approx(sum(r["extended_price"] for r in rows[:-1]))
    priced = {(r["category"], r["part"]): r["quantity"] for r in lines[:-1] if r["category"] != "rack"}
    nodes = split["server", written.result.design.server]
    assert nodes == written.result.design.nodes
    if not written.fabric.warnings:
        assert {key: q for key, q in split.items()} == priced


@pytest.mark.parametrize("name", FEASIBLE)
def test_every_csv_has_a_utf8_byte_order_mark(name):
    out = written_example(name).out
    files = sorted(out.glob("*.csv"))
    assert len(files) >= 8
    for path in files:
        assert path.read_bytes().startswith(b"\xef\xbb\xbf"), path.name


def test_formula_looking_names_stay_text(tmp_path):
    instance = tiny(name="=HYPERLINK(\"http://x\",\"click\")")
    render(optimal(instance), instance, tmp_path)
    book = load_workbook(tmp_path / "bom.xlsx")
    title = book["bom"]["A1"]
    assert title.value == instance.name and title.data_type == "s"
    assert not [c for s in book.worksheets for row in s.iter_rows() for c in row if c.data_type == "f"]
