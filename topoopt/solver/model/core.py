"""The CP-SAT model's variables, and the helpers every definition and family states rules with.

Counts, not devices: integer counts per choice and Booleans per option, so the model's size does
not depend on the cluster's size. definitions.py ties the variables together; the rules are added
family by family (one module per family group, listed in ``topoopt.solver.model``), every rule
enforced by its family's assumption literal, which is how infeasibility is explained
(``topoopt.solver.explain``). docs/model.md states the rules in words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.options.problem import Problem
from topoopt.options.tables import MAX_NODES, RAILS_PER_LEAF, RUN_LEVELS, Options, RackOption

COUNT_MAX = 50_000_000
MONEY_MAX = 10**15
POWER_MAX_W = 10**11
COST_KINDS = ("server", "nic", "switch", "cable", "rack", "storage", "head")


Bool = cp_model.IntVar
"""A 0/1 variable (CP-SAT's Booleans are integer variables)."""
Int = cp_model.IntVar


@dataclass
class Vars:
    """The model's decision variables, by name: Booleans per option (``use_<option>``), integer counts
    per choice, and power (W), rack units and cost (whole currency units) by kind."""

    use_config: list[Bool]
    use_fabric: list[Bool]
    """One per fabric unit (:class:`FabricUnits`): a fabric option, or a 2-tier base."""
    use_shape: dict[tuple[int, int], Bool]
    """2 tiers: (spines, uplinks per leaf), chosen apart from the base."""
    use_tier: dict[int, Bool]
    use_class: dict[tuple[int, float], Bool]
    use_rails_per_leaf: dict[int, Bool]
    use_speed: dict[tuple[str, int], Bool]
    use_switch: dict[str, Bool]
    use_part: dict[tuple[str, int], Bool]
    run_at: dict[str, dict[str, Bool]]
    """Compute link classes: where their ends sit ("rack", "row", "site"), exactly one each."""
    use_rack: list[Bool]
    """The nodes' rack class: of the compute racks, or of every mixed rack."""
    use_infra_rack: list[Bool]
    """The class of the network and storage racks (racks of one model each); with mixed racks, the
    nodes' class."""
    use_storage: list[Bool]
    single_rack: Bool
    mixed: Bool
    """Every device in mixed racks (at most ``MIXED_RACKS_MAX``, mixed_racks.py)."""
    multi_tier: Bool
    nodes: Int
    node_mw: Int
    """One node's provisioned power, mW (node_power.py)."""
    gpus: Int
    endpoints: Int
    leaves_per_rail: Int
    leaves: Int
    spines: Int
    spines_2_tier: Int
    """2 tiers: the spines (a near-balanced shape leaves their count to the model); 1 otherwise."""
    use_spines: dict[int, Bool]
    """2 tiers: one literal per spine count, so that products with it stay linear."""
    rail_spine_pairs: Int
    """``leaves_per_rail × spines_2_tier`` (rule R1 of a near-balanced shape)."""
    leaf_spine_pairs: Int
    """``leaves × spines_2_tier`` (one-piece leaf–spine cables of a near-balanced shape)."""
    cores: Int
    pods: Int
    links: dict[str, Int]
    assemblies: dict[tuple[str, int], Int]
    switches_of: dict[str, Int]
    compute_racks: Int
    switch_racks: Int
    storage_racks: Int
    racks: Int
    storage_units: Int
    power_w: dict[str, Int]
    rack_units: dict[str, Int]
    cost: dict[str, Int]
    total_cost: Int


class DesignModel:
    """The CP-SAT model of one problem, with an assumption literal per family.

    ``throughput_target_tokens_per_s`` sizes storage reads (tokens / deadline, or the min_time
    optimum); None means no read-rate floor.
    """

    def __init__(self, problem: Problem, *, throughput_target_tokens_per_s: float | None = None) -> None:
        """The variables only: ``topoopt.solver.model.new_model`` adds the definitions and the rules."""
        self.problem = problem
        self.options: Options = problem.options
        self.model = cp_model.CpModel()
        self.assumption = {family: self.model.new_bool_var(f"family_{family}") for family in FAMILIES}
        self.target = throughput_target_tokens_per_s
        # (violations, literals): combinations of options ruled out by the listed families.
        self.pair_rules: list[tuple[frozenset[str], tuple]] = []
        self.units = FabricUnits(self.options.fabrics)
        self.vars = self._variables()
        self.net = network_variables(self)
        self.slots: list = []
        """The mixed racks' slots (mixed_racks.py)."""
        self.hubs = None
        """What the rack holding each switch model holds (in_rack.py ``Hubs``)."""
        self.in_rack: dict[tuple, Int] = {}
        """Assemblies bought as in-rack twins, per link class and option (in_rack.py)."""
        self.node_leaf_per_share: Int | None = None
        self.node_leaf_grains: list[tuple[int, list]] = []
        """Node–leaf assemblies per rail share, and ``(a, conditions)`` where an assembly takes ``a > 1``
        nodes (definitions.py ``node_leaf_assemblies``; counted per leaf in node_leaf.py)."""
        self._placed: dict[tuple[str, ...], Bool] = {}
        self.placement = self._placement()

    # -- helpers ---------------------------------------------------------------------------------
    def add(self, family: str, constraint, *conditions) -> None:
        """Enforce a constraint of ``family`` when all ``conditions`` hold."""
        constraint.only_enforce_if([self.assumption[family], *conditions])

    def forbid(self, family: str, *literals) -> None:
        """``family`` rules out the conjunction of ``literals``."""
        self.model.add_bool_or([lit.Not() for lit in literals]).only_enforce_if(self.assumption[family])

    def forbid_violations(self, family: str) -> None:
        """Forbid every option that violates ``family`` on its own (see options/rules.py)."""
        o, v = self.options, self.vars
        tables = [(o.node_configs, v.use_config), (self.units.reps, v.use_fabric), (o.racks, v.use_rack),
                  (o.storage, v.use_storage)]
        tables += [(ps, [v.use_part[cls, p.index] for p in ps]) for cls, ps in o.parts.items()]
        tables += [(o.storage_nets, self.net.use_storage_net), (o.cold, self.net.use_cold), (o.management, self.net.use_mgmt)]
        for options, literals in tables:
            for option, literal in zip(options, literals):
                if family in option.violations:
                    self.forbid(family, literal)
        for x, literal in zip(o.racks, v.use_infra_rack):
            if family in x.violations:
                self.forbid(family, literal)
        for x, literal in zip(o.racks, v.use_rack):
            if family in x.node_violations:  # the pin: the nodes' racks only
                self.forbid(family, literal)
        for x, literal in zip(o.management, self.net.use_mgmt):
            if family in x.uplink_violations:  # uplinks exist only past one management leaf
                self.forbid(family, literal, self.net.mgmt_multi)
        for violations, literals in self.pair_rules:
            if family in violations:
                self.forbid(family, *literals)

    def over_racks(self, each: Callable[[RackOption], int], name: str):
        """``Σ each(class)`` over the design's racks: the compute (or mixed) racks in the nodes'
        class, the network and storage racks in theirs (a rack's price, its PDUs)."""
        m, v = self.model, self.vars
        nodes, others = self.int_var(MONEY_MAX, f"{name}_node_racks"), self.int_var(MONEY_MAX, f"{name}_other_racks")
        for r in self.options.racks:
            m.add(nodes == each(r) * v.compute_racks).only_enforce_if(v.use_rack[r.index])
            m.add(others == each(r) * (v.switch_racks + v.storage_racks)).only_enforce_if(v.use_infra_rack[r.index])
        return nodes + others

    def any_of(self, literals: list, name: str):
        """A Boolean equal to the sum of mutually exclusive option literals (one literal is reused)."""
        if len(literals) == 1:
            return literals[0]
        lit = self.model.new_bool_var(name)
        self.model.add(sum(literals) == lit)
        return lit

    def _placement(self) -> dict[str, Bool]:
        """The placements the storage and management parts depend on (tables.py ``RUN_LEVELS``):
        ``rack`` one mixed rack, ``row`` several racks in one row (no more than
        ``distances.racks_per_row``; without it, mixed racks), ``site`` otherwise; exactly one
        holds. Mixed racks stand in one row: with a row size, no more of them than it. Sets
        :attr:`in_one_row` and :attr:`mixed_row` (several mixed racks) on the way."""
        m, v = self.model, self.vars
        self.mixed_row = m.new_bool_var("several_mixed_racks")
        m.add_bool_and([v.mixed, v.single_rack.Not()]).only_enforce_if(self.mixed_row)
        m.add_bool_or([v.mixed.Not(), v.single_rack, self.mixed_row])
        per_row = self.problem.instance.site.distances.racks_per_row
        if per_row is None:
            self.in_one_row = v.mixed
            return {"rack": v.single_rack, "row": self.mixed_row, "site": v.mixed.Not()}
        fits = m.new_bool_var("racks_fit_one_row")
        m.add(v.racks <= per_row).only_enforce_if(fits)
        m.add(v.racks >= per_row + 1).only_enforce_if(fits.Not())
        self.in_one_row = fits
        m.add_implication(v.mixed, fits)  # the in-rack rules of mixed racks take them in one row
        row = m.new_bool_var("placed_in_row")
        m.add_bool_and([self.in_one_row, v.single_rack.Not()]).only_enforce_if(row)
        m.add_bool_or([self.in_one_row.Not(), v.single_rack, row])
        return {"rack": v.single_rack, "row": row, "site": self.in_one_row.Not()}

    def at_placements(self, placed: dict) -> list[tuple[object, list]]:
        """``placed``'s distinct values (it maps each placement to one), each with the conditions
        under which it holds: none when it holds at every placement, else the literal of its
        placements."""
        groups: list[tuple[object, list[str]]] = []  # by equality: a chosen part need not hash
        for level, value in placed.items():
            same = next((levels for known, levels in groups if known == value), None)
            if same is None:
                groups.append((value, [level]))
            else:
                same.append(level)
        if len(groups) == 1:
            return [(groups[0][0], [])]
        found = []
        for value, levels in groups:
            key = tuple(levels)
            if key not in self._placed:
                self._placed[key] = self.any_of([self.placement[level] for level in levels], "placed_" + "_".join(levels))
            found.append((value, [self._placed[key]]))
        return found

    def node_groups(self, key) -> list[tuple[object, list]]:
        """Node configurations grouped by ``key(config)``: (group literal, configs), in catalog order.

        Rules that depend only on the key (performance, power) are stated once per group, which
        keeps the model small when many NIC choices share the same performance or power.
        """
        groups: dict = {}
        for c in self.options.node_configs:
            groups.setdefault(key(c), []).append(c)
        return [(self.any_of([self.vars.use_config[c.index] for c in cs], f"group_{i}"), cs)
                for i, cs in enumerate(groups.values())]

    def rails_groups(self) -> list[tuple[int, object]]:
        """``(rails per node, literal)`` per rails count of the node configurations, built once."""
        if not hasattr(self, "_rails_groups"):
            self._rails_groups = [(cs[0].rails, lit) for lit, cs in self.node_groups(lambda c: c.rails)]
        return self._rails_groups

    def fabric_groups(self, key, name: str) -> list[tuple[object, object]]:
        """``(value, literal)`` per distinct ``key(fabric option)`` (None: the option is left out),
        the literal true when a fabric option of that value is chosen: a rule that depends only on
        the value is stated once per value instead of once per option.

        A 2-tier option stands for its base (:class:`FabricUnits`): ``key`` may read only the
        switch, speed, tiers and ratio class of a 2-tier option — its shape goes through
        :meth:`two_tier_groups`."""
        groups: dict = {}
        for f, lit in zip(self.units.reps, self.vars.use_fabric):
            value = key(f)
            if value is not None:
                groups.setdefault(value, []).append(lit)
        return [(value, self.any_of(lits, f"{name}_{i}")) for i, (value, lits) in enumerate(groups.items())]

    def two_tier_groups(self, shape_key, base_key, name: str) -> list[tuple[tuple, list]]:
        """``((shape value, base value), literals)`` per combination present among the 2-tier
        options, the literals all true exactly when a 2-tier option with those values is chosen.

        ``shape_key`` reads a 2-tier option's shape (spines, links per pair, uplinks) and
        ``base_key`` its base (switch, speed, radix, ports per cage, ratio class; None when the
        rule needs nothing of it): the model chooses the two apart (:class:`FabricUnits`), so a
        rule holds under the pair of group literals.
        """
        shapes = {shape: (rep, self.vars.use_shape[shape]) for shape, rep in self.units.shapes.items()}
        bases = {i: (rep, lit) for i, (rep, lit) in enumerate(zip(self.units.reps, self.vars.use_fabric))
                 if rep.tiers == 2}
        combos = {(shape_key(f), base_key(f) if base_key else None) for f in self.options.fabrics if f.tiers == 2}
        by_shape = self._values_of(f"{name}_shape", shapes, shape_key)
        by_base = self._values_of(f"{name}_base", bases, base_key) if base_key else {}
        return [((s, b), [by_shape[s]] + ([by_base[b]] if base_key else [])) for s, b in sorted(combos, key=repr)]

    def leaf_groups(self, shape_key, base_key, combine, three, name: str) -> list[tuple[object, list]]:
        """``(value, literals)`` over the 2- and 3-tier options for a rule that reads
        ``combine(shape_key(f), base_key(f))`` of a 2-tier option (:meth:`two_tier_groups`) and
        ``three(f)`` of a 3-tier one (a few dozen options, grouped per value)."""
        out = [(combine(s, b), lits) for (s, b), lits in self.two_tier_groups(shape_key, base_key, f"{name}_2")]
        return out + [(value, [lit]) for value, lit in
                      self.fabric_groups(lambda f: three(f) if f.tiers == 3 else None, f"{name}_3")]

    def _values_of(self, name: str, groups: dict, key) -> dict:
        """{key value: literal} over ``groups`` ({group key: (representative option, literal)})."""
        if not hasattr(self, "_two_tier_values"):
            self._two_tier_values: dict = {}
        if name not in self._two_tier_values:
            lits: dict = {}
            for rep, lit in groups.values():
                lits.setdefault(key(rep), []).append(lit)
            self._two_tier_values[name] = {v: self.any_of(ls, f"{name}_{i}") for i, (v, ls) in enumerate(lits.items())}
        return self._two_tier_values[name]

    def int_var(self, upper: int, name: str, lower: int = 0):
        return self.model.new_int_var(lower, upper, name)

    def switch_models(self) -> dict:
        """Switch models in catalog order, each with one of its fabric options (for prices)."""
        models: dict = {}
        for f in self.options.fabrics:
            if f.tiers > 0:
                models.setdefault(f.switch.id, f)
        return models

    # -- variables -------------------------------------------------------------------------------
    def _variables(self) -> Vars:
        m, o = self.model, self.options
        parts = [(cls, p) for cls, ps in o.parts.items() for p in ps]
        switch_ids = list(self.switch_models())
        return Vars(
            use_config=[m.new_bool_var(f"use_config{c.index}") for c in o.node_configs],
            use_fabric=[m.new_bool_var(f"use_fabric{i}") for i in range(len(self.units.reps))],
            use_shape={shape: m.new_bool_var(f"use_shape_{shape[0]}s{shape[1]}u") for shape in self.units.shapes},
            use_tier={t: m.new_bool_var(f"use_tier{t}") for t in (0, 1, 2, 3)},
            use_class={cls: m.new_bool_var(f"use_class{cls}") for cls in sorted({f.perf_class for f in o.fabrics})},
            use_rails_per_leaf={g: m.new_bool_var(f"use_rails_per_leaf{g}") for g in RAILS_PER_LEAF},
            use_speed={s: m.new_bool_var(f"use_speed{s}") for s in sorted({c.speed_key for c in o.node_configs})},
            use_switch={sid: m.new_bool_var(f"use_switch_{sid}") for sid in switch_ids},
            use_part={(cls, p.index): m.new_bool_var(f"use_{cls}_{p.part.id}") for cls, p in parts},
            run_at={cls: {level: m.new_bool_var(f"run_{cls}_{level}") for level in RUN_LEVELS} for cls in o.runs_m},
            use_rack=[m.new_bool_var(f"use_rack_{r.rack.id}") for r in o.racks],
            use_infra_rack=[m.new_bool_var(f"use_infra_rack_{r.rack.id}") for r in o.racks],
            use_storage=[m.new_bool_var(f"use_storage_{s.tier.id}") for s in o.storage],
            single_rack=m.new_bool_var("single_rack"),
            mixed=m.new_bool_var("mixed_racks"),
            node_mw=self.int_var(2 * 10**10, "node_mw"),
            multi_tier=m.new_bool_var("multi_tier"),
            nodes=self.int_var(MAX_NODES, "nodes", 1),
            gpus=self.int_var(MAX_NODES * 72, "gpus", 1),
            endpoints=self.int_var(MAX_NODES * 16, "endpoints", 1),
            leaves_per_rail=self.int_var(COUNT_MAX, "leaves_per_rail"),
            leaves=self.int_var(COUNT_MAX, "leaves"),
            spines=self.int_var(COUNT_MAX, "spines"),
            spines_2_tier=self.int_var(max((f.up for f in o.fabrics if f.tiers == 2), default=1), "spines_2_tier", 1),
            use_spines={s: m.new_bool_var(f"use_spines_{s}")
                        for s in range(1, max((f.up for f in o.fabrics if f.tiers == 2), default=1) + 1)},
            rail_spine_pairs=self.int_var(COUNT_MAX * 1024, "rail_spine_pairs"),
            leaf_spine_pairs=self.int_var(COUNT_MAX * 1024, "leaf_spine_pairs"),
            cores=self.int_var(COUNT_MAX, "cores"),
            pods=self.int_var(COUNT_MAX, "pods"),
            links={cls: self.int_var(COUNT_MAX, f"links_{cls}") for cls in o.parts},
            assemblies={(cls, p.index): self.int_var(COUNT_MAX, f"assemblies_{cls}_{p.index}") for cls, p in parts},
            switches_of={sid: self.int_var(COUNT_MAX, f"switches_{sid}") for sid in switch_ids},
            compute_racks=self.int_var(COUNT_MAX, "compute_racks", 1),
            switch_racks=self.int_var(COUNT_MAX, "switch_racks"),
            storage_racks=self.int_var(COUNT_MAX, "storage_racks"),
            racks=self.int_var(COUNT_MAX, "racks", 1),
            storage_units=self.int_var(COUNT_MAX, "storage_units", 1),
            power_w={k: self.int_var(POWER_MAX_W, f"power_w_{k}") for k in ("node", "switch", "storage", "total")},
            rack_units={k: self.int_var(COUNT_MAX, f"rack_units_{k}") for k in ("node", "switch", "storage", "total")},
            cost={k: self.int_var(MONEY_MAX, f"cost_{k}") for k in COST_KINDS},
            total_cost=self.int_var(MONEY_MAX, "total_cost"),
        )


class FabricUnits:
    """The fabric choices the model has a literal for: each fabric option, except that a 2-tier
    option is a *base* (switch, protocol, Gb/s, ratio class) and a *shape* (spines, uplinks per
    leaf) chosen apart. Hundreds of shapes per switch and speed would otherwise each be
    an option literal, and every rule's grouping of the options would walk all of them.

    A base takes a shape whose uplinks it allows: the 2-tier options of a base are every shape with
    ``spines ≤ uplinks`` up to a bound (options/tables.py ``two_tier_uplinks``), so the pair is
    valid exactly when the shape's uplinks are within the base's largest (definitions.py).
    """

    def __init__(self, fabrics: list) -> None:
        self.reps: list = []
        """The representative option of each unit (for a 2-tier base, its first option)."""
        self.unit_of: list[int] = []
        """Each fabric option's unit."""
        self.shapes: dict[tuple[int, int], object] = {}
        """(spines, uplinks per leaf) -> a 2-tier option with that shape."""
        self.by_pair: dict[tuple[int, tuple[int, int]], object] = {}
        """(base unit, shape) -> the 2-tier option."""
        self.most_uplinks: dict[int, int] = {}
        """2-tier base unit -> the most uplinks its shapes have."""
        bases: dict[tuple, int] = {}
        for f in fabrics:
            if f.tiers == 2:
                key = (f.switch.id, f.protocol, f.gbps, f.ratio)
                if key not in bases:
                    bases[key] = len(self.reps)
                    self.reps.append(f)
                unit, shape = bases[key], (f.spines, f.up)
                self.shapes.setdefault(shape, f)
                self.by_pair[unit, shape] = f
                self.most_uplinks[unit] = max(self.most_uplinks.get(unit, 0), f.up)
            else:
                unit = len(self.reps)
                self.reps.append(f)
            self.unit_of.append(unit)

    def option(self, unit: int, shape: tuple[int, int] | None):
        """The fabric option of a chosen unit (and shape, for a 2-tier base)."""
        return self.by_pair[unit, shape] if self.reps[unit].tiers == 2 else self.reps[unit]


@dataclass
class NetVars:
    """The storage and management networks' variables, by name."""

    use_storage_net: list[Bool]
    converged: Bool
    dedicated: Bool
    use_cold: list[Bool]
    use_mgmt: list[Bool]
    cold_units: Int
    hot_ports: Int
    cold_ports: Int
    unit_ports: Int
    hot_slots: Int
    cold_slots: Int
    unit_slots: Int
    """The switch ports the units take at the link speed (options/networks.py ``unit_slots``): their
    ports, or the whole cages of units running another speed; what the port rules count."""
    node_ports: Int
    endpoints: Int
    leaves: Int
    spines: Int
    three_tiers: Bool
    """The dedicated storage network takes a third tier (a 2-tier option's ``three_tier_links``)."""
    pods: Int
    """3 tiers: the storage pods (0 otherwise)."""
    cores: Int
    """3 tiers: the storage cores (0 otherwise)."""
    cores_per_plane: dict[int, Bool]
    """3 tiers: the cores per plane, one literal per value the spine uplinks of an option allow."""
    compute_storage_leaves: Int
    storage_on_top: Bool
    """Converged, 2 or 3 tiers: the storage units on free ports of the top tier (spines or cores)."""
    mgmt_ports: Int
    mgmt_node_ports: Int
    mgmt_pdu_ports: Int
    mgmt_leaves: Int
    mgmt_pairs: Int
    mgmt_aggregation: Int
    mgmt_multi: Bool
    mgmt_hosted: Bool
    """Some management leaves sit in compute racks (network_definitions.py)."""
    mgmt_hosted_leaves: Int
    """The management leaves in compute racks, one in a rack."""
    storage_of: dict[str, Int]
    mgmt_of: dict[str, Int]
    switches_of: dict[str, Int]
    hot_of: dict[str, Int]
    cold_of: dict[str, Int]
    units_of: dict[str, Int]
    racked_of: dict[str, Int]
    """Per switch model, the switches in network racks: all but the management leaves in compute racks."""
    switch_racks_of: dict[str, Int]
    unit_racks_of: dict[str, Int]
    heads: Int
    """Head nodes (the instance's rule, options/control.py)."""
    has_heads: Bool
    heads_with: dict[str, Bool]
    """Per switch model and storage tier: the head nodes sit in the last of its racks."""
    heads_hosted: Bool
    """The head nodes sit in another model's last rack (racks of one model each)."""
    head_racks: Int
    """Racks of head nodes alone, network racks (0 with mixed racks)."""
    node_racks_by_power: Int
    node_racks_by_units: Int
    power_sets_node_racks: Bool
    node_power_caps: list[tuple[Bool, tuple[int, ...]]]
    nodes_mw: Int
    """The nodes' power, exactly (mW; node_power.py)."""
    cost: dict[str, Int]
    storage_kits: dict = field(default_factory=dict)
    """Per storage switch-to-switch class, its kits counted by cages (storage_cables.py)."""


NET_COSTS = ("storage_nic", "node_storage", "unit_hot", "unit_cold", "storage_leaf_spine", "storage_spine_core", "mgmt",
             "mgmt_uplink", "in_rack")
"""Network cost kinds; ``in_rack`` is the in-rack twins' price difference, which may be negative."""


def network_variables(dm) -> NetVars:
    m, o = dm.model, dm.options
    count_max = 50_000_000
    iv = dm.int_var
    converged = [n for n in o.storage_nets if n.mode == "converged"]
    use_storage_net = [m.new_bool_var(f"use_storage_net{n.index}") for n in o.storage_nets]
    conv = use_storage_net[converged[0].index] if converged else m.new_bool_var("no_converged_option")
    if not converged:
        m.add(conv == 0)
    storage_ids = sorted({n.switch.id for n in o.storage_nets if n.switch})
    mgmt_ids = list(dict.fromkeys(s.id for x in o.management for s in (x.switch, x.aggregation)))
    all_ids = list(dict.fromkeys([*dm.switch_models(), *storage_ids, *mgmt_ids]))
    tier_ids = list(dict.fromkeys([*(s.tier.id for s in o.storage), *(c.tier.id for c in o.cold if c.tier)]))
    return NetVars(
        use_storage_net=use_storage_net,
        converged=conv,
        dedicated=m.new_bool_var("dedicated_storage"),
        use_cold=[m.new_bool_var(f"use_cold{c.index}") for c in o.cold],
        use_mgmt=[m.new_bool_var(f"use_mgmt_{x.switch.id}_{x.aggregation.id}") for x in o.management],
        cold_units=iv(count_max, "cold_units"),
        hot_ports=iv(count_max, "hot_unit_ports"), cold_ports=iv(count_max, "cold_unit_ports"),
        unit_ports=iv(count_max, "unit_ports"),
        hot_slots=iv(count_max, "hot_unit_slots"), cold_slots=iv(count_max, "cold_unit_slots"),
        unit_slots=iv(count_max, "unit_slots"),
        node_ports=iv(count_max, "node_storage_ports"),
        endpoints=iv(count_max, "storage_endpoints"),
        leaves=iv(count_max, "storage_leaves"),
        spines=iv(count_max, "storage_spines"),
        three_tiers=m.new_bool_var("storage_three_tiers"),
        pods=iv(count_max, "storage_pods"), cores=iv(count_max, "storage_cores"),
        cores_per_plane=_cores_per_plane(m, o),
        compute_storage_leaves=iv(count_max, "compute_storage_leaves"),
        storage_on_top=m.new_bool_var("storage_on_top"),
        mgmt_ports=iv(count_max, "mgmt_ports"), mgmt_node_ports=iv(count_max, "mgmt_node_ports"),
        mgmt_pdu_ports=iv(count_max, "mgmt_pdu_ports"),
        mgmt_leaves=iv(count_max, "mgmt_leaves"), mgmt_pairs=iv(count_max, "mgmt_pairs"),
        mgmt_aggregation=iv(count_max, "mgmt_aggregation"),
        mgmt_multi=m.new_bool_var("mgmt_multi"), mgmt_hosted=m.new_bool_var("mgmt_hosted"),
        mgmt_hosted_leaves=iv(count_max, "mgmt_hosted_leaves"),
        storage_of={sid: iv(count_max, f"storage_switches_{sid}") for sid in storage_ids},
        mgmt_of={sid: iv(count_max, f"mgmt_switches_{sid}") for sid in mgmt_ids},
        switches_of={sid: iv(count_max, f"all_switches_{sid}") for sid in all_ids},
        hot_of={t: iv(count_max, f"hot_units_{t}") for t in tier_ids},
        cold_of={t: iv(count_max, f"cold_units_{t}") for t in tier_ids},
        units_of={t: iv(count_max, f"units_{t}") for t in tier_ids},
        racked_of={sid: iv(count_max, f"racked_{sid}") for sid in all_ids},
        switch_racks_of={sid: iv(count_max, f"racks_{sid}") for sid in all_ids},
        unit_racks_of={t: iv(count_max, f"racks_{t}") for t in tier_ids},
        heads=iv(count_max, "heads"),
        has_heads=m.new_bool_var("has_heads"),
        heads_with={x: m.new_bool_var(f"heads_with_{x}") for x in (*all_ids, *tier_ids)},
        heads_hosted=m.new_bool_var("heads_hosted"),
        head_racks=iv(count_max, "head_racks"),
        node_racks_by_power=iv(count_max, "node_racks_by_power"),
        node_racks_by_units=iv(count_max, "node_racks_by_units"),
        power_sets_node_racks=m.new_bool_var("power_sets_node_racks"),
        node_power_caps=[],
        nodes_mw=iv(10**16, "nodes_mw"),
        cost={k: iv(10**15, f"cost_{k}", -10**15 if k == "in_rack" else 0) for k in NET_COSTS},
    )


def _cores_per_plane(m, o) -> dict:
    """3 tiers: one literal per count of cores per plane, every divisor of some option's spine uplinks."""
    counts = {c for s in o.storage_nets if s.three_tier_links for c in range(1, s.pod[2] + 1) if s.pod[2] % c == 0}
    return {c: m.new_bool_var(f"storage_cores_per_plane_{c}") for c in sorted(counts)}


def _grouped(items: list, key) -> dict:
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def by_value(dm, options: list, literals: list, value, name: str) -> dict:
    """``{value(option): literal}``: the options grouped by a value, each group's literal the sum
    of its options' (exactly one option holds, so a group literal is a Boolean)."""
    groups: dict = {}
    for option, lit in zip(options, literals):
        groups.setdefault(value(option), []).append(lit)
    return {key: dm.any_of(lits, f"{name}_{i}") for i, (key, lits) in enumerate(groups.items())}


def dedicated_options(dm) -> tuple[list, list]:
    o, n = dm.options, dm.net
    pairs = [(s, lit) for s, lit in zip(o.storage_nets, n.use_storage_net) if s.mode == "dedicated"]
    return [s for s, _ in pairs], [lit for _, lit in pairs]
