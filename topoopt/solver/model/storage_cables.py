"""Storage switch-to-switch cables, counted as the compute fabric's (docs/model.md, "Storage
network"): a one-piece cable joins one pair of switches, ``pairs × ceil(links per pair / q)``,
and serves only when its ``q`` links divide the links per pair; a transceiver kit's module ports
are cabled one by one, so kits are counted by the cages their modules fill,
``max(ceil(A / a_ends), ceil(B / b_ends))`` with ``A`` (``B``) the cages on the upper (lower)
switches, each switch filling ``ceil(its links of the class / ports per cage)``.

Leaf–spine (2 tiers: ``S`` spines of ``L·m`` links, leaves of ``u``; 3 tiers: the spines of full
pods carry ``P·m``, those of the last ``last·m`` with ``last = L − P·(pods − 1)``) and, in 3 tiers,
spine–core (cores of ``pods·m2`` links, spines of ``u2``, ``m2 = u2 / C``). The ceilings of the
variable link counts are auxiliary variables, so the model's size does not depend on the node
count.
"""

from __future__ import annotations

from topoopt.options.networks import StorageNetOption
from topoopt.options.tables import RUN_LEVELS
from topoopt.solver.model.core import by_value
from topoopt.solver.model.integers import ceil_div


def leaf_spine_case(s: StorageNetOption, level: str) -> tuple | None:
    """How the storage leaf–spine part of ``s`` at ``level`` is counted: ``("pairs", cost per
    leaf)`` (one-piece, or one link per part), ``("kits", S, m, P, ppc, a_ends, b_ends, price)``
    (``P`` the leaves per pod should ``s`` take 3 tiers, else 0), or None (no such class or part)."""
    part = s.part("storage-leaf-spine", level) if s.tiers == 2 else None
    if part is None:
        return None
    price, q = part.unit_price or 0, part.part.links
    if not s.spines:  # one link per part: one assembly per link, in 2 tiers and 3
        return "pairs", s.up * price
    m = s.links_per_leaf_spine
    if part.part.one_piece or q == 1:
        return "pairs", s.spines * ceil_div(m, q) * price
    per_pod = s.pod[0] if s.three_tier_links else 0
    return ("kits", s.spines, m, per_pod, s.switch.ports_per_cage[s.gbps], part.part.a_ends, part.part.b_ends,
            price)


def spine_core_case(s: StorageNetOption, level: str) -> tuple | None:
    """How the spine–core part of ``s`` at ``level`` is counted should ``s`` take 3 tiers:
    ``(kind, Q, u2, together, ppc, a_ends, b_ends, q, price)`` with ``kind`` ``"pairs"``
    (one-piece, or one link per part) or ``"kits"``, or None (no third tier or no part)."""
    part = s.core_part.get(level) if s.three_tier_links else None
    if part is None:
        return None
    _, planes, spine_up = s.pod
    p = part.part
    kind = "pairs" if p.one_piece or p.links == 1 else "kits"
    return (kind, planes, spine_up, p.links_together, s.switch.ports_per_cage[s.gbps], p.a_ends, p.b_ends, p.links,
            part.unit_price or 0)


class _Kits:
    """One class's kits: ``kits = max(upper, lower)``, each end ``ceil(cages / ends per kit)``."""

    def __init__(self, dm, cls: str) -> None:
        self.model = dm.model
        self.ends = [dm.int_var(10**9, f"{cls}_kits_{end}") for end in ("upper", "lower")]
        self.kits = dm.int_var(10**9, f"{cls}_kits")
        dm.model.add_max_equality(self.kits, self.ends)

    def count(self, upper, lower, a_ends: int, b_ends: int, conditions: list) -> None:
        for var, filled, ends in zip(self.ends, (upper, lower), (a_ends, b_ends)):
            self.model.add(ends * var >= filled).only_enforce_if(conditions)
            self.model.add(ends * var <= filled + ends - 1).only_enforce_if(conditions)


class _Ceilings:
    """Shared variables ``ceil(expression / divisor)``, one per (name, coefficients, divisor);
    defined whatever the option (an expression of another option's pods may be negative)."""

    def __init__(self, dm) -> None:
        self.dm, self.known = dm, {}

    def of(self, name: str, key: tuple, expression, divisor: int):
        if (name, key, divisor) not in self.known:
            var = self.dm.int_var(10**9, f"{name}_{len(self.known)}", -(10**9))
            self.dm.model.add(divisor * var >= expression)
            self.dm.model.add(divisor * var <= expression + divisor - 1)
            self.known[name, key, divisor] = var
        return self.known[name, key, divisor]


