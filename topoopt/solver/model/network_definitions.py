"""Definitions of the storage network, the cold tier and the management network.

Counts, not devices, as for the compute fabric (definitions.py): storage leaves and spines,
storage-unit ports, management ports, leaves and aggregation switches are integer counts tied to
option Booleans (their variables: core.py ``NetVars``). The rules on them are families
(storage_network.py, storage.py, management.py); what is defined here (links, switch and unit
counts per model, node power, costs) follows from the choices. docs/model.md states every rule in
words.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from topoopt.options.networks import StorageNetOption
from topoopt.options.tables import RUN_LEVELS
from topoopt.solver.model.core import by_value, dedicated_options
from topoopt.solver.model.integers import ceil_div
from topoopt.solver.model.node_power import node_power_classes
from topoopt.solver.model.storage_cables import storage_switch_cables


def unit_attachments(dm) -> list[tuple[tuple, object, bool]]:
    """(switch id, protocol, Gb/s) where the storage units plug in, with the literal saying so and
    whether it is the converged compute fabric: a dedicated option's storage switch, or
    (converged) the compute fabric's switch at its speed."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    ded, lits = dedicated_options(dm)
    found = [(key, lit, False) for key, lit in by_value(dm, ded, lits, lambda s: s.attach_key, "attach_dedicated").items()]
    units = [(f, x) for f, x in zip(dm.units.reps, v.use_fabric) if f.tiers and f.speed_key in o.converged_speeds]
    for i, (key, fabric_lit) in enumerate(by_value(dm, [f for f, _ in units], [x for _, x in units],
                                                   lambda f: (f.switch.id, f.protocol, f.gbps), "fabric_key").items()):
        both = m.new_bool_var(f"attach_converged_{i}")
        m.add_bool_and([n.converged, fabric_lit]).only_enforce_if(both)
        m.add_bool_or([n.converged.Not(), fabric_lit.Not(), both])
        found.append((key, both, True))
    return found


def define_networks(dm) -> None:
    """Choices, counts, links and costs of the storage and management networks."""
    m, v, n = dm.model, dm.vars, dm.net
    m.add_exactly_one(n.use_storage_net)
    m.add_exactly_one(n.use_cold)
    if n.use_mgmt:
        m.add_exactly_one(n.use_mgmt)
    elif dm.options.management_offered:
        # Every management switch was dropped by a prefiltered (so enforced) family: no design,
        # whatever else is relaxed; an explanation names the family that dropped them.
        m.add_bool_or([])
    else:  # a catalog without a management switch: management_ports_cover says so
        dm.forbid("management_ports_cover")
    m.add(n.dedicated + n.converged == 1)
    ded, ded_lits = dedicated_options(dm)
    _server_slots(dm, ded, ded_lits)
    _units_and_ports(dm)
    _storage_shape(dm, ded, ded_lits)
    _management_shape(dm)
    _switch_totals(dm, ded, ded_lits)
    node_power_classes(dm)
    _network_costs(dm, ded, ded_lits)
    _management_costs(dm)
    _converged_speeds(dm)
    dm.attachments = unit_attachments(dm)
    _unit_links(dm)
    # Units plug in only at compute leaves when converged, never beyond them; converged needs a
    # compute fabric (it is not offered to a single node without one).
    m.add(n.compute_storage_leaves == 0).only_enforce_if(n.dedicated)
    m.add(n.compute_storage_leaves == 0).only_enforce_if(v.multi_tier.Not())
    m.add(n.compute_storage_leaves == 0).only_enforce_if(n.storage_on_top)
    # The top tier takes units only when converged on 2 or 3 tiers (otherwise it is off, not free).
    m.add_implication(n.storage_on_top, n.converged)
    m.add_implication(n.storage_on_top, v.multi_tier)
    m.add_implication(n.converged, v.use_tier[0].Not())
    # Every network has a storage unit port and a management port, so it has a switch for them:
    # these follow from the families' ceilings, and stated apart they keep holding when an
    # explanation relaxes a family (a network without switches is no cheaper way out).
    m.add(n.compute_storage_leaves >= 1).only_enforce_if([n.converged, v.multi_tier, n.storage_on_top.Not()])
    m.add(n.leaves >= 1).only_enforce_if(n.dedicated)
    m.add(n.mgmt_leaves >= 1)
    # Racks are homogeneous per device model (racks.py families size each model's racks).
    _head_count(dm)
    m.add(v.switch_racks == sum(n.switch_racks_of.values()) + n.head_racks)
    m.add(v.storage_racks == sum(n.unit_racks_of.values()))
    # Compute racks = max(ceil(n / nodes per rack by power), ceil(n / nodes per rack by units)):
    # the families bound them from below; one of the two bounds them from above.
    several, power = v.mixed.Not(), n.power_sets_node_racks
    m.add(v.compute_racks <= n.node_racks_by_power).only_enforce_if([several, power])
    m.add(v.compute_racks <= n.node_racks_by_units).only_enforce_if([several, power.Not()])


