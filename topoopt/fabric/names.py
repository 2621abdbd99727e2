"""Stable, human names for devices, ports and racks, and Slurm hostlist compression.

Naming scheme (numbers are 1-based and zero-padded to the width of the largest one, at least 2):

* compute racks ``rack01`` …, switch racks ``net01`` …, storage racks ``stor01`` …;
* nodes ``rack03-node02``: the rack the node sits in, then its slot in that rack counted from
  the bottom (so the nodes of racks 1–16 are the Slurm hostlist ``rack[01-16]-node[01-04]``);
* leaves ``leaf-r1-07`` (rail 1, 7th leaf of that rail) in a rail-optimized fabric (one rail per
  leaf), ``leaf-r5-8-07`` (rails 5–8, 7th leaf of that rail group) with several rails per leaf,
  else ``leaf-07`` (one rail group: every rail of a node on one leaf); a rail-only 1-tier fabric's
  switch is the one leaf of its group (``leaf-r1-4-01``). In the Slurm topology a scalable unit's
  leaves (and a rail-only fabric's switches) stand as one switch ``su07`` (:mod:`topoopt.fabric.slurm`);
* spines ``spine-05`` (numbered over all pods), cores ``core-p2-03`` (plane 2, 3rd core);
* storage units ``storage-01`` (hot tier) and ``cold-01`` (cold tier);
* storage network: leaves ``sleaf-01``, spines ``sspine-01``, cores ``score-p1-01`` (plane 1); a converged storage network's units
  hang off compute leaves ``leaf-st-01``;
* management network: leaves ``mgmt-01``, aggregation switches ``mgmt-agg-01``.

Ports: a switch port is ``p<cage>`` when a cage carries one logical port at the link speed and
``p<cage>/<lane>`` when it carries several (a twin-port OSFP cage has ``p1/1`` and ``p1/2``); a node
port is ``nic<rail>`` when each NIC has its own cage, else ``p<cage>/<lane>`` (DGX twin-port cages).
The ``p`` prefix keeps spreadsheets from reading ``1/2`` as a date. Storage-NIC ports are ``snic<nic>``
(``snic<nic>/<port>`` on multi-port NICs), storage-unit data ports ``data<n>``, and every device's
management ports ``mgmt`` (in-band) and ``oob`` (out-of-band; ``oob1``, ``oob2`` … when several).
"""

from __future__ import annotations

import re


def width(total: int) -> int:
    """Digits used to number ``total`` items (at least 2, so names sort and line up)."""
    return max(2, len(str(max(total, 1))))


def numbered(prefix: str, index: int, total: int) -> str:
    """``prefix`` followed by the 1-based ``index`` padded for ``total`` items."""
    return f"{prefix}{index:0{width(total)}d}"


UPLINK_PORT_PREFIX = "up"
"""Ports of a management switch's own uplink cages: ``up1`` … (device cages are ``p1`` …)."""


def port_names(cages: int, ports_per_cage: int, prefix: str = "p") -> list[str]:
    """Logical port names in port-index order: cage-major, lane-minor."""
    if ports_per_cage == 1:
        return [f"{prefix}{cage}" for cage in range(1, cages + 1)]
    return [f"{prefix}{cage}/{lane}" for cage in range(1, cages + 1) for lane in range(1, ports_per_cage + 1)]


def cage_of(port: str) -> str:
    """The cage of a logical port named by :func:`port_names` (``p3/2`` → ``p3``; ``p3`` is its own cage)."""
    return port.split("/", 1)[0]


