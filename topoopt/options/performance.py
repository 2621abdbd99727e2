"""The performance model's answers per node configuration, cached and inferred from each other.

The model needs, per node-configuration group and fabric class (and storage network mode), the
fewest nodes on which the training job fits and the fewest that train within a time limit. Each
answer is a search over node counts in the performance model (``topoopt.perf``), so they are
computed once per job and shared by every variant of a problem (relaxed, restricted, rated).

Answers also settle each other: a fabric class and storage mode that is never slower than another
(perf ``never_slower``; a converged network's reads only add to a step) needs no more nodes to
train in time, and a count in time on the slower one is in time on the faster one.
"""

from __future__ import annotations

from topoopt.models.performance import StorageNeeds
from topoopt.options.tables import MAX_NODES, NodeConfig
from topoopt.perf import (
    Hardware,
    Job,
    min_nodes_for_time,
    min_nodes_to_fit,
    storage_needs,
    time_to_train_s,
    trains_within,
)
from topoopt.perf.job import FASTEST_CLASS, never_slower
from topoopt.perf.storage import converged_storage_gb_per_step

PerfClass = tuple[int, float]
"""A fabric's performance class: (tiers, oversubscription)."""

Mode = tuple[PerfClass, bool]
"""A fabric class and whether the storage network is converged on the compute fabric."""


def mode_never_slower(a: Mode, b: Mode) -> bool:
    """Class and mode ``a`` never trains slower than ``b``: its class is never slower (perf
    ``never_slower``) and its storage reads do not share the compute NICs unless ``b``'s do
    (converged reads only add to a step).

    >>> mode_never_slower(((1, 1.0), False), ((2, 2.0), True))
    True
    >>> mode_never_slower(((1, 1.0), True), ((2, 2.0), False))
    False
    """
    (class_a, converged_a), (class_b, converged_b) = a, b
    return never_slower(class_a, class_b) and converged_a <= converged_b


def perf_key(config: NodeConfig) -> tuple:
    """Node configurations that look alike to the performance model share their answers: the GPU,
    GPUs per node, rails and interconnect (the NIC model and the server's price do not matter)."""
    return (config.gpu.id, config.server.gpus_per_node, config.rails, config.interconnect.id)


