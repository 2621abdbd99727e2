"""The instance file: workload, goal, budget, site, catalog selection and constraints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from topoopt.models.base import NoBoolean, Range, Record
from topoopt.models.catalog import (
    ControlNode,
    Cooling,
    Gpu,
    Interconnect,
    LinkPart,
    ModelArchitecture,
    ModelPreset,
    Nic,
    Precision,
    PriceBook,
    RackClass,
    RentalTerm,
    Server,
    StorageTier,
    Switch,
)

Objective = Literal["min_cost", "min_time", "min_job_cost"]


MAX_ADDED_PER_KIND = 64
"""Most items an instance adds of one kind: a planner adds a few of its own SKUs (the built-in
catalog holds about 20 servers), and every added option widens the solver's tables."""
MAX_PRICE_OVERRIDES = 2_000
"""Most price overrides: more than every item of the built-in catalog and the additions together."""
MAX_IDS_PER_LIST = 1_000
"""Most ids in one allow/deny list."""


class PinnedParallelism(Record):
    """A parallel layout, pinned in whole or in part: a field left out is searched as under 'auto'
    (for the fastest layout that fits); tp x pp x dp GPUs are used."""

    tp: int | None = Field(None, ge=1, le=64, description="Tensor-parallel degree; None = searched.")
    pp: int | None = Field(None, ge=1, le=512, description="Pipeline-parallel degree; None = searched.")
    cp: int | None = Field(
        None, ge=1, le=64, description="Context-parallel degree (sequence split over ranks, ring attention); None = searched."
    )
    dp: Annotated[int, Range(1, 72_000_000, "every GPU of the largest cluster an instance describes "
                                            "(1,000,000 nodes of 72)")] | None = Field(
        None, description="Data-parallel degree; None = the best degree up to all remaining GPUs."
    )
    zero_stage: Annotated[Literal[0, 1, 2, 3], NoBoolean] | None = Field(
        None, description="ZeRO / FSDP sharding stage (1 = Megatron's distributed optimizer); None = searched."
    )
    microbatch: int | None = Field(None, ge=1, le=1024, description="Micro-batch size in sequences; None = searched.")
    virtual_stages: int | None = Field(
        None,
        ge=1,
        le=64,
        description="Interleaved pipeline chunks per stage (Megatron virtual pipeline); 1 = plain 1F1B; "
        "None = searched (values that divide the layers per stage).",
    )


class Training(Record):
    tokens: float = Field(gt=0, le=1e16, description="Tokens to train on.")
    sequence_length: int = Field(ge=1, le=1_048_576, description="Sequence length in tokens.")
    global_batch_sequences: int = Field(ge=1, le=1_000_000, description="Global batch in sequences.")
    precision: Precision = Field("bf16", description="Matmul precision.")
    optimizer: Literal["adamw", "adam", "sgd_momentum", "adafactor"] = Field(
        "adamw", description="Optimizer; sets the optimizer-state bytes per parameter."
    )
    parallelism: Literal["auto"] | PinnedParallelism = Field(
        "auto", description="'auto' lets topoopt pick TP/PP/DP/ZeRO/micro-batch; or pin them."
    )
    activation_recompute: Literal["auto", "none", "selective", "full"] = Field(
        "auto",
        description="Activation recomputation policy; 'auto' picks, per layout, the one giving the fastest "
        "step that fits.",
    )
    attention: Literal["flash", "materialized"] = Field(
        "flash",
        description="Attention kernel: fused FlashAttention-style (never stores the s x s scores) or "
        "materialized scores (softmax and dropout over heads x s x s elements per sequence and layer).",
    )
    tp_comm_overlap: bool = Field(
        False,
        description="The training stack overlaps the tensor-parallel collectives with the GEMMs they feed "
        "(Megatron-core/Transformer Engine --tp-comm-overlap, torchtitan AsyncTP); false plans with TP "
        "communication on the critical path.",
    )
    param_gather_overlap: bool = Field(
        False,
        description="With ZeRO stage 1 or 2, the stack all-gathers the updated weights during the next step's "
        "first forward pass (Megatron-core --overlap-param-gather); false plans with the all-gather on the "
        "critical path. ZeRO-3/FSDP prefetches its all-gathers whatever this says.",
    )


