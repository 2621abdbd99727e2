"""The compute fabric's families: leaf, spine and core ports cover what they connect, within the
allowed oversubscription, every switch reaching every switch above it alike."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel


def leaf_ports_cover_endpoints(dm: DesignModel) -> None:
    """1 tier: E ≤ k. Otherwise leaves per rail = ceil(n / d) exactly and leaves = rails × that
    (plus the leaves of converged storage units). Without a fabric, one node only."""
    v, m = dm.vars, dm.model
    dm.add("leaf_ports_cover_endpoints", m.add(v.nodes == 1), v.use_tier[0])
    for radix, lit in dm.fabric_groups(lambda f: f.radix if f.tiers == 1 else None, "single_switch_radix"):
        dm.add("leaf_ports_cover_endpoints", m.add(v.endpoints <= radix), lit)
    for down, lit in dm.fabric_groups(lambda f: f.down if f.tiers >= 2 else None, "leaf_down_ports"):
        dm.add("leaf_ports_cover_endpoints", m.add(down * v.leaves_per_rail >= v.nodes), lit)
        dm.add("leaf_ports_cover_endpoints", m.add(down * v.leaves_per_rail <= v.nodes + down - 1), lit)
    # Converged storage adds compute_storage_leaves for the storage units (storage_fabric_ports_cover).
    for rails_lit, configs in dm.node_groups(lambda c: c.rails):
        dm.add("leaf_ports_cover_endpoints",
               m.add(v.leaves == configs[0].rails * v.leaves_per_rail + dm.net.compute_storage_leaves),
               rails_lit, v.multi_tier)


def spine_ports_cover_uplinks(dm: DesignModel) -> None:
    """2 tiers: leaves × links per leaf-spine pair ≤ k. 3 tiers: pods = ceil(leaves / P)."""
    v, m = dm.vars, dm.model
    for (links, radix), lit in dm.fabric_groups(
            lambda f: (f.links_per_leaf_spine, f.radix) if f.tiers == 2 else None, "leaf_spine_ports"):
        dm.add("spine_ports_cover_uplinks", m.add(v.leaves * links <= radix), lit)
    for p, lit in dm.fabric_groups(lambda f: f.leaves_per_pod if f.tiers == 3 else None, "pod_leaves"):
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods >= v.leaves), lit)
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods <= v.leaves + p - 1), lit)


def core_ports_cover_uplinks(dm: DesignModel) -> None:
    """3 tiers: pods × links per spine-core pair ≤ k."""
    for (links, radix), lit in dm.fabric_groups(
            lambda f: (f.links_per_spine_core, f.radix) if f.tiers == 3 else None, "spine_core_ports"):
        dm.add("core_ports_cover_uplinks", dm.model.add(dm.vars.pods * links <= radix), lit)


def oversubscription_within_limit(dm: DesignModel) -> None:
    dm.forbid_violations("oversubscription_within_limit")


def uplinks_balanced(dm: DesignModel) -> None:
    """Spines divide leaf uplinks (enumerated), so spines = S (2 tiers) or Q per pod, cores = Q × C."""
    v, m = dm.vars, dm.model
    for spines, lit in dm.fabric_groups(lambda f: f.spines if f.tiers == 2 else None, "spines_2_tiers"):
        dm.add("uplinks_balanced", m.add(v.spines == spines), lit)
    for spines, lit in dm.fabric_groups(lambda f: f.spines if f.tiers == 3 else None, "spines_per_pod"):
        dm.add("uplinks_balanced", m.add(v.spines == spines * v.pods), lit)
    for cores, lit in dm.fabric_groups(lambda f: f.spines * f.cores_per_plane if f.tiers == 3 else None, "cores"):
        dm.add("uplinks_balanced", m.add(v.cores == cores), lit)
