"""The pre-check: the commonest "no" settled in plain words before any model is built."""

from __future__ import annotations

from topoopt.options.problem import Problem
from topoopt.options.tables import MAX_NODES
from topoopt.perf.job import FASTEST_CLASS


def deadline_outprices_budget(problem: Problem) -> str | None:
    """The pre-check: no design meets the deadline within the budget when every node
    configuration of the problem's options needs more nodes to train in time than the budget buys
    at its server price alone — counted on the fabric class and storage mode never slower than
    any (one tier, no oversubscription, dedicated storage: at most the nodes any design of the
    configuration needs), while a design's cost includes at least its nodes' servers. On the
    unfiltered problem (:meth:`Problem.unfiltered`, every option kept) this shows that
    deadline_met and budget_cap cannot both hold whatever else is relaxed. Returns the reason in
    plain words, or None when the pre-check does not settle it (no deadline, or some
    configuration within the budget)."""
    seconds = problem.time_limit_s
    if seconds is None or problem.deadline_s is None:
        return None
    budget = int(problem.instance.budget.max)  # as budget_cap states it
    cheapest: tuple[int, int, str] | None = None  # (cost, nodes, server) of the cheapest in time
    for configs in problem.config_groups():
        fewest = problem.min_nodes_for_time(configs[0], FASTEST_CLASS, seconds)
        if fewest is None:
            continue  # no count up to MAX_NODES trains in time
        for c in configs:
            cost = fewest * (c.server_price or 0)  # unpriced: no bound (priced_in_book may be relaxed)
            if cost <= budget:
                return None
            cheapest = min(cheapest or (cost, fewest, c.server.id), (cost, fewest, c.server.id))
    if cheapest is None:
        return f"no node configuration trains in time on up to {MAX_NODES:,} nodes"
    cost, nodes, server = cheapest
    currency = problem.instance.budget.currency
    return (f"meeting the deadline costs at least {cost:,} {currency} in servers alone ({nodes:,} × {server}, the "
            f"cheapest server count that can train in time), over the budget of {budget:,} {currency}")
