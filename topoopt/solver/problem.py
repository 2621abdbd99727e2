"""A problem: the instance with its resolved catalog, workload and option tables, plus cached
performance lookups that turn the nonlinear performance model into per-option constants."""

from __future__ import annotations

import copy
import dataclasses

from topoopt.catalog import ResolvedCatalog, resolve_catalog
from topoopt.models.instance import Instance
from topoopt.models.performance import StorageNeeds
from topoopt.perf import Hardware, Job, min_nodes_for_time, min_nodes_to_fit, storage_needs, time_to_train_s
from topoopt.solver.options import MAX_NODES, NodeConfig, Options, build_options
from topoopt.solver.rules import PREFILTERABLE

SECONDS_PER_DAY = 86_400.0


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
        self.options: Options = build_options(instance, self.catalog, prefilter)
        deadline = instance.goal.deadline_days
        self.deadline_s: float | None = None if deadline is None else deadline * SECONDS_PER_DAY
        self.time_limit_s: float | None = like.time_limit_s if like else self.deadline_s
        self.pinned_nodes_shortcut = True
        self._fit_cache: dict[tuple, int | None] = like._fit_cache if like else {}
        self._time_cache: dict[tuple, int | None] = like._time_cache if like else {}

    def restricted(self, configs: list, fabrics: list) -> "Problem":
        """The same problem limited to these node configurations and fabric options."""
        sub = copy.copy(self)
        sub.options = dataclasses.replace(
            self.options,
            node_configs=[dataclasses.replace(c, index=i) for i, c in enumerate(configs)],
            fabrics=[dataclasses.replace(f, index=i) for i, f in enumerate(fabrics)],
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

    def relaxing(self, families: frozenset[str]) -> "Problem":
        """The same problem with these families' options kept in the model (so they can be relaxed)."""
        return Problem(self.instance, prefilter=self.prefilter - families, like=self)

    @property
    def throughput_target(self) -> float | None:
        """Tokens/s the design must sustain: tokens / time limit (deadline or min_time target)."""
        if self.time_limit_s is None:
            return None
        return self.instance.workload.training.tokens / self.time_limit_s

    def hardware(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int) -> Hardware:
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
        )

    def perf_key(self, config: NodeConfig) -> tuple:
        """Node configurations that look alike to the performance model share cache entries."""
        return (config.gpu.id, config.server.gpus_per_node, config.rails, config.interconnect.id)

    def min_nodes_to_fit(self, config: NodeConfig) -> int | None:
        key = self.perf_key(config)
        if key not in self._fit_cache:
            self._fit_cache[key] = min_nodes_to_fit(self.job, self.hardware(config, (2, 1.0), 1), MAX_NODES)
        return self._fit_cache[key]

    def min_nodes_for_time(self, config: NodeConfig, perf_class: tuple[int, float], seconds: float) -> int | None:
        """Fewest nodes that train within ``seconds``. With the node count pinned (and the pin
        enforced and the shortcut on), only the pinned count matters: it is returned when it is fast
        enough."""
        pinned = self.instance.constraints.pins.nodes
        if pinned is not None and "pins_respected" in self.prefilter and self.pinned_nodes_shortcut:
            time_s = self.time_to_train_s(config, perf_class, pinned)
            return pinned if time_s is not None and time_s <= seconds else None
        key = (*self.perf_key(config), perf_class, seconds)
        if key not in self._time_cache:
            hardware = self.hardware(config, perf_class, 1)
            self._time_cache[key] = min_nodes_for_time(self.job, hardware, seconds, MAX_NODES)
        return self._time_cache[key]

    def time_to_train_s(self, config: NodeConfig, perf_class: tuple[int, float], nodes: int) -> float | None:
        return time_to_train_s(self.job, self.hardware(config, perf_class, nodes))

    def storage_needs(self, tokens_per_s: float) -> StorageNeeds:
        return storage_needs(self.job, tokens_per_s)
