"""Contracts the solver relies on for exactness, checked with hypothesis.

* time to train never grows with the node count, and fitting is monotone in it;
* a faster link or a lower oversubscription never slows a step; a fabric class never slower by
  ``never_slower`` (fewer tiers, more bandwidth share) is never slower;
* more GPU memory never turns a fit into a non-fit (nor slows the job);
* ``min_nodes_to_fit`` / ``min_nodes_for_time`` equal a linear scan over node counts;
* the branch-and-bound search returns the best layout of its space (against brute force), and its
  step bounds never exceed the step time.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perf_fixtures import (
    A100_40,
    A100_80,
    H100,
    IB_HDR,
    IB_NDR,
    ROCE_400,
    TCP_25,
    TCP_100,
    architecture,
    cluster,
    job,
    pinned,
)

from topoopt.perf import (
    fits_in_memory,
    min_nodes_for_time,
    min_nodes_to_fit,
    search,
    space,
    time_to_train_s,
    trains_within,
)
from topoopt.perf.job import Fabric, never_slower
from topoopt.perf.step import step_bounds

EXAMPLES = 200 if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else 30
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MODELS = [
    architecture(1.3, 24, 2048, 16),
    architecture(7.0, 32, 4096, 32),
    architecture(13.0, 40, 5120, 40),
    architecture(34.0, 48, 8192, 64),
    architecture(70.0, 80, 8192, 64, vocab=128256),
]
GPUS = [A100_40, A100_80, H100]
LINKS = [IB_HDR, IB_NDR, ROCE_400, TCP_100, TCP_25]


@st.composite
def jobs(draw):
    """Auto layouts, and layouts pinned in whole or in part (a None field is searched)."""
    parallelism = draw(
        st.one_of(
            st.just("auto"),
            st.builds(
                pinned,
                tp=st.sampled_from([None, 1, 2, 4, 8]),
                pp=st.sampled_from([None, 1, 2, 4]),
                dp=st.none(),
                zero_stage=st.sampled_from([None, 0, 1, 2, 3]),
                microbatch=st.sampled_from([None, 1, 2, 4]),
                virtual_stages=st.sampled_from([None, 1, 2]),
                cp=st.sampled_from([None, 1, 2]),
            ),
        )
    )
    model = draw(st.sampled_from(MODELS)).model_copy(update={"tied_embeddings": draw(st.booleans())})
    return job(
        model,
        sequence_length=draw(st.sampled_from([1024, 2048, 4096, 8192, 16384])),
        global_batch=draw(st.sampled_from([16, 64, 96, 250, 512, 1024])),
        parallelism=parallelism,
        recompute=draw(st.sampled_from(["auto", "none", "selective", "full"])),
        attention=draw(st.sampled_from(["flash", "materialized"])),
        precision=draw(st.sampled_from(["bf16", "fp8"])),
        tokens=1e11,
        tp_comm_overlap=draw(st.booleans()),
        param_gather_overlap=draw(st.booleans()),
    )


@st.composite
def clusters(draw, nodes=st.integers(1, 48)):
    return cluster(
        draw(st.sampled_from(GPUS)),
        nodes=draw(nodes),
        interconnect=draw(st.sampled_from(LINKS)),
        nics_per_node=draw(st.sampled_from([1, 2, 4, 8])),
        tiers=draw(st.sampled_from([1, 2, 3])),
        oversubscription=draw(st.sampled_from([1.0, 1.5, 2.0, 4.0])),
    )


def _time(job_, hw) -> float:
    seconds = time_to_train_s(job_, hw)
    return float("inf") if seconds is None else seconds


def _with(hw, **changes):
    fields = dict(
        gpu=hw.gpu,
        nodes=hw.nodes,
        interconnect=hw.interconnect,
        nics_per_node=hw.nics_per_node,
        tiers=hw.tiers,
        oversubscription=hw.oversubscription,
        link_gbps=hw.link_gbps,
    )
    fields.update(changes)
    return cluster(
        fields["gpu"],
        nodes=fields["nodes"],
        interconnect=fields["interconnect"],
        nics_per_node=fields["nics_per_node"],
        tiers=fields["tiers"],
        oversubscription=fields["oversubscription"],
        link_gbps=fields["link_gbps"],
    )


@SETTINGS
@given(jobs(), clusters(), st.integers(1, 64))
def test_more_nodes_never_slower_and_fit_is_monotone(job_, hw, extra):
    bigger = _with(hw, nodes=hw.nodes + extra)
    assert fits_in_memory(job_, hw) == (search.best_step(job_, hw) is not None)
    assert _time(job_, bigger) <= _time(job_, hw)
    if fits_in_memory(job_, hw):
        assert fits_in_memory(job_, bigger)


@SETTINGS
@given(jobs(), clusters(), st.sampled_from([100, 200, 400, 800]))
def test_faster_link_never_slower(job_, hw, gbps):
    slow = _with(hw, link_gbps=min(gbps, hw.interconnect.gbps))
    fast = _with(hw, link_gbps=max(gbps, hw.interconnect.gbps))
    assert _time(job_, fast) <= _time(job_, slow)


@SETTINGS
@given(jobs(), clusters(), st.sampled_from([1.0, 1.5, 2.0, 3.0, 8.0]))
def test_lower_oversubscription_never_slower(job_, hw, ratio):
    low, high = sorted((ratio, hw.oversubscription))
    assert _time(job_, _with(hw, oversubscription=low)) <= _time(job_, _with(hw, oversubscription=high))


CLASSES = [(1, 1.0), (2, 1.0), (2, 2.0), (2, 3.0), (3, 1.0), (3, 2.0), (3, 3.0)]


@SETTINGS
@given(jobs(), clusters(), st.sampled_from(CLASSES), st.sampled_from(CLASSES))
def test_a_class_never_slower_trains_no_slower(job_, hw, a, b):
    """The solver settles one fabric class's deadline answer from another's (options/problem.py)."""
    if not never_slower(a, b):
        a, b = b, a
    if never_slower(a, b):
        time_a = _time(job_, _with(hw, tiers=a[0], oversubscription=a[1]))
        assert time_a <= _time(job_, _with(hw, tiers=b[0], oversubscription=b[1]))


def test_never_slower_orders_tiers_and_oversubscription():
    assert never_slower((1, 1.0), (3, 3.0)) and never_slower((2, 1.0), (2, 2.0))
    assert never_slower((1, 3.0), (2, 1.0))  # one switch: no spine layer to oversubscribe
    assert not never_slower((3, 1.0), (2, 1.0)) and not never_slower((2, 2.0), (3, 1.0))


@SETTINGS
@given(jobs(), clusters(), st.sampled_from([16.0, 24.0, 40.0, 48.0, 96.0, 141.0, 192.0]))
def test_more_gpu_memory_never_breaks_a_fit(job_, hw, memory_gb):
    small_gb, large_gb = sorted((memory_gb, hw.gpu.memory_gb))
    small = _with(hw, gpu=hw.gpu.model_copy(update={"memory_gb": small_gb}))
    large = _with(hw, gpu=hw.gpu.model_copy(update={"memory_gb": large_gb}))
    if fits_in_memory(job_, small):
        assert fits_in_memory(job_, large)
    assert _time(job_, large) <= _time(job_, small)


@SETTINGS
@given(jobs(), clusters(nodes=st.just(1)), st.sampled_from([0.25, 1.0, 5.0, 30.0, 400.0]))
def test_min_nodes_equal_a_linear_scan(job_, hw, days):
    limit = 24
    scan_fit = next((n for n in range(1, limit + 1) if fits_in_memory(job_, _with(hw, nodes=n))), None)
    assert min_nodes_to_fit(job_, hw, limit) == scan_fit
    budget_s = days * 86400
    scan_time = next((n for n in range(1, limit + 1) if _time(job_, _with(hw, nodes=n)) <= budget_s), None)
    assert min_nodes_for_time(job_, hw, budget_s, limit) == scan_time


def _auto(job_, **changes):
    """The job with ``auto`` parallelism (its recomputation policy kept unless changed)."""
    training = job_.training
    fields = dict(
        sequence_length=training.sequence_length,
        global_batch=training.global_batch_sequences,
        recompute=training.activation_recompute,
        attention=training.attention,
        precision=training.precision,
    )
    fields.update(changes)
    return job(job_.model, **fields)


def _step(job_, hw) -> float:
    found = search.best_step(job_, hw)
    return float("inf") if found is None else found[1].step_s


@SETTINGS
@given(jobs(), clusters())
def test_recompute_auto_is_the_best_policy(job_, hw):
    """``activation_recompute: auto`` (with its dominance pruning) finds the fastest step of the
    three policies searched one at a time."""
    best = _step(_auto(job_, recompute="auto"), hw)
    assert best == min(_step(_auto(job_, recompute=policy), hw) for policy in ("none", "selective", "full"))


@SETTINGS
@given(jobs(), clusters(), st.sampled_from(["tp", "pp", "cp", "zero_stage", "microbatch", "virtual_stages"]))
def test_a_field_left_out_is_searched(job_, hw, field):
    """A layout pinned but for one field is as fast as the best of that field's values pinned."""
    shape_layers = job_.model.layers
    fixed = dict(tp=2, pp=4, dp=None, cp=1, zero_stage=1, microbatch=2, virtual_stages=1)
    values = {
        "tp": space.tp_choices(8, job_.model.attention_heads),
        "pp": space.pp_choices(shape_layers),
        "cp": space.cp_choices(job_.training.sequence_length),
        "zero_stage": [0, 1],
        "microbatch": [1, 2, 4, 8],
        "virtual_stages": space.virtual_stage_choices(shape_layers, 4),
    }[field]
    training = job_.training
    common = dict(sequence_length=training.sequence_length, global_batch=training.global_batch_sequences,
                  recompute=training.activation_recompute, attention=training.attention)
    searched = _step(job(job_.model, parallelism=pinned(**{**fixed, field: None}), **common), hw)
    each = [_step(job(job_.model, parallelism=pinned(**{**fixed, field: value}), **common), hw)
            for value in values if value <= training.global_batch_sequences or field != "microbatch"]
    assert searched == min(each)


