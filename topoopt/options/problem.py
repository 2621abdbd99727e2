"""A problem: the instance with its resolved catalog, workload and option tables, plus cached
performance lookups that turn the nonlinear performance model into per-option constants."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from topoopt.catalog import ResolvedCatalog, resolve_catalog
from topoopt.models.instance import Instance
from topoopt.models.performance import StorageNeeds
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
from topoopt.options.networks import StorageNetOption, server_takes
from topoopt.options.tables import MAX_NODES, FabricOption, NodeConfig, Options, build_options
from topoopt.options.rules import PREFILTERABLE

SECONDS_PER_DAY = 86_400.0


def _never_slower(a: tuple[tuple[int, float], bool], b: tuple[tuple[int, float], bool]) -> bool:
    """(fabric class, converged) ``a`` never trains slower than ``b``: its class is never slower
    (perf ``never_slower``) and its storage reads do not share the compute NICs unless ``b``'s do
    (converged reads only add to a step)."""
    (class_a, converged_a), (class_b, converged_b) = a, b
    return never_slower(class_a, class_b) and converged_a <= converged_b


@dataclass
class OptionPair:
    """A node-configuration group (one :meth:`Problem.perf_key`) with one fabric class and one
    storage network mode, and the options of each: every design belongs to exactly one pair."""

    configs: list[NodeConfig]
    perf_class: tuple[int, float]
    converged: bool
    fabrics: list[FabricOption]
    """The class's fabric options the group and the mode can use."""
    nets: list[StorageNetOption]
    """The mode's storage network options."""


