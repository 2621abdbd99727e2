"""The parallel-layout search: the fastest layout that fits, and the fewest nodes for a goal.

**The space** (:mod:`topoopt.perf.space`): layouts (tp, pp, v, micro-batch b, ZeRO stage,
recomputation), every one under ``auto``, the ones a partial pin leaves otherwise; each with its
data-parallel candidates

    dp ∈ C = {dp_fit} ∪ {⌈B/(m·b)⌉ > dp_fit : m ≥ 1}

(the fewest replicas that give each micro-batch count m, plus the fewest replicas that fit in
memory; another dp gives the same m — same compute and bubble — with more GPUs, and the model's
step then differs only by the second-order change of the DP collective with the ring size), or
the pinned dp alone. A layout may leave GPUs of the cluster idle.

The search is exact over this space: layouts are visited in order of a lower bound on their step
(:class:`~topoopt.perf.step.StepBound`: compute, bubble, TP, the cheapest possible PP traffic and
the DP collective at two ranks on the fastest link the group can use) and the visit stops when
the bound reaches the best step found.
Because C does not depend on the cluster, a larger cluster offers a superset of choices, so the
best time never grows with the node count and a layout that fits at n nodes fits at n + 1.
Per (job, GPU, GPUs per node) the layouts, their compute times and their smallest fitting dp
are cached; only communication is recomputed per fabric.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from functools import lru_cache

from topoopt.models.performance import Parallelism
from topoopt.perf.job import Fabric, GpuSpec, Hardware, Job
from topoopt.perf.memory import microbatch_count
from topoopt.perf.space import LayoutPins, job_layouts, layout_space
from topoopt.perf.step import BoundBuilder, Layout, StepBound, StepTimes, step_bounds, step_time


def _efficient_dp(batch: int, microbatches: int, microbatch: int) -> int:
    """The fewest replicas that give ``microbatches`` micro-batches: ⌈B/(m·b)⌉."""
    return -(-batch // (microbatches * microbatch))


def dp_candidates_descending(layout: Layout, batch: int, dp_max: int) -> Iterator[int]:
    """Members of C (module docstring) that are ≤ ``dp_max``, largest first."""
    dp_fit = layout.dp_fit
    if dp_fit is None or dp_max < dp_fit:
        return
    if layout.dp_pinned:
        yield dp_fit
        return
    b = layout.microbatch
    m = microbatch_count(batch, dp_max, b)
    previous = None
    while True:
        dp = _efficient_dp(batch, m, b)
        if dp <= dp_fit:
            yield dp_fit
            return
        if dp != previous:
            yield dp
            previous = dp
        m += 1


def dp_candidates_ascending(layout: Layout, batch: int, dp_start: int = 1) -> Iterator[int]:
    """Members of C (module docstring) that are ≥ ``dp_start``, smallest first."""
    dp_fit = layout.dp_fit
    if dp_fit is None:
        return
    if layout.dp_pinned:
        if dp_fit >= dp_start:
            yield dp_fit
        return
    b = layout.microbatch
    if dp_start <= dp_fit:
        yield dp_fit
        dp_start = dp_fit + 1
    # Every member above dp_fit is ⌈B/(m·b)⌉ for some m; the smallest one ≥ dp_start has
    # m = ⌈B/(dp_start·b)⌉ when that value equals dp_start, else m − 1.
    m = microbatch_count(batch, dp_start, b)
    if m >= 1 and _efficient_dp(batch, m, b) == dp_start and dp_start > dp_fit:
        yield dp_start
    previous = dp_start
    while m > 1:
        m -= 1
        dp = _efficient_dp(batch, m, b)
        if dp > previous:
            yield dp
            previous = dp


def gpu_spec(job: Job, hw: Hardware) -> GpuSpec:
    return GpuSpec.of(hw.gpu, hw.gpus_per_node, job.training.precision)


def best_step(job: Job, hw: Hardware, parallelism: Parallelism | None = None) -> tuple[Layout, StepTimes] | None:
    """The fastest (layout, step) that fits on ``hw``, or None when nothing fits.

    With a layout pinned (argument or the job's own), only that layout is evaluated; a pinned
    dp of None means the best dp of C up to all remaining GPUs.
    """
    return _over_space(job, hw, parallelism, lambda layouts, bounds, *rest: _search(layouts, bounds(), *rest))


_LAST_ACCEPTED: dict[tuple, tuple[int, int]] = {}
"""(job, GPU spec) -> (layout index, dp) of the candidate :func:`some_step_within` last accepted.
The same job is asked again and again at nearby node counts and fabric classes, where that
candidate is usually accepted too: trying it first skips ordering every layout."""
LAST_ACCEPTED_MAX = 4096


def some_step_within(job: Job, hw: Hardware, accept: Callable[[float], bool]) -> bool:
    """Whether some layout that fits on ``hw`` (the job's policy: pinned or auto) has a step
    ``accept`` takes; ``accept`` must be monotone (a step it takes, it takes when shorter).

    Exactly ``accept(best_step(job, hw)[1].step_s)`` when something fits, but the search stops
    at the first step accepted — the candidate accepted last for this job and GPU first, when
    it fits — and prunes every candidate whose lower bound is not accepted.
    """
    key = (job, gpu_spec(job, hw))

    def search(layouts, bounds, batch, gpus, fabric) -> bool:
        last = _LAST_ACCEPTED.get(key)
        if last is not None and last[0] < len(layouts):
            layout, dp = layouts[last[0]], last[1]
            # dp is a member of C for this layout and batch (they do not depend on the cluster),
            # at least its dp_fit; it only has to fit in the GPUs.
            if layout.model_gpus * dp <= gpus and accept(step_time(layout, dp, batch, fabric).step_s):
                return True
        found = _first_accepted(layouts, bounds(), batch, gpus, fabric, accept)
        if found is not None:
            if len(_LAST_ACCEPTED) >= LAST_ACCEPTED_MAX:
                _LAST_ACCEPTED.clear()
            _LAST_ACCEPTED[key] = found
        return found is not None

    def single(layout, dp, batch, fabric) -> bool:
        return accept(step_time(layout, dp, batch, fabric).step_s)

    return bool(_over_space(job, hw, None, search, single))


def _over_space(job: Job, hw: Hardware, parallelism: Parallelism | None, search, single=None):
    """Run ``search(layouts, bounds, batch, gpus, fabric)`` over the layouts the job allows on
    ``hw`` (``bounds()`` gives their step bounds, computed only when asked), or
    ``single(layout, dp, batch, fabric)`` for a fully pinned layout that fits (by default its
    (layout, step)); None when the pinned layout does not fit."""
    spec = gpu_spec(job, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    batch = job.training.global_batch_sequences
    pins = LayoutPins.of(job, parallelism)
    layouts = layout_space(job, spec, pins)
    if pins.complete:
        if not layouts or layouts[0].model_gpus * pins.dp > hw.gpus:
            return None
        layout = layouts[0]
        if single is not None:
            return single(layout, pins.dp, batch, fabric)
        return layout, step_time(layout, pins.dp, batch, fabric)
    return search(layouts, lambda: _space_bounds(job, spec, pins, fabric), batch, hw.gpus, fabric)


@lru_cache(maxsize=256)
def _space_bounds(job: Job, spec: GpuSpec, pins: LayoutPins, fabric: Fabric) -> tuple[StepBound, ...]:
    """Step bounds of the layouts of one space on one fabric, cached."""
    return step_bounds(layout_space(job, spec, pins), fabric)


def _order_bound(layout: Layout, bound: StepBound, batch: int, dp_max: int) -> float:
    """A lower bound of the step of every candidate dp ≤ ``dp_max`` of ``layout``.

    Candidates whose DP group crosses islands pay at least the crossing floor at the fewest
    micro-batches; those whose group fits in an island have at most island/tp replicas; dp = 1
    has no DP traffic.
    """
    # StepBound.at and microbatch_count written out: this runs for every layout of every search.
    b, per_microbatch_s, constant_s = layout.microbatch, bound.per_microbatch_s, bound.constant_s
    m_min = -(-batch // (dp_max * b))
    at_m_min = m_min * per_microbatch_s + constant_s
    if dp_max == 1 or bound.in_island(dp_max):
        return at_m_min
    lowest = at_m_min + bound.cross_floor(m_min)
    island_cap = min(dp_max, bound.island_gpus // (layout.tp * layout.cp))
    if island_cap >= 1:
        lowest = min(lowest, -(-batch // (island_cap * b)) * per_microbatch_s + constant_s)
    elif layout.dp_fit == 1:
        lowest = min(lowest, -(-batch // b) * per_microbatch_s + constant_s)
    return lowest


def _search_order(layouts: tuple[Layout, ...], bounds: tuple[StepBound, ...], batch: int,
                  gpus: int) -> tuple[tuple[float, int, int], ...]:
    """(lower bound, layout index, largest dp) of every layout that fits on ``gpus``, best first.

    Cached per (bounds, batch, gpus): the bounds are the cached ones of one fabric
    (:func:`_space_bounds`), which determine the layouts, and the solver asks again and again at
    the same GPU count on the same fabric (other prices, racks, storage).
    """
    return _cached_search_order(bounds, batch, gpus)


@lru_cache(maxsize=64)
def _cached_search_order(bounds: tuple[StepBound, ...], batch: int, gpus: int) -> tuple[tuple[float, int, int], ...]:
    order = []
    for index, bound in enumerate(bounds):
        layout = bound.layout
        dp_fit = layout.dp_fit
        if dp_fit is None:
            continue
        model_gpus = layout.tp * layout.cp * layout.pp  # Layout.model_gpus, without the property call
        if model_gpus > gpus:
            continue
        dp_max = gpus // model_gpus
        if dp_max >= dp_fit:
            order.append((_order_bound(layout, bound, batch, dp_max), index, dp_max))
    order.sort()
    return tuple(order)


def _search(
    layouts: tuple[Layout, ...], bounds: tuple[StepBound, ...], batch: int, gpus: int, fabric: Fabric
) -> tuple[Layout, StepTimes] | None:
    """Branch and bound over layouts and dp (module docstring)."""
    best: tuple[Layout, StepTimes] | None = None
    best_s = float("inf")
    for lower, index, dp_max in _search_order(layouts, bounds, batch, gpus):
        if lower >= best_s:
            break
        layout, bound = layouts[index], bounds[index]
        for dp in dp_candidates_descending(layout, batch, dp_max):
            m = microbatch_count(batch, dp, layout.microbatch)
            if bound.at(m) >= best_s:
                break  # smaller dp only add micro-batches
            if bound.for_dp(m, dp) >= best_s:
                continue
            times = step_time(layout, dp, batch, fabric)
            if times.step_s < best_s:
                best, best_s = (layout, times), times.step_s
    return best


def _first_accepted(layouts: tuple[Layout, ...], bounds: tuple[StepBound, ...], batch: int, gpus: int,
                    fabric: Fabric, accept: Callable[[float], bool]) -> tuple[int, int] | None:
    """:func:`_search` with a monotone test instead of the best found: a candidate whose lower
    bound the test rejects cannot be accepted, and the first step accepted settles it. Returns
    that candidate's (layout index, dp), or None."""
    for lower, index, dp_max in _search_order(layouts, bounds, batch, gpus):
        if not accept(lower):
            return None
        layout, bound = layouts[index], bounds[index]
        for dp in dp_candidates_descending(layout, batch, dp_max):
            m = microbatch_count(batch, dp, layout.microbatch)
            if not accept(bound.at(m)):
                break  # smaller dp only add micro-batches
            if accept(bound.for_dp(m, dp)) and accept(step_time(layout, dp, batch, fabric).step_s):
                return index, dp
    return None


@lru_cache(maxsize=1024)
def min_gpus_to_fit(job: Job, spec: GpuSpec) -> int | None:
    """Fewest GPUs on which the job (some layout of its space) fits in memory.

    A layout with d_fit replicas of tp·pp GPUs fits on tp·pp·d_fit GPUs and on any more (d_fit is
    a member of C, or the pinned dp), so this is also exactly when :func:`best_step` finds something.
    """
    return min((layout.model_gpus * layout.dp_fit for layout in job_layouts(job, spec)), default=None)


def search_min_nodes_to_fit(job: Job, hw: Hardware, max_nodes: int) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) on which the job fits in memory; ``hw.nodes`` is ignored."""
    gpus = min_gpus_to_fit(job, gpu_spec(job, hw))
    if gpus is None:
        return None
    nodes = -(-gpus // hw.gpus_per_node)
    return nodes if nodes <= max_nodes else None


def search_fits(job: Job, hw: Hardware) -> bool:
    """Whether the job fits in memory on ``hw`` (without evaluating any step)."""
    gpus = min_gpus_to_fit(job, gpu_spec(job, hw))
    return gpus is not None and gpus <= hw.gpus


def min_nodes_for_step(
    job: Job, hw: Hardware, max_step_s: float, max_nodes: int, max_time_s: float | None = None
) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) whose best step takes at most ``max_step_s``.

    With ``max_time_s`` the exact test is ``train_time_s(step) <= max_time_s`` and
    ``max_step_s`` (its equivalent step time) only bounds the search. Results are cached per
    (job, GPU, fabric, budget): the solver asks again for hardware that differs only in ways the
    model does not see.
    """
    spec = gpu_spec(job, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    return _min_nodes_for_step(job, spec, fabric, hw.gpus_per_node, max_step_s, max_nodes, max_time_s)


@lru_cache(maxsize=4096)
def _min_nodes_for_step(
    job: Job, spec: GpuSpec, fabric: Fabric, gpn: int, max_step_s: float, max_nodes: int, max_time_s: float | None
) -> int | None:
    """Exact over the space. Candidates (layout, dp ∈ C) are visited in order of GPU count, one
    stream per layout, so the first that meets the budget uses the fewest GPUs and hence the
    fewest nodes. A stream starts where the layout's :class:`StepBound` first fits in the budget
    and is dropped when the bound shows no larger dp can meet it; a layout whose bound over all
    dp up to ``max_nodes`` nodes misses the budget is never streamed."""
    from topoopt.perf.evaluate import train_time_s  # the one definition of time to train

    def accept(step_s: float) -> bool:
        return step_s <= max_step_s if max_time_s is None else train_time_s(job, step_s) <= max_time_s

    batch = job.training.global_batch_sequences
    max_gpus = max_nodes * gpn
    layouts = job_layouts(job, spec)

    builder = BoundBuilder(fabric)
    terms = {}
    heap = []
    for index, layout in enumerate(layouts):
        if layout.dp_fit is None:
            continue
        per_microbatch_s, constant_s = terms[index] = builder.terms(layout)
        # Largest micro-batch count whose bound fits the budget (+1 against rounding).
        m_cap = int((max_step_s - constant_s) / per_microbatch_s) + 1
        if m_cap < 1:
            continue
        # Members of C below this one give more micro-batches than the bound allows.
        dp_first = layout.dp_fit
        if not layout.dp_pinned:
            dp_first = max(dp_first, _efficient_dp(batch, m_cap, layout.microbatch))
        gpus_first = layout.model_gpus * dp_first
        if gpus_first <= max_gpus:
            heap.append((gpus_first, index, dp_first, None))
    heapq.heapify(heap)
    bounds: dict[int, StepBound] = {}
    while heap:
        gpus, index, dp, stream = heapq.heappop(heap)
        layout = layouts[index]
        dp_max = max_gpus // layout.model_gpus
        if stream is None:
            bound = bounds[index] = builder.bound(layout, terms[index])
            # First visit: drop a layout that cannot meet the budget with all the GPUs allowed.
            if _order_bound(layout, bound, batch, dp_max) > max_step_s:
                continue
            stream = dp_candidates_ascending(layout, batch, dp)
            dp = next(stream)
        else:
            bound = bounds[index]
        m = microbatch_count(batch, dp, layout.microbatch)
        floor = bound.dp_floor(dp, m)
        if bound.at(m) + floor <= max_step_s and accept(step_time(layout, dp, batch, fabric).step_s):
            return -(-gpus // gpn)
        if (
            layout.zero_stage != 3
            and layout.gradient_ranks(dp) * layout.dp_stride > bound.island_gpus
            and bound.at(microbatch_count(batch, dp_max, layout.microbatch)) + floor > max_step_s
        ):
            # Crossing islands, the ZeRO-0/1/2 floor only grows with dp while compute can
            # shrink at most to its value at dp_max: no larger dp of this layout can succeed.
            continue
        following = next(stream, None)
        if following is not None and layout.model_gpus * following <= max_gpus:
            heapq.heappush(heap, (layout.model_gpus * following, index, following, stream))
    return None


__all__ = [
    "best_step",
    "dp_candidates_ascending",
    "dp_candidates_descending",
    "min_nodes_for_step",
    "min_gpus_to_fit",
    "search_fits",
    "search_min_nodes_to_fit",
    "some_step_within",
]
