"""The CP-SAT model: variables, and one function per constraint family.

Counts, not devices: the model has integer counts per choice and Booleans per option, so its size
does not depend on the cluster size. Every family's constraints are enforced by that family's
assumption literal, which is how infeasibility is explained (see explain.py). docs/model.md states
the rules in words.
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.solver.options import MAX_NODES, Options, node_end_power_w, part_fits_node_end, part_fits_switch_end, per_rack, switch_power_w
from topoopt.solver.problem import Problem

COUNT_MAX = 50_000_000
MONEY_MAX = 10**15
POWER_MAX_W = 10**11


@dataclass
class Vars:
    """The model's decision variables, by name."""

    use_nc: list
    use_fo: list
    use_tier: dict
    use_cls: dict
    use_speed: dict
    use_switch: dict
    use_part: dict
    use_rack: list
    use_storage: list
    nodes: object
    gpus: object
    endpoints: object
    leaves_per_rail: object
    leaves: object
    spines: object
    cores: object
    pods: object
    links: dict
    assemblies: dict
    switches_of: dict
    compute_racks: object
    switch_racks: object
    storage_racks: object
    racks: object
    storage_units: object
    power_w: object
    cost: dict
    total_cost: object


class DesignModel:
    """Builds the CP-SAT model of one problem.

    ``families_on`` lists the families whose constraints are enforced unconditionally; the others
    get assumption literals only (used by explanations and relaxations).
    """

    def __init__(self, problem: Problem, *, throughput_target_tokens_per_s: float | None = None) -> None:
        self.problem = problem
        self.options: Options = problem.options
        self.m = cp_model.CpModel()
        self.assumption = {family: self.m.new_bool_var(f"family_{family}") for family in FAMILIES}
        self.target = throughput_target_tokens_per_s
        self.v = self._variables()
        self._definitions()
        for family in FAMILIES:
            getattr(self, f"_{family}")()

    # -- helpers -------------------------------------------------------------------------------
    def add(self, family: str, constraint, *conditions) -> None:
        """Add a linear constraint owned by ``family``, enforced when all ``conditions`` hold."""
        constraint.only_enforce_if([self.assumption[family], *conditions])

    def forbid(self, family: str, literal) -> None:
        """``family`` rules this option out."""
        self.m.add_bool_or([literal.Not()]).only_enforce_if(self.assumption[family])

    def int_var(self, upper: int, name: str, lower: int = 0):
        return self.m.new_int_var(lower, upper, name)

    # -- variables -----------------------------------------------------------------------------
    def _variables(self) -> Vars:
        m, o = self.m, self.options
        use_nc = [m.new_bool_var(f"use_nc{c.index}") for c in o.node_configs]
        use_fo = [m.new_bool_var(f"use_fo{f.index}") for f in o.fabrics]
        use_part = {
            (cls, p.index): m.new_bool_var(f"use_{cls}_{p.part.id}") for cls, ps in o.parts.items() for p in ps
        }
        n_parts = {cls: len(ps) for cls, ps in o.parts.items()}
        v = Vars(
            use_nc=use_nc,
            use_fo=use_fo,
            use_tier={t: m.new_bool_var(f"use_tier{t}") for t in (0, 1, 2, 3)},
            use_cls={cls: m.new_bool_var(f"use_cls{cls}") for cls in sorted({f.perf_class for f in o.fabrics})},
            use_speed={s: m.new_bool_var(f"use_speed{s}") for s in sorted({c.speed_key for c in o.node_configs})},
            use_switch={sid: m.new_bool_var(f"use_switch_{sid}") for sid in self._switch_prices()},
            use_part=use_part,
            use_rack=[m.new_bool_var(f"use_rack_{r.id}") for r in o.racks],
            use_storage=[m.new_bool_var(f"use_storage_{s.id}") for s in o.storage],
            nodes=self.int_var(MAX_NODES, "nodes", 1),
            gpus=self.int_var(MAX_NODES * 72, "gpus", 1),
            endpoints=self.int_var(MAX_NODES * 16, "endpoints", 1),
            leaves_per_rail=self.int_var(COUNT_MAX, "leaves_per_rail"),
            leaves=self.int_var(COUNT_MAX, "leaves"),
            spines=self.int_var(COUNT_MAX, "spines"),
            cores=self.int_var(COUNT_MAX, "cores"),
            pods=self.int_var(COUNT_MAX, "pods"),
            links={cls: self.int_var(COUNT_MAX, f"links_{cls}") for cls in o.parts},
            assemblies={
                (cls, i): self.int_var(COUNT_MAX, f"assemblies_{cls}_{i}") for cls in o.parts for i in range(n_parts[cls])
            },
            switches_of={sid: self.int_var(COUNT_MAX, f"switches_{sid}") for sid in self._switch_prices()},
            compute_racks=self.int_var(COUNT_MAX, "compute_racks", 1),
            switch_racks=self.int_var(COUNT_MAX, "switch_racks"),
            storage_racks=self.int_var(COUNT_MAX, "storage_racks", 1),
            racks=self.int_var(COUNT_MAX, "racks", 1),
            storage_units=self.int_var(COUNT_MAX, "storage_units", 1),
            power_w=self.int_var(POWER_MAX_W, "power_w"),
            cost={k: self.int_var(MONEY_MAX, f"cost_{k}") for k in ("server", "switch", "cable", "rack", "storage")},
            total_cost=self.int_var(MONEY_MAX, "total_cost"),
        )
        return v

    # -- definitions (always on: they define quantities, they are not rules) -------------------
    def _definitions(self) -> None:
        m, o, v = self.m, self.options, self.v
        m.add_exactly_one(v.use_nc)
        m.add_exactly_one(v.use_fo)
        m.add_exactly_one(v.use_rack)
        m.add_exactly_one(v.use_storage)
        for tier, lit in v.use_tier.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.tiers == tier) == lit)
        for cls, lit in v.use_cls.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.perf_class == cls) == lit)
        for sid, lit in v.use_switch.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.switch.id == sid and f.tiers > 0) == lit)
        m.add_exactly_one(v.use_speed.values())
        for c in o.node_configs:
            m.add_implication(v.use_nc[c.index], v.use_speed[c.speed_key])
            m.add(v.gpus == c.server.gpus_per_node * v.nodes).only_enforce_if(v.use_nc[c.index])
            m.add(v.endpoints == c.rails * v.nodes).only_enforce_if(v.use_nc[c.index])
            m.add(v.cost["server"] == (c.unit_price or 0) * v.nodes).only_enforce_if(v.use_nc[c.index])
        for f in o.fabrics:
            lit = v.use_fo[f.index]
            if f.tiers == 0:
                for var in (v.leaves, v.leaves_per_rail, v.spines, v.cores, v.pods, v.links["node-leaf"]):
                    m.add(var == 0).only_enforce_if(lit)
            m.add(v.switches_of[f.switch.id] == v.leaves + v.spines + v.cores).only_enforce_if(lit)
            if f.tiers == 1:
                m.add(v.leaves == 1).only_enforce_if(lit)
                m.add(v.leaves_per_rail == 1).only_enforce_if(lit)
                m.add(v.spines == 0).only_enforce_if(lit)
            if f.tiers in (1, 2):
                m.add(v.cores == 0).only_enforce_if(lit)
                m.add(v.pods == 1).only_enforce_if(lit)
            m.add(v.links["leaf-spine"] == (v.leaves * f.up if f.tiers >= 2 else 0)).only_enforce_if(lit)
            m.add(v.links["spine-core"] == (v.spines * f.spine_up if f.tiers == 3 else 0)).only_enforce_if(lit)
        for sid, lit in v.use_switch.items():
            m.add(v.switches_of[sid] == 0).only_enforce_if(lit.Not())
        m.add(v.links["node-leaf"] == v.endpoints).only_enforce_if(v.use_tier[0].Not())
        # One part per link class in use; assemblies are the exact ceiling of links / part.links.
        for cls, parts in o.parts.items():
            used = 1 - v.use_tier[0] if cls == "node-leaf" else (
                v.use_tier[2] + v.use_tier[3] if cls == "leaf-spine" else v.use_tier[3]
            )
            m.add(sum(v.use_part[cls, p.index] for p in parts) == used)
            for p in parts:
                lit, asm = v.use_part[cls, p.index], v.assemblies[cls, p.index]
                m.add(p.part.links * asm >= v.links[cls]).only_enforce_if(lit)
                m.add(p.part.links * asm <= v.links[cls] + p.part.links - 1).only_enforce_if(lit)
                m.add(asm == 0).only_enforce_if(lit.Not())
        m.add(v.cost["switch"] == sum((f.unit_price or 0) * v.switches_of[sid]
                                      for sid, f in self._switch_prices().items()))
        m.add(v.cost["cable"] == sum((p.unit_price or 0) * v.assemblies[cls, p.index]
                                     for cls, ps in o.parts.items() for p in ps))
        for i, r in enumerate(o.racks):
            m.add(v.cost["rack"] == (o.rack_prices[r.id] or 0) * v.racks).only_enforce_if(v.use_rack[i])
        for i, s in enumerate(o.storage):
            m.add(v.cost["storage"] == (o.storage_prices[s.id] or 0) * v.storage_units).only_enforce_if(v.use_storage[i])
        m.add(v.total_cost == sum(v.cost.values()))
        m.add(v.racks == v.compute_racks + v.switch_racks + v.storage_racks)
        self._power_definition()

    def _switch_prices(self) -> dict:
        """One fabric option per switch model, to read its unit price."""
        return {f.switch.id: f for f in self.options.fabrics}

    def _power_definition(self) -> None:
        """Provisioned IT power (W): nodes with optics, switches with full cages, storage units."""
        m, o, v, parts = self.m, self.options, self.v, [p.part for p in self.options.parts["node-leaf"]]
        node_w = self.m.new_int_var(0, POWER_MAX_W, "node_power_w")
        switch_w = self.m.new_int_var(0, POWER_MAX_W, "switch_power_w")
        storage_w = self.m.new_int_var(0, POWER_MAX_W, "storage_power_w")
        for c in o.node_configs:
            watts = int(round(c.server.power_w + node_end_power_w(c, parts)))
            m.add(node_w == watts * v.nodes).only_enforce_if(v.use_nc[c.index])
        m.add(switch_w == sum(int(round(switch_power_w(f.switch, parts))) * v.switches_of[sid]
                              for sid, f in self._switch_prices().items()))
        for i, s in enumerate(o.storage):
            m.add(storage_w == int(round(s.power_w)) * v.storage_units).only_enforce_if(v.use_storage[i])
        m.add(v.power_w == node_w + switch_w + storage_w)

    # -- families --------------------------------------------------------------------------------
    def _memory_fits(self) -> None:
        for c in self.options.node_configs:
            need = self.problem.min_nodes_to_fit(c)
            if need is None:
                self.forbid("memory_fits", self.v.use_nc[c.index])
            else:
                self.add("memory_fits", self.m.add(self.v.nodes >= need), self.v.use_nc[c.index])

    def _deadline_met(self) -> None:
        seconds = self.problem.time_limit_s
        if seconds is None:
            return
        for c in self.options.node_configs:
            for cls, lit in self.v.use_cls.items():
                need = self.problem.min_nodes_for_time(c, cls, seconds)
                if need is None:
                    self.m.add_bool_or([self.v.use_nc[c.index].Not(), lit.Not()]).only_enforce_if(
                        self.assumption["deadline_met"])
                else:
                    self.add("deadline_met", self.m.add(self.v.nodes >= need), self.v.use_nc[c.index], lit)

    def _budget_cap(self) -> None:
        self.add("budget_cap", self.m.add(self.v.total_cost <= int(self.problem.instance.budget.max)))

    def _allowed_by_lists(self) -> None:
        rules, o, v = self.problem.instance.constraints, self.options, self.v
        for c in o.node_configs:
            if not (rules.gpus.admits(c.gpu.id) and rules.servers.admits(c.server.id)
                    and rules.interconnects.admits(c.interconnect.id)):
                self.forbid("allowed_by_lists", v.use_nc[c.index])
        for f in o.fabrics:
            if not rules.switches.admits(f.switch.id):
                self.forbid("allowed_by_lists", v.use_fo[f.index])
        for cls, parts in o.parts.items():
            for p in parts:
                if not rules.cables.admits(p.part.id):
                    self.forbid("allowed_by_lists", v.use_part[cls, p.index])
        for i, s in enumerate(o.storage):
            if not rules.storage.admits(s.id):
                self.forbid("allowed_by_lists", v.use_storage[i])

    def _priced_in_book(self) -> None:
        o, v = self.options, self.v
        for c in o.node_configs:
            if c.unit_price is None:
                self.forbid("priced_in_book", v.use_nc[c.index])
        for f in o.fabrics:
            if f.unit_price is None:
                self.forbid("priced_in_book", v.use_fo[f.index])
        for cls, parts in o.parts.items():
            for p in parts:
                if p.unit_price is None:
                    self.forbid("priced_in_book", v.use_part[cls, p.index])
        for i, r in enumerate(o.racks):
            if o.rack_prices[r.id] is None:
                self.forbid("priced_in_book", v.use_rack[i])
        for i, s in enumerate(o.storage):
            if o.storage_prices[s.id] is None:
                self.forbid("priced_in_book", v.use_storage[i])

    def _pins_respected(self) -> None:
        pins, o, v = self.problem.instance.constraints.pins, self.options, self.v
        for c in o.node_configs:
            pinned = {
                pins.server: c.server.id, pins.gpu: c.gpu.id, pins.interconnect: c.interconnect.id,
                pins.nic: c.nic.id, pins.nics_per_node: c.rails,
            }
            if any(want is not None and want != have for want, have in pinned.items()):
                self.forbid("pins_respected", v.use_nc[c.index])
        for f in o.fabrics:
            if (pins.tiers is not None and f.tiers != pins.tiers) or (
                pins.leaf_switch is not None and f.switch.id != pins.leaf_switch
            ):
                self.forbid("pins_respected", v.use_fo[f.index])
        for i, r in enumerate(o.racks):
            if pins.rack_class is not None and r.id != pins.rack_class:
                self.forbid("pins_respected", v.use_rack[i])
        for i, s in enumerate(o.storage):
            if pins.storage is not None and s.id != pins.storage:
                self.forbid("pins_respected", v.use_storage[i])
        if pins.nodes is not None:
            self.add("pins_respected", self.m.add(v.nodes == pins.nodes))

    def _nic_fits_server(self) -> None:
        # Node configurations are enumerated from each server's NIC options and slot count
        # (options.node_configs); a NIC outside them never becomes a variable.
        return

    def _nic_supports_interconnect(self) -> None:
        """The fabric's switches run the node configuration's protocol at its speed.

        NIC-interconnect pairs come from the NIC's own list; ``use_speed`` ties the chosen node
        configuration's (protocol, Gb/s) to the chosen fabric option's.
        """
        v = self.v
        for f in self.options.fabrics:
            if f.tiers == 0:
                continue
            if f.speed_key in v.use_speed:
                self.m.add_implication(v.use_fo[f.index], v.use_speed[f.speed_key]).only_enforce_if(
                    self.assumption["nic_supports_interconnect"])
            else:
                self.forbid("nic_supports_interconnect", v.use_fo[f.index])

    def _link_speed(self) -> None:
        # The link speed is the interconnect's speed, which both ends support by construction.
        return

    def _leaf_ports_cover_endpoints(self) -> None:
        v = self.v
        for f in self.options.fabrics:
            lit = v.use_fo[f.index]
            if f.tiers == 0:
                self.add("leaf_ports_cover_endpoints", self.m.add(v.nodes == 1), lit)
                continue
            if f.tiers == 1:
                self.add("leaf_ports_cover_endpoints", self.m.add(v.endpoints <= f.radix), lit)
                continue
            self.add("leaf_ports_cover_endpoints", self.m.add(f.down * v.leaves_per_rail >= v.nodes), lit)
            self.add("leaf_ports_cover_endpoints",
                     self.m.add(f.down * v.leaves_per_rail <= v.nodes + f.down - 1), lit)
        multi_tier = self.m.new_bool_var("multi_tier")
        self.m.add(multi_tier == v.use_tier[2] + v.use_tier[3])
        for c in self.options.node_configs:
            self.add("leaf_ports_cover_endpoints", self.m.add(v.leaves == c.rails * v.leaves_per_rail),
                     v.use_nc[c.index], multi_tier)

    def _spine_ports_cover_uplinks(self) -> None:
        v = self.v
        for f in self.options.fabrics:
            lit = v.use_fo[f.index]
            if f.tiers == 2:
                self.add("spine_ports_cover_uplinks", self.m.add(v.leaves * f.links_per_leaf_spine <= f.radix), lit)
            elif f.tiers == 3:
                p = f.leaves_per_pod
                self.add("spine_ports_cover_uplinks", self.m.add(p * v.pods >= v.leaves), lit)
                self.add("spine_ports_cover_uplinks", self.m.add(p * v.pods <= v.leaves + p - 1), lit)

    def _core_ports_cover_uplinks(self) -> None:
        v = self.v
        for f in self.options.fabrics:
            if f.tiers == 3:
                self.add("core_ports_cover_uplinks",
                         self.m.add(v.pods * f.links_per_spine_core <= f.radix), v.use_fo[f.index])

    def _oversubscription_within_limit(self) -> None:
        limit = self.problem.instance.constraints.max_oversubscription
        for f in self.options.fabrics:
            if f.tiers > 1 and f.down > limit * f.up + 1e-9:
                self.forbid("oversubscription_within_limit", self.v.use_fo[f.index])

    def _uplinks_balanced(self) -> None:
        v = self.v
        for f in self.options.fabrics:
            lit = v.use_fo[f.index]
            if f.tiers == 2:
                self.add("uplinks_balanced", self.m.add(v.spines == f.spines), lit)
            elif f.tiers == 3:
                self.add("uplinks_balanced", self.m.add(v.spines == f.spines * v.pods), lit)
                self.add("uplinks_balanced", self.m.add(v.cores == f.spines * f.cores_per_plane), lit)

    def _port_form_factor_match(self) -> None:
        o, v = self.options, self.v
        for cls, parts in o.parts.items():
            for p in parts:
                lit = v.use_part[cls, p.index]
                fits_upper = [v.use_fo[f.index] for f in o.fabrics if part_fits_switch_end(p.part, f.switch, f.gbps, "a")]
                if cls == "node-leaf":
                    fits_lower = [v.use_nc[c.index] for c in o.node_configs if part_fits_node_end(p.part, c)]
                else:
                    fits_lower = [v.use_fo[f.index] for f in o.fabrics
                                  if part_fits_switch_end(p.part, f.switch, f.gbps, "b")]
                for group in (fits_upper, fits_lower):
                    if group:
                        self.m.add_bool_or(group).only_enforce_if([self.assumption["port_form_factor_match"], lit])
                    else:
                        self.forbid("port_form_factor_match", lit)

    def _cable_reach(self) -> None:
        o, v = self.options, self.v
        for cls, parts in o.parts.items():
            for p in parts:
                if p.part.max_reach_m < o.lengths_m[cls]:
                    self.forbid("cable_reach", v.use_part[cls, p.index])

    def _rack_power_within_limit(self) -> None:
        self._racks_hold("rack_power_within_limit")

    def _rack_units_within_limit(self) -> None:
        self._racks_hold("rack_units_within_limit")

    def _racks_hold(self, family: str) -> None:
        """Rack counts are exact ceilings of devices / devices-per-rack; a rack holding none is ruled out.

        Both rack families share the per-rack capacity; each owns the bound that is its own
        (power or units) so an explanation names the one that binds.
        """
        o, v, m = self.options, self.v, self.m
        parts = [p.part for p in o.parts["node-leaf"]]
        power_family = family == "rack_power_within_limit"

        def capacity(rack, watts, units):
            by_power = int(rack.power_kw * 1000 // watts)
            by_units = rack.rack_units // units
            return by_power if power_family else by_units

        groups = []
        for c in o.node_configs:
            groups.append((v.use_nc[c.index], c.server.power_w + node_end_power_w(c, parts),
                           c.server.rack_units, v.nodes, v.compute_racks))
        for sid, f in self._switch_prices().items():
            groups.append((v.use_switch[sid], switch_power_w(f.switch, parts), f.switch.rack_units,
                           v.switches_of[sid], v.switch_racks))
        for i, s in enumerate(o.storage):
            groups.append((v.use_storage[i], s.power_w, s.rack_units, v.storage_units, v.storage_racks))
        for option_lit, watts, units, count, racks in groups:
            for r_index, rack in enumerate(o.racks):
                cap = capacity(rack, watts, units)
                both = [option_lit, v.use_rack[r_index]]
                if cap < 1:
                    m.add_bool_or([lit.Not() for lit in both]).only_enforce_if(self.assumption[family])
                    continue
                # Exact ceiling only from the binding capacity, so the rack count is unique.
                if cap == per_rack(rack, watts, units):
                    self.add(family, m.add(cap * racks >= count), *both)
                    self.add(family, m.add(cap * racks <= count + cap - 1), *both)
                else:
                    self.add(family, m.add(cap * racks >= count), *both)

    def _racks_available(self) -> None:
        site, o, v = self.problem.instance.site, self.options, self.v
        self.add("racks_available", self.m.add(v.racks <= site.max_racks))
        if site.rack_classes is not None:
            for i, r in enumerate(o.racks):
                if r.id not in site.rack_classes:
                    self.forbid("racks_available", v.use_rack[i])

    def _site_power_within_limit(self) -> None:
        cap = self.problem.instance.site.power_cap_kw
        if cap is not None:
            self.add("site_power_within_limit", self.m.add(self.v.power_w <= int(cap * 1000)))

    def _storage_bandwidth_met(self) -> None:
        needs = self.problem.storage_needs(self.target or 0.0)
        for i, s in enumerate(self.options.storage):
            lit = self.v.use_storage[i]
            # Compare in MB/s integers: units * per-unit rate >= need (ceil of the need).
            read_need = int(-(-needs.read_gb_per_s * 1000 // 1))
            write_need = int(-(-needs.write_gb_per_s * 1000 // 1))
            read_unit, write_unit = int(s.read_gb_per_s * 1000), int(s.write_gb_per_s * 1000)
            self.add("storage_bandwidth_met", self.m.add(read_unit * self.v.storage_units >= read_need), lit)
            self.add("storage_bandwidth_met", self.m.add(write_unit * self.v.storage_units >= write_need), lit)

    def _storage_capacity_met(self) -> None:
        needs = self.problem.storage_needs(self.target or 0.0)
        need_gb = int(-(-needs.capacity_tb * 1000 // 1))
        for i, s in enumerate(self.options.storage):
            self.add("storage_capacity_met",
                     self.m.add(int(s.capacity_tb * 1000) * self.v.storage_units >= need_gb), self.v.use_storage[i])

    def _storage_latency_ok(self) -> None:
        if not self.problem.instance.workload.data.small_files:
            return
        for i, s in enumerate(self.options.storage):
            if s.latency_class == "high":
                self.forbid("storage_latency_ok", self.v.use_storage[i])
