"""Solver output: the design (counts, not devices), its cost, and explanations of "no"."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from topoopt.models.base import Record
from topoopt.models.performance import Parallelism, Performance

SCHEMA_VERSION = "1.0"

Tier = Literal["leaf", "spine", "core"]
LinkClass = Literal["node-leaf", "leaf-spine", "spine-core"]


class FabricShape(Record):
    """The folded-Clos shape the counts come from.

    Leaves have ``leaf_down_ports`` endpoint ports and ``leaf_up_ports`` uplinks; every leaf
    reaches every spine of its pod with ``links_per_leaf_spine`` links; in 3 tiers, spine j of
    every pod reaches every core of plane j with ``links_per_spine_core`` links.
    """

    tiers: Literal[0, 1, 2, 3] = Field(description="0 = a single node without a compute fabric.")
    switch: str = Field(description="Switch model of every tier ('none' without a fabric).")
    leaves: int = Field(ge=0)
    spines: int = Field(ge=0)
    cores: int = Field(ge=0)
    leaf_down_ports: int = Field(ge=0)
    leaf_up_ports: int = Field(ge=0)
    links_per_leaf_spine: int = Field(ge=0)
    pods: int = Field(ge=0)
    spines_per_pod: int = Field(ge=0)
    leaves_per_pod: int = Field(ge=0)
    cores_per_plane: int = Field(ge=0)
    spine_up_ports: int = Field(ge=0)
    links_per_spine_core: int = Field(ge=0)
    rail_optimized: bool
    leaves_per_rail: int = Field(ge=0, description="Leaves serving one rail (rail-optimized) or all leaves.")


class SwitchGroup(Record):
    tier: Tier
    model: str
    count: int = Field(ge=0)
    ports_used: int = Field(ge=0, description="Logical ports in use over all switches of the group.")


class LinkGroup(Record):
    between: LinkClass
    count: int = Field(ge=0, description="Logical links.")
    part: str
    assemblies: int = Field(ge=0, description="Cables or transceiver kits bought.")
    length_m: float
    gbps: int


class RackGroup(Record):
    rack_class: str = Field(alias="class")
    role: Literal["compute", "network", "storage", "mixed"] = Field(
        description="mixed = everything in one rack (small designs)."
    )
    count: int = Field(ge=0)
    nodes_per_rack: int = Field(ge=0)
    power_kw: float = Field(description="Power of the fullest rack of the group, kW.")


class StorageChoice(Record):
    tier: str
    units: int = Field(ge=1)
    read_gbps: float = Field(description="Delivered read bandwidth, Gb/s.")
    write_gbps: float
    capacity_tb: float


class Design(Record):
    server: str
    gpu: str
    nodes: int = Field(ge=1)
    gpus: int = Field(ge=1)
    interconnect: str
    nic: str
    nics_per_node: int = Field(ge=1)
    link_gbps: int
    tiers: Literal[0, 1, 2, 3]
    oversubscription: float
    rail_optimized: bool
    fabric: FabricShape
    switches: list[SwitchGroup]
    links: list[LinkGroup]
    racks: list[RackGroup]
    storage: StorageChoice
    parallelism: Parallelism


class CostLine(Record):
    category: Literal["server", "nic", "switch", "cable", "rack", "storage"]
    item: str
    quantity: int
    unit_price: float
    total: float
    source: str


class Cost(Record):
    basis: Literal["capex", "monthly_rent"]
    currency: str
    total: float
    breakdown: list[CostLine]


class ObjectiveValue(Record):
    kind: Literal["min_cost", "min_time", "min_job_cost"]
    value: float | None
    bound: float | None
    gap: float | None


class ConflictItem(Record):
    family: str
    description: str
    detail: str
    source: str = Field(description="Where in the instance the limit comes from (file:line field).")


class Relaxation(Record):
    family: str
    message: str
    value: float | None = None


class Explanation(Record):
    conflict: list[ConflictItem] = Field(default_factory=list)
    relaxations: list[Relaxation] = Field(default_factory=list)


class Violation(Record):
    """One broken rule found by the checker."""

    family: str
    item: str
    detail: str

    def __str__(self) -> str:
        return f"{self.family}: {self.item}: {self.detail}"


class Provenance(Record):
    topoopt_version: str
    ortools_version: str
    instance_sha256: str
    seed: int
    workers: int
    solve_time_s: float
    solves: int


class SolveResult(Record):
    schema_version: str = SCHEMA_VERSION
    status: Literal["optimal", "feasible", "infeasible", "unknown"]
    objective: ObjectiveValue
    design: Design | None = None
    cost: Cost | None = None
    performance: Performance | None = None
    binding: list[str] = Field(default_factory=list)
    explanation: Explanation | None = None
    provenance: Provenance | None = None
