"""The one way topoopt writes a CSV file: every table export goes through :func:`write_csv`.

Files are UTF-8 with a byte-order mark (``utf-8-sig``): without it LibreOffice's and Excel's
default import read UTF-8 as a legacy code page and show ``¥ × §`` as mojibake; with it both
detect UTF-8, and NetBox's import decodes uploads as ``utf-8-sig`` too. Python readers should
open the files with ``encoding="utf-8-sig"``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection":
https://owasp.org/www-community/attacks/CSV_Injection)."""

_PLAIN_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def spreadsheet_safe(cell: object) -> object:
    """A cell no spreadsheet evaluates: text starting with ``= + - @``, a tab or a carriage return
    gets a leading ``'`` (the OWASP rule); numbers, and text that is a plain number such as
    ``-12.5``, are left as they are.

    >>> [spreadsheet_safe(c) for c in ('=HYPERLINK("x")', "@SUM(A1)", "-12.5", -3, "leaf-01")]
    ['\\'=HYPERLINK("x")', "'@SUM(A1)", '-12.5', -3, 'leaf-01']
    """
    if isinstance(cell, str) and cell.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """Write ``columns`` then ``rows`` to ``path`` as UTF-8 CSV with a byte-order mark, every cell
    made :func:`spreadsheet_safe`; return ``path``."""
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow([spreadsheet_safe(cell) for cell in columns])
        writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    return path
