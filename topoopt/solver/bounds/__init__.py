"""Lower bounds on what a design costs and upper bounds on its node count, computed without CP-SAT:
the searches over candidates (``topoopt.solver.objectives``, ``topoopt.solver.explain``) prune by
them, so each must never exclude a design."""