def storage_switch_cables(dm, options: list, literals: list) -> None:
    """The costs ``storage_leaf_spine`` and ``storage_spine_core`` (module docstring); the kits
    are ``dm.net.storage_kits[cls].kits``; a part whose links together do not divide the links per
    pair rules its option out there (port_form_factor_match)."""
    m, n = dm.model, dm.net
    ceilings = _Ceilings(dm)
    n.storage_kits = {cls: _Kits(dm, cls) for cls in ("storage-leaf-spine", "storage-spine-core")}

    def placed(case):
        return lambda s: tuple((level, case(s, level)) for level in RUN_LEVELS)

    for s, lit in zip(options, literals):
        for level in RUN_LEVELS:
            part = s.part("storage-leaf-spine", level) if s.tiers == 2 and s.spines else None
            if part is not None and s.links_per_leaf_spine % part.part.links_together:
                dm.pair_rules.append((frozenset({"port_form_factor_match"}), (lit, dm.placement[level])))
    cost = n.cost["storage_leaf_spine"]
    for by_level, lit in by_value(dm, options, literals, placed(leaf_spine_case), "storage_ls_case").items():
        for case, where in dm.at_placements(dict(by_level)):
            if case is None:
                m.add(cost == 0).only_enforce_if([lit, *where])
            elif case[0] == "pairs":
                m.add(cost == case[1] * n.leaves).only_enforce_if([lit, *where])
            else:
                _leaf_spine_kits(dm, ceilings, case, [lit, *where])
    cost = n.cost["storage_spine_core"]
    m.add(cost == 0).only_enforce_if(n.three_tiers.Not())
    for by_level, lit in by_value(dm, options, literals, placed(spine_core_case), "storage_sc_case").items():
        for case, where in dm.at_placements(dict(by_level)):
            if case is not None:  # else no third tier here (network_definitions._three_tier_shape)
                _spine_core(dm, ceilings, case, [lit, n.three_tiers, *where])


def _leaf_spine_kits(dm, ceilings: _Ceilings, case: tuple, conditions: list) -> None:
    """Leaf–spine kits by cages: 2 tiers ``A = S·ceil(L·m / c)``; 3 tiers ``A = Q·((pods − 1)·
    ceil(P·m / c) + ceil(last·m / c))``; both ``B = L·ceil(u / c)``; cost = kits × price."""
    m, n = dm.model, dm.net
    _, spines, links, per_pod, ppc, a_ends, b_ends, price = case
    kits = n.storage_kits["storage-leaf-spine"]
    lower = ceil_div(spines * links, ppc) * n.leaves
    per_spine = ceilings.of("storage_spine_cages", (links,), links * n.leaves, ppc)
    kits.count(spines * per_spine, lower, a_ends, b_ends, [*conditions, n.three_tiers.Not()])
    if per_pod:
        full = ceil_div(per_pod * links, ppc)
        last = ceilings.of("storage_last_pod_cages", (links, per_pod),
                           links * n.leaves - per_pod * links * n.pods + per_pod * links, ppc)
        upper = spines * full * n.pods - spines * full + spines * last
        kits.count(upper, lower, a_ends, b_ends, [*conditions, n.three_tiers])
    m.add(n.cost["storage_leaf_spine"] == price * kits.kits).only_enforce_if(conditions)


def _spine_core(dm, ceilings: _Ceilings, case: tuple, conditions: list) -> None:
    """Spine–core, per cores-per-plane literal C (``m2 = u2 / C``): pairs ``spines·C·ceil(m2 /
    q)``; kits by cages, ``A = Q·C·ceil(pods·m2 / c)``, ``B = pods·Q·ceil(u2 / c)``."""
    m, n = dm.model, dm.net
    kind, planes, spine_up, together, ppc, a_ends, b_ends, q, price = case
    cost, kits = n.cost["storage_spine_core"], n.storage_kits["storage-spine-core"]
    for c, c_lit in n.cores_per_plane.items():
        if spine_up % c:
            continue  # ruled out (network_definitions._three_tier_shape)
        m2, where = spine_up // c, [*conditions, c_lit]
        if m2 % together:
            dm.forbid("port_form_factor_match", *where)
        elif kind == "pairs":
            m.add(cost == planes * c * ceil_div(m2, q) * price * n.pods).only_enforce_if(where)
        else:
            per_core = ceilings.of("storage_core_cages", (m2,), m2 * n.pods, ppc)
            kits.count(planes * c * per_core, planes * ceil_div(spine_up, ppc) * n.pods, a_ends, b_ends, where)
            m.add(cost == price * kits.kits).only_enforce_if(where)
