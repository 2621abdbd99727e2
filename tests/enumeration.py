"""The cheapest design by exhaustive enumeration, judged by the independent checker.

This is the brute-force oracle the CP-SAT designer is compared with (differential tests,
``benchmarks/run.py``). It imports nothing from ``topoopt.solver`` and never ortools: candidates
are every combination of the free decisions of docs/model.md ("Decisions")

    node configuration (server, NIC, rails, interconnect) × node count × fabric option (tiers,
    switch, leaf split, spines / links per leaf-spine pair / cores per plane) × cable part per
    link class × rack class × storage tier × storage network (converged, or storage NIC model and
    count, speed, storage switch, 1 or 2 tiers, spines) × cold tier × management switch,

with the storage unit counts the fewest that meet the needs (more units only add cost, power and
racks) and the storage and management networks' parts the cheapest admitted fitting ones
(tests/enumeration_networks.py). A storage network that costs no less, adds no less node power and
needs no fewer switches of any model than another with the same compute counts and cold tier is
skipped: it can only give a design no cheaper. Counts, power and rack arithmetic come from the checker's own rules
(``topoopt.checking.derive``), time to train and memory from ``topoopt.perf``.

Method. Every combination is screened by rules that can only reject what the checker would
reject too (ports, reach, form factors, pins, lists, prices, deadline, racks, site power, budget)
and priced as the checker's bill prices it. Two ways to find the optimum among the survivors:

* ``judge_all=True`` — the literal brute force: every survivor is written out as a
  :class:`~topoopt.models.design.Design`, judged by :func:`topoopt.checker.check_design` and, when
  accepted, priced by :func:`topoopt.checker.recompute_cost`; the cheapest accepted one wins.
* default — cheapest first: the ``keep`` cheapest survivors are written out and checked in order
  of cost; the first one the checker accepts is the optimum. A rule the screening does not know
  only costs a rejected candidate, never the optimum (as long as fewer than ``keep`` cheaper
  candidates are rejected, which the result reports). Same answer, far fewer checker calls.

``min_cost`` (with or without a deadline) is enumerated by :class:`Enumerator`; ``min_job_cost``
(rent per month × months of training, storage fed at the design's own rate) by
:class:`JobCostEnumerator`, which ranks the same combinations by job cost instead.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

from enumeration_networks import Network, Networks

from topoopt import perf
from topoopt.catalog import resolve_catalog
from topoopt.checker import check_design, recompute_cost
from topoopt.checking import derive
from topoopt.checking.rental import least_billed_months
from topoopt.models.catalog import Interconnect, LinkPart, Nic, RackClass, Server, Switch
from topoopt.models.design import (
    Design,
    FabricShape,
    HeadNodes,
    LinkGroup,
    ManagementNetwork,
    RackGroup,
    StorageChoice,
    SwitchGroup,
)
from topoopt.models.instance import Instance
from topoopt.options.racks import MIXED_RACKS_MAX

SECONDS_PER_DAY = 86_400.0
TOLERANCE = 1e-9
"""Relative slack on limits, as the checker allows (a need met through another float path)."""


@dataclass(frozen=True)
class NodeChoice:
    """A node configuration: server, NIC, rails and the interconnect they run."""

    server: Server
    nic: Nic
    rails: int
    interconnect: Interconnect
    builtin: bool
    form_factor: str
    ports_per_cage: int

    @property
    def perf_key(self) -> tuple:
        return (self.server.gpu, self.server.gpus_per_node, self.rails, self.interconnect.id)


@dataclass(frozen=True)
class FabricChoice:
    """Tiers 0 (one node, no switch), 1, 2 or 3 and the switch; ``rails_per_leaf`` ``g``; for 2 tiers
    ``up`` uplinks over ``S`` spines (``L = floor(up/S)`` or one more links per pair), for 3 tiers the leaf split
    ``(split_down, up)``, ``m`` links per leaf-spine pair and cores per plane. A choice from
    :func:`fabric_choices` is a template; :func:`layouts` sets, per node count, the leaves per rail
    group ``x`` and the fullest leaf's down-ports in use ``down``."""

    tiers: int
    switch: Switch | None = None
    radix: int = 0
    rails_per_leaf: int = 1
    up: int = 0
    split_down: int = 0
    spines: int = 0
    links_per_leaf_spine: int = 1
    cores_per_plane: int = 0
    leaves_per_rail: int = 0
    down: int = 0

    @property
    def oversubscription(self) -> float:
        """``d/u`` (docs/model.md): down-ports in use on the fullest leaf per uplink."""
        return self.down / self.up if self.tiers >= 2 else 1.0

    @property
    def oversubscription_class(self) -> int:
        """``ρ = ceil(d/u)``, what the performance model sees."""
        return derive.oversubscription_class(self.down, self.up) if self.tiers >= 2 else 1

    @property
    def leaf_down_max(self) -> int:
        """``D``: ``k − u`` (2 tiers), the split's (3 tiers)."""
        return self.radix - self.up if self.tiers == 2 else self.split_down

    @property
    def spines_per_pod(self) -> int:
        return self.spines if self.tiers == 2 else self.up // max(self.links_per_leaf_spine, 1)

    def counts(self, n: int, rails: int, storage_ports: int = 0, attach: str = "leaves",
               leaves_per_rail: int | None = None) -> derive.FabricCounts:
        return derive.fabric_counts(
            n, rails, self.radix, self.tiers, rails_per_leaf=self.rails_per_leaf,
            leaves_per_rail=self.leaves_per_rail if leaves_per_rail is None else leaves_per_rail, up=self.up,
            spines_2tier=self.spines, links_per_leaf_spine=self.links_per_leaf_spine,
            cores_per_plane=self.cores_per_plane, storage_ports=storage_ports, attach=attach)


@dataclass
class Enumerated:
    """The optimum (None when no design exists) and what it took to find it."""

    cost: int | None
    design: Design | None
    candidates: int = 0
    """Combinations that passed the screening (each one a complete, priced design)."""
    checked: int = 0
    """Designs handed to the checker."""
    rejected: dict[str, int] = field(default_factory=dict)
    """Checker families that rejected a cheaper candidate, with counts."""
    cost_mismatches: int = 0
    """Checked candidates whose screened price differs from ``recompute_cost``."""
    job_cost: float | None = None
    """The optimum's cost per month × months of training (``min_job_cost`` only)."""


def storage_choice(tier, units: int) -> StorageChoice:
    return StorageChoice(tier=tier.id, units=units, ports=units * tier.network_ports,
                         read_gbps=round(units * tier.read_gb_per_s * 8, 3),
                         write_gbps=round(units * tier.write_gb_per_s * 8, 3),
                         capacity_tb=round(units * tier.capacity_tb, 3))


def _price(resolved, item_id: str) -> int | None:
    value = resolved.price(item_id)
    return None if value is None else int(round(value))


def node_choices(catalog) -> list[NodeChoice]:
    """Built-in NICs as they come; otherwise every NIC option at 1, 2, 4 or 8 rails."""
    nics, interconnects = catalog.by_id("nics"), catalog.by_id("interconnects")
    found = []
    for server in catalog.servers:
        if server.builtin_compute_nics is not None:
            options = [(server.builtin_compute_nics.nic, server.builtin_compute_nics.count, True)]
        else:
            options = [(nic, rails, False) for nic in server.nic_options for rails in derive.RAIL_CHOICES
                       if rails <= server.max_compute_nics]
        for nic_id, rails, builtin in options:
            nic = nics.get(nic_id)
            if nic is None:
                continue
            own_cages = server.compute_port_form_factor is not None
            for ic_id in nic.interconnects:
                if ic_id in interconnects:
                    found.append(NodeChoice(
                        server, nic, rails, interconnects[ic_id], builtin,
                        server.compute_port_form_factor if own_cages else nic.port_form_factor,
                        server.compute_ports_per_cage if own_cages else 1,
                    ))
    return found