class Problem:
    """Everything the model builder needs, computed once per instance."""

    def __init__(
        self,
        instance: Instance,
        catalog: ResolvedCatalog | None = None,
        *,
        prefilter: frozenset[str] = PREFILTERABLE,
        like: "Problem | None" = None,
    ) -> None:
        """``prefilter``: families whose per-option rules drop options before the model is built
        (they must then be enforced). ``like``: share that problem's catalog, job and caches."""
        self.instance = instance
        self.catalog = catalog or (like.catalog if like else resolve_catalog(instance))
        self.job = like.job if like else Job.from_instance(instance, self.catalog.catalog)
        self.prefilter = prefilter
        # The cold tier's size does not depend on the throughput: checkpoints and archive only.
        cold = storage_needs(self.job, 0.0)
        self.options: Options = build_options(instance, self.catalog, prefilter, cold_capacity_tb=cold.cold_capacity_tb)
        self.converged_gb_per_step = converged_storage_gb_per_step(self.job)
        deadline = instance.goal.deadline_days
        self.deadline_s: float | None = None if deadline is None else deadline * SECONDS_PER_DAY
        self.time_limit_s: float | None = like.time_limit_s if like else self.deadline_s
        self.pinned_nodes_shortcut = True
        self.known_deadline_bounds_only = False
        self._fit_cache: dict[tuple, int | None] = like._fit_cache if like else {}
        # Answers per (perf key, seconds[, nodes]), by (fabric class, converged): fewest nodes in
        # time, and whether a pinned count is in time. Kept together so that one class's answer
        # can settle a class it is never slower (or never faster) than.
        self._time_cache: dict[tuple, dict[tuple, int | None]] = like._time_cache if like else {}
        self._in_time_cache: dict[tuple, dict[tuple, bool]] = like._in_time_cache if like else {}
        self._slowest: tuple[list | None, tuple[int, float] | None] = (None, None)
        self._classes: tuple[list | None, dict] = (None, {})
        self._unfiltered: Problem | None = None

    def restricted(self, configs: list, fabrics: list, converged: bool | None = None) -> "Problem":
        """The same problem limited to these node configurations and fabric options and, when
        ``converged`` is given, to that storage network mode."""
        sub = copy.copy(self)
        # Dedicated networks whose storage NICs no server of these configurations takes are never
        # chosen (the servers' slots rule them out): dropping them only makes the model smaller.
        servers = {c.server.id: c.server for c in configs}.values()
        nets = [n for n in self.options.storage_nets
                if n.mode == "converged" or any(server_takes(server, n.nic_choice) for server in servers)]
        if converged is not None:
            nets = [n for n in nets if (n.mode == "converged") == converged]
        sub.options = dataclasses.replace(
            self.options,
            node_configs=[dataclasses.replace(c, index=i) for i, c in enumerate(configs)],
            fabrics=[dataclasses.replace(f, index=i) for i, f in enumerate(fabrics)],
            storage_nets=[dataclasses.replace(n, index=i) for i, n in enumerate(nets)],
        )
        return sub

    def without_pinned_nodes_shortcut(self) -> "Problem":
        """The same problem, with deadline_met's bounds computed for every node count.

        Explanations need it: the deletion filter drops pins_respected from a model whose pinned
        count is prefiltered, and deadline_met must not keep enforcing the pin on its own.
        """
        sub = copy.copy(self)
        sub.pinned_nodes_shortcut = False
        return sub

    def with_known_deadline_bounds_only(self) -> "Problem":
        """The same problem, whose deadline bounds are the ones known without evaluating the
        performance model (:meth:`_known_lower_bound`): each is at most the exact one, so a model
        built from it is a relaxation — infeasible there, infeasible with the exact bounds."""
        sub = copy.copy(self)
        sub.known_deadline_bounds_only = True
        return sub

    def unfiltered(self) -> "Problem":
        """The same problem with no option prefiltered (every family's options kept), sharing this
        problem's caches and time limit; its option tables are built once."""
        if not self.prefilter:
            return self
        if self._unfiltered is None:
            self._unfiltered = Problem(self.instance, prefilter=frozenset(), like=self)
        self._unfiltered.time_limit_s = self.time_limit_s
        return self._unfiltered

    def relaxing(self, families: frozenset[str]) -> "Problem":
        """The same problem with these families' options kept in the model (so they can be relaxed)."""
        return Problem(self.instance, prefilter=self.prefilter - families, like=self)

    @property
    def pinned_nodes(self) -> int | None:
        """The pinned node count when pins_respected is enforced by the option tables (prefiltered);
        None otherwise."""
        return self.instance.constraints.pins.nodes if "pins_respected" in self.prefilter else None

    @property
    def throughput_target(self) -> float | None:
        """Tokens/s the design must sustain: tokens / time limit (deadline or min_time target)."""
        if self.time_limit_s is None:
            return None
        return self.instance.workload.training.tokens / self.time_limit_s

    def hardware(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int,
                 converged: bool = False) -> Hardware:
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

    def perf_key(self, config: NodeConfig) -> tuple:
        """Node configurations that look alike to the performance model share cache entries."""
        return (config.gpu.id, config.server.gpus_per_node, config.rails, config.interconnect.id)

    def config_groups(self) -> list[list[NodeConfig]]:
        """The node configurations grouped by :meth:`perf_key`, in catalog order."""
        groups: dict[tuple, list[NodeConfig]] = {}
        for c in self.options.node_configs:
            groups.setdefault(self.perf_key(c), []).append(c)
        return list(groups.values())

    def fabric_classes(self) -> dict[tuple[int, float], list[FabricOption]]:
        """The fabric options by performance class (tiers, oversubscription), classes ascending
        (cached per option table, like :meth:`_slowest_class`)."""
        fabrics = self.options.fabrics
        if self._classes[0] is not fabrics:
            classes: dict[tuple[int, float], list[FabricOption]] = {}
            for f in fabrics:
                classes.setdefault(f.perf_class, []).append(f)
            self._classes = (fabrics, dict(sorted(classes.items())))
        return self._classes[1]

    def pairs(self) -> Iterator[OptionPair]:
        """Every (configuration group, fabric class, storage network mode) with options, groups in
        catalog order (:meth:`pairs_of`)."""
        for configs in self.config_groups():
            yield from self.pairs_of(configs)

    def pairs_of(self, configs: list[NodeConfig]) -> list[OptionPair]:
        """The pairs of one configuration group with options, classes ascending, dedicated first."""
        o = self.options
        speed = configs[0].speed_key  # the group shares its interconnect, so its speed
        found = []
        for cls, options in self.fabric_classes().items():
            for converged in (False, True):
                nets = [s for s in o.storage_nets if (s.mode == "converged") == converged]
                if converged and speed not in o.converged_speeds:
                    nets = []  # no storage tier runs the group's speed (network_definitions.py)
                # A converged network puts the units on the compute fabric: one is needed.
                fabrics = [f for f in options if (f.speed_key == speed if f.tiers else not converged)]
                if nets and fabrics:
                    found.append(OptionPair(configs, cls, converged, fabrics, nets))
        return found

    def fewest_nodes(self, config: NodeConfig, perf_class: tuple[int, float], converged: bool) -> int | None:
        """The fewest nodes a design of the configuration's group, in this fabric class and storage
        mode, may have: the model fits in memory, trains within the time limit (when there is
        one), and a pinned count (when enforced) is met; None when no count qualifies."""
        fewest = self.min_nodes_to_fit(config)
        if fewest is not None and self.time_limit_s is not None:
            in_time = self.min_nodes_for_time(config, perf_class, self.time_limit_s, converged)
            fewest = None if in_time is None else max(fewest, in_time)
        pinned = self.pinned_nodes
        if fewest is None or pinned is None:
            return fewest
        return pinned if pinned >= fewest else None

    def min_nodes_to_fit(self, config: NodeConfig) -> int | None:
        key = self.perf_key(config)
        if key not in self._fit_cache:
            self._fit_cache[key] = min_nodes_to_fit(self.job, self.hardware(config, (2, 1.0), 1), MAX_NODES)
        return self._fit_cache[key]

    def min_nodes_for_time(self, config: NodeConfig, perf_class: tuple[int, float], seconds: float,
                           converged: bool = False) -> int | None:
        """Fewest nodes that train within ``seconds`` (with the storage traffic on the compute
        NICs when ``converged``). With the node count pinned (and the pin enforced and the
        shortcut on), only the pinned count matters: it is returned when it is fast enough."""
        known = self._time_cache.setdefault((self.perf_key(config), seconds), {})
        if self.known_deadline_bounds_only and (perf_class, converged) not in known:
            return self._known_lower_bound(config, perf_class, converged, known)
        pinned = self.pinned_nodes
        if pinned is not None and self.pinned_nodes_shortcut:
            return pinned if self._in_time(config, perf_class, pinned, seconds, converged) else None
        if (perf_class, converged) not in known:
            known[perf_class, converged] = self._min_nodes_for_time(config, perf_class, seconds, converged, known)
        return known[perf_class, converged]

    def _min_nodes_for_time(self, config: NodeConfig, perf_class: tuple[int, float], seconds: float,
                            converged: bool, known: dict[tuple, int | None]) -> int | None:
        """Exact, by the performance model's search, unless a known answer settles it: a class and
        mode never slower than this one (``_never_slower``) needs no more nodes. So when one of
        them has no count in time, neither has this one; otherwise this one needs at least the
        most they need, and when that count is in time it is the answer (one evaluation instead
        of a search). The same class's dedicated network is asked first for a converged one."""
        if converged:
            self.min_nodes_for_time(config, perf_class, seconds, False)
        faster = [nodes for (cls, conv), nodes in known.items() if _never_slower((cls, conv), (perf_class, converged))]
        if None in faster:
            return None
        if faster:
            least = max(faster)
            if self.trains_within(config, perf_class, least, seconds, converged):
                return least
        return min_nodes_for_time(self.job, self.hardware(config, perf_class, 1, converged), seconds, MAX_NODES)

    def _known_lower_bound(self, config: NodeConfig, perf_class: tuple[int, float], converged: bool,
                           known: dict[tuple, int | None]) -> int | None:
        """A lower bound on the fewest nodes in time, from known answers alone: a class and mode
        never slower without a count in time rules this one out too (None, exact); else the most
        nodes such a class needs, or the fewest on which the model fits (None when it never fits)."""
        faster = [nodes for (cls, conv), nodes in known.items() if _never_slower((cls, conv), (perf_class, converged))]
        if None in faster:
            return None
        fit = self.min_nodes_to_fit(config)
        return None if fit is None else max([fit, *faster])

    def _in_time(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int, seconds: float,
                 converged: bool) -> bool:
        """Whether ``nodes`` such nodes train within ``seconds``; settled without an evaluation
        when a class and mode never faster is known in time, or one never slower is known late.
        The slowest fabric class is asked first: in time, it settles every class of its mode."""
        known = self._in_time_cache.setdefault((self.perf_key(config), nodes, seconds), {})
        here = (perf_class, converged)
        slowest = self._slowest_class()
        if here not in known and slowest not in (None, perf_class):
            self._in_time(config, slowest, nodes, seconds, converged)
        if here not in known:
            if any(ok and _never_slower(here, other) for other, ok in known.items()):
                known[here] = True
            elif any(not ok and _never_slower(other, here) for other, ok in known.items()):
                known[here] = False
            else:
                known[here] = self.trains_within(config, perf_class, nodes, seconds, converged)
        return known[here]

    def _slowest_class(self) -> tuple[int, float] | None:
        """The fabric class of the options that every other one is never slower than, if any
        (cached per option table: restricted problems have their own)."""
        fabrics = self.options.fabrics
        if self._slowest[0] is not fabrics:
            classes = {f.perf_class for f in fabrics}
            self._slowest = (fabrics, next((c for c in sorted(classes)
                                            if all(never_slower(other, c) for other in classes)), None))
        return self._slowest[1]

    def time_to_train_s(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int,
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

    def trains_within(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int, seconds: float,
                      converged: bool = False) -> bool:
        """Whether ``nodes`` such nodes train within ``seconds`` (perf ``trains_within``)."""
        return trains_within(self.job, self.hardware(config, perf_class, nodes, converged), seconds)

    def storage_needs(self, tokens_per_s: float) -> StorageNeeds:
        return storage_needs(self.job, tokens_per_s)