class Data(Record):
    bytes_per_token: float | None = Field(
        None, gt=0, le=1e9, description="Bytes read from storage per training token."
    )
    bytes_per_sample: float | None = Field(
        None, gt=0, le=1e12, description="Bytes read per sample (image/video); one sample = one sequence."
    )
    dataset_tb: float = Field(0, ge=0, le=1e6, description="Dataset size on the hot tier in TB.")
    archive_tb: float = Field(0, ge=0, le=1e7, description="Raw data archived on the cold tier in TB.")
    small_files: bool = Field(False, description="Many small files: needs a low-latency tier.")
    read_safety_factor: float = Field(2.0, ge=1, le=100, description="Headroom on the mean read rate.")

    @model_validator(mode="after")
    def _one_rate(self) -> Data:
        if self.bytes_per_token is not None and self.bytes_per_sample is not None:
            raise ValueError("give bytes_per_token or bytes_per_sample, not both")
        return self


class Checkpoint(Record):
    interval_hours: Annotated[float, Range(0.001, 10_000, "a checkpoint more often than every 3.6 s is no plan")] = Field(
        2.0, description="Hours between checkpoints.")
    keep: int = Field(3, ge=1, le=10_000, description="Checkpoints retained on the hot tier.")
    max_save_time_s: float = Field(120.0, gt=0, le=1e6, description="Longest acceptable blocking save.")
    archive_days: float = Field(
        0, ge=0, le=36_500,
        description="Checkpoints leaving the hot tier are kept this many days on the cold tier; 0 = not archived.",
    )


class Workload(Record):
    model: str | ModelArchitecture = Field(description="A catalog preset id (e.g. llama3-70b) or the architecture.")
    training: Training = Field(description="Tokens, sequence length, batch, precision and parallelism.")
    data: Data = Field(default_factory=Data, description="Training-data reads from storage.")
    checkpoint: Checkpoint = Field(default_factory=Checkpoint, description="Checkpoint cadence and size on storage.")


class Goal(Record):
    objective: Objective = Field(
        "min_cost",
        description="min_cost: cheapest design meeting the deadline; min_time: fastest within the budget; "
        "min_job_cost: cheapest whole training job (price x duration).",
    )
    deadline_days: float | None = Field(None, gt=0, le=36_500, description="Train within this many days.")


class Budget(Record):
    basis: Literal["capex", "monthly_rent"] = Field(
        description="capex: purchase price; monthly_rent: rent per month. Must match the price book."
    )
    currency: Literal["CNY", "USD", "EUR"] = Field(description="Currency; must match the price book.")
    max: float = Field(gt=0, le=1e13, description="Budget cap in whole currency units.")


class Distances(Record):
    in_rack_m: float = Field(3.0, gt=0, le=100, description="A cable between two devices of one rack, routing included.")
    in_row_m: float = Field(15.0, gt=0, le=1000, description="Node to an end-of-row switch.")
    across_rows_m: float = Field(50.0, gt=0, le=10_000, description="Switch to switch across rows.")
    slack_m: float = Field(2.0, ge=0, le=100, description="Added to every cable run between racks.")
    rack_width_m: float = Field(0.6, gt=0, le=10, description="Rack to rack along a row (a 600 mm rack; estimate): "
                                "with row_pitch_m, each cable's length in the schedule.")
    row_pitch_m: float = Field(2.4, gt=0, le=100, description="Row to row: a 1.2 m deep rack and a 1.2 m aisle "
                               "(estimate).")
    racks_per_row: int | None = Field(
        None, ge=1, le=100_000,
        description="Racks one row holds: a design with no more racks stands in one row, its switch-to-switch "
                    "links run in_row_m rather than across_rows_m; mixed racks are used only within one row. "
                    "None = only mixed racks (at most eight) share a row.")


class Operation(Record):
    """Running a bought cluster: what the ownership (TCO) figure of a capex design adds to the
    purchase over the hardware's depreciation period (docs/model.md, "Ownership")."""

    months: int = Field(ge=1, le=240, description="Ownership period in months: the hardware's depreciation period.")
    electricity_price_per_kwh: float = Field(gt=0, le=100, description="Electricity price per kWh, budget currency.")
    average_load: float = Field(gt=0, le=1, description="Average draw as a fraction of the provisioned IT power.")
    pue: dict[Cooling, Annotated[float, Field(ge=1, le=3)]] = Field(
        description="Power usage effectiveness (facility ÷ IT power) by rack cooling: air, rear_door, liquid.")
    facility_per_rack_per_month: float = Field(
        ge=0, le=1e7, description="Space, maintenance and staff per rack per month, budget currency.")

    @model_validator(mode="after")
    def _every_cooling_has_a_pue(self) -> Operation:
        missing = [c for c in ("air", "rear_door", "liquid") if c not in self.pue]
        if missing:
            raise ValueError(f"pue: give the PUE of every rack cooling; missing {', '.join(missing)}")
        return self


