"""Solver output: the design (counts, not devices), its cost, and explanations of "no"."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from topoopt.models.base import NoBoolean, Record
from topoopt.models.catalog import Price, PriceProvenance
from topoopt.models.performance import Parallelism, Performance

SCHEMA_VERSION = "1.9"

Network = Literal["compute", "storage", "management"]
Tier = Literal["leaf", "spine", "core", "storage-leaf", "storage-spine", "storage-core", "mgmt-leaf", "mgmt-aggregation"]
LinkClass = Literal[
    "node-leaf", "leaf-spine", "spine-core",  # compute fabric
    "node-storage", "storage-unit", "storage-leaf-spine", "storage-spine-core",  # storage network (storage-unit also when converged)
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
    network: Network = Field("compute", description="compute, storage or management.")
    tier: Tier = Field(description="Where the switches sit: leaf, spine, core, storage-leaf, … mgmt-aggregation.")
    model: str = Field(description="Switch id.")
    count: int = Field(ge=0, description="Switches of this model in this tier.")
    ports_used: int = Field(ge=0, description="Logical ports in use over all switches of the group.")


class LinkGroup(Record):
    network: Network = Field("compute", description="compute, storage or management.")
    between: LinkClass = Field(description="The link class: node-leaf, leaf-spine, … mgmt-uplink.")
    count: int = Field(ge=0, description="Logical links.")
    part: str = Field(description="Cable or transceiver-kit id.")
    assemblies: int = Field(ge=0, description="Cables or transceiver kits bought.")
    length_m: float = Field(description="Run length the part is chosen for, m.")
    gbps: int = Field(description="Speed of each link, Gb/s.")
    in_rack_part: str | None = Field(
        None, description="The part bought for the assemblies that run within one rack, when it is not `part` "
                          "(a 3 m DAC where `part` is a 30 m AOC).")
    in_rack_assemblies: int = Field(0, ge=0, description="Of `assemblies`, those bought as `in_rack_part`.")

    @property
    def bought(self) -> list[tuple[str, int]]:
        """``(part id, assemblies)`` bought: ``part`` for the assemblies not within one rack, then
        ``in_rack_part`` for the others."""
        rest = [(self.in_rack_part, self.in_rack_assemblies)] if self.in_rack_part is not None else []
        return [(self.part, self.assemblies - self.in_rack_assemblies), *rest]


class RackGroup(Record):
    rack_class: str = Field(alias="class")
    role: Literal["compute", "network", "storage", "mixed"] = Field(
        description="mixed = racks holding any mix of nodes, switches, storage units and head nodes (small designs); "
                    "network racks hold switches or head nodes."
    )
    count: int = Field(ge=0)
    nodes_per_rack: int = Field(ge=0)
    power_kw: float = Field(description="Power of the fullest rack of the group, kW.")
    holds: dict[str, int] = Field(
        default_factory=dict,
        description="Mixed racks: the switches, storage units and head nodes each rack of the group holds, by model id "
                    "(its nodes are nodes_per_rack); compute racks: the management leaves they hold, one in each of "
                    "that many racks; network or storage racks of one model each: the head nodes its last rack also "
                    "holds.")


class StorageChoice(Record):
    tier: str = Field(description="Storage tier id.")
    units: int = Field(ge=1, description="Units bought.")
    ports: int = Field(0, ge=0, description="Data-network ports over all units.")
    read_gbps: float = Field(description="Delivered read bandwidth, Gb/s.")
    write_gbps: float = Field(description="Delivered write bandwidth, Gb/s.")
    capacity_tb: float = Field(description="Usable capacity over all units, TB.")


class StorageNetwork(Record):
    """The path between the nodes and the storage units.

    dedicated: ``nics_per_node`` storage NICs per node, ``ports_per_node`` of their ports cabled,
    and the storage units on storage switches in 1, 2 or 3 tiers (leaves of ``leaf_down_ports``
    endpoint ports and ``leaf_up_ports`` uplinks, oversubscribed up to 8:1; 0 and 0 in records
    written before these fields: non-blocking, ``floor(k/2)`` each; 3 tiers: pods of
    ``floor(k/2) / links_per_leaf_spine`` leaves and ``leaf_up_ports / links_per_leaf_spine``
    spines, and ``cores`` in as many planes). converged: storage traffic rides the
    compute NICs and fabric (the performance model charges the contention) and the storage units
    sit on ``compute_storage_leaves`` extra leaves of the compute fabric (or on its single switch).
    """

    mode: Literal["dedicated", "converged"] = Field(description="Own NICs and switches, or the compute fabric.")
    nic: str | None = Field(description="Storage NIC id; None when converged.")
    nics_per_node: int = Field(ge=0, description="Storage NICs per node (0 when converged).")
    ports_per_node: int = Field(ge=1, description="Storage ports cabled per node (compute rails when converged).")
    link_gbps: int = Field(description="Speed of every storage-network port, Gb/s.")
    node_gbps: float = Field(description="Storage bandwidth of one node, Gb/s.")
    need_gbps: float = Field(description="Storage traffic all nodes together carry: max(read, checkpoint write), Gb/s.")
    switch: str | None = Field(description="Storage switch model; None when converged.")
    tiers: Annotated[Literal[0, 1, 2, 3], NoBoolean] = Field(description="Storage switch tiers; 0 when converged.")
    leaves: int = Field(ge=0, description="Storage leaf switches (dedicated).")
    spines: int = Field(ge=0, description="Storage spine switches (dedicated, 2 or 3 tiers).")
    cores: int = Field(0, ge=0, description="Storage core switches (dedicated, 3 tiers).")
    links_per_leaf_spine: int = Field(0, ge=0, description="3 tiers: links between a storage leaf and each "
                                      "spine of its pod (1 or 2); 0 otherwise.")
    leaf_down_ports: int = Field(0, ge=0, description="Endpoint ports of a storage leaf (dedicated, 2 or 3 tiers); "
                                 "0 = non-blocking floor(k/2) (records before this field).")
    leaf_up_ports: int = Field(0, ge=0, description="Uplinks of a storage leaf (dedicated, 2 or 3 tiers); "
                               "0 = non-blocking floor(k/2) (records before this field).")
    compute_storage_leaves: int = Field(ge=0, description="Compute-fabric leaves carrying storage units (converged).")
    converged_attach: Literal["leaves", "top"] = Field(
        "leaves", description="Converged, 2 or 3 tiers: storage units on their own leaves, or on free spine (2 tiers) or core (3 tiers) ports.")
    unit_ports: int = Field(ge=0, description="Storage-unit data ports attached (hot and cold tiers).")


class ManagementNetwork(Record):
    """One in-band port per node and storage unit plus the out-of-band ports of every node, data
    switch, storage unit and rack PDU, on management leaves (``leaf_down_ports`` device ports, 2 uplinks) and,
    past one leaf, pairs of aggregation switches (each pair takes up to the aggregation model's
    ports at ``uplink_gbps`` leaves)."""

    switch: str = Field(description="Management leaf switch id.")
    aggregation_switch: str | None = Field(
        None, description="Aggregation switch id; none with one leaf (records before schema 1.7: the leaves' model).")
    ports: int = Field(ge=0, description="Management ports served (in-band + out-of-band, rack PDUs included).")
    leaves: int = Field(ge=1, description="Management leaf switches.")
    aggregation: int = Field(ge=0, description="Aggregation switches (0 with one leaf).")
    leaf_down_ports: int = Field(ge=1, description="Device ports of a management leaf.")
    link_gbps: int = Field(description="Device-port speed, Gb/s.")
    uplink_gbps: int = Field(description="Leaf-to-aggregation speed, Gb/s.")


class HeadNodes(Record):
    model: str = Field(description="Head-node server id (catalog kind control, role head).")
    count: int = Field(ge=1, description="Head nodes bought (site.head_nodes).")


class Design(Record):
    """What to buy and how it is wired, as counts per choice (the installation itself, device by
    device, is generated from it by :func:`topoopt.fabric_graph`)."""

    server: str = Field(description="Server (node) id from the catalog.")
    gpu: str = Field(description="GPU id of the server.")
    nodes: int = Field(ge=1, description="GPU servers built.")
    gpus: int = Field(ge=1, description="GPUs in all: nodes × GPUs per node.")
    interconnect: str = Field(description="Compute interconnect id, e.g. ib-ndr or roce-400.")
    nic: str = Field(description="Compute NIC id.")
    nics_per_node: int = Field(ge=1, description="Compute NICs (rails) per node.")
    link_gbps: int = Field(description="Speed of a compute-fabric port, Gb/s.")
    tiers: Annotated[Literal[0, 1, 2, 3], NoBoolean] = Field(
        description="Compute fabric tiers: 0 (a single node, no switch), 1 (one switch layer), 2 (leaf/spine) "
                    "or 3 (leaf/spine/core).")
    oversubscription: float = Field(description="Leaf down:up port ratio of the compute fabric (1 = non-blocking).")
    rail_optimized: bool = Field(
        description="Rail group i of every node on leaf group i (2 or 3 tiers with several rail groups).")
    fabric: FabricShape = Field(description="The compute fabric's shape: switches per tier, ports and links.")
    switches: list[SwitchGroup] = Field(description="Switches bought, per model and tier, on all three networks.")
    links: list[LinkGroup] = Field(description="Links per class with the cable or transceiver kit for each.")
    racks: list[RackGroup] = Field(description="Racks per rack class and what they hold.")
    storage: StorageChoice = Field(description="The hot tier: data loading and recent checkpoints.")
    cold_storage: StorageChoice | None = Field(
        None, description="The cold tier (object store): archived checkpoints and raw data; None when nothing is archived."
    )
    storage_network: StorageNetwork = Field(description="How nodes reach storage: dedicated or converged.")
    management_network: ManagementNetwork = Field(description="In-band and out-of-band management ports and switches.")
    head_nodes: HeadNodes | None = Field(None, description="The cluster head (control-plane) nodes; None without.")
    parallelism: Parallelism = Field(description="The training layout the performance figures are for.")


class CostLine(Record):
    category: Literal["server", "nic", "switch", "cable", "rack", "storage"] = Field(description="Kind of item.")
    item: str = Field(description="Catalog id of what is bought.")
    quantity: int = Field(description="How many.")
    unit_price: float = Field(description="Price of one, in the cost's currency and basis.")
    total: float = Field(description="quantity × unit_price.")
    source: str = Field(description="Where the price comes from: the price book's source or an override.")
    provenance: PriceProvenance | Literal["unpriced"] = Field(
        description="How the unit price was obtained (quoted, estimate, derived), or unpriced.")
    offered: bool = Field(True, description="False: the price book's market does not offer the item "
                                            "(chosen only with catalog.include_not_offered).")

    @classmethod
    def priced(cls, category: str, item: str, quantity: int, unit_price: int, entry: Price | None,
               book_id: str) -> CostLine:
        """The line of ``quantity`` × ``item`` at ``unit_price`` (whole units), carrying the price
        entry's source, provenance and offer; ``entry`` None is an unpriced item."""
        if entry is None:
            return cls(category=category, item=item, quantity=quantity, unit_price=unit_price,
                       total=unit_price * quantity, source=f"no price in {book_id}", provenance="unpriced")
        return cls(category=category, item=item, quantity=quantity, unit_price=unit_price,
                   total=unit_price * quantity, source=entry.source, provenance=entry.provenance,
                   offered=entry.offered)


