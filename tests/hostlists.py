"""Slurm hostlist expansion written independently of :func:`topoopt.fabric.names.hostlist`."""

from __future__ import annotations

import itertools
import re


def expand(expression: str) -> list[str]:
    """Slurm hostlist expansion (every combination of the bracketed ranges), written independently."""
    names = []
    for term in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", expression):
        pieces = re.split(r"(\[[^\]]*\])", term)
        choices = []
        for piece in pieces:
            if piece.startswith("["):
                values = []
                for part in piece[1:-1].split(","):
                    low, _, high = part.partition("-")
                    width = len(low)
                    values += [f"{n:0{width}d}" for n in range(int(low), int(high or low) + 1)]
                choices.append(values)
            else:
                choices.append([piece])
        names += ["".join(combo) for combo in itertools.product(*choices)]
    return names