def node_port_names(rails: int, ports_per_cage: int) -> list[str]:
    """Node compute port per rail (index = rail − 1)."""
    if ports_per_cage == 1:
        return [f"nic{rail}" for rail in range(1, rails + 1)]
    cages = -(-rails // ports_per_cage)
    return port_names(cages, ports_per_cage)[:rails]


_ONE_NUMBER = re.compile(r"^(\D*)(\d+)$")
_TWO_NUMBERS = re.compile(r"^(\D*)(\d+)(\D+)(\d+)$")


def _ranges(numbers: list[int], digits: int, *, bracket_one: bool = False) -> str:
    """``[1, 2, 3, 5]`` → ``"[1-3,5]"``; a single number has no brackets unless ``bracket_one``."""
    if len(numbers) == 1 and not bracket_one:
        return f"{numbers[0]:0{digits}d}"
    parts = []
    start = previous = numbers[0]
    for number in numbers[1:] + [None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        parts.append(f"{start:0{digits}d}" if start == previous else f"{start:0{digits}d}-{previous:0{digits}d}")
        if number is not None:
            start = previous = number
    return "[" + ",".join(parts) + "]"


def _shape(name: str) -> tuple:
    """``(pattern, first number, second number)`` of a name with one or two numbers."""
    two = _TWO_NUMBERS.match(name)
    if two:
        prefix, a, middle, b = two.groups()
        return (prefix, len(a), middle, len(b)), int(a), int(b)
    one = _ONE_NUMBER.match(name)
    if one:
        prefix, a = one.groups()
        return (prefix, len(a), None, 0), int(a), None
    return (name, 0, None, 0), None, None


def hostlist(names: list[str]) -> str:
    """Compress names into a Slurm hostlist expression (one or two numeric ranges per term).

    Names of the same shape are merged in order: runs that differ in the last number become one
    range, and consecutive runs with the same last numbers share one term, so the nodes of 16 full
    racks are ``rack[01-16]-node[01-04]`` (Slurm expands every combination of the ranges).

    A term with a bracket always ends with one: before Slurm 23.11 the parser
    (``_hostlist_create_bracketed`` in ``src/common/hostlist.c``) rejects a term whose last ``]``
    is followed by more text, so one node per rack is ``rack[01-06]-node[01]``, never
    ``rack[01-06]-node01`` (fatal "Invalid node name" in slurmctld 22.05). Every Slurm from 22.05
    on reads the bracketed single number.

    >>> hostlist(["su01", "su02", "su03", "su05"])
    'su[01-03,05]'
    >>> hostlist(["rack01-node01", "rack01-node02", "rack02-node01", "rack02-node02", "rack03-node01"])
    'rack[01-02]-node[01-02],rack03-node01'
    >>> hostlist(["rack01-node01", "rack02-node01", "rack03-node01"])
    'rack[01-03]-node[01]'
    """
    terms: list[tuple[tuple, list[int], list[int] | None]] = []
    for name in names:
        pattern, first, second = _shape(name)
        if first is None:
            terms.append((pattern, [], None))
            continue
        if second is None:
            if terms and terms[-1][0] == pattern and terms[-1][2] is None:
                terms[-1][1].append(first)
            else:
                terms.append((pattern, [first], None))
            continue
        if terms and terms[-1][0] == pattern and terms[-1][1] == [first]:
            terms[-1][2].append(second)
        else:
            terms.append((pattern, [first], [second]))
    merged: list[tuple[tuple, list[int], list[int] | None]] = []
    for pattern, firsts, seconds in terms:
        last = merged[-1] if merged else None
        if seconds is not None and last is not None and last[0] == pattern and last[2] == seconds:
            last[1].extend(firsts)
        else:
            merged.append((pattern, list(firsts), seconds))
    out = []
    for (prefix, digits_a, middle, digits_b), firsts, seconds in merged:
        if not firsts:
            out.append(prefix)
        elif seconds is None:
            out.append(f"{prefix}{_ranges(firsts, digits_a)}")
        else:
            first = _ranges(firsts, digits_a)
            # A bracketed first number forces brackets on the second (see the docstring).
            out.append(f"{prefix}{first}{middle}{_ranges(seconds, digits_b, bracket_one=first.startswith('['))}")
    return ",".join(out)


def storage_port_names(nics: int, ports_per_nic: int) -> list[str]:
    """A node's storage-NIC ports, NIC-major: ``snic1`` … for single-port NICs, else ``snic1/1``, ``snic1/2`` …"""
    if ports_per_nic == 1:
        return [f"snic{nic}" for nic in range(1, nics + 1)]
    return [f"snic{nic}/{port}" for nic in range(1, nics + 1) for port in range(1, ports_per_nic + 1)]


def cabled_storage_port_names(nics: int, ports_per_nic: int, cabled: int) -> list[str]:
    """The ``cabled`` storage ports of a node, port-major so they spread over the NICs: port 1 of
    every NIC, then port 2 … (a DGX cables port 1 of both storage cards; port 2 is in-band)."""
    names = storage_port_names(nics, ports_per_nic)
    order = sorted(range(len(names)), key=lambda i: (i % ports_per_nic, i // ports_per_nic))
    return [names[i] for i in order[:cabled]]


def data_port_names(ports: int) -> list[str]:
    """A storage unit's data-network ports ``data1`` …"""
    return [f"data{port}" for port in range(1, ports + 1)]


def management_port_names(oob_ports: int, in_band: bool = True) -> list[str]:
    """A device's management ports: a server's or storage unit's in-band ``mgmt``, then ``oob``
    (or ``oob1``, ``oob2`` …); a switch's own management ports only, ``mgmt`` (or ``mgmt1`` …)."""
    if not in_band:
        return ["mgmt"] if oob_ports == 1 else [f"mgmt{port}" for port in range(1, oob_ports + 1)]
    if oob_ports == 1:
        return ["mgmt", "oob"]
    return ["mgmt"] + [f"oob{port}" for port in range(1, oob_ports + 1)]
