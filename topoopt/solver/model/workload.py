"""The workload's families: the model fits in memory and trains by the deadline.

Both bound the node count from below per node-configuration group and fabric class (and storage
network mode), with the performance model's answers entering as constants (options/problem.py)."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.network_definitions import converged_offered


def _nodes_at_least(dm: DesignModel, family: str, need_of, by_mode: bool = False) -> None:
    """n ≥ need per node-configuration group (and fabric class, and with ``by_mode`` storage
    network mode: ``need_of(config, class, converged)``); None rules the combination out.

    Besides the enforced bounds, three implied linear cuts keep the search (and proofs of
    infeasibility) short: n ≥ Σ need·use and server cost ≥ Σ price·need·use over the groups, with
    each group's smallest need over the fabric classes, and no use of the groups that no
    combination admits. They follow from the bounds, so they belong to the same family.
    """
    v, m = dm.vars, dm.model
    modes = [((), False)]
    if by_mode:
        offered = {s.mode for s in dm.options.storage_nets}
        modes = [((lit,), converged) for lit, converged, mode in ((dm.net.dedicated, False, "dedicated"),
                                                                   (dm.net.converged, True, "converged"))
                 if mode in offered]
    node_terms, cost_terms, dead = [], [], []
    for group, configs in dm.node_groups(dm.problem.perf_key):
        needs = []
        for cls, cls_lit in v.use_class.items():
            for mode, converged in modes:
                if (converged and configs[0].speed_key not in dm.options.converged_speeds
                        and not converged_offered(configs[0])):
                    continue  # not offered (network_definitions.py)
                need = need_of(configs[0], cls, converged)
                if need is None:
                    dm.forbid(family, group, cls_lit, *mode)
                else:
                    needs.append(need)
                    dm.add(family, m.add(v.nodes >= need), group, cls_lit, *mode)
        if not needs:
            dead.append(group)
            continue
        least = min(needs)
        node_terms.append(least * group)
        cost_terms += [least * (c.server_price or 0) * v.use_config[c.index] for c in configs]
    dm.add(family, m.add(v.nodes >= sum(node_terms)))
    dm.add(family, m.add(v.cost["server"] >= sum(cost_terms)))
    # Presolve fixes every dead group's literal from this one constraint (the per-combination
    # clauses leave it to the search; measured: the infeasible example's first proof 0.23 s ->
    # 0.04 s). One constraint however many groups die: the model's size does not depend on them.
    dm.add(family, m.add(sum(dead) <= 0))


def memory_fits(dm: DesignModel) -> None:
    """n ≥ the fewest nodes on which the model fits (perf.min_nodes_to_fit)."""
    _nodes_at_least(dm, "memory_fits", lambda config, _cls, _converged: dm.problem.min_nodes_to_fit(config))


def deadline_met(dm: DesignModel) -> None:
    """n ≥ the fewest nodes that train in time, per (node configuration, fabric class, storage
    network mode): a converged network's storage reads slow the step."""
    seconds = dm.problem.time_limit_s
    if seconds is not None:
        _nodes_at_least(dm, "deadline_met", lambda config, cls, converged: dm.problem.min_nodes_for_time(
            config, cls, seconds, converged), by_mode=True)