class Site(Record):
    max_racks: int = Field(ge=1, le=100_000, description="Most racks the site can give this cluster.")
    rack_classes: list[str] | None = Field(None, max_length=MAX_IDS_PER_LIST,
                                           description="Allowed rack class ids; None = all.")
    distances: Distances = Field(default_factory=Distances, description="Cable-run lengths used to pick media.")
    power_cap_kw: float | None = Field(None, gt=0, le=1e7, description="Site IT power cap in kW.")
    provision_fabric_for_nodes: int | None = Field(
        None, ge=1, le=131_072,
        description="Size the compute fabric's spine and core layers for this many nodes (growth: leaves are added "
                    "later without re-cabling the spines); None = sized for the nodes built.")
    head_nodes: int | None = Field(
        None, ge=0, le=64,
        description="Cluster head (control-plane) nodes, of the catalog's least-priced head model; None = 2 (a "
                    "workload-manager and provisioning pair in HA, as the DGX BasePOD and SuperPOD reference "
                    "architectures have) for more than one node when the catalog prices a head model, none for a "
                    "single node; 0 = none.")
    operation: Operation | None = Field(
        None, description="capex designs: energy, facility and depreciation period for the ownership (TCO) figure; "
                          "None = purchase price only.")


class CatalogAdditions(Record):
    gpus: list[Gpu] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra GPU SKUs.")
    servers: list[Server] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra GPU servers.")
    nics: list[Nic] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra NICs.")
    interconnects: list[Interconnect] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra interconnects.")
    switches: list[Switch] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra switches.")
    cables: list[LinkPart] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra cables / transceiver kits.")
    racks: list[RackClass] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra rack classes.")
    storage: list[StorageTier] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra storage tiers.")
    control: list[ControlNode] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND,
                                       description="Extra control-plane (head) servers.")
    models: list[ModelPreset] = Field(default_factory=list, max_length=MAX_ADDED_PER_KIND, description="Extra model presets.")


class CatalogSelection(Record):
    builtin: bool = Field(True, description="Start from the built-in catalog.")
    price_book: str | PriceBook = Field(
        description="A built-in price book id (cny-monthly-rent, usd-capex, usd-monthly-rent), a path to a price "
                    "book file (a .yaml/.yml path, relative to the instance file), or a price book inline."
    )
    add: CatalogAdditions = Field(default_factory=CatalogAdditions, description="Own SKUs (same id replaces).")
    prices: dict[str, Annotated[float, Field(ge=0, le=1e12)]] = Field(
        default_factory=dict, max_length=MAX_PRICE_OVERRIDES,
        description="Price overrides by item id, in the price book's currency and basis.")
    terms: list[RentalTerm] | None = Field(
        None, description="Rental terms replacing the price book's (e.g. a negotiated contract): each {months, "
                          "factor, source}; [] bills pro rata. Unset: the book's own terms.",
    )
    include_not_offered: bool = Field(
        False, description="Also design with the items the price book marks as not offered by its market, at "
                           "their derived or estimated prices (flagged in the answer); false = only what the "
                           "market offers.",
    )


class AllowDeny(Record):
    allow: list[str] | None = Field(None, max_length=MAX_IDS_PER_LIST, description="Only these ids; None = all.")
    deny: list[str] = Field(default_factory=list, max_length=MAX_IDS_PER_LIST, description="Never these ids.")

    def admits(self, item_id: str) -> bool:
        return (self.allow is None or item_id in self.allow) and item_id not in self.deny


class Pins(Record):
    """Fix any decision; unset = free."""

    gpu: str | None = Field(None, description="GPU id.")
    server: str | None = Field(None, description="Server (node) id.")
    nodes: int | None = Field(None, ge=1, le=1_000_000, description="Number of GPU servers.")
    interconnect: str | None = Field(None, description="Compute interconnect id, e.g. ib-ndr or roce-400.")
    nic: str | None = Field(None, description="Compute NIC id.")
    nics_per_node: int | None = Field(None, ge=1, le=16, description="Compute NICs (rails) per node.")
    tiers: Annotated[Literal[1, 2, 3], NoBoolean] | None = Field(
        None, description="Fabric tiers: 1 switch, 2 leaf/spine, 3 leaf/spine/core."
    )
    leaf_switch: str | None = Field(None, description="Leaf switch id.")
    rack_class: str | None = Field(None, description="Rack class id of the nodes' racks (compute or mixed racks).")
    storage: str | None = Field(None, description="Hot storage tier id.")
    cold_storage: str | None = Field(None, description="Cold storage tier id.")
    storage_network: Literal["dedicated", "converged"] | None = Field(
        None, description="dedicated: storage NICs and switches; converged: storage shares the compute fabric."
    )
    storage_nic: str | None = Field(None, description="Storage NIC id (dedicated storage network).")
    storage_ports_per_node: int | None = Field(
        None, ge=1, le=64, description="Storage ports cabled per node (dedicated storage network)."
    )
    management_switch: str | None = Field(None, description="Management leaf switch id (their aggregation pairs may be another model).")