class PerformanceAnswers:
    """The performance model's answers for one training job, cached; one object per instance,
    passed explicitly to every variant of its problem."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.converged_gb_per_step = converged_storage_gb_per_step(job)
        self._fit: dict[tuple, int | None] = {}
        # Answers per (perf key, seconds[, nodes]), by (fabric class, converged): fewest nodes in
        # time, and whether a count is in time. Kept together so that one class's answer can
        # settle a class it is never slower (or never faster) than.
        self._fewest: dict[tuple, dict[Mode, int | None]] = {}
        self._in_time: dict[tuple, dict[Mode, bool]] = {}

    def hardware(self, config: NodeConfig, perf_class: PerfClass, nodes: int, converged: bool = False) -> Hardware:
        """The performance model's view; a converged storage network reads its data over the
        compute NICs (``converged_storage_gb_per_step``)."""
        tiers, oversubscription = perf_class
        return Hardware(
            gpu=config.gpu,
            gpus_per_node=config.server.gpus_per_node,
            nodes=nodes,
            nics_per_node=config.rails,
            link_gbps=config.interconnect.gbps,
            interconnect=config.interconnect,
            tiers=tiers,
            oversubscription=oversubscription,
            converged_storage_gb_per_step=self.converged_gb_per_step if converged else 0.0,
        )

    def min_nodes_to_fit(self, config: NodeConfig) -> int | None:
        """The fewest nodes on which the job fits in GPU memory (None: not up to MAX_NODES)."""
        key = perf_key(config)
        if key not in self._fit:
            self._fit[key] = min_nodes_to_fit(self.job, self.hardware(config, (2, 1.0), 1), MAX_NODES)
        return self._fit[key]

    def min_nodes_for_time(self, config: NodeConfig, perf_class: PerfClass, seconds: float, converged: bool = False,
                           *, pinned: int | None = None, slowest: PerfClass | None = None,
                           ceiling: int | None = None) -> int | None:
        """The fewest nodes that train within ``seconds`` (None: none up to MAX_NODES).

        ``pinned``: only that count matters; it is returned when it is in time (``slowest``: the
        problem's slowest fabric class, asked first, :meth:`in_time`). ``ceiling``: an answer not
        yet known is replaced by a lower bound that needs no search (:meth:`bound_below_ceiling`).
        """
        known = self._fewest.setdefault((perf_key(config), seconds), {})
        here = (perf_class, converged)
        if pinned is not None:
            return pinned if self.in_time(config, perf_class, pinned, seconds, converged, slowest) else None
        if ceiling is not None and here not in known:
            return self.bound_below_ceiling(config, here, seconds, known, ceiling)
        if here not in known:
            known[here] = self._fewest_in_time(config, here, seconds, known)
        return known[here]

    def _fewest_in_time(self, config: NodeConfig, here: Mode, seconds: float,
                        known: dict[Mode, int | None]) -> int | None:
        """Exact, by the performance model's search, unless a known answer settles it: a class and
        mode never slower than this one needs no more nodes. So when one of them has no count in
        time, neither has this one; otherwise this one needs at least the most they need, and when
        that count is in time it is the answer (one evaluation instead of a search). The same
        class's dedicated network is asked first for a converged one."""
        perf_class, converged = here
        if converged:
            self.min_nodes_for_time(config, perf_class, seconds, False)
        faster = [nodes for mode, nodes in known.items() if mode_never_slower(mode, here)]
        if None in faster:
            return None
        if faster:
            least = max(faster)
            if self.trains_within(config, perf_class, least, seconds, converged):
                return least
        return min_nodes_for_time(self.job, self.hardware(config, perf_class, 1, converged), seconds, MAX_NODES)

    def bound_below_ceiling(self, config: NodeConfig, here: Mode, seconds: float, known: dict[Mode, int | None],
                            ceiling: int) -> int | None:
        """A lower bound on the fewest nodes in time that is exact up to ``ceiling``, with at most
        two evaluations: ``ceiling + 1`` when ``ceiling`` nodes are late (time never rises with
        the node count), else the known lower bound (:meth:`known_lower_bound`). Where nothing
        exceeds ``ceiling`` nodes the bound rules out what the exact one does, so a model built
        from it answers "infeasible" as the exact one would; elsewhere it is a relaxation. The
        fastest fabric class is asked first: late there, late on every class."""
        least = self.known_lower_bound(config, here, known)
        if least is None or least > ceiling:
            return least
        perf_class, converged = here
        in_time = (self.in_time(config, FASTEST_CLASS, ceiling, seconds, converged, None)
                   and self.in_time(config, perf_class, ceiling, seconds, converged, None))
        return least if in_time else ceiling + 1

    def known_lower_bound(self, config: NodeConfig, here: Mode, known: dict[Mode, int | None]) -> int | None:
        """A lower bound on the fewest nodes in time, from known answers alone: a class and mode
        never slower without a count in time rules this one out too (None, exact); else the most
        nodes such a class needs, or the fewest on which the job fits (None when it never fits)."""
        faster = [nodes for mode, nodes in known.items() if mode_never_slower(mode, here)]
        if None in faster:
            return None
        fit = self.min_nodes_to_fit(config)
        return None if fit is None else max([fit, *faster])

    def in_time(self, config: NodeConfig, perf_class: PerfClass, nodes: int, seconds: float, converged: bool,
                slowest: PerfClass | None) -> bool:
        """Whether ``nodes`` such nodes train within ``seconds``; settled without an evaluation
        when a class and mode never faster is known in time, or one never slower is known late.
        The ``slowest`` fabric class is asked first: in time, it settles every class of its mode."""
        known = self._in_time.setdefault((perf_key(config), nodes, seconds), {})
        here = (perf_class, converged)
        if here not in known and slowest not in (None, perf_class):
            self.in_time(config, slowest, nodes, seconds, converged, slowest)
        if here not in known:
            if any(ok and mode_never_slower(here, other) for other, ok in known.items()):
                known[here] = True
            elif any(not ok and mode_never_slower(other, here) for other, ok in known.items()):
                known[here] = False
            else:
                known[here] = self.trains_within(config, perf_class, nodes, seconds, converged)
        return known[here]

    def time_to_train_s(self, config: NodeConfig, perf_class: PerfClass, nodes: int,
                        converged: bool = False) -> float | None:
        return time_to_train_s(self.job, self.hardware(config, perf_class, nodes, converged))

    def time_to_train_s_best_network(self, groups: list[list[NodeConfig]], nodes: int,
                                     converged: bool = False) -> float | None:
        """A lower bound on the time to train of any of these configuration groups (one GPU model
        and node size) on ``nodes`` nodes: on one switch without oversubscription, with one NIC
        carrying the most scale-out bandwidth of any of them (rails × line rate at the best bus
        efficiency) at the least latency of any. The performance model sees the network only as
        that bandwidth and latency (perf ``Fabric.of``; converged reads as the NICs' bandwidth),
        and a step never slows with more bandwidth or less latency (perf ``never_slower``)."""
        first = groups[0][0]
        interconnect = first.interconnect.model_copy(update={
            "bus_efficiency": max(configs[0].interconnect.bus_efficiency for configs in groups),
            "latency_us": min(configs[0].interconnect.latency_us for configs in groups)})
        tiers, oversubscription = FASTEST_CLASS
        return time_to_train_s(self.job, Hardware(
            gpu=first.gpu, gpus_per_node=first.server.gpus_per_node, nodes=nodes, nics_per_node=1,
            link_gbps=max(configs[0].rails * configs[0].interconnect.gbps for configs in groups),
            interconnect=interconnect, tiers=tiers, oversubscription=oversubscription,
            converged_storage_gb_per_step=self.converged_gb_per_step if converged else 0.0))

    def trains_within(self, config: NodeConfig, perf_class: PerfClass, nodes: int, seconds: float,
                      converged: bool = False) -> bool:
        """Whether ``nodes`` such nodes train within ``seconds`` (perf ``trains_within``)."""
        return trains_within(self.job, self.hardware(config, perf_class, nodes, converged), seconds)

    def storage_needs(self, tokens_per_s: float) -> StorageNeeds:
        return storage_needs(self.job, tokens_per_s)