class TermUse(Record):
    months: int = Field(description="Length of the term in months.")
    count: int = Field(description="Consecutive terms of this length rented.")
    factor: float = Field(description="Rent per month on this term ÷ the monthly list rent.")


class Rental(Record):
    """What renting the design for its time to train costs under the price book's terms."""

    duration_days: float = Field(description="The design's time to train.")
    terms: list[TermUse] = Field(description="The cheapest whole terms that cover the duration; empty when the "
                                             "book has no terms and the job is billed pro rata.")
    billed_months: float = Field(description="Months of list rent billed: Σ count × months × factor, or the "
                                             "duration in months when billed pro rata.")
    total: float = Field(description="cost.total × billed_months, in the book's currency.")


class Ownership(Record):
    """A bought design's cost of ownership over the depreciation period: purchase, energy, facility."""

    months: int = Field(description="Ownership (depreciation) period.")
    it_power_kw: float = Field(description="Provisioned IT power of the design (site power), kW.")
    pue: float = Field(description="PUE of the design's racks: by each rack class's cooling, weighted by the IT power "
                                   "it holds.")
    energy_kwh: float = Field(description="it_power_kw × average_load × pue × 730.5 h × months.")
    energy_cost: float
    racks: int
    facility_cost: float = Field(description="racks × facility per rack per month × months.")
    total: float = Field(description="Purchase (cost.total) + energy_cost + facility_cost.")
    per_month: float = Field(description="total ÷ months.")


