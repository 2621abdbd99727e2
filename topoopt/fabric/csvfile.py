"""The one way topoopt writes a CSV file: every table export goes through :func:`write_csv`.

Files are UTF-8 with a byte-order mark (``utf-8-sig``): without it LibreOffice's and Excel's
default import read UTF-8 as a legacy code page and show ``¥ × §`` as mojibake; with it both
detect UTF-8, and NetBox's import decodes uploads as ``utf-8-sig`` too. Python readers should
open the files with ``encoding="utf-8-sig"``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """Write ``columns`` then ``rows`` to ``path`` as UTF-8 CSV with a byte-order mark; return ``path``."""
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return path
