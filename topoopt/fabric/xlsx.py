"""``bom.xlsx``: the bill of materials as a workbook (openpyxl), numbers typed, nothing evaluated.

Sheets:

* ``bom`` — every line of ``bom.csv`` (the cost breakdown; quantities only for a design without a
  cost) and the total, all prices and quantities as numbers;
* ``compute``, ``storage``, ``management`` — what each network installs: its servers or storage
  units, NICs, switches and cable assemblies, counted from the built installation, priced at the
  breakdown's unit prices. Racks serve every network and appear on ``bom`` only, and so does
  what ``bom`` does not list (NICs built into a server). A sheet is written only for a network
  with equipment.

Totals are computed here, not as spreadsheet formulas, and every text cell is stored as text: a
name beginning with ``=`` stays a name, never a formula.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell.cell import Cell
from openpyxl.worksheet.worksheet import Worksheet

from topoopt.fabric.build import Fabric
from topoopt.models.design import SolveResult

NETWORKS = ("compute", "storage", "management")
COLUMNS = ["category", "part", "description", "quantity", "unit_price", "extended_price"]
DEVICE_CATEGORY = {"node": "server", "head": "server", "storage": "storage", "cold-storage": "storage", "pdu": "rack"}
"""Cost category of a device role (a rack PDU is priced in its rack, so it has no line of its own);
every other role is a switch."""


def installed(fabric: Fabric) -> Counter:
    """``(category, item, network) -> quantity`` of everything the installation puts on a network."""
    counts: Counter = Counter()
    for device in fabric.devices:
        counts[DEVICE_CATEGORY.get(device.role, "switch"), device.model, device.network] += 1
    for bundle in fabric.links:
        for part, count in fabric.parts_bought(bundle).items():
            counts["cable", part, bundle.network] += count
    hw, design = fabric.hardware, fabric.design
    if hw.nic is not None:
        counts["nic", hw.nic.id, "compute"] += len(fabric.nodes) * hw.rails
    if hw.storage_net.nic is not None and hw.storage_net.nics_bought:
        counts["nic", hw.storage_net.nic.id, "storage"] += len(fabric.nodes) * design.storage_network.nics_per_node
    return counts


def write_bom_xlsx(path: Path, result: SolveResult, fabric: Fabric, describe: dict[str, str],
                   counts: list[tuple[str, str, int]], title: str) -> Path:
    """Write ``bom.xlsx``; ``describe`` maps item ids to descriptions, ``counts`` are the
    ``(category, item, quantity)`` of a design without a cost."""
    book = Workbook()
    sheet = book.active
    sheet.title = "bom"
    cost = result.cost
    _row(sheet, [title])
    heading = f"{cost.currency} ({cost.basis})" if cost else "quantities (no prices)"
    _row(sheet, [heading])
    sheet.append(COLUMNS + ["source"])
    unit_price: dict[tuple[str, str], float | None] = {}
    if cost is None:
        for category, item, quantity in counts:
            unit_price[category, item] = None
            _row(sheet, [category, item, describe.get(item, ""), quantity, None, None, ""])
    else:
        for line in cost.breakdown:
            unit_price[line.category, line.item] = line.unit_price
            _row(sheet, [line.category, line.item, describe.get(line.item, ""), line.quantity, line.unit_price,
                         line.total, line.source])
        _row(sheet, ["total", "", f"total, {cost.currency} ({cost.basis})", None, None, cost.total, ""])
    per_network = installed(fabric)
    for network in NETWORKS:
        lines = sorted((category, item, quantity) for (category, item, net), quantity in per_network.items()
                       if net == network and quantity and (category, item) in unit_price)
        if not lines:
            continue
        page = book.create_sheet(network)
        _row(page, [f"{title}: {network} network"])
        page.append(COLUMNS)
        total = 0.0
        for category, item, quantity in lines:
            price = unit_price.get((category, item))
            extended = None if price is None else price * quantity
            total += extended or 0.0
            _row(page, [category, item, describe.get(item, ""), quantity, price, extended])
        if cost is not None:
            _row(page, ["total", "", f"{network} network, {cost.currency}", None, None, total])
    for page in book.worksheets:
        page.column_dimensions["C"].width = 60
    book.save(path)
    return path


def _row(sheet: Worksheet, values: list) -> None:
    """Append a row; strings are stored as text even when they look like a formula."""
    cells = []
    for value in values:
        cell = Cell(sheet, value=value)
        if isinstance(value, str):
            cell.data_type = "s"
        cells.append(cell)
    sheet.append(cells)