def fabric_choices(node: NodeChoice, switches: list[Switch]) -> list[FabricChoice]:
    """No fabric, and every 1-, 2- and 3-tier folded Clos of every compute switch that speaks the
    node's protocol at its speed, for every rail group size ``g ∈ {1, 2, 4, 8}`` dividing the rails:
    1 tier one switch per group; 2 tiers every ``u ≤ floor(k/2)`` over ``S`` spines dividing it or
    ``u/2 < S < u``; 3 tiers every
    ratio split, ``m ∈ {1, 2}`` dividing ``u`` and ``C`` dividing ``u2``."""
    found = [FabricChoice(tiers=0)]
    gbps, protocol = node.interconnect.gbps, "ib" if node.interconnect.protocol == "ib" else "ethernet"
    groups = [g for g in derive.RAIL_CHOICES if g <= node.rails and node.rails % g == 0]
    for switch in switches:
        k = switch.cages * switch.ports_per_cage.get(gbps, 0)
        if switch.role != "compute" or protocol not in switch.protocols or k < 1:
            continue
        for g in groups:
            found.append(FabricChoice(1, switch, k, rails_per_leaf=g))
            # 2 tiers: u uplinks over S spines, evenly (S divides u) or near-balanced (u/2 < S < u,
            # every pair 1 or 2 links).
            found += [FabricChoice(2, switch, k, rails_per_leaf=g, up=u, spines=s, links_per_leaf_spine=u // s)
                      for u in range(1, k // 2 + 1) for s in range(1, u + 1) if u % s == 0 or 2 * s > u]
            spine_up = k - k // 2
            for ratio in derive.OVERSUBSCRIPTION_RATIOS:
                d, u = derive.leaf_split(k, ratio)
                if d < 1 or u < 1 or d + u > k or derive.split_down_for_up(k, u) != d:
                    continue  # a tiny radix's two ratios may share u: the larger D is the split
                found += [FabricChoice(3, switch, k, rails_per_leaf=g, up=u, split_down=d, links_per_leaf_spine=m,
                                       cores_per_plane=c)
                          for m in derive.THREE_TIER_LINKS_PER_PAIR if u % m == 0
                          for c in range(1, spine_up + 1) if spine_up % c == 0]
    return found


def layouts(template: FabricChoice, node: NodeChoice, n: int, limit: float, provisioned: int | None):
    """The template at ``n`` nodes: every leaves-per-group ``x`` the rules admit (2 and 3 tiers:
    the fullest leaf within ``D``, ``x ≤ n``, ``d/u`` within the limit and class 3, the sizing rule
    ``x·(u − S + 1) ≤ g·n`` unless the fabric grows), with the growth rules at ``N``; ports are
    checked by :func:`ports_fit` on the counts (storage units may add to them)."""
    g = template.rails_per_leaf
    growing = provisioned is not None and provisioned > n
    if template.tiers == 0:
        if n == 1 and not growing:
            yield template
        return
    if template.tiers == 1:
        if g * n <= template.radix and (not growing or g * provisioned <= template.radix):
            yield replace(template, leaves_per_rail=1, down=g * n)
        return
    u, top = template.up, template.leaf_down_max
    per_leaf = top // g
    if per_leaf < 1:
        return
    s = template.spines_per_pod
    for x in range(derive.ceil_div(n, per_leaf), n + 1):
        if not growing and x * (u - s + 1) > g * n:
            break  # R1 only grows with x
        d = g * derive.ceil_div(n, x)
        if d > limit * u * (1 + TOLERANCE) or derive.oversubscription_class(d, u) > 3:
            continue
        choice = replace(template, leaves_per_rail=x, down=d)
        if growing and not grows(choice, node, provisioned, limit):
            continue
        yield choice


def grows(fabric: FabricChoice, node: NodeChoice, provisioned: int, limit: float, storage_ports: int = 0,
          attach: str = "leaves") -> bool:
    """docs/model.md, Growth: at ``N`` nodes the fullest future leaf keeps the class and the limit,
    and the spines (2 tiers), cores (3 tiers) and a top tier carrying storage units have the ports."""
    x_n = derive.growth_leaves_per_group(provisioned, fabric.rails_per_leaf, fabric.leaf_down_max)
    if x_n is None:
        return False
    grown = fabric.counts(provisioned, node.rails, storage_ports, attach, leaves_per_rail=x_n)
    rho = fabric.oversubscription_class
    if grown.down > rho * fabric.up or grown.down > limit * fabric.up * (1 + TOLERANCE):
        return False
    if fabric.tiers == 2 and grown.ports_per_spine > fabric.radix:
        return False
    if fabric.tiers == 3 and grown.ports_per_core > fabric.radix:
        return False
    return grown.top_ports_used <= grown.top_ports


def ports_fit(fabric: FabricChoice, counts: derive.FabricCounts) -> bool:
    """No switch of any tier uses more than its radix (the whole top tier its ports, with storage units)."""
    k = fabric.radix
    if fabric.tiers == 0:
        return True
    if fabric.tiers == 1:
        return counts.ports_per_leaf <= k
    if counts.ports_per_leaf > k or counts.ports_per_spine > k or counts.top_ports_used > counts.top_ports:
        return False
    return fabric.tiers == 2 or counts.ports_per_core <= k


def shares_cages(part: LinkPart, link_class: str, fabric: FabricChoice) -> bool:
    """A part between switches whose links that reach one far switch together (a one-piece
    cable's all, a kit's per fibre) do not divide the links per pair: a cable or fibre would be
    part-filled or shared with links to another switch."""
    together = part.links if part.one_piece else (part.links_per_fibre or 1)
    if together == 1 or link_class not in ("leaf-spine", "spine-core"):
        return False
    spine_core = (fabric.radix - fabric.radix // 2) // fabric.cores_per_plane if fabric.cores_per_plane else 0
    per_pair = fabric.links_per_leaf_spine if link_class == "leaf-spine" else spine_core
    uneven = link_class == "leaf-spine" and fabric.tiers == 2 and fabric.up % fabric.spines
    return any(links % together for links in (per_pair, per_pair + 1)[:2 if uneven else 1]) if per_pair else False


def part_fits(part: LinkPart, link_class: str, node: NodeChoice, switch: Switch, gbps: int) -> bool:
    """End *a* in the upper switch's cage, end *b* in the node's (node–leaf) or the lower switch's
    cage, each carrying all of its cage's logical ports at the link speed."""
    upper_ports = switch.ports_per_cage.get(gbps, 0)
    if link_class == "node-leaf":
        lower_form_factor, lower_ports = node.form_factor, node.ports_per_cage
    else:
        lower_form_factor, lower_ports = switch.cage_form_factor, upper_ports
    return (derive.part_fits_cage(part, "a", switch.cage_form_factor, upper_ports, gbps)
            and derive.part_fits_cage(part, "b", lower_form_factor, lower_ports, gbps))


@dataclass(frozen=True)
class Racking:
    """Mixed racks of one class (``bins``: per rack, the count of each pooled model, nodes first),
    or racks per device model (nodes in ``rack``, each switch model and each storage tier in
    ``infra``), apart.

    Mixed racks start *unpacked* (``bins`` None): ``total`` is then the fewest racks power, units
    and nodes per rack allow, a lower bound that :meth:`packed` makes exact."""

    rack: RackClass
    total: int
    mixed: bool
    per_rack: tuple[int, ...]
    infra: RackClass | None = None
    """Racks of one model each: the network and storage racks' class."""
    node_racks: int = 0
    """Racks of one model each: the compute racks."""
    models: tuple[tuple[str, float, int], ...] = ()
    """Mixed: (model, power W, rack units) of each pooled model, nodes first."""
    bins: tuple[tuple[int, ...], ...] | None = ()
    switches_together: bool = False
    """One rack holds every switch of the compute switches' model."""
    counts: tuple[int, ...] = ()
    host: int | None = None
    """Racks of one model each: the device (index) whose last rack also holds the head nodes."""
    together: int | None = None
    """Mixed: the pooled model (index) kept in one rack, if any."""
    compute_switch: str | None = None
    beside: tuple[str, int, float] | None = None
    """Racks of one model each: the management leaves the compute racks hold, one in a rack
    (model, count, power W)."""

    def packed(self) -> Racking | None:
        """The exact mixed racking (None: more racks than ``MIXED_RACKS_MAX`` would be needed)."""
        if self.bins is not None:
            return self
        bins = pack(self.rack, list(self.counts), self.models, MIXED_RACKS_MAX, self.together)
        if bins is None:
            return None
        together = any(v[i] == c for v in bins for i, c in enumerate(self.counts)
                       if i and self.models[i][0] == self.compute_switch)
        return replace(self, total=len(bins), bins=bins, switches_together=together)

    def cost(self, price) -> int:
        """The racks at their classes' prices."""
        if self.mixed:
            return self.total * price(self.rack.id)
        return self.node_racks * price(self.rack.id) + (self.total - self.node_racks) * price(self.infra.id)


def hosting(infra: RackClass, devices: list, head: str | None) -> int | None:
    """The first switch model or storage tier whose last rack also holds the head nodes (the last
    device, model ``head``) at whole watts and within the rack units; None without one."""
    if head is None or not devices or devices[-1][1] != head or not devices[-1][2]:
        return None
    _, _, heads, head_w, head_u, _ = devices[-1]
    for i, (role, _, count, w, u, _) in enumerate(devices[:-1]):
        per = derive.devices_per_rack(infra, w, u)
        if role == "compute" or not count or per < 1:
            continue
        last = count - per * (derive.ceil_div(count, per) - 1)
        if (math.ceil(w) * last + math.ceil(head_w) * heads <= math.floor(infra.power_kw * 1000 + 1e-6)
                and u * last + head_u * heads <= infra.rack_units):
            return i
    return None


def leaves_fit(rack: RackClass, node: tuple, beside: tuple) -> bool:
    """A full compute rack of ``rack`` holds a management leaf beside its nodes (``node``,
    ``beside``: (role, model, count, power W, rack units, cooling)); the leaf at whole watts, as
    the model counts it."""
    _, _, _, node_w, node_u, _ = node
    _, _, _, leaf_w, leaf_u, cooling = beside
    per = derive.devices_per_rack(rack, node_w, node_u)
    return (per >= 1 and derive.rack_cools(rack, cooling)
            and per * node_w + math.ceil(leaf_w) <= rack.power_kw * 1000 * (1 + 1e-9)
            and per * node_u + leaf_u <= rack.rack_units)


def rackings(rack: RackClass, infra: RackClass, devices: list[tuple[str, str, int, float, int, str]],
             compute_switch: str | None, head: str | None = None, beside: tuple | None = None) -> list[Racking]:
    """The ways to rack (role, model, count, power W, rack units, cooling) of each device model,
    the nodes in ``rack``, that can each be the cheapest: each model in racks of its own, the
    network and storage racks in ``infra``; and, when ``infra`` is ``rack``, mixed racks (at most
    ``MIXED_RACKS_MAX``, an exact bin packing over the pooled models, left unpacked) and mixed
    racks with every switch of the compute model in one, which shortens the switch links' runs
    (docs/model.md, "Cable runs"). A class holds only the coolings it cools. With ``beside`` (the
    management leaves, taken out of ``devices``), racks of one model each only, the compute racks
    holding the leaves, when they fit (:func:`leaves_fit`)."""
    if beside is not None and not leaves_fit(rack, devices[0], beside):
        return []
    out = []
    per_rack, total = [], 0
    for role, _, count, power_w, units, cooling in devices:
        home = rack if role == "compute" else infra
        per = derive.devices_per_rack(home, power_w, units) if count else 0
        if count and (per < 1 or not derive.rack_cools(home, cooling)):
            break
        per_rack.append(per)
        total += derive.ceil_div(count, per) if count else 0
    else:
        together = compute_switch is not None and any(
            m == compute_switch and derive.ceil_div(c, per) == 1 for (_, m, c, *_), per in zip(devices, per_rack) if c)
        out.append(Racking(rack, total, False, tuple(per_rack), infra, derive.ceil_div(devices[0][2], per_rack[0]),
                           switches_together=together, beside=beside and (beside[1], beside[2], beside[3])))
        host = hosting(infra, devices, head)
        if host is not None:  # the head nodes' own racks saved
            out.append(replace(out[-1], total=total - derive.ceil_div(devices[-1][2], per_rack[-1]), host=host))
    if beside is not None or infra is not rack or not all(derive.rack_cools(rack, cooling) and derive.devices_per_rack(rack, w, u) >= 1
                                    for _, _, count, w, u, cooling in devices if count):
        return out
    pooled: dict[str, list] = {}
    for _, model, count, power_w, units, _ in devices:
        if count:
            pooled.setdefault(model, [model, 0, power_w, units])[1] += count
    models = tuple((m, w, u) for m, _, w, u in pooled.values())
    counts = tuple(c for _, c, _, _ in pooled.values())
    least = fewest_mixed(rack, counts, models)
    if least <= MIXED_RACKS_MAX:
        unpacked = Racking(rack, least, True, tuple(0 for _ in devices), models=models, bins=None, counts=counts,
                           compute_switch=compute_switch)
        out.append(unpacked)
        if compute_switch in pooled:
            out.append(replace(unpacked, switches_together=True, together=list(pooled).index(compute_switch)))
    return out


def fewest_mixed(rack: RackClass, counts: tuple[int, ...], models: tuple) -> int:
    """A lower bound on mixed racks: by total power, by total units, and by nodes per rack alone."""
    rack_w = rack.power_kw * 1000 * (1 + TOLERANCE)
    total_w = sum(c * w for c, (_, w, _) in zip(counts, models))
    total_u = sum(c * u for c, (_, _, u) in zip(counts, models))
    per_node = derive.devices_per_rack(rack, models[0][1], models[0][2])
    if per_node < 1:
        return MIXED_RACKS_MAX + 1
    return max(math.ceil(total_w / rack_w - 1e-9), -(-total_u // rack.rack_units), -(-counts[0] // per_node))


def pack(rack: RackClass, counts: list[int], models: tuple, most: int, together: int | None = None) -> tuple | None:
    """The fewest racks (at most ``most``) holding ``counts`` of each model (the nodes first),
    each rack within the class's power and units (and all of model ``together`` in one rack), as
    per-rack count vectors; None when more are needed.

    Exact and quick because the devices besides the nodes are few: over the ways to share them
    among ``k`` racks (``best``), each rack takes as many nodes as fit beside its share, and ``k``
    racks do when those add up to the nodes. Remembered per (power, units, counts, models): the
    candidates of one instance repeat the same few device sets many times."""
    return _pack(rack.power_kw, rack.rack_units, tuple(counts), models, most, together)


@functools.lru_cache(maxsize=4096)
def _pack(power_kw: float, rack_units: int, counts: tuple[int, ...], models: tuple, most: int,
          together: int | None) -> tuple | None:
    rack_w = power_kw * 1000 * (1 + TOLERANCE)
    (_, node_w, node_u), others = models[0], models[1:]

    def room(share: tuple[int, ...]) -> int:
        """Nodes that fit beside ``share`` of the other devices in one rack (-1: it does not fit)."""
        w = sum(x * m[1] for x, m in zip(share, others))
        u = sum(x * m[2] for x, m in zip(share, others))
        if w > rack_w or u > rack_units:
            return -1
        return min(int((rack_w - w) // node_w), (rack_units - u) // node_u)

    shares = [(v, room(v)) for v in itertools.product(*(range(c + 1) for c in counts[1:]))
              if room(v) >= 0 and (together is None or v[together - 1] in (0, counts[together]))]

    most_here = max((nodes_here for _, nodes_here in shares), default=0)

    @functools.cache
    def best(rest: tuple[int, ...], racks: int) -> tuple[int, tuple]:
        """The most nodes ``racks`` racks take beside ``rest`` of the others, and their shares
        (-1: they do not hold ``rest``). One state per remainder: the racks' order is free. A share
        that cannot beat the best so far even with the fullest racks after it is skipped."""
        if racks == 0:
            return (0, ()) if not any(rest) else (-1, ())
        if not any(rest):  # only the empty share fits what is left
            empty = shares[0]
            return racks * empty[1], (empty[0],) * racks
        top = (-1, ())
        for v, nodes_here in shares:
            if nodes_here + (racks - 1) * most_here <= top[0]:
                continue
            if all(a <= b for a, b in zip(v, rest)):
                nodes, tail = best(tuple(b - a for a, b in zip(v, rest)), racks - 1)
                if nodes >= 0 and nodes + nodes_here > top[0]:
                    top = (nodes + nodes_here, (v, *tail))
        return top

    total_w = sum(c * m[1] for c, m in zip(counts, models))
    total_u = sum(c * m[2] for c, m in zip(counts, models))
    least = max(1, math.ceil(total_w / rack_w - 1e-9), -(-total_u // rack_units))
    if least > most:
        return None
    quick = first_fit(counts[1:], others, room, least, together)
    if quick is not None and sum(room(v) for v in quick) >= counts[0]:
        split = quick  # as few racks as power and units allow: no packing has fewer
        left, bins = counts[0], []
        for v in split:
            taken = min(room(v), left)
            left -= taken
            bins.append((taken, *v))
        return tuple(bins)
    for racks in range(least, most + 1):
        nodes, split = best(tuple(counts[1:]), racks)
        if nodes >= counts[0]:
            left, bins = counts[0], []
            for v in split:
                taken = min(room(v), left)
                left -= taken
                bins.append((taken, *v))
            return tuple(bins)
    return None


def first_fit(counts: list[int], others: tuple, room, racks: int, together: int | None) -> list | None:
    """The devices besides the nodes dealt over ``racks`` racks first-fit (the heaviest first, a
    ``together`` model as one piece), as per-rack shares; None when they do not all fit."""
    pieces = []
    for j, c in enumerate(counts):
        pieces += [(j, c)] if together is not None and j == together - 1 else [(j, 1)] * c
    pieces.sort(key=lambda piece: -others[piece[0]][1] * piece[1])
    shares = [[0] * len(counts) for _ in range(racks)]
    for j, amount in pieces:
        for share in shares:
            share[j] += amount
            if room(tuple(share)) >= 0:
                break
            share[j] -= amount
        else:
            return None
    return [tuple(share) for share in shares]


@dataclass(frozen=True)
class Candidate:
    """A complete, screened and priced design: the compute part, the storage and management
    networks, racks."""

    node: NodeChoice
    fabric: FabricChoice
    nodes: int
    counts: derive.FabricCounts
    parts: tuple
    placed: Racking
    tier: object
    units: int
    node_w: float
    devices: tuple
    storage_net: object
    management: object
    management_by_racks: dict
    """The management network for each rack count its switches serve (their PDUs included): the
    racking's count must be one of them."""


def dominated(a, b) -> bool:
    """Storage network ``a`` is never better than ``b``: at every placement it costs no less (and
    ``b`` exists where ``a`` does), adds no less node power and needs no fewer switches of any
    model (so no fewer racks, management ports or watts), with the same compute counts and cold
    tier."""
    return (a.record.mode == b.record.mode == "dedicated" and a.cold == b.cold
            and all(where in b.placed and b.placed[where][0] <= cost for where, (cost, _) in a.placed.items())
            and b.node_extra_w <= a.node_extra_w
            and all(a.switches.get(model, 0) >= count for model, count in b.switches.items()))


def pareto(networks: list) -> list:
    kept = []
    for i, a in enumerate(networks):
        if not any(dominated(a, b) and (not dominated(b, a) or j < i) for j, b in enumerate(networks) if j != i):
            kept.append(a)
    return kept


class Enumerator:
    """The enumeration of one instance (catalog, job and performance look-ups resolved once)."""

    objective = "min_cost"
    cost_bound = math.inf
    """While :meth:`run` keeps its ``keep`` cheapest, the dearest of them: a combination whose nodes
    and compute switches alone cost more can never be kept (min_cost only; the rank is the cost)."""

    def __init__(self, instance: Instance) -> None:
        if instance.goal.objective != self.objective:
            raise ValueError(f"{type(self).__name__} enumerates {self.objective}, not {instance.goal.objective}")
        self.instance = instance
        self.resolved = resolve_catalog(instance)
        self.catalog = self.resolved.catalog
        self.job = perf.Job.from_instance(instance, self.catalog)
        deadline = instance.goal.deadline_days
        self.deadline_s = None if deadline is None else deadline * SECONDS_PER_DAY
        rate = 0.0 if self.deadline_s is None else instance.workload.training.tokens / self.deadline_s
        self.needs = perf.storage_needs(self.job, rate)
        d = instance.site.distances
        self.lengths_m = derive.link_lengths_m(d, self.instance.site.max_racks)
        placements = [derive.placed_runs_m(self.lengths_m, d.in_rack_m, d.in_row_m + d.slack_m,
                                           one_rack=rack, switches_one_rack=rack, one_row=True) for rack in (True, False)]
        self.shortest_run_m = {cls: min(runs[cls] for runs in placements) for cls in self.lengths_m}
        self._times: dict[tuple, float | None] = {}
        self._fits: dict[tuple, bool] = {}
        self.networks = Networks(self)
        self._switch_w: dict[str, float] = {}
        self._racking: dict[tuple, Racking | None] = {}
        self._blocks: dict[tuple[int, int], list[dict[int, Network]]] = {}
        allowed = [r for r in self.catalog.racks if instance.site.rack_classes is None or
                   r.id in instance.site.rack_classes]
        heads = [c for c in self.catalog.control if c.role == "head" and self.price(c.id) is not None and any(
            derive.rack_cools(r, c.cooling) and derive.devices_per_rack(r, c.power_w, c.rack_units) for r in allowed)]
        asked = instance.site.head_nodes
        self.head = min(heads, key=lambda c: (self.price(c.id), c.power_w, c.rack_units, c.id)) if heads else None
        self.heads_asked = (asked if asked is not None else 2) if heads else 0
        self.clusters_only = asked is None
        """The head nodes a candidate buys: ``site.head_nodes`` (unset: 2, none for a single node)
        of the least-priced head model, none without one."""

    def may_fit(self, node: NodeChoice, switch: Switch | None, n: int, switches: int, node_w: float, racks) -> bool:
        """A bound that only rejects what :meth:`_complete` would: the nodes and compute switches
        alone (at least one storage unit, in racks of its own, comes on top) need more racks than
        the site has in every rack class whose mixed racks cannot hold them (the switches in the
        class that holds most), or more power than its cap."""
        site = self.instance.site
        switch_w = self.switch_w(switch) if switch is not None and switches else 0.0
        if site.power_cap_kw is not None and n * node_w + switches * switch_w > site.power_cap_kw * 1000 * (1 + TOLERANCE):
            return False
        for rack in racks:
            rack_w = rack.power_kw * 1000
            if n * node_w + switches * switch_w <= rack_w * (1 + TOLERANCE):
                return True  # a mixed rack may still hold everything
            per_node = derive.devices_per_rack(rack, node_w, node.server.rack_units)
            if per_node < 1:
                continue
            if derive.ceil_div(n, per_node) <= min(MIXED_RACKS_MAX, site.max_racks):
                return True  # mixed racks may hold the rest beside the nodes
            needed = derive.ceil_div(n, per_node) + 1
            if switches:
                per_switch = max(derive.devices_per_rack(r, switch_w, switch.rack_units) for r in racks)
                if per_switch < 1:
                    continue
                needed += derive.ceil_div(switches, per_switch)
            if needed <= site.max_racks:
                return True
        return False

    def heads(self, nodes: int) -> int:
        """Head nodes of a candidate of ``nodes`` nodes."""
        return 0 if self.clusters_only and nodes <= 1 else self.heads_asked

    def switch_w(self, switch: Switch) -> float:
        """Provisioned switch power (cached per model)."""
        if switch.id not in self._switch_w:
            self._switch_w[switch.id] = derive.switch_power_w(switch, self.catalog.cables)
        return self._switch_w[switch.id]

    def price(self, item_id: str) -> int | None:
        return _price(self.resolved, item_id)

    @staticmethod
    def grows_with(fabric: FabricChoice, node: NodeChoice, provisioned: int, limit: float, storage_ports: int,
                   attach: str) -> bool:
        """The growth rules with converged storage units on the fabric (:func:`grows`)."""
        return grows(fabric, node, provisioned, limit, storage_ports, attach)

    # -- performance -------------------------------------------------------------------------------
    def hardware(self, node: NodeChoice, fabric: FabricChoice, nodes: int, converged: bool = False) -> perf.Hardware:
        """The performance model's view; a converged storage network reads over the compute NICs."""
        gpu = self.catalog.by_id("gpus")[node.server.gpu]
        reads = perf.converged_storage_gb_per_step(self.job) if converged else 0.0
        return perf.Hardware(gpu=gpu, gpus_per_node=node.server.gpus_per_node, nodes=nodes, nics_per_node=node.rails,
                             link_gbps=node.interconnect.gbps, interconnect=node.interconnect,
                             tiers=max(fabric.tiers, 1), oversubscription=float(fabric.oversubscription_class),
                             converged_storage_gb_per_step=reads)

    def runs(self, node: NodeChoice, fabric: FabricChoice, nodes: int, converged: bool = False) -> bool:
        """The job fits in memory and, with a deadline, trains in time (cached per perf key)."""
        if self.deadline_s is None:
            key = (node.perf_key, nodes)
            if key not in self._fits:
                self._fits[key] = perf.fits_in_memory(self.job, self.hardware(node, fabric, nodes))
            return self._fits[key]
        key = (node.perf_key, max(fabric.tiers, 1), fabric.oversubscription_class, nodes, converged)
        if key not in self._times:
            self._times[key] = perf.time_to_train_s(self.job, self.hardware(node, fabric, nodes, converged))
        seconds = self._times[key]
        return seconds is not None and seconds <= self.deadline_s * (1 + TOLERANCE)

    # -- the options the instance admits -------------------------------------------------------------
    def admitted(self):
        """Node configurations, switches, racks and storage (with units) the lists, pins and prices
        admit (the racks of any role: a pinned rack class pins the nodes' racks only)."""
        rules, pins, site = self.instance.constraints, self.instance.constraints.pins, self.instance.site
        price = lambda item_id: _price(self.resolved, item_id)  # noqa: E731
        nodes = []
        for node in node_choices(self.catalog):
            pinned = {pins.server: node.server.id, pins.gpu: node.server.gpu, pins.interconnect: node.interconnect.id,
                      pins.nic: node.nic.id, pins.nics_per_node: node.rails}
            # An unpriced NIC rules out only fabric-attached nodes: a single node buys none.
            if (price(node.server.id) is None
                    or any(want is not None and want != have for want, have in pinned.items())
                    or not (rules.gpus.admits(node.server.gpu) and rules.servers.admits(node.server.id)
                            and rules.interconnects.admits(node.interconnect.id))):
                continue
            nodes.append(node)
        switches = [s for s in self.catalog.switches if price(s.id) is not None and rules.switches.admits(s.id)
                    and pins.leaf_switch in (None, s.id)]
        racks = [r for r in self.catalog.racks if price(r.id) is not None
                 and (site.rack_classes is None or r.id in site.rack_classes)]
        low_latency = self.instance.workload.data.small_files or self.needs.needs_low_latency
        storage = []
        for tier in self.catalog.storage:
            if (price(tier.id) is None or not rules.storage.admits(tier.id) or pins.storage not in (None, tier.id)
                    or (low_latency and tier.latency_class == "high")):
                continue
            units = max(1, *(math.ceil(need * (1 - TOLERANCE) / supply) for need, supply in (
                (self.needs.read_gb_per_s, tier.read_gb_per_s), (self.needs.write_gb_per_s, tier.write_gb_per_s),
                (self.needs.capacity_tb, tier.capacity_tb))))
            storage.append((tier, units))
        return nodes, switches, racks, storage

    # -- the enumeration ---------------------------------------------------------------------------
    def candidates(self):
        """Every screened, priced combination: ``(cost, Candidate)``."""
        instance, pins = self.instance, self.instance.constraints.pins
        budget = instance.budget.max
        price = self.price
        nodes, switches, racks, storage = self.admitted()
        all_parts = list(self.catalog.cables)
        switch_models, tiers = self.catalog.by_id("switches"), self.catalog.by_id("storage")
        for node in nodes:
            gbps, server_price = node.interconnect.gbps, price(node.server.id)
            nic_price = 0 if node.builtin else price(node.nic.id)
            n_max = int(budget // server_price) if server_price else 1_000_000
            counts_range = [pins.nodes] if pins.nodes is not None else range(1, n_max + 1)
            part_cache: dict[tuple, dict] = {}
            limit, provisioned = instance.constraints.max_oversubscription, instance.site.provision_fabric_for_nodes
            for fabric in fabric_choices(node, switches):
                if pins.tiers not in (None, fabric.tiers) or (fabric.tiers and nic_price is None):
                    continue
                switch = fabric.switch
                used = derive.LINK_CLASSES[:max(fabric.tiers, 1)] if fabric.tiers else ()
                key = (switch.id if switch else None, fabric.tiers, fabric.links_per_leaf_spine, fabric.cores_per_plane,
                       fabric.tiers == 2 and fabric.up % fabric.spines != 0)
                if key not in part_cache:
                    part_cache[key] = {cls: [p for p in all_parts if part_fits(p, cls, node, switch, gbps)
                                             and not shares_cages(p, cls, fabric)
                                             and p.max_reach_m >= self.shortest_run_m[cls] and price(p.id) is not None
                                             and instance.constraints.cables.admits(p.id)] for cls in used}
                parts = part_cache[key]
                if any(not options for options in parts.values()):
                    continue
                compute_w = derive.node_power_w(node.server.power_w, node.rails, node.form_factor, node.ports_per_cage,
                                                gbps, all_parts, nic_power_w=0.0 if node.builtin else node.nic.power_w,
                                                fabric=fabric.tiers > 0)
                node_price = server_price + (node.rails * nic_price if fabric.tiers else 0)
                for n in counts_range:
                    if (fabric.tiers == 0 and n != 1) or n * node_price > budget:
                        continue
                    for layout in layouts(fabric, node, n, limit, provisioned):
                        base = layout.counts(n, node.rails)
                        switch_count = base.leaves + base.spines + base.cores
                        least = n * node_price + (switch_count * price(switch.id) if switch_count else 0)
                        if self.cost_bound < math.inf and self.rank_bound(least, node, layout, n) > self.cost_bound:
                            continue
                        if not self.may_fit(node, switch, n, switch_count, compute_w, racks):
                            continue
                        # Storage units only add to a fabric's load: a fabric too small without them stays so.
                        if not ports_fit(layout, base) or not self.runs(node, layout, n):
                            continue
                        for mode, tier, units, need_gbps in self.sized_storage(storage, node, layout, n):
                            networks = self.networks.storage_networks(node, layout, n, base, (tier, units), pareto,
                                                                      mode, need_gbps)
                            for net in networks:
                                converged = net.record.mode == "converged"
                                counts = net.counts or base
                                if (not ports_fit(layout, counts)
                                        or (converged and not self.runs(node, layout, n, True))):
                                    continue
                                yield from self._complete(node, layout, n, counts, parts, used, racks, tier, units,
                                                          net, compute_w, node_price, switch_models, tiers)

    def _complete(self, node, fabric, n, counts, parts, used, racks, tier, units, net, compute_w, node_price,
                  switch_models, tiers):
        """The management network, racks, power and budget for a compute and storage candidate."""
        price = self.price
        n_switches = counts.leaves + counts.spines + counts.cores
        # Switch models in the order compute, storage (racks are listed per model in that order).
        data_switches = {fabric.switch.id: n_switches} if fabric.switch and n_switches else {}
        for model, count in net.switches.items():
            data_switches[model] = data_switches.get(model, 0) + count
        unit_counts = {tier.id: units}
        if net.cold:
            unit_counts[net.cold[0].id] = unit_counts.get(net.cold[0].id, 0) + net.cold[1]
        ports = (n * (1 + node.server.oob_ports)
                 + sum(c * switch_models[m].oob_ports for m, c in data_switches.items())
                 + sum(c * (1 + tiers[t].oob_ports) for t, c in unit_counts.items()))
        node_w = compute_w + net.node_extra_w
        fixed = (n * node_price + sum(c * price(m) for m, c in data_switches.items())
                 + sum(c * price(t) for t, c in unit_counts.items()) + net.cost)
        heads = self.heads(n)
        if heads:
            ports += heads * (1 + self.head.oob_ports)
            fixed += heads * price(self.head.id)
        converged = net.record.mode == "converged"
        compute_switch = fabric.switch.id if fabric.switch and n_switches else None
        for chosen in itertools.product(*(parts[cls] for cls in used)):
            cable_cost = sum(self.assemblies(cls, p, node, fabric, n, counts) * price(p.id)
                             for cls, p in zip(used, chosen))
            for rack, infra in itertools.product(racks, racks):
                if self.instance.constraints.pins.rack_class not in (None, rack.id):
                    continue
                if infra.pdus != rack.pdus:  # the blocks count PDUs by the racks' total
                    raise ValueError(f"rack classes {rack.id} and {infra.id} differ in PDUs per rack")
                for block in self._management_blocks(ports, rack.pdus):
                    mgmt = block[min(block)]
                    # Racks only add to the cost: a combination ranked past the kept ones without them stays so.
                    least = min(block) * min(price(rack.id), price(infra.id))
                    if (self.cost_bound < math.inf and self.rank_bound(
                            fixed + cable_cost + mgmt.cost + least, node, fabric, n, converged) > self.cost_bound):
                        continue
                    yield from self._racked(node, fabric, n, counts, chosen, used, (rack, infra), block, tier, units,
                                            net, data_switches, unit_counts, node_w, switch_models, tiers,
                                            fixed + cable_cost, compute_switch)

    def _management_blocks(self, ports: int, pdus: int) -> list[dict[int, Network]]:
        """The management networks of ``ports`` device ports plus ``pdus`` per rack, in blocks: for
        one (leaf, aggregation) model pair, the rack counts (1 … max_racks) whose networks have the
        same switches, each with its network. A racking of those switches is consistent when its
        own rack count is in the block (every rack's PDUs are on the network it serves). Kept per
        ``(ports, pdus)``: every part and rack class combination of a candidate asks again."""
        if (ports, pdus) in self._blocks:
            return self._blocks[ports, pdus]
        blocks: dict[tuple, dict[int, Network]] = {}
        for total in range(1, self.instance.site.max_racks + 1):
            for mgmt in self.networks.management_networks_cached(ports + pdus * total):
                key = (mgmt.record.switch, mgmt.record.aggregation_switch, tuple(sorted(mgmt.switches.items())))
                blocks.setdefault(key, {})[total] = mgmt
        self._blocks[ports, pdus] = list(blocks.values())
        return self._blocks[ports, pdus]

    def _racked(self, node, fabric, n, counts, chosen, used, classes, block, tier, units, net, data_switches,
                unit_counts, node_w, switch_models, tiers, fixed, compute_switch):
        """The candidates of one block of management networks (:meth:`_management_blocks`) in racks
        of ``classes`` (the nodes', the network and storage racks'): a racking whose rack count is
        in the block, with that count's network; an unpacked mixed racking at the block's least
        count it may reach (packed() settles it)."""
        site, budget, price = self.instance.site, self.instance.budget.max, self.price
        models = dict(data_switches)
        for m, c in next(iter(block.values())).switches.items():
            models[m] = models.get(m, 0) + c
        devices = [("compute", node.server.id, n, node_w, node.server.rack_units, node.server.cooling)]
        devices += [("network", m, c, self.switch_w(switch_models[m]), switch_models[m].rack_units,
                     switch_models[m].cooling) for m, c in models.items()]
        devices += [("storage", t, c, tiers[t].power_w, tiers[t].rack_units, tiers[t].cooling)
                    for t, c in unit_counts.items()]
        if self.heads(n):
            h = self.head
            devices.append(("network", h.id, self.heads(n), h.power_w, h.rack_units, h.cooling))
        power_w = sum(c * w for _, _, c, w, *_ in devices)
        if site.power_cap_kw is not None and power_w > site.power_cap_kw * 1000 * (1 + TOLERANCE):
            return
        for placed, racked in self._rackings(classes, devices, next(iter(block.values())).record, switch_models,
                                             compute_switch, n):
            unpacked = placed.mixed and placed.bins is None
            totals = [total for total in block if total >= placed.total] if unpacked else [placed.total]
            if not totals or totals[0] not in block:
                continue
            mgmt = block[totals[0]]
            placed = replace(placed, total=totals[0]) if unpacked else placed
            if placed.total > site.max_racks or self.misfits(used, chosen, placed) or self.beyond_a_row(placed):
                continue
            networks = self.networks_cost(net, mgmt, placed)
            if networks is None:
                continue
            cost = fixed - net.cost + networks + placed.cost(price)
            if cost <= budget:
                yield cost, Candidate(node, fabric, n, counts, chosen, placed, tier, units, node_w, tuple(racked), net,
                                      mgmt, block)

    def _rackings(self, classes: tuple, devices: list, mgmt: ManagementNetwork, switch_models: dict,
                  compute_switch: str | None, n: int):
        """``(racking, devices)``: the rackings of ``devices`` (:func:`rackings`), and those with the
        most management leaves the compute racks hold (one in a rack) taken out of their model's
        network racks: a leaf more there never takes a rack more."""
        leaf = switch_models[mgmt.switch]
        _, _, _, node_w, node_u, _ = devices[0]
        per = derive.devices_per_rack(classes[0], node_w, node_u)
        most = min(mgmt.leaves, derive.ceil_div(n, per)) if per >= 1 else 0
        beside = ("compute", leaf.id, most, self.switch_w(leaf), leaf.rack_units, leaf.cooling)
        hosted = [(role, m, c - most if role == "network" and m == leaf.id else c, *rest)
                  for role, m, c, *rest in devices]
        head = self.head.id if self.heads(n) else None
        for listed, extra in [(devices, None)] + ([(hosted, beside)] if most else []):
            key = (*(r.id for r in classes), tuple(listed), compute_switch, extra)
            if key not in self._racking:
                self._racking[key] = rackings(*classes, listed, compute_switch, head, extra)
            yield from ((placed, listed) for placed in self._racking[key])

    def one_row(self, placed: Racking) -> bool:
        """``placed``'s racks stand in one row (docs/model.md, "Cable runs")."""
        return derive.in_one_row(placed.total, placed.mixed, self.instance.site.distances.racks_per_row)

    def beyond_a_row(self, placed: Racking) -> bool:
        """Mixed racks, more than the site's row holds: the model takes mixed racks within one row."""
        per_row = self.instance.site.distances.racks_per_row
        return placed.mixed and per_row is not None and placed.total > per_row

    def placement(self, placed: Racking) -> str:
        """Where ``placed`` puts the storage and management links' ends (enumeration_networks.PLACEMENTS)."""
        return "rack" if placed.mixed and placed.total == 1 else "row" if self.one_row(placed) else "site"

    def networks_cost(self, net, mgmt, placed: Racking) -> int | None:
        """The storage network's cables and NICs and the management network's cost at ``placed``
        (None where some cable does not exist)."""
        where = self.placement(placed)
        if where not in net.placed or where not in mgmt.placed:
            return None
        return net.placed[where][0] + mgmt.placed[where][0]

    def runs_m(self, placed: Racking) -> dict[str, float]:
        """The link classes' runs where ``placed`` puts their ends."""
        d = self.instance.site.distances
        return derive.placed_runs_m(self.lengths_m, d.in_rack_m, d.in_row_m + d.slack_m,
                                    one_rack=placed.total == 1 and placed.mixed,
                                    switches_one_rack=placed.switches_together, one_row=self.one_row(placed),
                                    floor_m=derive.floor_diagonal_m(placed.total, d))

    def misfits(self, used, parts, placed: Racking) -> bool:
        """Some compute part falls short of its class's run at ``placed``, or is a one-piece cable
        longer than a rack allows on a class within one rack."""
        d, runs = self.instance.site.distances, self.runs_m(placed)
        inside = derive.in_rack_classes(used, one_rack=placed.total == 1 and placed.mixed,
                                        switches_one_rack=placed.switches_together)
        return any(p.max_reach_m < runs[cls] or (cls in inside and derive.too_long_in_rack(p, d.in_rack_m, d.slack_m))
                   for cls, p in zip(used, parts))

    def sized_storage(self, storage, node: NodeChoice, fabric: FabricChoice, n: int):
        """``(storage network mode, hot tier, units, storage network need Gb/s)``: the mode None
        (either), the tiers with their fewest units and the need at tokens / deadline; for min_cost
        the same for every combination."""
        return [(None, tier, units, self.needs.network_gbps) for tier, units in storage]

    bounded = True
    """:attr:`cost_bound` may prune (by :meth:`rank_bound`)."""

    def rank(self, candidate) -> float:
        """What the enumeration minimises: the cost."""
        return candidate[0]

    def rank_bound(self, cost: float, node: NodeChoice, fabric: FabricChoice, n: int,
                   converged: bool | None = None) -> float:
        """The least rank of a combination of ``node``, ``fabric`` and ``n`` nodes (in the storage
        mode ``converged``; None: either) that costs at least ``cost``: the cost itself."""
        return cost

    @staticmethod
    def assemblies(link_class: str, part: LinkPart, node: NodeChoice, fabric: FabricChoice, n: int,
                   counts: derive.FabricCounts) -> int:
        """Whole assemblies: per pair of devices for a one-piece cable, by cages filled for a
        transceiver kit between switches (docs/model.md, "Cables and transceivers")."""
        spine_core = (fabric.radix - fabric.radix // 2) // fabric.cores_per_plane if fabric.cores_per_plane else 0
        ppc = fabric.switch.ports_per_cage.get(node.interconnect.gbps, 0) if fabric.switch else 0
        return derive.assemblies_needed(link_class, part, ppc, n, node.rails, counts, fabric.links_per_leaf_spine,
                                        fabric.cores_per_plane, spine_core, fabric.rails_per_leaf)[0]

    def design(self, candidate) -> Design:
        """The candidate written out as a design record (the checker compares every field)."""
        _, cand = candidate
        node, fabric, n, c, chosen, placed = cand.node, cand.fabric, cand.nodes, cand.counts, cand.parts, cand.placed
        where = self.placement(cand.placed)
        net, mgmt = cand.storage_net.at(where), cand.management.at(where)
        switch_id = fabric.switch.id if fabric.switch else "none"
        multi = fabric.tiers >= 2
        spine_core = (fabric.radix - fabric.radix // 2) // fabric.cores_per_plane if fabric.cores_per_plane else 0
        several = fabric.tiers >= 1 and fabric.rails_per_leaf < node.rails
        shape = FabricShape(
            tiers=fabric.tiers, switch=switch_id, leaves=c.leaves, spines=c.spines, cores=c.cores,
            leaf_down_ports=c.down, leaf_up_ports=c.up if multi else 0,
            links_per_leaf_spine=fabric.links_per_leaf_spine if multi else 0, pods=c.pods,
            spines_per_pod=c.spines_per_pod, leaves_per_pod=c.leaves_per_pod, cores_per_plane=fabric.cores_per_plane,
            spine_up_ports=c.spine_up_ports, links_per_spine_core=spine_core,
            rail_optimized=several and multi, leaves_per_rail=c.leaves_per_rail,
            rails_per_leaf=fabric.rails_per_leaf, rail_only=several and fabric.tiers == 1,
            provisioned_nodes=self.instance.site.provision_fabric_for_nodes or 0,
        )
        tiers = [("leaf", c.leaves, c.leaf_ports_used), ("spine", c.spines, c.spine_ports_used),
                 ("core", c.cores, c.core_ports_used)]
        switches = [SwitchGroup(tier=t, model=switch_id, count=count, ports_used=ports)
                    for t, count, ports in tiers if count]
        switches += net.switch_groups + mgmt.switch_groups
        link_counts = {"node-leaf": c.node_leaf_links, "leaf-spine": c.leaf_spine_links,
                       "spine-core": c.spine_core_links}
        used = derive.LINK_CLASSES[:max(fabric.tiers, 1)] if fabric.tiers else ()
        runs = self.runs_m(placed)
        links = [LinkGroup(between=cls, count=link_counts[cls], part=p.id,
                           assemblies=self.assemblies(cls, p, node, fabric, n, c), length_m=runs[cls],
                           gbps=node.interconnect.gbps) for cls, p in zip(used, chosen)]
        links += net.links + mgmt.links
        rack = placed.rack
        if placed.mixed:
            if placed.bins is None:
                raise ValueError("an unpacked mixed racking: write out Enumerator.packed(candidate)")
            groups: dict[tuple[int, ...], int] = {}
            for v in placed.bins:
                groups[v] = groups.get(v, 0) + 1
            racks = [RackGroup(rack_class=rack.id, role="mixed", count=count, nodes_per_rack=v[0],
                               holds={m: x for x, (m, _, _) in zip(v[1:], placed.models[1:]) if x},
                               power_kw=round(sum(x * w for x, (_, w, _) in zip(v, placed.models)) / 1000, 3))
                     for v, count in groups.items()]
        else:
            racks = [RackGroup(rack_class=(rack if role == "compute" else placed.infra).id, role=role,
                               count=derive.ceil_div(count, per), nodes_per_rack=per if role == "compute" else 0,
                               power_kw=round(min(per, count) * power_w / 1000, 3))
                     for (role, _, count, power_w, *_), per in zip(cand.devices, placed.per_rack) if count]
            if placed.beside is not None:  # one management leaf in a compute rack
                model, leaves, leaf_w = placed.beside
                full_w = min(placed.per_rack[0], n) * cand.node_w + leaf_w
                racks[0] = racks[0].model_copy(update={"holds": {model: leaves}, "power_kw": round(full_w / 1000, 3)})
            if placed.host is not None:  # the head nodes in the host's last rack, no racks of their own
                (_, head, heads, head_w, *_), racks = cand.devices[-1], racks[:-1]
                _, _, count, power_w, *_ = cand.devices[placed.host]
                per = placed.per_rack[placed.host]
                last_w = (count - per * (derive.ceil_div(count, per) - 1)) * power_w + heads * head_w
                i = sum(1 for d in cand.devices[:placed.host] if d[2])
                racks[i] = racks[i].model_copy(update={"holds": {head: heads},
                                                       "power_kw": max(racks[i].power_kw, round(last_w / 1000, 3))})
        tier, units = cand.tier, cand.units
        layout = perf.evaluate(self.job, self.hardware(node, fabric, n, net.record.mode == "converged"))
        return Design(
            server=node.server.id, gpu=node.server.gpu, nodes=n, gpus=n * node.server.gpus_per_node,
            interconnect=node.interconnect.id, nic=node.nic.id, nics_per_node=node.rails,
            link_gbps=node.interconnect.gbps, tiers=fabric.tiers,
            oversubscription=round(fabric.oversubscription, 4) if multi else 1.0,
            rail_optimized=shape.rail_optimized, fabric=shape, switches=switches, links=links, racks=racks,
            storage=storage_choice(tier, units),
            cold_storage=storage_choice(*net.cold) if net.cold else None,
            storage_network=net.record, management_network=mgmt.record,
            head_nodes=HeadNodes(model=self.head.id, count=self.heads(n)) if self.heads(n) else None,
            parallelism=layout.parallelism,
        )

    def run(self, keep: int = 256, judge_all: bool = False) -> Enumerated:
        """Screen every combination, keep the ``keep`` cheapest, check them cheapest first.

        ``judge_all`` writes out and checks every screened combination instead, pricing each
        accepted one with ``recompute_cost`` (the literal brute force: slower, same optimum).
        """
        if judge_all:
            return self._judge_all()
        cheapest: list[tuple] = []  # max-heap on cost through negated keys
        screened = 0
        for sequence, candidate in enumerate(self.candidates()):
            screened += 1
            entry = (-self.rank(candidate), -sequence, candidate)
            if len(cheapest) < keep:
                heapq.heappush(cheapest, entry)
            elif entry > cheapest[0]:
                heapq.heapreplace(cheapest, entry)
            if len(cheapest) == keep and self.bounded:
                self.cost_bound = -cheapest[0][0]
        result = Enumerated(cost=None, design=None, candidates=screened)
        # Cheapest first; a mixed racking is packed when it comes first, and goes back with its
        # exact cost (its bound was a lower one) unless that packing changes nothing.
        queue = [(-cost, -seq, candidate) for cost, seq, candidate in cheapest]
        heapq.heapify(queue)
        while queue:
            _, seq, candidate = heapq.heappop(queue)
            resolved = self.packed(candidate)
            if resolved is None:
                continue
            if resolved[0] != candidate[0]:
                heapq.heappush(queue, (self.rank(resolved), seq, resolved))
            elif self._judge(resolved, result):
                return result
        return result

    def packed(self, candidate) -> tuple | None:
        """``candidate`` with its mixed racks packed and its cost and runs updated (None when
        they cannot be packed or its parts no longer reach)."""
        cost, cand = candidate
        placed = cand.placed.packed()
        if placed is None or placed.total not in cand.management_by_racks or self.beyond_a_row(placed):
            return None  # its switches serve another rack count's PDUs (another block covers it)
        if placed is cand.placed:
            return candidate
        used = derive.LINK_CLASSES[:max(cand.fabric.tiers, 1)] if cand.fabric.tiers else ()
        mgmt = cand.management_by_racks[placed.total]
        networks = self.networks_cost(cand.storage_net, mgmt, placed)
        if self.misfits(used, cand.parts, placed) or networks is None:
            return None
        cost += (networks - self.networks_cost(cand.storage_net, cand.management, cand.placed)
                 + placed.cost(self.price) - cand.placed.cost(self.price))
        return cost, replace(cand, placed=placed, management=mgmt)

    def _judge(self, candidate, result: Enumerated) -> bool:
        """Check one candidate; record it in ``result`` when accepted and cheaper than the best so far."""
        design = self.design(candidate)
        result.checked += 1
        violations = check_design(self.instance, design)
        if violations:
            for family in {v.family for v in violations}:
                result.rejected[family] = result.rejected.get(family, 0) + 1
            return False
        cost = int(round(recompute_cost(self.instance, design).total))
        result.cost_mismatches += cost != candidate[0]
        self._keep(candidate, cost, design, result)
        return True

    def _keep(self, candidate, cost: int, design, result: Enumerated) -> None:
        """Record an accepted candidate when it is cheaper than the best so far."""
        if result.cost is None or cost < result.cost:
            result.cost, result.design = cost, design

    def _judge_all(self) -> Enumerated:
        result = Enumerated(cost=None, design=None)
        for candidate in self.candidates():
            result.candidates += 1
            resolved = self.packed(candidate)
            if resolved is not None:
                self._judge(resolved, result)
        return result


SECONDS_PER_MONTH = 365.25 / 12 * SECONDS_PER_DAY
"""The mean Gregorian month (30.4375 days): rent is quoted per month."""


class JobCostEnumerator(Enumerator):
    """``min_job_cost``: the same combinations, storage sized for each one's own training rate
    (``perf.evaluate(...).tokens_per_s``), ranked by cost × time to train / month."""

    objective = "min_job_cost"

    def __init__(self, instance: Instance) -> None:
        super().__init__(instance)
        self._rates: dict[tuple, tuple[float, float] | None] = {}
        self._billed_months: dict[float, float] = {}

    def rate_and_time(self, node: NodeChoice, fabric: FabricChoice, n: int,
                      converged: bool = False) -> tuple[float, float] | None:
        """(tokens/s while training, seconds to train), cached per perf key, fabric class, n and
        storage mode."""
        key = (node.perf_key, max(fabric.tiers, 1), fabric.oversubscription_class, n, converged)
        if key not in self._rates:
            hardware = self.hardware(node, fabric, n, converged)
            found = perf.evaluate(self.job, hardware)
            seconds = perf.time_to_train_s(self.job, hardware)
            self._rates[key] = None if found is None or seconds is None else (found.tokens_per_s, seconds)
        return self._rates[key]

    def _months(self, candidate) -> float:
        """Months of list rent billed: the cheapest whole terms of the price book covering the time
        to train (the checker's table, checking/rental.py), or that time pro rata without terms."""
        c = candidate[1]
        converged = c.storage_net.record.mode == "converged"
        return self._billed(self.rate_and_time(c.node, c.fabric, c.nodes, converged)[1])

    def _billed(self, seconds: float) -> float:
        """Months billed for ``seconds`` of training (:meth:`_months`)."""
        terms = self.resolved.price_book.terms
        if not terms:
            return seconds / SECONDS_PER_MONTH
        if seconds not in self._billed_months:
            whole = math.ceil(Fraction(seconds) / Fraction(SECONDS_PER_MONTH))
            self._billed_months[seconds] = float(least_billed_months(terms, whole))
        return self._billed_months[seconds]

    def sized_storage(self, storage, node: NodeChoice, fabric: FabricChoice, n: int):
        """Per storage network mode, the hot tiers with the fewest units and the storage network's
        need at the design's own rate in that mode (converged reads slow the step, so the rate and
        the need are lower there), as the checker sizes them."""
        found = []
        for mode in ("dedicated", "converged"):
            rate = self.rate_and_time(node, fabric, n, mode == "converged")
            if rate is None:
                continue
            needs = perf.storage_needs(self.job, rate[0])
            found += [(mode, tier, max(1, *(math.ceil(need * (1 - TOLERANCE) / supply) for need, supply in (
                          (needs.read_gb_per_s, tier.read_gb_per_s), (needs.write_gb_per_s, tier.write_gb_per_s),
                          (needs.capacity_tb, tier.capacity_tb)))), needs.network_gbps)
                      for tier, _ in storage]
        return found

    def rank(self, candidate) -> float:
        """Job cost: cost per month × months billed."""
        return candidate[0] * self._months(candidate)

    def rank_bound(self, cost: float, node: NodeChoice, fabric: FabricChoice, n: int,
                   converged: bool | None = None) -> float:
        """``cost`` × the fewest months billed in the storage mode (either mode when None; inf when
        the job does not run): a combination's months are its mode's, and its cost is at least
        ``cost``."""
        modes = (False, True) if converged is None else (converged,)
        found = [self.rate_and_time(node, fabric, n, mode) for mode in modes]
        months = [self._billed(rate[1]) for rate in found if rate is not None]
        return cost * min(months) if months else math.inf

    def _keep(self, candidate, cost: int, design, result: Enumerated) -> None:
        """Record an accepted candidate when its job cost, from the checker's price and perf's time
        for the written-out design, is the smallest so far."""
        value = cost * self._months(candidate)
        if result.job_cost is None or value < result.job_cost:
            result.cost, result.design, result.job_cost = cost, design, value


def enumerate_min_job_cost(instance: Instance, keep: int = 256) -> Enumerated:
    """The design with the smallest job cost the checker accepts, by exhaustive enumeration."""
    return JobCostEnumerator(instance).run(keep)


def enumerate_designs(instance: Instance, keep: int = 256, judge_all: bool = False) -> Enumerated:
    """The cheapest design the checker accepts, by exhaustive enumeration (see the module docstring)."""
    return Enumerator(instance).run(keep, judge_all)


def enumerate_min_cost(instance: Instance) -> int | None:
    """The optimum's cost by exhaustive enumeration, or None when no design exists."""
    return enumerate_designs(instance).cost
