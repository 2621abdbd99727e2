"""``min_cost``: the cheapest design, its ties broken so that the answer is unique.

One lexicographic solve: total cost, then fewer GPUs and lower provisioned power, then the catalog
order of the chosen options, then fewer racks and, when the devices share racks, a canonical
placement (DESIGN.md §3 rule 7: the same instance always yields the same design).
"""

from __future__ import annotations

from topoopt.options.problem import Problem
from topoopt.solver.model import model_for
from topoopt.solver.model.core import POWER_MAX_W, DesignModel
from topoopt.solver.run import OK, Settings, Stats, fix_at, hint_from, lexicographic

CATALOG_ORDER_MAX = 2**53
"""Largest sum of coefficients in one catalog-order objective: CP-SAT rejects an objective that
may overflow 64-bit integers (MODEL_INVALID), and up to 2**53 it is also exact as a double."""


def catalog_order(dm: DesignModel) -> list:
    """Linear expressions ranking designs by the catalog order of their options, lexicographically:
    node configuration first, then fabric (a 2-tier fabric's shape and spines, then the rails per leaf), parts, rack classes (the nodes', then the network and storage racks'), storage tier, storage network, cold
    tier and management switch. Groups share one expression while its weights fit
    :data:`CATALOG_ORDER_MAX`; a large catalog needs several, minimised one after the other."""
    o, v = dm.options, dm.vars
    groups = [
        [(c.index, v.use_config[c.index]) for c in o.node_configs],
        list(enumerate(v.use_fabric)),
        list(enumerate(v.use_shape.values())),
        list(enumerate(v.use_spines.values())),  # a near-balanced shape: fewest spines first
        list(enumerate(v.use_rails_per_leaf.values())),  # fewest rails per leaf: rail-optimized first
        *[[(p.index, v.use_part[cls, p.index]) for p in ps] for cls, ps in o.parts.items()],
        list(enumerate(v.use_rack)),
        list(enumerate(v.use_infra_rack)),
        list(enumerate(v.use_storage)),
        list(enumerate(dm.net.use_storage_net)),
        list(enumerate(dm.net.use_cold)),
        list(enumerate(dm.net.use_mgmt)),
    ]
    expressions, expression, weight, total = [], 0, 1, 0
    for group in reversed(groups):  # least significant first
        coefficients = sum(index for index, _ in group)
        if weight > 1 and total + weight * coefficients > CATALOG_ORDER_MAX:
            expressions.append(expression)
            expression, weight, total = 0, 1, 0
        expression += weight * sum(index * lit for index, lit in group)
        total += weight * coefficients
        weight *= len(group) + 1
    expressions.append(expression)
    return expressions[::-1]  # most significant first


def tie_break(dm: DesignModel):
    """Fewer GPUs first, then lower provisioned power."""
    return dm.vars.gpus * (POWER_MAX_W + 1) + dm.vars.power_w["total"]


def placement_order(dm: DesignModel, solver) -> list:
    """The counts that make the contents of mixed racks unique, each maximised in turn (so
    returned negated): the first rack as full as it can be (its nodes, then each switch and
    storage model in catalog order, which renaming leaves alone, then its head nodes), then the
    second, and so on, over the racks and models of ``solver``'s design (the others hold nothing
    once cost and racks are fixed). The last rack holds what is left. One count per stage: a proof over one small integer
    is immediate, where one weighted sum of them all took minutes unproven (40 nodes on 8-port
    switches in 3 tiers)."""
    n, catalog = dm.net, dm.problem.catalog.catalog
    switches = [s.id for s in catalog.switches if s.id in n.switches_of and solver.value(n.switches_of[s.id])]
    units = [t.id for t in catalog.storage if t.id in n.units_of and solver.value(n.units_of[t.id])]
    used = [slot for slot in dm.slots if solver.value(slot.used)]
    heads = bool(solver.value(n.heads))
    return [-count for slot in used[:-1]
            for count in (slot.nodes, *(slot.switches[k] for k in switches), *(slot.units[k] for k in units),
                          *((slot.heads,) if heads else ()))]


def canonical_placement(dm: DesignModel, settings: Settings, stats: Stats, status, solver):
    """Fewer racks at the optimum found, then racks of one model each over mixed ones, then the
    most management leaves in compute racks, then, if the devices still share racks, their
    canonical placement (:func:`placement_order`). Cost,
    power and options are fixed by then: these stages only choose among equal designs. If a time
    limit cuts them short, the optimum found stands."""
    v = dm.vars
    found = status, solver
    # The options and node count are unique at the catalog-order optimum; stated, they let each
    # stage's presolve drop the rest of the option space (the demo's 18 stages after the cost: 2.3 s -> 1.2 s).
    fix_at(dm.model, solver, hint_vars(dm))
    hint_from(dm.model, solver, hint_vars(dm))
    # Fewer racks, then (a rack more weighing more than the flag) racks of one model each; then
    # the most management leaves in compute racks (design-practice: a small switch goes in a
    # compute rack when power and units allow).
    stages = [2 * v.racks + v.mixed, -dm.net.mgmt_hosted_leaves]
    status, solver, _, _ = lexicographic(dm.model, stages, settings, stats, hint_vars(dm))
    if status not in OK:
        return found
    found = status, solver
    if solver.value(v.mixed):
        status, solver, _, _ = lexicographic(dm.model, placement_order(dm, solver), settings, stats, hint_vars(dm))
        if status in OK:
            found = status, solver
    return found


def hint_vars(dm: DesignModel) -> list:
    v = dm.vars
    return [*v.use_config, *v.use_fabric, *v.use_shape.values(), *v.use_spines.values(),
            *v.use_rails_per_leaf.values(), *v.use_rack, *v.use_infra_rack, *v.use_storage, *v.use_part.values(),
            *dm.net.use_storage_net, *dm.net.use_cold, *dm.net.use_mgmt, v.nodes]


def min_cost(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()):
    """Cheapest design (cost, GPUs, power, catalog order). Returns (status, dm, solver, value, bound)."""
    dm = model_for(problem, relaxed)
    objectives = [dm.vars.total_cost, tie_break(dm), *catalog_order(dm)]
    status, solver, value, bound = lexicographic(dm.model, objectives, settings, stats, hint_vars(dm))
    if status in OK:
        status, solver = canonical_placement(dm, settings, stats, status, solver)
    return status, dm, solver, value, bound
