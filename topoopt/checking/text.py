"""Readable amounts for violation details: every number carries its unit."""

from __future__ import annotations

from topoopt.checking.units import W_PER_KW


def num(value: float) -> str:
    """``12``, ``12.5``, ``1,048,576``: integers without a trailing ``.0``, floats to 3 significant decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def kw(power_w: float) -> str:
    """Watts shown as kilowatts, e.g. ``10400`` -> ``"10.4 kW"``; more decimals only when they matter."""
    value_kw = power_w / W_PER_KW
    if round(value_kw, 1) == value_kw:
        return f"{value_kw:,.1f} kW"
    return f"{num(value_kw)} kW"


def money(amount: float, currency: str) -> str:
    return f"{num(amount)} {currency}"


def close(a: float, b: float, rel: float = 1e-6, abs_: float = 1e-6) -> bool:
    """Equality for recorded floats (lengths, ratios, kW) that went through JSON."""
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def ceil_div(numerator: int, denominator: int) -> int:
    """Exact integer ceiling of ``numerator / denominator`` for positive integers."""
    return -(-numerator // denominator)
