"""PerformanceAnswers (topoopt/options/performance.py): cached answers and the never-slower
inference equal the performance model asked directly, whatever order the questions come in."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import build, instance_data

from topoopt import perf
from topoopt.options.performance import PerformanceAnswers, mode_never_slower
from topoopt.options.problem import Problem
from topoopt.options.tables import MAX_NODES

CLASSES = [(1, 1.0), (2, 1.0), (2, 2.0), (2, 3.0), (3, 1.0), (3, 3.0)]
MODES = [(cls, converged) for cls in CLASSES for converged in (False, True)]
DAYS = [0.05, 0.25, 1.0, 5.0, 30.0]


def few() -> settings:
    return settings(max_examples=max(3, settings.default.max_examples // 4))


def configs(problem: Problem) -> list:
    return [group[0] for group in problem.config_groups()]


@few()
@given(instance_data(), st.permutations(MODES), st.sampled_from(DAYS))
def test_fewest_nodes_in_time_equal_the_model_asked_directly(data, modes, days):
    """Asked in any order of classes and modes, so that earlier answers settle later ones."""
    problem = Problem.of(build(data))
    answers = PerformanceAnswers(problem.job)
    seconds = days * 86_400
    for config in configs(problem):
        for cls, converged in modes:
            direct = perf.min_nodes_for_time(problem.job, answers.hardware(config, cls, 1, converged), seconds, MAX_NODES)
            assert answers.min_nodes_for_time(config, cls, seconds, converged) == direct


@few()
@given(instance_data(), st.permutations(MODES), st.sampled_from(DAYS), st.integers(1, 64),
       st.sampled_from([None, *CLASSES]))
def test_a_count_in_time_equals_the_model_asked_directly(data, modes, days, nodes, slowest):
    problem = Problem.of(build(data))
    answers = PerformanceAnswers(problem.job)
    seconds = days * 86_400
    for config in configs(problem):
        for cls, converged in modes:
            direct = perf.trains_within(problem.job, answers.hardware(config, cls, nodes, converged), seconds)
            assert answers.in_time(config, cls, nodes, seconds, converged, slowest) == direct
            pinned = answers.min_nodes_for_time(config, cls, seconds, converged, pinned=nodes, slowest=slowest)
            assert pinned == (nodes if direct else None)


@few()
@given(instance_data(), st.lists(st.sampled_from(MODES), max_size=6), st.sampled_from(MODES), st.sampled_from(DAYS),
       st.integers(1, 64))
def test_bounds_below_a_ceiling_are_exact_up_to_it(data, asked, mode, days, ceiling):
    """A bound searched only up to a ceiling never exceeds the exact count, is None only when the
    exact answer is None (the model is then proven infeasible soundly), and rules out a count up
    to the ceiling exactly when the exact answer does."""
    problem = Problem.of(build(data))
    answers = PerformanceAnswers(problem.job)
    seconds = days * 86_400
    cls, converged = mode
    for config in configs(problem):
        for other_cls, other_converged in asked:
            answers.min_nodes_for_time(config, other_cls, seconds, other_converged)
        bound = answers.min_nodes_for_time(config, cls, seconds, converged, ceiling=ceiling)
        exact = answers.min_nodes_for_time(config, cls, seconds, converged)
        if bound is None:
            assert exact is None
        elif exact is not None:
            assert bound <= exact
        assert (bound is not None and bound <= ceiling) == (exact is not None and exact <= ceiling)


def test_mode_never_slower_is_a_partial_order_on_the_modes():
    for a in MODES:
        assert mode_never_slower(a, a)
        for b in MODES:
            if mode_never_slower(a, b) and mode_never_slower(b, a):
                assert a == b
            for c in MODES:
                if mode_never_slower(a, b) and mode_never_slower(b, c):
                    assert mode_never_slower(a, c)


@few()
@given(instance_data())
def test_variants_share_the_answers_and_the_option_tables(data):
    problem = Problem.of(build(data))
    variants = [problem.unfiltered(), problem.with_time_limit(None), problem.rated(1.0),
                problem.relaxing(frozenset({"cable_reach"})).restricted(problem.options.node_configs[:1], [])]
    assert all(v.answers is problem.answers and v.tables is problem.tables for v in variants)
    assert problem.unfiltered().options is problem.unfiltered().options
    assert problem.rated(1.0).throughput_target == 1.0 and problem.with_time_limit(5.0).time_limit_s == 5.0
    assert problem.time_limit_s == problem.deadline_s  # a variant leaves the problem it came from as it was
