"""The CP-SAT model's variables and the definitions that tie them together.

Counts, not devices: integer counts per choice and Booleans per option, so the model's size does
not depend on the cluster's size. The rules themselves are added family by family by
``topoopt.solver.constraints``; every rule is enforced by its family's assumption literal, which is
how infeasibility is explained (explain.py). docs/model.md states the rules in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ortools.sat.python import cp_model

from topoopt.families import FAMILIES
from topoopt.solver.build_networks import define_networks, network_variables
from topoopt.solver.options import MAX_NODES, Options
from topoopt.solver.problem import Problem

COUNT_MAX = 50_000_000
MONEY_MAX = 10**15
POWER_MAX_W = 10**11
COST_KINDS = ("server", "nic", "switch", "cable", "rack", "storage")


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
    single_rack: object
    multi_tier: object
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
    power_w: dict
    rack_units: dict
    cost: dict
    total_cost: object


class DesignModel:
    """The CP-SAT model of one problem, with an assumption literal per family.

    ``throughput_target_tokens_per_s`` sizes storage reads (tokens / deadline, or the min_time
    optimum); None means no read-rate floor.
    """

    def __init__(self, problem: Problem, *, throughput_target_tokens_per_s: float | None = None) -> None:
        from topoopt.solver.constraints import FAMILY_FUNCTIONS

        self.problem = problem
        self.options: Options = problem.options
        self.m = cp_model.CpModel()
        self.assumption = {family: self.m.new_bool_var(f"family_{family}") for family in FAMILIES}
        self.target = throughput_target_tokens_per_s
        # (violations, literals): combinations of options ruled out by the listed families.
        self.pair_rules: list[tuple[frozenset[str], tuple]] = []
        self.v = self._variables()
        self.n = network_variables(self)
        self._choices()
        self._fabric_shape()
        self._cables()
        define_networks(self)
        self._power_and_units()
        self._costs()
        for family in FAMILIES:
            FAMILY_FUNCTIONS[family](self)

    # -- helpers ---------------------------------------------------------------------------------
    def add(self, family: str, constraint, *conditions) -> None:
        """Enforce a constraint of ``family`` when all ``conditions`` hold."""
        constraint.only_enforce_if([self.assumption[family], *conditions])

    def forbid(self, family: str, *literals) -> None:
        """``family`` rules out the conjunction of ``literals``."""
        self.m.add_bool_or([lit.Not() for lit in literals]).only_enforce_if(self.assumption[family])

    def forbid_violations(self, family: str) -> None:
        """Forbid every option that violates ``family`` on its own (see rules.py)."""
        o, v = self.options, self.v
        tables = [(o.node_configs, v.use_nc), (o.fabrics, v.use_fo), (o.racks, v.use_rack),
                  (o.storage, v.use_storage)]
        tables += [(ps, [v.use_part[cls, p.index] for p in ps]) for cls, ps in o.parts.items()]
        tables += [(o.storage_nets, self.n.use_sn), (o.cold, self.n.use_cold), (o.management, self.n.use_mgmt)]
        for options, literals in tables:
            for option, literal in zip(options, literals):
                if family in option.violations:
                    self.forbid(family, literal)
        for x, literal in zip(o.management, self.n.use_mgmt):
            if family in x.uplink_violations:  # uplinks exist only past one management leaf
                self.forbid(family, literal, self.n.mgmt_multi)
        for violations, literals in self.pair_rules:
            if family in violations:
                self.forbid(family, *literals)

    def any_of(self, literals: list, name: str):
        """A Boolean equal to the sum of mutually exclusive option literals (one literal is reused)."""
        if len(literals) == 1:
            return literals[0]
        lit = self.m.new_bool_var(name)
        self.m.add(sum(literals) == lit)
        return lit

    def node_groups(self, key) -> list[tuple[object, list]]:
        """Node configurations grouped by ``key(config)``: (group literal, configs), in catalog order.

        Rules that depend only on the key (performance, power) are stated once per group, which
        keeps the model small when many NIC choices share the same performance or power.
        """
        groups: dict = {}
        for c in self.options.node_configs:
            groups.setdefault(key(c), []).append(c)
        return [(self.any_of([self.v.use_nc[c.index] for c in cs], f"group_{i}"), cs)
                for i, cs in enumerate(groups.values())]

    def fabric_groups(self, key, name: str) -> list[tuple[object, object]]:
        """``(value, literal)`` per distinct ``key(fabric option)`` (None: the option is left out),
        the literal true when a fabric option of that value is chosen: a rule that depends only on
        the value is stated once per value instead of once per option."""
        groups: dict = {}
        for f in self.options.fabrics:
            value = key(f)
            if value is not None:
                groups.setdefault(value, []).append(self.v.use_fo[f.index])
        return [(value, self.any_of(lits, f"{name}_{i}")) for i, (value, lits) in enumerate(groups.items())]

    def int_var(self, upper: int, name: str, lower: int = 0):
        return self.m.new_int_var(lower, upper, name)

    def switch_models(self) -> dict:
        """Switch models in catalog order, each with one of its fabric options (for prices)."""
        models: dict = {}
        for f in self.options.fabrics:
            if f.tiers > 0:
                models.setdefault(f.switch.id, f)
        return models

    # -- variables -------------------------------------------------------------------------------
    def _variables(self) -> Vars:
        m, o = self.m, self.options
        parts = [(cls, p) for cls, ps in o.parts.items() for p in ps]
        switch_ids = list(self.switch_models())
        return Vars(
            use_nc=[m.new_bool_var(f"use_nc{c.index}") for c in o.node_configs],
            use_fo=[m.new_bool_var(f"use_fo{f.index}") for f in o.fabrics],
            use_tier={t: m.new_bool_var(f"use_tier{t}") for t in (0, 1, 2, 3)},
            use_cls={cls: m.new_bool_var(f"use_cls{cls}") for cls in sorted({f.perf_class for f in o.fabrics})},
            use_speed={s: m.new_bool_var(f"use_speed{s}") for s in sorted({c.speed_key for c in o.node_configs})},
            use_switch={sid: m.new_bool_var(f"use_switch_{sid}") for sid in switch_ids},
            use_part={(cls, p.index): m.new_bool_var(f"use_{cls}_{p.part.id}") for cls, p in parts},
            use_rack=[m.new_bool_var(f"use_rack_{r.rack.id}") for r in o.racks],
            use_storage=[m.new_bool_var(f"use_storage_{s.tier.id}") for s in o.storage],
            single_rack=m.new_bool_var("single_rack"),
            multi_tier=m.new_bool_var("multi_tier"),
            nodes=self.int_var(MAX_NODES, "nodes", 1),
            gpus=self.int_var(MAX_NODES * 72, "gpus", 1),
            endpoints=self.int_var(MAX_NODES * 16, "endpoints", 1),
            leaves_per_rail=self.int_var(COUNT_MAX, "leaves_per_rail"),
            leaves=self.int_var(COUNT_MAX, "leaves"),
            spines=self.int_var(COUNT_MAX, "spines"),
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

    # -- definitions (always on: they define quantities, they are not rules) ---------------------
    def _choices(self) -> None:
        """Exactly one option of each kind; derived Booleans for tiers, fabric classes, speeds."""
        m, o, v = self.m, self.options, self.v
        for literals in (v.use_nc, v.use_fo, v.use_rack, v.use_storage, list(v.use_speed.values())):
            m.add_exactly_one(literals)
        for tier, lit in v.use_tier.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.tiers == tier) == lit)
        m.add(v.multi_tier == v.use_tier[2] + v.use_tier[3])
        for cls, lit in v.use_cls.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.perf_class == cls) == lit)
        for sid, lit in v.use_switch.items():
            m.add(sum(v.use_fo[f.index] for f in o.fabrics if f.tiers > 0 and f.switch.id == sid) == lit)
            m.add(v.switches_of[sid] == 0).only_enforce_if(lit.Not())
        for c in o.node_configs:
            lit = v.use_nc[c.index]
            m.add_implication(lit, v.use_speed[c.speed_key])
            m.add(v.gpus == c.server.gpus_per_node * v.nodes).only_enforce_if(lit)
            m.add(v.endpoints == c.rails * v.nodes).only_enforce_if(lit)

    def _fabric_shape(self) -> None:
        """Switch counts per tier for each fabric option (the rules on them are families).

        A fabric has at least one leaf: implied by the families, and stated apart so that it
        holds when an explanation relaxes them (a fabric without switches is no way out).
        """
        m, v = self.m, self.v
        m.add(v.leaves >= 1).only_enforce_if(v.use_tier[0].Not())
        for var in (v.leaves, v.leaves_per_rail, v.spines, v.cores, v.pods):
            m.add(var == 0).only_enforce_if(v.use_tier[0])
        for switch_id, lit in self.fabric_groups(lambda f: f.switch.id if f.tiers else None, "switch_key"):
            m.add(v.switches_of[switch_id] == v.leaves + v.spines + v.cores).only_enforce_if(lit)
        for var, value in ((v.leaves, 1), (v.leaves_per_rail, 1), (v.spines, 0)):
            m.add(var == value).only_enforce_if(v.use_tier[1])
        for tier in (1, 2):
            m.add(v.cores == 0).only_enforce_if(v.use_tier[tier])
            m.add(v.pods == 1).only_enforce_if(v.use_tier[tier])

    def _cables(self) -> None:
        """Links per class, one part per class in use, and whole assemblies.

        Node–leaf: ``rails × ceil(n / q)`` (each rail's nodes are split over its leaves in whole
        assemblies), ``q`` the part's links per assembly. Leaf–spine and spine–core: per device
        pair for a one-piece cable, by cages filled for a transceiver kit
        (:meth:`_switch_link_assemblies`).
        """
        m, o, v = self.m, self.options, self.v
        m.add(v.links["node-leaf"] == v.endpoints).only_enforce_if(v.use_tier[0].Not())
        m.add(v.links["node-leaf"] == 0).only_enforce_if(v.use_tier[0])
        for up, lit in self.fabric_groups(lambda f: f.up if f.tiers >= 2 else 0, "uplinks_key"):
            m.add(v.links["leaf-spine"] == v.leaves * up).only_enforce_if(lit)
        for up, lit in self.fabric_groups(lambda f: f.spine_up if f.tiers == 3 else 0, "spine_uplinks_key"):
            m.add(v.links["spine-core"] == v.spines * up).only_enforce_if(lit)
        in_use = {"node-leaf": 1 - v.use_tier[0], "leaf-spine": v.multi_tier, "spine-core": v.use_tier[3]}
        total = {cls: self.int_var(COUNT_MAX, f"assemblies_{cls}") for cls in o.parts}
        for cls, parts in o.parts.items():
            m.add(sum(v.use_part[cls, p.index] for p in parts) == in_use[cls])
            for p in parts:
                lit, assemblies = v.use_part[cls, p.index], v.assemblies[cls, p.index]
                m.add(assemblies == total[cls]).only_enforce_if(lit)
                m.add(assemblies == 0).only_enforce_if(lit.Not())
        # node-leaf: kits per rail = ceil(n / q), exactly.
        per_rail = self.int_var(MAX_NODES, "node_leaf_assemblies_per_rail")
        for p in o.parts["node-leaf"]:
            q, lit = p.part.links, v.use_part["node-leaf", p.index]
            m.add(q * per_rail >= v.nodes).only_enforce_if(lit)
            m.add(q * per_rail <= v.nodes + q - 1).only_enforce_if(lit)
        for c in o.node_configs:
            m.add(total["node-leaf"] == c.rails * per_rail).only_enforce_if(v.use_nc[c.index])
        self._switch_link_assemblies(total)

    def _switch_link_assemblies(self, total: dict) -> None:
        """Assemblies of the leaf–spine and spine–core classes, by the kind of part in use.

        A one-piece cable (DAC, ACC, AOC) joins one pair of devices: ``upper-lower pairs ×
        ceil(links per pair / q)``. Every part serves a fabric option only when the links that
        must reach one far switch (``links_together``: all ``q`` of a one-piece cable, those of one
        fibre of a kit) divide the links per pair (family ``port_form_factor_match``). A
        transceiver kit's module ports are cabled one by one, so kits are counted by the cages
        their modules fill: ``max(ceil(A / a_ends), ceil(B / b_ends))``
        with ``A`` (``B``) the cages the class fills on the upper (lower) switches, each switch
        filling ``ceil(its links of the class / ports per cage)``. Per switch tier every switch
        carries the same links, except the spines of a part-filled last pod (leaf–spine). The
        ceilings of variable link counts are auxiliary variables shared by the fabric options and
        the kinds of part, so the model's size does not depend on the node count.
        """
        m, o, v = self.m, self.options, self.v

        def ports_per_cage(f) -> int:
            return f.switch.ports_per_cage.get(f.gbps, 1)

        def ceil_div(a: int, b: int) -> int:
            return -(-a // b)

        # Cages per switch of the upper tier's variable link counts: a spine of the last
        # (possibly part-filled) pod, whose leaves are all of them in 2 tiers, and a core.
        last_pod_cages = self.int_var(COUNT_MAX, "leaf_spine_last_pod_spine_cages")
        core_cages = self.int_var(COUNT_MAX, "spine_core_core_cages")
        for (per_pod, per_pair, ppc), lit in self.fabric_groups(
                lambda f: (f.leaves_per_pod if f.tiers == 3 else 0, f.links_per_leaf_spine, ports_per_cage(f))
                if f.tiers >= 2 else None, "last_pod_key"):
            links = per_pair * (v.leaves - per_pod * (v.pods - 1))
            m.add(ppc * last_pod_cages >= links).only_enforce_if(lit)
            m.add(ppc * last_pod_cages <= links + ppc - 1).only_enforce_if(lit)
        for (per_pair, ppc), lit in self.fabric_groups(
                lambda f: (f.links_per_spine_core, ports_per_cage(f)) if f.tiers == 3 else None, "core_key"):
            m.add(ppc * core_cages >= per_pair * v.pods).only_enforce_if(lit)
            m.add(ppc * core_cages <= per_pair * v.pods + ppc - 1).only_enforce_if(lit)
        # Per class: (pairs per lower switch, links per pair), and the cages filled on the upper
        # and on the lower switches, as functions of the fabric option. Below a class's tiers no
        # part of the class is used, so its counts stay free there.
        shapes = {
            "leaf-spine": dict(
                lower=v.leaves, tiers=2,
                pairs=lambda f: (f.spines, f.links_per_leaf_spine),
                upper_cages=lambda f: (f.spines, ceil_div(f.leaves_per_pod * f.links_per_leaf_spine, ports_per_cage(f))
                                       if f.tiers == 3 else 0),
                upper_expr=lambda spines, full_pod: spines * (full_pod * (v.pods - 1) + last_pod_cages),
                lower_cages=lambda f: ceil_div(f.up, ports_per_cage(f))),
            "spine-core": dict(
                lower=v.spines, tiers=3,
                pairs=lambda f: (f.cores_per_plane, f.links_per_spine_core),
                upper_cages=lambda f: (f.spines * f.cores_per_plane,),
                upper_expr=lambda cores: cores * core_cages,
                lower_cages=lambda f: ceil_div(f.spine_up, ports_per_cage(f))),
        }
        for cls, shape in shapes.items():
            # Part literals grouped by what the counting needs: a one-piece cable's links, a kit's
            # ends, the links that must reach one far switch together.
            one_piece: dict[int, list] = {}
            kit_ends: dict[tuple[int, int], list] = {}
            together: dict[int, list] = {}
            for p in o.parts[cls]:
                part, lit = p.part, v.use_part[cls, p.index]
                if part.one_piece:
                    one_piece.setdefault(part.links, []).append(lit)
                else:
                    kit_ends.setdefault((part.a_ends, part.b_ends), []).append(lit)
                together.setdefault(part.links_together, []).append(lit)
            cables = {q: self.any_of(lits, f"{cls}_cable_q{q}") for q, lits in one_piece.items()}
            together_lits = {k: self.any_of(lits, f"{cls}_together{k}") for k, lits in together.items()}

            def in_class(key):
                return lambda f: key(f) if f.tiers >= shape["tiers"] else None

            for (fanout, per_pair), shape_lit in self.fabric_groups(in_class(shape["pairs"]), f"{cls}_pairs"):
                for q, cable in cables.items():
                    assemblies = ceil_div(per_pair, q) * fanout * shape["lower"]
                    m.add(total[cls] == assemblies).only_enforce_if([shape_lit, cable])
                for links, lit in together_lits.items():
                    if per_pair % links:
                        # A cable or fibre would be part-filled (ports the port counts do not hold)
                        # or shared with links to another switch: ruled out.
                        self.forbid("port_form_factor_match", shape_lit, lit)
            if not kit_ends:
                continue
            # Cages the class fills on the upper and on the lower switches.
            cages = [self.int_var(COUNT_MAX, f"{cls}_cages_{end}") for end in ("upper", "lower")]
            for value, lit in self.fabric_groups(in_class(shape["upper_cages"]), f"{cls}_upper_key"):
                m.add(cages[0] == shape["upper_expr"](*value)).only_enforce_if(lit)
            for per_switch, lit in self.fabric_groups(in_class(shape["lower_cages"]), f"{cls}_lower_key"):
                m.add(cages[1] == per_switch * shape["lower"]).only_enforce_if(lit)
            # Kits: ceil(cages / ends per kit) at each end, the larger of the two.
            by_end = [self.int_var(COUNT_MAX, f"{cls}_kits_{end}") for end in ("upper", "lower")]
            kits = self.int_var(COUNT_MAX, f"{cls}_kits")
            m.add_max_equality(kits, by_end)
            for (a_ends, b_ends), lits in kit_ends.items():
                kit = self.any_of(lits, f"{cls}_kit_{a_ends}_{b_ends}")
                for var, filled, ends in zip(by_end, cages, (a_ends, b_ends)):
                    m.add(ends * var >= filled).only_enforce_if(kit)
                    m.add(ends * var <= filled + ends - 1).only_enforce_if(kit)
                m.add(total[cls] == kits).only_enforce_if(kit)

    def _power_and_units(self) -> None:
        """Provisioned power (W, rounded up) and rack units of nodes, switches and storage units.

        A node without a fabric draws only its server's power (no compute NICs, no optics); its
        dedicated storage network adds storage NICs and modules (node power classes,
        build_networks.py). Switches and storage units are counted per model over all networks.
        """
        m, o, v, n = self.m, self.options, self.v, self.n
        for c in o.node_configs:
            m.add(v.rack_units["node"] == c.server.rack_units * v.nodes).only_enforce_if(v.use_nc[c.index])
        catalog = self.problem.catalog.catalog
        switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")
        m.add(v.power_w["switch"] == sum(math.ceil(o.switch_power_w(switches[sid])) * var
                                         for sid, var in n.switches_of.items()))
        m.add(v.rack_units["switch"] == sum(switches[sid].rack_units * var for sid, var in n.switches_of.items()))
        m.add(v.power_w["storage"] == sum(math.ceil(tiers[t].power_w) * var for t, var in n.units_of.items()))
        m.add(v.rack_units["storage"] == sum(tiers[t].rack_units * var for t, var in n.units_of.items()))
        for quantity in (v.power_w, v.rack_units):
            m.add(quantity["total"] == quantity["node"] + quantity["switch"] + quantity["storage"])
        m.add(v.racks == v.compute_racks + v.switch_racks + v.storage_racks)
        self._one_rack_when_everything_fits()

    def _one_rack_when_everything_fits(self) -> None:
        """A design whose devices all fit in one rack of its class uses that single mixed rack.

        One rack never costs more than several nor draws more power, so this only makes the
        answer unique (free racks would otherwise leave the layout open).
        """
        m, v = self.m, self.v
        for r in self.options.racks:
            power_fits, units_fits = m.new_bool_var(f"power_fits_{r.index}"), m.new_bool_var(f"units_fit_{r.index}")
            limit_w = math.floor(r.rack.power_kw * 1000 + 1e-6)
            m.add(v.power_w["total"] <= limit_w).only_enforce_if(power_fits)
            m.add(v.power_w["total"] >= limit_w + 1).only_enforce_if(power_fits.Not())
            m.add(v.rack_units["total"] <= r.rack.rack_units).only_enforce_if(units_fits)
            m.add(v.rack_units["total"] >= r.rack.rack_units + 1).only_enforce_if(units_fits.Not())
            m.add_bool_or([v.use_rack[r.index].Not(), power_fits.Not(), units_fits.Not(), v.single_rack])

    def _costs(self) -> None:
        """Cost per kind at whole-unit prices (unpriced options are ruled out by priced_in_book).

        Compute NICs are bought only for nodes attached to a fabric (kind "server"); storage NICs
        are kind "nic". Switches and storage units are priced per model over all networks.
        """
        m, o, v, n = self.m, self.options, self.v, self.n
        for c in o.node_configs:
            lit = v.use_nc[c.index]
            m.add(v.cost["server"] == (c.unit_price or 0) * v.nodes).only_enforce_if([lit, v.use_tier[0].Not()])
            m.add(v.cost["server"] == (c.server_price or 0) * v.nodes).only_enforce_if([lit, v.use_tier[0]])
        m.add(v.cost["nic"] == n.cost["storage_nic"])
        price = self.problem.catalog.price
        m.add(v.cost["switch"] == sum(int(round(price(sid) or 0)) * var for sid, var in n.switches_of.items()))
        m.add(v.cost["cable"] == sum((p.unit_price or 0) * v.assemblies[cls, p.index]
                                     for cls, ps in o.parts.items() for p in ps)
              + sum(var for kind, var in n.cost.items() if kind != "storage_nic"))
        for r in o.racks:
            m.add(v.cost["rack"] == (r.unit_price or 0) * v.racks).only_enforce_if(v.use_rack[r.index])
        m.add(v.cost["storage"] == sum(int(round(price(t) or 0)) * var for t, var in n.units_of.items()))
        m.add(v.total_cost == sum(v.cost.values()))