class Cost(Record):
    basis: Literal["capex", "monthly_rent"] = Field(description="Purchase price, or rent per month.")
    currency: str = Field(description="ISO currency code of every amount.")
    total: float = Field(description="The sum of the breakdown.")
    breakdown: list[CostLine] = Field(description="One line per item bought.")
    rental: Rental | None = Field(None, description="monthly_rent books: the rent of the whole job under the "
                                                    "book's terms; None for capex or without a performance.")
    ownership: Ownership | None = Field(None, description="capex books with site.operation: purchase, energy and "
                                                          "facility over the depreciation period; None otherwise.")


class ObjectiveValue(Record):
    kind: Literal["min_cost", "min_time", "min_job_cost"] = Field(description="The instance's goal.objective.")
    value: float | None = Field(description="The design's objective: cost, days to train, or job cost.")
    bound: float | None = Field(description="Proven bound on the best possible value.")
    gap: float | None = Field(description="|value - bound| / |value|; 0 when proven optimal.")


class ConflictItem(Record):
    family: str = Field(description="Constraint family id, e.g. budget_cap.")
    description: str = Field(description="The family's rule in one sentence.")
    detail: str = Field(description="The instance values behind it.")
    source: str = Field(description="Where in the instance the limit comes from (file:line field).")


class Relaxation(Record):
    family: str = Field(description="The constraint family relaxed.")
    message: str = Field(description="What it would take, in words.")
    value: float | None = Field(None, description="The relaxed limit that makes the instance feasible.")
    proven: bool = Field(True, description="See below: whether the value is proven the least change.")
    """Whether ``value`` is proven the smallest change that makes the instance feasible (False:
    the search stopped at its time limit; the value is enough, the least may be smaller), or,
    without a value, proven that relaxing this family alone is not enough."""
    edits: dict[str, int | float | list[str]] = Field(default_factory=dict)
    """Instance fields (dotted paths) and the values that, set together and all else kept, make the
    instance feasible, e.g. ``{"budget.max": 7156262}``; empty when the relaxation drops a rule."""


