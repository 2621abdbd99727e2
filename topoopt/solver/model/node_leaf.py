"""Whole node–leaf assemblies per leaf (family ``port_form_factor_match``): an assembly's switch
end sits on one leaf, so a leaf takes whole assemblies of its own nodes (docs/model.md, "Cables
and transceivers")."""

from __future__ import annotations

from typing import NamedTuple

from topoopt.options.tables import MAX_NODES
from topoopt.solver.model.core import DesignModel

FAMILY = "port_form_factor_match"


def whole_assemblies_per_leaf(dm: DesignModel) -> None:
    """Each rail share needs the fewest assemblies of ``a`` nodes that ``x`` leaves of at most ``c =
    ceil(n/x)`` nodes take: ``A = ceil(n/a)`` when ``a`` divides ``c``; else, ``ρ = c mod a``,
    ``x·floor(c/a)`` plus one more on each of the ``t = ceil((n − x·(c − ρ))/ρ)`` leaves filled to
    ``c`` (fabric/devices.py ``deal``; ``definitions.node_leaf_assemblies`` bounds ``A`` below).
    ``c`` enters as ``P = c·x`` with ``n ≤ P ≤ n + x − 1`` (:func:`_fullest_leaf`)."""
    if not dm.node_leaf_grains:
        return
    fullest = _fullest_leaf(dm)
    rests: dict[int, list] = {}  # c mod a, once per a: entries of one a share it
    for a, conditions in dm.node_leaf_grains:
        dm.model.add_bool_or([*(lit.Not() for lit in conditions), fullest.no_leaves, fullest.defined])
        if a not in rests:
            rests[a] = _rest_literals(dm, a, fullest.nodes)
        _assemblies_per_share(dm, dm.node_leaf_per_share, a, fullest, rests[a], conditions)


def ceiling_without_the_family(dm: DesignModel, built: bool) -> None:
    """Where the family does not hold (``built``: relaxed by its literal; else not built at all),
    the count it would make exact keeps a ceiling true of the exact count: each of the ``x``
    leaves holds at most one part-filled assembly, so ``a·A ≤ n + (a − 1)·x`` (``+ a − 1`` more
    keeps it true at ``x = 0``). Without it an explanation's trial searched a free count (an
    impossible ask's explanation took twice as long); where the family holds it is implied, so
    left out."""
    v = dm.vars
    when = [dm.assumption[FAMILY].Not()] if built else []
    for a, conditions in dm.node_leaf_grains:
        limit = v.nodes + (a - 1) * (v.leaves_per_rail + 1)
        dm.model.add(a * dm.node_leaf_per_share <= limit).only_enforce_if([*conditions, *when])


class FullestLeaf(NamedTuple):
    """The nodes on the fullest leaf of a rail group, ``c = ceil(n/x)`` (one switch per group in
    1 tier: ``x = 1``, ``c = n``), and ``P = c·x``, both bound only where ``defined`` holds.
    ``no_leaves``: ``x = 0``, which only an explanation's relaxed families allow."""

    nodes: object
    nodes_x_leaves: object
    defined: object
    no_leaves: object


def _fullest_leaf(dm: DesignModel) -> FullestLeaf:
    """``c`` and ``P``, defined where an assembly of several nodes is in use (elsewhere they are
    left free, which keeps the search off them). ``c`` may reach every node: an explanation may
    relax the rule that a leaf's ports hold its nodes. (``c`` in bits, ``P`` a sum of ``2^i·x``,
    searched as fast on the examples but left the explanations' LP-guided trials lost.)"""
    v, m = dm.vars, dm.model
    c = dm.int_var(MAX_NODES, "fullest_leaf_nodes")
    product = dm.int_var(2 * MAX_NODES, "fullest_leaf_nodes_x_leaves")
    m.add_multiplication_equality(product, [c, v.leaves_per_rail])
    defined, no_leaves = m.new_bool_var("fullest_leaf_defined"), m.new_bool_var("no_leaves_per_rail")
    m.add(v.leaves_per_rail == 0).only_enforce_if(no_leaves)
    m.add(v.leaves_per_rail >= 1).only_enforce_if(no_leaves.Not())
    dm.add(FAMILY, m.add(product >= v.nodes), defined)
    dm.add(FAMILY, m.add(product <= v.nodes + v.leaves_per_rail - 1), defined)
    return FullestLeaf(c, product, defined, no_leaves)


def _rest_literals(dm: DesignModel, a: int, c) -> list:
    """One literal per value ``ρ`` of ``c mod a``."""
    m = dm.model
    whole = dm.int_var(MAX_NODES, f"fullest_leaf_assemblies_{a}")
    rest = dm.int_var(a - 1, f"fullest_leaf_rest_{a}")
    m.add(c == a * whole + rest)
    literals = []
    for rho in range(a):
        lit = m.new_bool_var(f"fullest_leaf_rest_{a}_is_{rho}")
        m.add(rest == rho).only_enforce_if(lit)
        m.add(rest != rho).only_enforce_if(lit.Not())
        literals.append(lit)
    return literals


def _assemblies_per_share(dm: DesignModel, per_share, a: int, fullest: FullestLeaf, rests: list,
                          conditions: list) -> None:
    """``per_share = A`` for ``a`` nodes per assembly (:func:`whole_assemblies_per_leaf`), under
    ``conditions``; ``rests[ρ]``: ``c mod a = ρ``."""
    v, m = dm.vars, dm.model
    product = fullest.nodes_x_leaves
    topped = dm.int_var(MAX_NODES, f"leaves_topped_{a}")
    for rho, lit in enumerate(rests):
        when = [*conditions, lit]
        if rho == 0:
            dm.add(FAMILY, m.add(a * per_share <= v.nodes + a - 1), *when)
            continue
        # n − x·(c − ρ) = n − P + ρ·x nodes are left for the leaves topped up to c.
        left = v.nodes - product + rho * v.leaves_per_rail
        dm.add(FAMILY, m.add(rho * topped >= left), *when)
        dm.add(FAMILY, m.add(rho * topped <= left + rho - 1), *when)
        dm.add(FAMILY, m.add(a * per_share == product - rho * v.leaves_per_rail + a * topped), *when)
