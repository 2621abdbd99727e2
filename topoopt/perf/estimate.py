"""``estimate``: the performance of an instance whose hardware is pinned.

The cluster comes from ``constraints.pins``:

* the GPU and GPUs per node from ``server`` (or, with only ``gpu`` pinned, from the first
  catalog server carrying that GPU that ``constraints.servers`` allows);
* ``nodes`` and ``interconnect`` (the link runs at the interconnect's line rate);
* ``nics_per_node``, or the server's built-in compute NICs;
* ``tiers`` (default 2: leaf/spine); the fabric is taken as non-blocking (oversubscription 1.0),
  since an instance pins no oversubscription — it only caps it;
* the storage network: converged (the step also reads its data over the compute NICs, see
  :func:`topoopt.perf.storage.converged_storage_s`) when asked for or when
  ``pins.storage_network`` is ``converged``; otherwise dedicated (no cost to the step).

The parallel layout is the instance's: pinned, or ``auto`` (the fastest that fits).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from topoopt.models.performance import MemoryBreakdown, Parallelism, Performance
from topoopt.perf.constants import CP_CHOICES
from topoopt.perf.evaluate import evaluate, fits_in_memory, min_nodes_to_fit
from topoopt.perf.job import GpuSpec, Hardware, Job
from topoopt.perf.memory import microbatch_count
from topoopt.perf.space import RECOMPUTE_BY_COST, LayoutPins, build_layout, layout_choices, pp_choices, tp_choices
from topoopt.perf.storage import converged_storage_gb_per_step

if TYPE_CHECKING:
    from topoopt.catalog import ResolvedCatalog
    from topoopt.models.instance import Instance

DEFAULT_TIERS = 2
DEFAULT_OVERSUBSCRIPTION = 1.0


class EstimateError(ValueError):
    """The instance cannot be estimated as it stands (a usage error)."""


class NotPinnedError(EstimateError):
    """Some hardware decision is not pinned; ``missing`` names the pins to add."""

    def __init__(self, missing: list[str]):
        self.missing = list(missing)
        super().__init__(
            "estimate needs pinned hardware; add to constraints.pins: " + ", ".join(self.missing)
        )


class LayoutError(EstimateError):
    """The pinned parallel layout cannot run on the pinned cluster."""


class DoesNotFitError(EstimateError):
    """Nothing fits in GPU memory; ``memory`` is the breakdown of the layout closest to fitting and
    ``change`` the smallest change of the instance that fits (:func:`smallest_fitting_change`)."""

    def __init__(self, parallelism: Parallelism, memory: MemoryBreakdown, change: str | None = None):
        self.parallelism = parallelism
        self.memory = memory
        self.change = change
        hint = f"; smallest change that fits: {change}" if change else ""
        super().__init__(
            f"the workload does not fit in GPU memory: {memory.total_gb:.1f} GB needed per GPU "
            f"with the leanest layout, {memory.capacity_gb:.0f} GB available{hint}"
        )


def pinned_hardware(
    instance: Instance, resolved: ResolvedCatalog | None = None, *, converged: bool | None = None
) -> tuple[Job, Hardware]:
    """The job and the pinned cluster of an instance (module docstring); raises EstimateError.

    ``converged`` True charges a converged storage network's reads to the step; None follows
    ``pins.storage_network``.
    """
    from topoopt.catalog import CatalogError, resolve_catalog

    try:
        resolved = resolved or resolve_catalog(instance)
        job = Job.from_instance(instance, resolved)
    except CatalogError as exc:
        raise EstimateError(str(exc)) from None
    catalog = resolved.catalog
    pins = instance.constraints.pins
    gpus, servers, interconnects = catalog.by_id("gpus"), catalog.by_id("servers"), catalog.by_id("interconnects")
    missing: list[str] = []

    server = None
    if pins.server is not None:
        server = _lookup(servers, pins.server, "constraints.pins.server")
        if pins.gpu is not None and pins.gpu != server.gpu:
            raise EstimateError(f"constraints.pins: server {server.id!r} carries {server.gpu!r}, not {pins.gpu!r}")
    elif pins.gpu is not None:
        _lookup(gpus, pins.gpu, "constraints.pins.gpu")
        allowed = instance.constraints.servers
        server = next((s for s in catalog.servers if s.gpu == pins.gpu and allowed.admits(s.id)), None)
        if server is None:
            missing.append(f"server (no allowed catalog server carries {pins.gpu!r})")
    else:
        missing.append("server (or gpu)")
    if pins.nodes is None:
        missing.append("nodes")
    if pins.interconnect is None:
        missing.append("interconnect")
    nics = pins.nics_per_node
    if nics is None and server is not None and server.builtin_compute_nics is not None:
        nics = server.builtin_compute_nics.count
    if nics is None:
        missing.append("nics_per_node")
    if missing:
        raise NotPinnedError(missing)

    gpu = _lookup(gpus, server.gpu, f"server {server.id!r}: gpu")
    interconnect = _lookup(interconnects, pins.interconnect, "constraints.pins.interconnect")
    hw = Hardware(
        gpu=gpu,
        gpus_per_node=server.gpus_per_node,
        nodes=pins.nodes,
        nics_per_node=nics,
        link_gbps=interconnect.gbps,
        interconnect=interconnect,
        tiers=pins.tiers or DEFAULT_TIERS,
        oversubscription=DEFAULT_OVERSUBSCRIPTION,
    )
    if converged is None:
        converged = pins.storage_network == "converged"
    if converged:
        hw = replace(hw, converged_storage_gb_per_step=converged_storage_gb_per_step(job))
    return job, hw


def _lookup(items: dict, item_id: str, where: str):
    if item_id not in items:
        raise EstimateError(f"{where}: unknown id {item_id!r}")
    return items[item_id]


def estimate(instance: Instance, *, converged: bool | None = None) -> Performance:
    """Performance of an instance with pinned hardware (``converged`` as in :func:`pinned_hardware`).

    Raises :class:`NotPinnedError` (names the missing pins), :class:`LayoutError` (the pinned
    layout needs more GPUs or stages than there are) or :class:`DoesNotFitError` (with the memory
    breakdown of the layout closest to fitting), and :class:`topoopt.InputError` for an instance
    that is not valid.

    Examples
    --------
    >>> import topoopt
    >>> performance = topoopt.estimate(topoopt.load_instance("instances/estimate-pinned-h100.yaml").instance)
    >>> round(performance.time_to_train_days, 1), performance.bottleneck
    (11.1, 'compute')
    """
    from topoopt.loader import validate_instance

    instance = validate_instance(instance, ids=False)  # one not from the loader: schema, strings, budget terms
    job, hw = pinned_hardware(instance, converged=converged)
    check_pinned_layout(job, hw)
    result = evaluate(job, hw)
    if result is None:
        raise DoesNotFitError(*leanest_memory(job, hw), smallest_fitting_change(job, hw))
    return result


LAYOUT = "workload.training.parallelism"
MAX_SUGGESTED_NODES = 100_000
"""Largest node count :func:`smallest_fitting_change` looks at when only more nodes help."""


def smallest_fitting_change(job: Job, hw: Hardware) -> str | None:
    """The first change, one field at a time, under which the job fits on ``hw``, or None.

    Tried in this order, from the least to the most disruptive: full activation recomputation;
    a higher ZeRO stage (the lowest that fits; ≤ 1 with pipelining); a smaller micro-batch (the
    largest that fits); fewer virtual stages; context parallelism, more pipeline stages, then more
    tensor parallelism (the fewest that fit, within the cluster); a pinned dp left to the search;
    and, when no layout change fits, the fewest nodes on which the job fits.
    """
    training = job.training
    pinned = training.parallelism
    layers = job.model.layers
    candidates: list[tuple[str, Job]] = []

    def with_training(**update) -> Job:
        return replace(job, training=training.model_copy(update=update))

    def with_layout(**update) -> Job:
        return with_training(parallelism=pinned.model_copy(update=update))

    if training.activation_recompute not in ("full", "auto"):
        candidates.append(("workload.training.activation_recompute: full", with_training(activation_recompute="full")))
    if pinned != "auto":
        pp, tp, dp, cp = pinned.pp, pinned.tp, pinned.dp, pinned.cp
        if pinned.zero_stage is not None:
            highest = 3 if pp == 1 else 1
            candidates += [(f"{LAYOUT}.zero_stage: {z}", with_layout(zero_stage=z)) for z in range(pinned.zero_stage + 1, highest + 1)]
        if pinned.microbatch is not None:
            smaller = [b for b in range(pinned.microbatch - 1, 0, -1) if pinned.microbatch % b == 0 or b == 1]
            candidates += [(f"{LAYOUT}.microbatch: {b}", with_layout(microbatch=b)) for b in smaller]
        if pinned.virtual_stages is not None and pinned.virtual_stages > 1:
            fewer = [v for v in range(pinned.virtual_stages - 1, 0, -1) if pp is None or layers % (pp * v) == 0]
            candidates += [(f"{LAYOUT}.virtual_stages: {v}", with_layout(virtual_stages=v)) for v in fewer]
        if cp is not None:
            seq = training.sequence_length
            wider_cp = [c for c in CP_CHOICES if c > cp and seq % (2 * c) == 0]
            rest = (tp or 1) * (pp or 1) * (dp or 1)
            candidates += [(f"{LAYOUT}.cp: {c}", with_layout(cp=c)) for c in wider_cp if c * rest <= hw.gpus]
        others = (tp or 1) * (cp or 1) * (dp or 1)
        if pp is not None:
            deeper = [q for q in pp_choices(layers) if q > pp and q * others <= hw.gpus]
            candidates += [(f"{LAYOUT}.pp: {q} (virtual_stages searched)", with_layout(pp=q, virtual_stages=None)) for q in deeper]
        if tp is not None:
            spec = GpuSpec.of(hw.gpu, hw.gpus_per_node, training.precision)
            wider = [t for t in tp_choices(spec.island_gpus, job.model.attention_heads) if t > tp]
            rest = (pp or 1) * (cp or 1) * (dp or 1)
            candidates += [(f"{LAYOUT}.tp: {t}", with_layout(tp=t)) for t in wider if t * rest <= hw.gpus]
        if dp is not None:
            candidates.append((f"{LAYOUT}.dp left out (searched)", with_layout(dp=None)))
    for change, changed in candidates:
        if fits_in_memory(changed, hw):
            return change
    nodes = min_nodes_to_fit(job, hw, MAX_SUGGESTED_NODES)
    return None if nodes is None else f"constraints.pins.nodes: {nodes}"


def check_pinned_layout(job: Job, hw: Hardware) -> None:
    """Raise :class:`LayoutError` when the pinned fields cannot form a layout on ``hw``: more
    stages than layers, more GPUs than the cluster has (the fields left out counted as 1), or
    interleaving whose model chunks are unequal."""
    pinned = job.training.parallelism
    if pinned == "auto":
        return
    layers = job.model.layers
    if pinned.pp is not None and pinned.pp > layers:
        raise LayoutError(f"pipeline degree {pinned.pp} exceeds the model's {layers} layers")
    needed = (pinned.tp or 1) * (pinned.cp or 1) * (pinned.pp or 1) * (pinned.dp or 1)
    if needed > hw.gpus:
        raise LayoutError(f"the pinned layout needs {needed} GPUs (tp×cp×pp×dp), the pinned cluster has {hw.gpus}")
    v = pinned.virtual_stages
    if v is not None and v > 1 and pinned.pp is not None and (pinned.pp == 1 or layers % (pinned.pp * v) != 0):
        raise LayoutError(
            f"{v} virtual stages need pp > 1 and pp × virtual_stages dividing the model's {layers} layers "
            f"(pp is {pinned.pp})"
        )


def leanest_memory(job: Job, hw: Hardware) -> tuple[Parallelism, MemoryBreakdown]:
    """The layout of the job's space needing the least memory per GPU on ``hw`` — the smallest
    micro-batch and the leanest recomputation it allows, at the largest dp the cluster allows —
    with its breakdown: what a "does not fit" report shows."""
    spec = GpuSpec.of(hw.gpu, hw.gpus_per_node, job.training.precision)
    batch = job.training.global_batch_sequences
    pins = LayoutPins.of(job)
    recompute = pins.recompute or RECOMPUTE_BY_COST[-1]
    best: tuple[Parallelism, MemoryBreakdown] | None = None
    for tp, cp, pp, v, b, zero in layout_choices(job, spec, pins):
        if tp * cp * pp > hw.gpus or (pins.microbatch is None and b > 1):
            continue
        dp = pins.dp or max(1, min(hw.gpus // (tp * cp * pp), -(-batch // b)))
        layout = build_layout(job, spec, tp, pp, b, zero, v, recompute, dp, cp)
        memory = layout.memory.breakdown(dp, microbatch_count(batch, dp, b))
        if best is None or memory.total_gb < best[1].total_gb:
            parallelism = Parallelism(
                tp=tp, pp=pp, dp=dp, cp=cp, zero_stage=zero, microbatch=b, virtual_stages=v,
                activation_recompute=recompute,
            )
            best = (parallelism, memory)
    if best is None:  # not even one model replica fits in the cluster's GPU count
        layout = build_layout(job, spec, 1, 1, 1, 3, 1, recompute)
        parallelism = Parallelism(tp=1, pp=1, dp=1, zero_stage=3, microbatch=1, activation_recompute=recompute)
        best = (parallelism, layout.memory.breakdown(1, batch))
    return best


__all__ = [
    "DoesNotFitError",
    "EstimateError",
    "LayoutError",
    "NotPinnedError",
    "check_pinned_layout",
    "estimate",
    "leanest_memory",
    "pinned_hardware",
    "smallest_fitting_change",
]
