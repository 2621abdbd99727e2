"""A problem: the instance with its resolved catalog, workload and option tables, and the
performance model's answers that turn the nonlinear performance model into per-option constants.

A Problem is immutable: its variants (relaxed, restricted to some options, rated at another
storage rate, with another time limit) are new Problems made by ``dataclasses.replace``, sharing
the catalog, the option tables built for each prefilter and the performance answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from topoopt.catalog import ResolvedCatalog, resolve_catalog
from topoopt.models.instance import Instance
from topoopt.models.performance import StorageNeeds
from topoopt.options.networks import StorageNetOption, server_takes
from topoopt.options.performance import PerfClass, PerformanceAnswers, perf_key
from topoopt.options.rules import PREFILTERABLE
from topoopt.options.tables import FabricOption, NodeConfig, Options, OptionUniverse
from topoopt.perf import Hardware, Job
from topoopt.perf.job import never_slower

SECONDS_PER_DAY = 86_400.0


def deadline_s(instance: Instance) -> float | None:
    """The instance's deadline in seconds (None: none)."""
    deadline = instance.goal.deadline_days
    return None if deadline is None else deadline * SECONDS_PER_DAY


@dataclass
class OptionPair:
    """A node-configuration group (one :func:`perf_key`) with one fabric class and one
    storage network mode, and the options of each: every design belongs to exactly one pair."""

    configs: list[NodeConfig]
    perf_class: PerfClass
    converged: bool
    fabrics: list[FabricOption]
    """The class's fabric options the group and the mode can use."""
    nets: list[StorageNetOption]
    """The mode's storage network options."""


