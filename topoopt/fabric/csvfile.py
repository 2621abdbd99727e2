"""The one way topoopt writes a CSV file: every table export goes through :func:`write_csv`."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """Write ``columns`` then ``rows`` to ``path`` as UTF-8 CSV; return ``path``."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return path
