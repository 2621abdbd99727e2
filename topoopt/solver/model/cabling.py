"""The cabling families: each part fits the cages it plugs into and reaches as far as its link."""

from __future__ import annotations

from topoopt.options.rules import too_long_in_rack
from topoopt.options.tables import floor_racks_within, part_fits_node_end, part_fits_switch_end
from topoopt.solver.model.core import COUNT_MAX, DesignModel
from topoopt.solver.model.in_rack import forbid_coiled
from topoopt.solver.model.node_leaf import whole_assemblies_per_leaf


def port_form_factor_match(dm: DesignModel) -> None:
    """A part may be used only with a switch (a-end) and a node or switch (b-end) it fits.

    A cable (DAC, ACC, AOC) whose node end carries several links cannot split them over the
    different leaves of a rail-optimized fabric, so it is only usable with one switch; and a leaf
    takes whole node–leaf assemblies of its own nodes (node_leaf.py).
    """
    o, v = dm.options, dm.vars
    # Fabric options share their switch and speed: test each part once per (switch, speed).
    by_switch_speed: dict[tuple, tuple] = {}
    for f, lit in zip(dm.units.reps, v.use_fabric):
        if f.tiers:
            switch, literals = by_switch_speed.setdefault((f.switch.id, f.gbps), (f.switch, []))
            literals.append(lit)

    def switches_fitting(part, end: str) -> list:
        return [lit for (_, gbps), (switch, lits) in by_switch_speed.items()
                if part_fits_switch_end(part, switch, gbps, end) for lit in lits]

    for cls, parts in o.parts.items():
        for p in parts:
            lit = v.use_part[cls, p.index]
            upper = switches_fitting(p.part, "a")
            if cls == "node-leaf":
                lower = [v.use_config[c.index] for c in o.node_configs if part_fits_node_end(p.part, c)]
                if p.part.one_piece and p.part.links > p.part.b_ends:
                    dm.forbid("port_form_factor_match", lit, v.multi_tier)
            else:
                lower = switches_fitting(p.part, "b")
            for fits in (upper, lower):
                if fits:
                    dm.model.add_bool_or(fits).only_enforce_if([dm.assumption["port_form_factor_match"], lit])
                else:
                    dm.forbid("port_form_factor_match", lit)
    # Storage and management parts are chosen per option among fitting ones (options/networks.py): an
    # option or pairing without one is ruled out.
    dm.forbid_violations("port_form_factor_match")
    whole_assemblies_per_leaf(dm)


def cable_reach(dm: DesignModel) -> None:
    """Each part reaches its class's run where its ends sit, and within one rack no one-piece
    cable is longer than the rack allows (options rule out the parts too short for the shortest
    run). Across rows of the site's size a part shorter than the site's run serves while the
    racks are few enough that it spans their floor corner to corner (tables.floor_run_m)."""
    dm.forbid_violations("cable_reach")
    o, v = dm.options, dm.vars
    instance = dm.problem.instance
    per_row = instance.site.distances.racks_per_row
    for cls, parts in o.parts.items():
        for p in parts:
            for level, run_m in o.runs_m[cls].items():
                lits = (v.use_part[cls, p.index], v.run_at[cls][level])
                if p.part.max_reach_m < run_m and level == "site" and per_row is not None:
                    # Several rows (more racks than one holds): the floor caps every run.
                    most = floor_racks_within(instance.site.distances, p.part.max_reach_m)
                    if most > per_row:
                        # never above the racks' domain: a tiny row pitch makes it astronomical
                        dm.add("cable_reach", dm.model.add(v.racks <= min(most, COUNT_MAX)), *lits)
                        continue
                if p.part.max_reach_m < run_m or (level == "rack" and too_long_in_rack(p.part, instance)):
                    dm.forbid("cable_reach", *lits)
    forbid_coiled(dm)