class Constraints(Record):
    gpus: AllowDeny = Field(default_factory=AllowDeny, description="GPU ids allowed / denied.")
    servers: AllowDeny = Field(default_factory=AllowDeny, description="Server ids allowed / denied.")
    interconnects: AllowDeny = Field(default_factory=AllowDeny, description="Interconnect ids allowed / denied.")
    switches: AllowDeny = Field(default_factory=AllowDeny, description="Switch ids allowed / denied.")
    cables: AllowDeny = Field(default_factory=AllowDeny, description="Cable / transceiver ids allowed / denied.")
    storage: AllowDeny = Field(default_factory=AllowDeny, description="Storage tier ids (hot and cold) allowed / denied.")
    storage_nics: AllowDeny = Field(default_factory=AllowDeny, description="Storage NIC ids allowed / denied.")
    max_oversubscription: float = Field(1.0, ge=1, le=16, description="Leaf down:up port ratio cap.")
    allow_rail_only: bool = Field(
        False, description="Allow rail-only fabrics (one switch per rail group, none joining them: cross-rail "
                           "traffic rides the scale-up link first).")
    pins: Pins = Field(default_factory=Pins, description="Decisions fixed in advance.")


class Instance(Record):
    """A topoopt instance file."""

    schema_: str | None = Field(None, alias="$schema", description="JSON Schema URL for editors.")
    name: str = Field(min_length=1, max_length=200, description="Short name, shown in reports.")
    description: str = Field("", description="Free text for people reading the file.")
    workload: Workload = Field(description="The model and how it is trained.")
    goal: Goal = Field(default_factory=Goal, description="What to optimise and the deadline.")
    budget: Budget = Field(description="The spending cap, in the price book's currency and basis.")
    site: Site = Field(description="Racks, rack classes, power and distances at the site.")
    catalog: CatalogSelection = Field(description="Which catalog and price book to design from.")
    constraints: Constraints = Field(
        default_factory=Constraints, description="Allow/deny lists, oversubscription cap and pins."
    )

    def with_changes(self, changes: Mapping[str, Any] | None = None, /, **fields: Any) -> Instance:
        """A validated variant of this instance: each ``"dotted.path": value`` of ``changes`` (paths
        as messages spell them, ``[i]`` for a list item) and each top-level ``field=value`` set, then
        the whole checked as the loader checks a file (schema, strings, catalog references).

        Raises :class:`topoopt.InputError` (``field.path: message`` lines) for a path that names no
        field or a variant that is not valid.

        Examples
        --------
        >>> import topoopt
        >>> base = topoopt.load_instance("instances/llama2-7b-finetune-8gpu.yaml").instance
        >>> variant = base.with_changes({"budget.max": 300000.0, "goal.deadline_days": 2}, name="two-days")
        >>> variant.name, variant.budget.max, variant.goal.deadline_days
        ('two-days', 300000.0, 2.0)
        >>> base.with_changes({"workload.training.tokens": -1e9})
        Traceback (most recent call last):
        ...
        topoopt.safe_yaml.InputError: workload.training.tokens: Input should be greater than 0, got -1000000000.0
        """
        from topoopt.loader import validate_instance
        from topoopt.safe_yaml import InputError, as_path

        data = self.model_dump(by_alias=True, exclude_unset=True)
        for path, value in [*(changes or {}).items(), *fields.items()]:
            parts = as_path(path)
            if not parts:
                raise InputError([f"{path!r}: not a field path (write e.g. 'budget.max')"])
            container: Any = data
            for step, part in enumerate(parts[:-1]):
                nxt = parts[step + 1]
                if isinstance(container, dict) and isinstance(part, str):
                    container = container.setdefault(part, [] if isinstance(nxt, int) else {})
                elif isinstance(container, list) and isinstance(part, int) and part < len(container):
                    container = container[part]
                else:
                    raise InputError([f"{path}: no such field or item to change"])
            last = parts[-1]
            if isinstance(container, dict) and isinstance(last, str):
                container[last] = value
            elif isinstance(container, list) and isinstance(last, int) and last <= len(container):
                container[last:last + 1] = [value]
            else:
                raise InputError([f"{path}: no such field or item to change"])
        return validate_instance(data)


__all__ = ["Instance", "ModelArchitecture", "ModelPreset"]