def _converged_speeds(dm) -> None:
    """A converged network is offered only to nodes whose compute speed some storage tier of the
    catalog runs (physical: the units could never attach to such a fabric). For a server without
    any storage NIC that is its only storage path, so the rule is then stated under
    storage_fabric_ports_cover, which an explanation can name."""
    for group, configs in dm.node_groups(lambda c: (c.speed_key, has_storage_nics(c.server))):
        if configs[0].speed_key in dm.options.converged_speeds:
            continue
        if has_storage_nics(configs[0].server):
            dm.model.add_bool_or([group.Not(), dm.net.converged.Not()])
        else:
            dm.forbid("storage_fabric_ports_cover", group, dm.net.converged)


def has_storage_nics(server) -> bool:
    return server.builtin_storage_nics is not None or bool(server.storage_nic_options and server.max_storage_nics)


def converged_offered(config) -> bool:
    """Whether the model states a converged network's rules for this configuration (see above)."""
    return not has_storage_nics(config.server)


def _server_slots(dm, ded: list, lits: list) -> None:
    """Storage network options do not depend on the server: their storage NIC choices, (NIC id,
    count, built in) -> literal, for nic_fits_server to pair with the servers that take them."""
    dm.storage_nic_choices = by_value(dm, ded, lits, lambda s: s.nic_choice, "storage_nic")


