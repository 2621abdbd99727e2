"""The design problem before any solver: option tables and the per-option rules.

Everything here knows no CP-SAT (and imports without ortools): the node configurations, fabric
options, cable parts, rack classes, storage tiers and storage and management network options an
instance allows (tables.py, networks.py), the rules that rule out a single option (rules.py), and
the :class:`~topoopt.options.problem.Problem` that carries them with the performance model's
per-option answers. ``topoopt.solver`` builds its CP-SAT model from a Problem.
"""