@SETTINGS
@given(jobs(), clusters())
def test_search_finds_the_best_layout_of_its_space(job_, hw):
    if job_.training.parallelism != "auto":
        job_ = _auto(job_)
    spec = search.gpu_spec(job_, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    batch = job_.training.global_batch_sequences
    brute = None
    for layout in space.job_layouts(job_, spec):
        for dp in search.dp_candidates_ascending(layout, batch):
            if layout.model_gpus * dp > hw.gpus:
                break
            step = search.step_time(layout, dp, batch, fabric).step_s
            brute = step if brute is None else min(brute, step)
    found = search.best_step(job_, hw)
    assert (found is None) == (brute is None)
    if found is not None:
        assert found[1].step_s == brute


@pytest.mark.parametrize("flag", ["tp_comm_overlap", "param_gather_overlap"])
@SETTINGS
@given(jobs(), clusters())
def test_overlapping_communication_is_never_slower(flag, job_, hw):
    """A stack that overlaps TP collectives with the GEMMs, or the ZeRO-1/2 weight all-gather with
    the next forward pass, trains no slower than one that does not, on the same cluster, and fits
    exactly when it does (overlap changes time, not memory)."""
    off = replace(job_, training=job_.training.model_copy(update={flag: False}))
    on = replace(job_, training=job_.training.model_copy(update={flag: True}))
    assert fits_in_memory(on, hw) == fits_in_memory(off, hw)
    assert _time(on, hw) <= _time(off, hw)


@SETTINGS
@given(jobs(), clusters())
def test_step_bound_never_exceeds_the_step(job_, hw):
    """The branch and bound prunes on ``StepBound`` with exact comparisons, so at every layout and
    dp the bound (bubble included) is at most the step time, floats and all."""
    if job_.training.parallelism != "auto":
        job_ = _auto(job_)
    spec = search.gpu_spec(job_, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    batch = job_.training.global_batch_sequences
    layouts = space.job_layouts(job_, spec)
    for layout, bound in zip(layouts, step_bounds(layouts, fabric)):
        for dp in search.dp_candidates_ascending(layout, batch):
            if layout.model_gpus * dp > hw.gpus:
                break
            times = search.step_time(layout, dp, batch, fabric)
            assert bound.at(times.microbatches) <= bound.for_dp(times.microbatches, dp) <= times.step_s


@SETTINGS
@given(jobs(), st.lists(clusters(), min_size=1, max_size=4), st.lists(st.sampled_from([0.5, 0.99, 1.0, 1.01, 2.0]),
                                                                      min_size=1, max_size=4))
def test_trains_within_is_the_time_to_train_compared(job_, hws, factors):
    """The early-exit test equals comparing the fastest layout's time, for limits just below, at
    and above it, and whatever candidate an earlier call left to be tried first."""
    for hw in hws:
        seconds = time_to_train_s(job_, hw)
        for factor in factors:
            limit = (seconds or 86400.0) * factor
            assert trains_within(job_, hw, limit) == (seconds is not None and seconds <= limit)


def test_candidate_replica_counts():
    layout = space.job_layouts(job(global_batch=100), search.gpu_spec(job(global_batch=100), cluster()))[0]
    candidates = list(search.dp_candidates_ascending(layout, 100))
    assert candidates[0] == layout.dp_fit
    # The fewest replicas for each micro-batch count: ⌈100/m⌉ for m = 1, 2, 3, ...
    expected = sorted({-(-100 // (m * layout.microbatch)) for m in range(1, 101)} | {layout.dp_fit})
    assert candidates == [d for d in expected if d >= layout.dp_fit]
    assert list(search.dp_candidates_descending(layout, 100, 10**6)) == candidates[::-1]
    assert space.pp_choices(80) == sorted({-(-80 // depth) for depth in range(1, 81)})
    assert space.tp_choices(8, 40) == [1, 2, 4, 8] and space.tp_choices(8, 12) == [1, 2, 4]