class OptionTables:
    """The option tables of one instance, built once per prefilter from one option universe
    (tables.py ``OptionUniverse``) and shared by its problems."""

    def __init__(self, instance: Instance, catalog: ResolvedCatalog, answers: PerformanceAnswers,
                 dominance: bool = True) -> None:
        # The cold tier's size does not depend on the throughput: checkpoints and archive only.
        cold_capacity_tb = answers.storage_needs(0.0).cold_capacity_tb
        self.universe = OptionUniverse(instance, catalog, cold_capacity_tb, dominance)
        self.dominance = dominance
        self._built: dict[frozenset[str], Options] = {}

    def of(self, prefilter: frozenset[str]) -> Options:
        """The options with every family of ``prefilter`` applied before the model is built (and,
        with ``dominance``, without dominated options: options/dominance.py)."""
        if prefilter not in self._built:
            self._built[prefilter] = self.universe.prefiltered(prefilter)
        return self._built[prefilter]


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything the model builder needs, computed once per instance (:meth:`of`)."""

    instance: Instance
    catalog: ResolvedCatalog
    tables: OptionTables
    answers: PerformanceAnswers
    prefilter: frozenset[str]
    """Families whose per-option rules drop options before the model is built (they must then be
    enforced)."""
    options: Options
    time_limit_s: float | None
    """The time to train the model's deadline rule holds a design to: the deadline, or the
    min_time optimum; None for none."""
    storage_rate_tokens_per_s: float | None = None
    """The training rate storage is sized for, when not tokens / time limit (min_job_cost sizes
    each candidate's storage for its own rate)."""
    pinned_nodes_shortcut: bool = True
    """With the node count pinned and prefiltered, the deadline is asked at that count only.
    Explanations turn it off: the deletion filter may drop pins_respected, and deadline_met must
    not keep enforcing the pin on its own."""
    deadline_ceiling: Callable[[NodeConfig], int] | None = None
    """A node count per configuration that no design exceeds under the rules a trial enforces;
    when given, the deadline's bounds are searched only up to it
    (:meth:`PerformanceAnswers.bound_below_ceiling`): each is at most the exact one, so a model
    built from them is a relaxation — infeasible there, infeasible with the exact bounds."""

    @classmethod
    def of(cls, instance: Instance, catalog: ResolvedCatalog | None = None, *,
           prefilter: frozenset[str] = PREFILTERABLE, dominance: bool = True) -> Problem:
        """The problem of ``instance``, its time limit the deadline. ``dominance`` False keeps the
        options that others dominate (exact either way; a check of that)."""
        catalog = catalog or resolve_catalog(instance)
        answers = PerformanceAnswers(Job.from_instance(instance, catalog.catalog))
        tables = OptionTables(instance, catalog, answers, dominance)
        return cls(instance=instance, catalog=catalog, tables=tables, answers=answers, prefilter=prefilter,
                   options=tables.of(prefilter), time_limit_s=deadline_s(instance))

    # -- variants --------------------------------------------------------------------------------
    def prefiltering(self, prefilter: frozenset[str]) -> Problem:
        """The same problem with exactly ``prefilter``'s families applied to the option tables."""
        return dataclasses.replace(self, prefilter=prefilter, options=self.tables.of(prefilter))

    def relaxing(self, families: frozenset[str]) -> Problem:
        """The same problem with these families' options kept in the model (so they can be relaxed)."""
        return self.prefiltering(self.prefilter - families)

    def unfiltered(self) -> Problem:
        """The same problem with no option prefiltered (every family's options kept)."""
        return self.prefiltering(frozenset()) if self.prefilter else self

    def with_max_racks(self, racks: int) -> Problem:
        """The same problem on a site of at most ``racks`` racks (any count: the model's, not a
        file's), its option tables rebuilt, as with a row size the runs they price are capped by
        the floor of ``site.max_racks`` (tables.link_lengths_m). Built from the whole tables:
        for a problem not :meth:`restricted`, as an explanation's."""
        site = self.instance.site.model_copy(update={"max_racks": racks})
        instance = self.instance.model_copy(update={"site": site})
        tables = OptionTables(instance, self.catalog, self.answers, self.tables.dominance)
        return dataclasses.replace(self, instance=instance, tables=tables, options=tables.of(self.prefilter))

    def with_time_limit(self, seconds: float | None) -> Problem:
        return dataclasses.replace(self, time_limit_s=seconds)

    def rated(self, tokens_per_s: float) -> Problem:
        """The same problem with storage sized for ``tokens_per_s`` (the deadline, if any, kept)."""
        return dataclasses.replace(self, storage_rate_tokens_per_s=tokens_per_s)

    def without_pinned_nodes_shortcut(self) -> Problem:
        return dataclasses.replace(self, pinned_nodes_shortcut=False)

    def with_deadline_ceiling(self, ceiling: Callable[[NodeConfig], int]) -> Problem:
        return dataclasses.replace(self, deadline_ceiling=ceiling)

    def restricted(self, configs: list, fabrics: list, converged: bool | None = None) -> Problem:
        """The same problem limited to these node configurations and fabric options and, when
        ``converged`` is given, to that storage network mode."""
        # Dedicated networks whose storage NICs no server of these configurations takes are never
        # chosen (the servers' slots rule them out): dropping them only makes the model smaller.
        servers = {c.server.id: c.server for c in configs}.values()
        nets = [n for n in self.options.storage_nets
                if n.mode == "converged" or any(server_takes(server, n.nic_choice) for server in servers)]
        if converged is not None:
            nets = [n for n in nets if (n.mode == "converged") == converged]
        return dataclasses.replace(self, options=dataclasses.replace(
            self.options,
            node_configs=[dataclasses.replace(c, index=i) for i, c in enumerate(configs)],
            fabrics=[dataclasses.replace(f, index=i) for i, f in enumerate(fabrics)],
            storage_nets=[dataclasses.replace(n, index=i) for i, n in enumerate(nets)],
        ))

    # -- what the instance asks ------------------------------------------------------------------
    @property
    def job(self) -> Job:
        return self.answers.job

    @property
    def deadline_s(self) -> float | None:
        return deadline_s(self.instance)

    @property
    def converged_gb_per_step(self) -> float:
        return self.answers.converged_gb_per_step

    @property
    def pinned_nodes(self) -> int | None:
        """The pinned node count when pins_respected is enforced by the option tables (prefiltered);
        None otherwise."""
        return self.instance.constraints.pins.nodes if "pins_respected" in self.prefilter else None

    @property
    def throughput_target(self) -> float | None:
        """Tokens/s the design must sustain: the storage rate when set, else tokens / time limit
        (deadline or min_time target); None without either."""
        if self.storage_rate_tokens_per_s is not None:
            return self.storage_rate_tokens_per_s
        if self.time_limit_s is None:
            return None
        return self.instance.workload.training.tokens / self.time_limit_s

    # -- options grouped as the performance model sees them --------------------------------------
    perf_key = staticmethod(perf_key)

    def config_groups(self) -> list[list[NodeConfig]]:
        """The node configurations grouped by :meth:`perf_key`, in catalog order."""
        groups: dict[tuple, list[NodeConfig]] = {}
        for c in self.options.node_configs:
            groups.setdefault(self.perf_key(c), []).append(c)
        return list(groups.values())

    def fabric_classes(self) -> dict[PerfClass, list[FabricOption]]:
        """The fabric options by performance class (tiers, oversubscription), classes ascending."""
        return self._fabric_classes

    @cached_property
    def _fabric_classes(self) -> dict[PerfClass, list[FabricOption]]:
        classes: dict[PerfClass, list[FabricOption]] = {}
        for f in self.options.fabrics:
            classes.setdefault(f.perf_class, []).append(f)
        return dict(sorted(classes.items()))

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

    def fewest_nodes(self, config: NodeConfig, perf_class: PerfClass, converged: bool) -> int | None:
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

    # -- the performance model's answers ---------------------------------------------------------
    def hardware(self, config: NodeConfig, perf_class: PerfClass, nodes: int, converged: bool = False) -> Hardware:
        return self.answers.hardware(config, perf_class, nodes, converged)

    def min_nodes_to_fit(self, config: NodeConfig) -> int | None:
        return self.answers.min_nodes_to_fit(config)

    def min_nodes_for_time(self, config: NodeConfig, perf_class: PerfClass, seconds: float,
                           converged: bool = False) -> int | None:
        """Fewest nodes that train within ``seconds`` (with the storage traffic on the compute
        NICs when ``converged``). With the node count pinned (and the pin enforced and the
        shortcut on), only the pinned count matters: it is returned when it is fast enough."""
        return self.answers.min_nodes_for_time(
            config, perf_class, seconds, converged,
            pinned=self.pinned_nodes if self.pinned_nodes_shortcut else None, slowest=self._slowest_class,
            ceiling=None if self.deadline_ceiling is None else self.deadline_ceiling(config))

    @cached_property
    def _slowest_class(self) -> PerfClass | None:
        """The fabric class of the options that every other one is never slower than, if any."""
        classes = {f.perf_class for f in self.options.fabrics}
        return next((c for c in sorted(classes) if all(never_slower(other, c) for other in classes)), None)

    def time_to_train_s(self, config: NodeConfig, perf_class: PerfClass, nodes: int,
                        converged: bool = False) -> float | None:
        return self.answers.time_to_train_s(config, perf_class, nodes, converged)

    def time_to_train_s_best_network(self, groups: list[list[NodeConfig]], nodes: int,
                                     converged: bool = False) -> float | None:
        return self.answers.time_to_train_s_best_network(groups, nodes, converged)

    def trains_within(self, config: NodeConfig, perf_class: PerfClass, nodes: int, seconds: float,
                      converged: bool = False) -> bool:
        return self.answers.trains_within(config, perf_class, nodes, seconds, converged)

    def storage_needs(self, tokens_per_s: float) -> StorageNeeds:
        return self.answers.storage_needs(tokens_per_s)
