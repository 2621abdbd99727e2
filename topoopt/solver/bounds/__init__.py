"""Lower bounds on what a design costs and upper bounds on its node count, computed without CP-SAT:
the searches over candidates (``topoopt.solver.objectives``, ``topoopt.solver.explain``) prune by
them, so each must never exclude a design.

Two node-count bounds, on purpose. cost_floor.py's (the model's own switch, rack and network
counts at the cheapest options, the budget met by bisection) relies on the budget, fabric, rack
and site rules, so it holds while nothing but the deadline is relaxed. nodes.py's (a linear price
per node; pins, budget, racks and site power each unless relaxed) is min_time's bound when more is
relaxed, and before a fabric class is chosen. They give different counts, hence different search
keys: one bound for both would change which nodes the searches visit (and, with the budget
relaxed, which candidates they solve).
"""
