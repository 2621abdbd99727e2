"""Solver output: the design (counts, not devices), its cost, and explanations of "no"."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from topoopt.models.base import NoBoolean, Record
from topoopt.models.performance import Parallelism, Performance

SCHEMA_VERSION = "1.5"

Network = Literal["compute", "storage", "management"]
Tier = Literal["leaf", "spine", "core", "storage-leaf", "storage-spine", "mgmt-leaf", "mgmt-aggregation"]
LinkClass = Literal[
    "node-leaf", "leaf-spine", "spine-core",  # compute fabric
    "node-storage", "storage-unit", "storage-leaf-spine",  # storage network (storage-unit also when converged)
    "mgmt", "mgmt-uplink",  # management network
]


class FabricShape(Record):
    """The folded-Clos shape the counts come from (docs/model.md, "Fabric").

    A leaf carries ``rails_per_leaf`` rails of whole nodes; ``leaf_down_ports`` are the down-ports
    in use on the fullest leaf and ``leaf_up_ports`` its uplinks; every leaf reaches every spine of
    its pod with ``links_per_leaf_spine`` links (2 tiers near-balanced, when the spines do not
    divide the uplinks: ``leaf_up_ports mod spines`` of a leaf's pairs carry one link more); in 3 tiers, spine j of every pod reaches every core
    of plane j with ``links_per_spine_core`` links. In 1 tier there is one switch per rail group
    (``rail_only`` when there are several).
    """

    tiers: Annotated[Literal[0, 1, 2, 3], NoBoolean] = Field(description="0 = a single node without a compute fabric.")
    switch: str = Field(description="Switch model of every tier ('none' without a fabric).")
    leaves: int = Field(ge=0)
    spines: int = Field(ge=0)
    cores: int = Field(ge=0)
    leaf_down_ports: int = Field(ge=0, description="Down-ports in use on the fullest leaf.")
    leaf_up_ports: int = Field(ge=0)
    links_per_leaf_spine: int = Field(ge=0, description="Links of a leaf–spine pair; 2 tiers: floor(uplinks / spines), "
                                      "some pairs one more when the spines do not divide the uplinks.")
    pods: int = Field(ge=0)
    spines_per_pod: int = Field(ge=0)
    leaves_per_pod: int = Field(ge=0)
    cores_per_plane: int = Field(ge=0)
    spine_up_ports: int = Field(ge=0)
    links_per_spine_core: int = Field(ge=0)
    rail_optimized: bool = Field(description="2 or 3 tiers with several rail groups: rail group i of every node on leaf group i.")
    leaves_per_rail: int = Field(ge=0, description="Leaves serving one rail group.")
    rails_per_leaf: int = Field(1, ge=1, description="Rails of a node one leaf (or 1-tier switch) carries.")
    rail_only: bool = Field(False, description="1 tier with several rail groups: one switch per group, none joining them.")
    provisioned_nodes: int = Field(0, ge=0, description="Nodes the spine and core layers are sized for (growth); 0 = the nodes built.")


class SwitchGroup(Record):
    network: Network = "compute"
    tier: Tier
    model: str
    count: int = Field(ge=0)
    ports_used: int = Field(ge=0, description="Logical ports in use over all switches of the group.")


class LinkGroup(Record):
    network: Network = "compute"
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
    ports: int = Field(0, ge=0, description="Data-network ports over all units.")
    read_gbps: float = Field(description="Delivered read bandwidth, Gb/s.")
    write_gbps: float
    capacity_tb: float


class StorageNetwork(Record):
    """The path between the nodes and the storage units.

    dedicated: ``nics_per_node`` storage NICs per node, ``ports_per_node`` of their ports cabled,
    and the storage units on storage switches in 1 tier or 2 (leaves of ``leaf_down_ports``
    endpoint ports and ``leaf_up_ports`` uplinks, oversubscribed up to 8:1; 0 and 0 in records
    written before these fields: non-blocking, ``floor(k/2)`` each). converged: storage traffic rides the
    compute NICs and fabric (the performance model charges the contention) and the storage units
    sit on ``compute_storage_leaves`` extra leaves of the compute fabric (or on its single switch).
    """

    mode: Literal["dedicated", "converged"]
    nic: str | None = Field(description="Storage NIC id; None when converged.")
    nics_per_node: int = Field(ge=0)
    ports_per_node: int = Field(ge=1, description="Storage ports cabled per node (compute rails when converged).")
    link_gbps: int = Field(description="Speed of every storage-network port, Gb/s.")
    node_gbps: float = Field(description="Storage bandwidth of one node, Gb/s.")
    need_gbps: float = Field(description="Storage traffic all nodes together carry: max(read, checkpoint write), Gb/s.")
    switch: str | None = Field(description="Storage switch model; None when converged.")
    tiers: Annotated[Literal[0, 1, 2], NoBoolean] = Field(description="Storage switch tiers; 0 when converged.")
    leaves: int = Field(ge=0, description="Storage leaf switches (dedicated).")
    spines: int = Field(ge=0, description="Storage spine switches (dedicated, 2 tiers).")
    leaf_down_ports: int = Field(0, ge=0, description="Endpoint ports of a storage leaf (dedicated, 2 tiers); "
                                 "0 = non-blocking floor(k/2) (records before this field).")
    leaf_up_ports: int = Field(0, ge=0, description="Uplinks of a storage leaf (dedicated, 2 tiers); "
                               "0 = non-blocking floor(k/2) (records before this field).")
    compute_storage_leaves: int = Field(ge=0, description="Compute-fabric leaves carrying storage units (converged).")
    converged_attach: Literal["leaves", "top"] = Field(
        "leaves", description="Converged, 2 or 3 tiers: storage units on their own leaves, or on free spine (2 tiers) or core (3 tiers) ports.")
    unit_ports: int = Field(ge=0, description="Storage-unit data ports attached (hot and cold tiers).")


class ManagementNetwork(Record):
    """One in-band port per node, switch and storage unit plus their out-of-band ports, on
    management leaves (``leaf_down_ports`` device ports, 2 uplinks) and, past one leaf, pairs of
    aggregation switches of the same model (each pair takes up to ``radix`` leaves)."""

    switch: str
    ports: int = Field(ge=0, description="Management ports served (in-band + out-of-band).")
    leaves: int = Field(ge=1)
    aggregation: int = Field(ge=0)
    leaf_down_ports: int = Field(ge=1)
    link_gbps: int = Field(description="Device-port speed, Gb/s.")
    uplink_gbps: int = Field(description="Leaf-to-aggregation speed, Gb/s.")


class Design(Record):
    server: str
    gpu: str
    nodes: int = Field(ge=1)
    gpus: int = Field(ge=1)
    interconnect: str
    nic: str
    nics_per_node: int = Field(ge=1)
    link_gbps: int
    tiers: Annotated[Literal[0, 1, 2, 3], NoBoolean]
    oversubscription: float
    rail_optimized: bool
    fabric: FabricShape
    switches: list[SwitchGroup]
    links: list[LinkGroup]
    racks: list[RackGroup]
    storage: StorageChoice = Field(description="The hot tier: data loading and recent checkpoints.")
    cold_storage: StorageChoice | None = Field(
        None, description="The cold tier (object store): archived checkpoints and raw data; None when nothing is archived."
    )
    storage_network: StorageNetwork
    management_network: ManagementNetwork
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
    proven: bool = True
    """Whether ``value`` is proven the smallest change that makes the instance feasible (False:
    the search stopped at its time limit; the value is enough, the least may be smaller), or,
    without a value, proven that relaxing this family alone is not enough."""
    edits: dict[str, int | float | list[str]] = Field(default_factory=dict)
    """Instance fields (dotted paths) and the values that, set together and all else kept, make the
    instance feasible, e.g. ``{"budget.max": 7156262}``; empty when the relaxation drops a rule."""


class Explanation(Record):
    conflict: list[ConflictItem] = Field(default_factory=list)
    minimal: bool = True
    """Whether the conflict is proven minimal (every member necessary). It is always proven
    infeasible; a deletion filter stopped by the explanation's time limit leaves it larger."""
    relaxations: list[Relaxation] = Field(default_factory=list)
    precheck: str | None = None
    """The conflict's reason in plain words when a pre-check settles it (the deadline needs more
    nodes than the budget buys at the servers' prices alone); None otherwise."""


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