class Explanation(Record):
    conflict: list[ConflictItem] = Field(default_factory=list, description="Families that together admit no design.")
    minimal: bool = Field(True, description="Whether the conflict is proven minimal (see below).")
    """Whether the conflict is proven minimal (every member necessary). It is always proven
    infeasible; a deletion filter stopped by the explanation's time limit leaves it larger."""
    relaxations: list[Relaxation] = Field(default_factory=list, description="What would make the instance feasible.")
    precheck: str | None = Field(None, description="The reason in plain words when a pre-check settles it.")
    """The conflict's reason in plain words when a pre-check settles it (the deadline needs more
    nodes than the budget buys at the servers' prices alone); None otherwise."""


class Violation(Record):
    """One broken rule found by the checker."""

    family: str = Field(description="Constraint family id of the broken rule.")
    item: str = Field(description="What breaks it (a network, a rack class, a reported figure).")
    detail: str = Field(description="The numbers that show it.")

    def __str__(self) -> str:
        return f"{self.family}: {self.item}: {self.detail}"


class Provenance(Record):
    topoopt_version: str = Field(description="topoopt version that solved it.")
    ortools_version: str = Field(description="OR-Tools (CP-SAT) version.")
    instance_sha256: str = Field(description="SHA-256 of the validated instance as JSON.")
    seed: int = Field(description="CP-SAT random seed.")
    workers: int = Field(description="CP-SAT workers.")
    solve_time_s: float = Field(description="Wall-clock time of the solve, s.")
    solves: int = Field(description="CP-SAT solves run.")


class SolveResult(Record):
    """The answer to one instance, as written to ``design.json``."""

    schema_version: str = Field(SCHEMA_VERSION, description="Version of this format (major.minor).")
    status: Literal["optimal", "feasible", "infeasible", "unknown"] = Field(
        description="optimal: proven best; feasible: a design, its gap stated; infeasible: proven that none "
                    "exists (see explanation); unknown: none found within the limits.")
    objective: ObjectiveValue = Field(description="The objective, its value and proven bound.")
    design: Design | None = Field(None, description="The design; None when infeasible or unknown.")
    cost: Cost | None = Field(None, description="The design's cost, line by line, in the price book's terms.")
    performance: Performance | None = Field(None, description="Predicted training performance of the design.")
    binding: list[str] = Field(default_factory=list, description="Constraint families at their limit in the design.")
    explanation: Explanation | None = Field(
        None, description="Why no design exists: a conflict and the changes that would make it feasible.")
    provenance: Provenance | None = Field(None, description="Versions, instance hash, seed and solve statistics.")