def _units_and_ports(dm) -> None:
    """Hot and cold units per tier model, their data ports, and every unit port in total."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    for s in o.storage:
        lit = v.use_storage[s.index]
        m.add(n.hot_ports == s.tier.network_ports * v.storage_units).only_enforce_if(lit)
    for c in o.cold:
        lit = n.use_cold[c.index]
        ports, units = (c.tier.network_ports, n.cold_units) if c.tier else (0, 0)
        m.add(n.cold_ports == ports * n.cold_units).only_enforce_if(lit)
        if c.tier is None:
            m.add(n.cold_units == units).only_enforce_if(lit)
    m.add(n.unit_ports == n.hot_ports + n.cold_ports)
    m.add(n.unit_slots == n.hot_slots + n.cold_slots)
    for tier_id in n.units_of:
        hot = [v.use_storage[s.index] for s in o.storage if s.tier.id == tier_id]
        cold = [n.use_cold[c.index] for c in o.cold if c.tier and c.tier.id == tier_id]
        for count, total, lits in ((n.hot_of[tier_id], v.storage_units, hot), (n.cold_of[tier_id], n.cold_units, cold)):
            if lits:
                m.add(count == total).only_enforce_if(lits[0])
                m.add(count == 0).only_enforce_if(lits[0].Not())
            else:
                m.add(count == 0)
        m.add(n.units_of[tier_id] == n.hot_of[tier_id] + n.cold_of[tier_id])


def _storage_shape(dm, ded: list, lits: list) -> None:
    """Node storage ports, storage endpoints, and the tier shape of each dedicated option (the
    leaf count's ceiling and the pods are the rule storage_fabric_ports_cover)."""
    m, v, n = dm.model, dm.vars, dm.net
    for ports, lit in by_value(dm, ded, lits, lambda s: s.ports_per_node, "storage_ports").items():
        m.add(n.node_ports == ports * v.nodes).only_enforce_if(lit)
    m.add(n.endpoints == n.node_ports + n.unit_slots).only_enforce_if(n.dedicated)
    for var in (n.node_ports, n.endpoints, n.leaves, n.spines):
        m.add(var == 0).only_enforce_if(n.converged)
    for (tiers, spines), lit in by_value(dm, ded, lits, lambda s: (s.tiers, tuple(s.spine_counts)),
                                         "storage_shape").items():
        if tiers == 1:
            m.add(n.leaves == 1).only_enforce_if(lit)
        m.add_linear_expression_in_domain(n.spines, cp_model.Domain.from_values(spines)).only_enforce_if(
            [lit, n.three_tiers.Not()])
    _three_tier_shape(dm, ded, lits)


def _three_tier_shape(dm, ded: list, lits: list) -> None:
    """3 tiers, on a 2-tier option with ``three_tier_links`` (what the spine–core part breaks rules
    3 tiers out): spines = pods × Q, cores = Q × C for the one cores-per-plane literal C (pods =
    ceil(leaves / P) and pods × u2 / C ≤ k are the rule storage_fabric_ports_cover); none otherwise."""
    m, n = dm.model, dm.net
    three = [(s, x) for s, x in zip(ded, lits) if s.three_tier_links]
    m.add(sum(x for _, x in three) >= n.three_tiers)
    for s, lit in three:
        dm.pair_rules.append((s.core_violations, (lit, n.three_tiers)))
        for level, violations in s.core_level_violations.items():
            dm.pair_rules.append((violations, (lit, n.three_tiers, dm.placement[level])))
    m.add(sum(n.cores_per_plane.values()) == n.three_tiers)
    # The search runs without the LP: from a first design in 3 tiers it would walk the cost down
    # one storage unit at a time (an explanation's trial: 20 s; hinted 2 tiers: 1.3 s).
    m.add_hint(n.three_tiers, False)
    for var in (n.pods, n.cores):
        m.add(var == 0).only_enforce_if(n.three_tiers.Not())
    for (per_pod, spine_up), lit in by_value(dm, [s for s, _ in three], [x for _, x in three],
                                             lambda s: s.pod[1:], "storage_pod_spines").items():
        m.add(n.spines == per_pod * n.pods).only_enforce_if([lit, n.three_tiers])
        for c, c_lit in n.cores_per_plane.items():
            if spine_up % c:
                dm.forbid("storage_fabric_ports_cover", lit, c_lit)
            else:
                m.add(n.cores == per_pod * c).only_enforce_if([lit, c_lit])


def _head_count(dm) -> None:
    """The head nodes (options/control.py): the rule's count, none for a single node when the
    rule is for clusters only; ``has_heads`` when there are any; ``heads_hosted`` when they sit in
    another model's last rack (``heads_with``)."""
    m, v, n, rule = dm.model, dm.vars, dm.net, dm.options.head
    m.add(sum(n.heads_with.values()) == n.heads_hosted)
    if rule is None:
        for var in (n.heads, n.head_racks, n.has_heads, n.heads_hosted):
            m.add(var == 0)
        return
    # Beyond mixed racks the head nodes take racks of their own, or the last rack of one switch
    # model or storage tier that has room (racks.py); the design holds that model.
    m.add_implication(n.heads_hosted, n.has_heads)
    m.add_implication(n.heads_hosted, v.mixed.Not())
    m.add(n.head_racks == 0).only_enforce_if(n.heads_hosted)
    m.add(n.head_racks >= 1).only_enforce_if([n.has_heads, n.heads_hosted.Not(), v.mixed.Not()])
    for x, host in n.heads_with.items():
        m.add((n.racked_of[x] if x in n.racked_of else n.units_of[x]) >= 1).only_enforce_if(host)
    if rule.clusters_only:
        m.add(n.heads == rule.count).only_enforce_if(n.has_heads)
        m.add(n.heads == 0).only_enforce_if(n.has_heads.Not())
        m.add(v.nodes >= 2).only_enforce_if(n.has_heads)
        m.add(v.nodes <= 1).only_enforce_if(n.has_heads.Not())
    else:
        m.add(n.heads == rule.count)
        m.add(n.has_heads == 1)


def _management_shape(dm) -> None:
    """Management ports: 1 in-band plus the out-of-band ports of every node and storage unit, the
    management ports of every compute and storage switch (``oob_ports``: a switch's in-band
    management rides its data ports), of every rack's PDUs, and 1 in-band plus the out-of-band
    ports of every head node. Aggregation: none with one leaf, else pairs (the ceilings are the
    rule management_ports_cover). Switches per model: the option's leaves and its aggregation."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    for oob_lit, configs in dm.node_groups(lambda c: c.server.oob_ports):
        m.add(n.mgmt_node_ports == (1 + configs[0].server.oob_ports) * v.nodes).only_enforce_if(oob_lit)
    switches = dm.problem.catalog.catalog.by_id("switches")
    storage = dm.problem.catalog.catalog.by_id("storage")
    data_switches = [(sid, var) for sid, var in v.switches_of.items()] + list(n.storage_of.items())
    m.add(n.mgmt_pdu_ports == dm.over_racks(lambda r: r.rack.pdus, "mgmt_pdu_ports"))
    m.add(n.mgmt_ports == n.mgmt_node_ports + n.mgmt_pdu_ports
          + sum(switches[sid].oob_ports * var for sid, var in data_switches)
          + sum((1 + storage[t].oob_ports) * var for t, var in n.units_of.items())
          + (1 + o.head.model.oob_ports if o.head else 0) * n.heads)
    m.add(n.mgmt_leaves >= 2).only_enforce_if(n.mgmt_multi)
    m.add(n.mgmt_leaves <= 1).only_enforce_if(n.mgmt_multi.Not())
    m.add(n.mgmt_pairs == 0).only_enforce_if(n.mgmt_multi.Not())
    m.add(n.mgmt_aggregation == 2 * n.mgmt_pairs)
    for sid, var in n.mgmt_of.items():
        using = []
        for x, lit in zip(o.management, n.use_mgmt):
            if sid in (x.switch.id, x.aggregation.id):
                using.append(lit)
                m.add(var == (n.mgmt_leaves if sid == x.switch.id else 0)
                      + (n.mgmt_aggregation if sid == x.aggregation.id else 0)).only_enforce_if(lit)
        m.add(var == 0).only_enforce_if([lit.Not() for lit in using])


def _switch_totals(dm, ded: list, lits: list) -> None:
    """Storage switches per model, and every switch per model over the three networks (racks,
    power and cost are counted per model)."""
    m, v, n = dm.model, dm.vars, dm.net
    for sid, var in n.storage_of.items():
        model_lits = [lit for s, lit in zip(ded, lits) if s.switch.id == sid]
        lit = dm.any_of(model_lits, f"storage_switch_{sid}")
        m.add(var == n.leaves + n.spines + n.cores).only_enforce_if(lit)
        m.add(var == 0).only_enforce_if(lit.Not())
    for sid, total in n.switches_of.items():
        parts = [d[sid] for d in (v.switches_of, n.storage_of, n.mgmt_of) if sid in d]
        m.add(total == sum(parts))
    _management_hosting(dm)


def _management_hosting(dm) -> None:
    """Management leaves in compute racks, one in a rack (``mgmt_hosted_leaves``: never more than
    the leaves nor the compute racks, none with mixed racks; ``mgmt_hosted`` when there are any);
    whether a rack holds one beside its nodes is the rack families' rule (racks.py). Per switch
    model, the switches left for network racks (``racked_of``): all but the hosted leaves."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    hosted = n.mgmt_hosted_leaves
    m.add(hosted >= 1).only_enforce_if(n.mgmt_hosted)
    m.add(hosted == 0).only_enforce_if(n.mgmt_hosted.Not())
    m.add(hosted <= n.mgmt_leaves)
    m.add(hosted <= v.compute_racks)
    # A leaf more in a compute rack never takes a rack more, so with the racks counted the model
    # hosts the most or none (the 405B example's first stage 21 s -> 5 s). Tied so without the
    # rack count too, an explanation's feasibility trial with most families relaxed found no
    # design in minutes where either value of mgmt_hosted, fixed, found one at once
    # (pinned_nodes_miss_the_deadline in tests/test_properties.py, CP-SAT 9.15).
    most = dm.int_var(50_000_000, "mgmt_hosted_most")
    m.add_min_equality(most, [n.mgmt_leaves, v.compute_racks])
    m.add(hosted == most).only_enforce_if([n.mgmt_hosted, dm.assumption["racks_available"]])
    m.add_implication(n.mgmt_hosted, v.mixed.Not())
    for sid, total in n.switches_of.items():
        leaf_lits = [lit for x, lit in zip(o.management, n.use_mgmt) if x.switch.id == sid]
        if not leaf_lits:
            m.add(n.racked_of[sid] == total)
            continue
        leaf_model = dm.any_of(leaf_lits, f"leaf_model_{sid}")
        m.add(n.racked_of[sid] == total - hosted).only_enforce_if(leaf_model)
        m.add(n.racked_of[sid] == total).only_enforce_if(leaf_model.Not())


def _network_costs(dm, ded: list, lits: list) -> None:
    """Storage NICs, node–storage and storage switch-to-switch cables (storage_cables.py), each
    cable class at its part for where the design places its ends (dm.at_placements; storage-unit
    cables are per unit tier: _unit_links); the parts' violations at a placement rule out the
    option there."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    cost = n.cost
    everything = list(zip(o.storage_nets, n.use_storage_net))
    options, literals = [s for s, _ in everything], [lit for _, lit in everything]
    for s, lit in everything:
        for level, violations in s.level_violations.items():
            dm.pair_rules.append((violations, (lit, dm.placement[level])))
    # Storage NICs bought per node (none built in, none when converged).
    for coef, lit in by_value(dm, options, literals, lambda s: s.nic_cost_per_node, "storage_nic_cost").items():
        m.add(cost["storage_nic"] == coef * v.nodes).only_enforce_if(lit)
    # Node–storage: port i of every node is counted like a rail: P × ceil(n / q) assemblies.
    per_q = {}
    for q in sorted({part.part.links for s in ded for part in s.parts.get("node-storage", {}).values() if part}):
        per_q[q] = dm.int_var(10**7, f"node_storage_per_port_q{q}")
        m.add(q * per_q[q] >= v.nodes)
        m.add(q * per_q[q] <= v.nodes + q - 1)

    def placed(value):
        """An option's value at each placement, hashable (for by_value)."""
        return lambda s: tuple((level, value(s, level)) for level in RUN_LEVELS)

    for by_level, lit in by_value(dm, options, literals, placed(StorageNetOption.node_storage_cost),
                                  "node_storage_cost").items():
        for (q, coef), where in dm.at_placements(dict(by_level)):
            m.add(cost["node_storage"] == (coef * per_q[q] if q else 0)).only_enforce_if([lit, *where])

    storage_switch_cables(dm, options, literals)


def _management_costs(dm) -> None:
    """Management cables at the parts of the design's placement: ceil(ports / q) device cables; 2
    uplinks per leaf when there is aggregation."""
    m, o, n = dm.model, dm.options, dm.net
    cost = n.cost
    mgmt_q = {}
    for x, lit in zip(o.management, n.use_mgmt):
        for level, violations in x.level_violations.items():
            dm.pair_rules.append((violations, (lit, dm.placement[level])))
        for level, violations in x.uplink_level_violations.items():
            dm.pair_rules.append((violations, (lit, n.mgmt_multi, dm.placement[level])))
        for part, where in dm.at_placements(x.part):
            if part is None:
                m.add(cost["mgmt"] == 0).only_enforce_if([lit, *where])
                continue
            q = part.part.links
            if q not in mgmt_q:
                mgmt_q[q] = dm.int_var(50_000_000, f"mgmt_assemblies_q{q}")
                m.add(q * mgmt_q[q] >= n.mgmt_ports)
                m.add(q * mgmt_q[q] <= n.mgmt_ports + q - 1)
            m.add(cost["mgmt"] == (part.unit_price or 0) * mgmt_q[q]).only_enforce_if([lit, *where])
        for part, where in dm.at_placements(x.uplink_part):
            price = (part.unit_price or 0) if part else 0
            m.add(cost["mgmt_uplink"] == price * 2 * n.mgmt_leaves).only_enforce_if([lit, n.mgmt_multi, *where])
    m.add(cost["mgmt_uplink"] == 0).only_enforce_if(n.mgmt_multi.Not())


def _unit_links(dm) -> None:
    """Storage-unit cables per (attachment, tier) at the part for the design's placement: units ×
    ceil(ports per unit / q), and the switch ports they take (``unit_slots``); the pair's
    violations (speed or protocol the units do not run, no fitting part, lists, reach, prices),
    everywhere or at a placement, are ruled out by their families."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    tables = [(o.storage, v.use_storage, v.storage_units, "unit_hot", n.hot_slots),
              ([c for c in o.cold if c.tier], [n.use_cold[c.index] for c in o.cold if c.tier], n.cold_units,
               "unit_cold", n.cold_slots)]
    for c in o.cold:
        if c.tier is None:
            m.add(n.cost["unit_cold"] == 0).only_enforce_if(n.use_cold[c.index])
            m.add(n.cold_slots == 0).only_enforce_if(n.use_cold[c.index])
    for key, attach, converged in dm.attachments:
        for options, literals, units, kind, slots in tables:
            for option, lit in zip(options, literals):
                link = o.unit_links[key, option.tier.id]
                dm.pair_rules.append((link.violations, (attach, lit)))
                if converged and link.gbps != key[2]:
                    # On the compute fabric the units run its speed (docs/model.md, "Converged").
                    dm.forbid("storage_fabric_ports_cover", attach, lit)
                for level, violations in link.level_violations.items():
                    dm.pair_rules.append((violations, (attach, lit, dm.placement[level])))
                for per_unit, where in dm.at_placements(link.slots):
                    m.add(slots == per_unit * units).only_enforce_if([attach, lit, *where])
                for part, where in dm.at_placements(link.part):
                    if part is None:
                        continue
                    per_unit = ceil_div(option.tier.network_ports, part.part.links) * (part.unit_price or 0)
                    m.add(n.cost[kind] == per_unit * units).only_enforce_if([attach, lit, *where])
