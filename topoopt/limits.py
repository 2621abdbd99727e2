"""Default time budgets (importable without ortools, so that the command line can show them in
``--help`` without loading the solver)."""

EXPLAIN_TIME_S = 20.0
"""The explanation's default wall-clock limit: a planner's impossible ask is answered in seconds;
what the explanation has not proven by then is labelled."""
