"""Catalog item types: hardware, price books and model presets.

Every item carries ``source``: a URL, or ``"estimate: <reason>"`` when no published figure exists.
Bandwidths of memory and scale-up links are in GB/s (bytes); network speeds are in Gb/s (bits).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from topoopt.models.base import Range, Record

MAX_ID_CHARS = 64
"""Longest catalog id: ids are repeated in every row of the cable schedule and the NetBox files."""
MAX_NAME_CHARS = 200
"""Longest product name (the built-in ones are under 80 characters)."""

# Sanity bounds: far above every product in the built-in catalog, low enough that each option
# table and the parallelism search stay small. The reason is part of the message.
FASTEST_PORT = Range(0, 1600, "1.6 Tb/s is the fastest port speed standardised (IEEE 802.3dj)", lo_open=True)
GPU_RATE = Range(0, 100_000, "over ten times every GPU in the catalog (B200: 8,000 GB/s HBM, 4,500 "
                 "dense FP8 TFLOP/s, 900 GB/s NVLink)", lo_open=True)
MODEL_WIDTH = Range(1, 262_144, "16 times the widest published dense model (Llama 3.1 405B: hidden size 16,384, "
                    "FFN 53,248)")
STORAGE_RATE = Range(0, 10_000, "100 times the fastest storage unit in the catalog (100 GB/s)", lo_open=True)
MODEL_HEADS = Range(1, 16_384, "128 times the most heads of a published model (Llama 3.1 405B: 128)")

Protocol = Literal["ib", "roce", "tcp"]
Precision = Literal["bf16", "fp16", "fp8"]
Cooling = Literal["air", "rear_door", "liquid"]
Media = Literal["dac", "acc", "aoc", "mmf", "smf", "utp"]
"""dac/acc: passive/active copper twinax; aoc: active optical; mmf/smf: transceivers over multimode /
single-mode fibre; utp: twisted-pair copper patch cord (RJ45, Cat6/Cat6a)."""

ONE_PIECE_MEDIA = ("dac", "acc", "aoc")
"""Media sold as one piece end to end (the others are modules cabled with separate fibre or cord)."""
LatencyClass = Literal["low", "medium", "high"]
StorageKind = Literal["nvme_of", "parallel_fs", "object", "nfs"]

SOURCE_DESCRIPTION = "Where the numbers come from: a URL, or 'estimate: <reason>'."


class Sourced(Record):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=MAX_ID_CHARS,
                    description="Stable catalog id (lower case).")
    name: str = Field(max_length=MAX_NAME_CHARS, description="Human-readable product name.")
    source: str = Field(min_length=5, description=SOURCE_DESCRIPTION)

    @field_validator("source")
    @classmethod
    def _source_is_url_or_estimate(cls, value: str) -> str:
        if not (value.startswith(("http://", "https://", "estimate:"))):
            raise ValueError("source must be a URL or start with 'estimate:'")
        return value


class Gpu(Sourced):
    """A GPU SKU. TFLOPS are dense (never 2:4 sparse)."""

    vendor: Literal["nvidia", "amd"] = Field(description="GPU vendor.")
    memory_gb: float = Field(gt=0, le=1024, description="Device memory in GB.")
    memory_bandwidth_gb_per_s: Annotated[float, GPU_RATE] = Field(description="HBM/GDDR bandwidth in GB/s.")
    dense_tflops: dict[Precision, Annotated[float, GPU_RATE]] = Field(
        description="Dense tensor-core peak per precision in TFLOPS; a missing key means unsupported."
    )
    matmul_efficiency: float = Field(
        gt=0, le=1, description="Best measured GEMM throughput as a fraction of dense BF16/FP16 peak."
    )
    matmul_efficiency_source: str = Field(min_length=5, description=SOURCE_DESCRIPTION)
    matmul_efficiency_fp8: float | None = Field(
        None, gt=0, le=1,
        description="Best measured FP8 GEMM throughput as a fraction of the dense FP8 peak; None: not measured "
                    "(the model then takes matmul_efficiency times the H100's FP8/BF16 ratio).")
    matmul_efficiency_fp8_source: str | None = Field(None, min_length=5, description=SOURCE_DESCRIPTION)
    tdp_w: float = Field(gt=0, le=5000, description="Board power in W.")
    scale_up_gb_per_s: Annotated[float, Range(0, 100_000, GPU_RATE.why)] = Field(
        description="Scale-up (NVLink/xGMI/PCIe) bandwidth per GPU, one direction, GB/s."
    )
    scale_up_domain_gpus: Annotated[int, Range(1, 576, "the largest NVLink domain announced is 576 GPUs "
                                                   "(NVIDIA Vera Rubin Ultra NVL576, GTC 2025)")] = Field(
        description="GPUs reachable over the scale-up link.")

    @model_validator(mode="after")
    def _fp8_efficiency_is_sourced(self) -> Gpu:
        if (self.matmul_efficiency_fp8 is None) != (self.matmul_efficiency_fp8_source is None):
            raise ValueError("matmul_efficiency_fp8 and matmul_efficiency_fp8_source go together")
        if self.matmul_efficiency_fp8 is not None and "fp8" not in self.dense_tflops:
            raise ValueError("matmul_efficiency_fp8 given for a GPU without an fp8 peak in dense_tflops")
        return self


class BuiltinNics(Record):
    nic: str = Field(description="NIC id built into the server.")
    count: int = Field(ge=1, le=16, description="Number of such NICs (rails).")


class Server(Sourced):
    """A GPU server (node). Power is the vendor's maximum, in W."""

    gpu: str = Field(description="GPU id.")
    gpus_per_node: int = Field(ge=1, le=72, description="GPUs in one server.")
    power_w: float = Field(gt=0, le=150_000, description="Maximum node power in W, NICs included.")
    rack_units: int = Field(ge=1, le=52, description="Height in rack units (U).")
    cooling: Literal["air", "liquid"] = Field(
        "air", description="How the server is cooled: air (fans) or liquid (direct liquid cooling).")
    builtin_compute_nics: BuiltinNics | None = Field(
        None, description="Compute NICs that come with the server (e.g. DGX); None = choose from nic_options."
    )
    nic_options: list[str] = Field(default_factory=list, description="NIC ids that fit the server's slots.")
    max_compute_nics: int = Field(ge=1, le=16, description="Most compute NICs (rails) the server takes.")
    compute_port_form_factor: str | None = Field(
        None, description="Cage form factor at the node when the server has its own cages (DGX twin-port OSFP)."
    )
    compute_ports_per_cage: int = Field(1, ge=1, le=4, description="Logical compute ports per node cage.")
    builtin_storage_nics: BuiltinNics | None = Field(
        None, description="Storage NICs that come with the server (e.g. DGX: 2 dual-port ConnectX-7); "
        "None = choose from storage_nic_options."
    )
    storage_nic_options: list[str] = Field(
        default_factory=list, description="NIC ids that fit the server's free slots as storage NICs."
    )
    max_storage_nics: int = Field(0, ge=0, le=8, description="Most storage NICs the server's free slots take.")
    storage_ports_max: int | None = Field(
        None, ge=1, le=64, description="Most storage-NIC ports cabled to a dedicated storage network (DGX: the "
        "reference architecture gives the others to in-band management); None = every port of its storage NICs."
    )
    oob_ports: int = Field(1, ge=0, le=4, description="Out-of-band (BMC) management ports, besides the in-band one.")


class Nic(Sourced):
    """A network adapter (HCA/NIC/DPU). As a compute NIC one port is used per rail; as a storage
    NIC all ``ports`` are used."""

    port_form_factor: str = Field(description="Cage form factor, e.g. qsfp56, qsfp112, osfp-flat.")
    ports: int = Field(1, ge=1, le=4, description="Network ports (cages) on the adapter.")
    interconnects: list[str] = Field(min_length=1, description="Interconnect ids the NIC can run.")
    power_w: float = Field(ge=0, le=200, description="Adapter power in W, without optics.")


class Interconnect(Sourced):
    """A link technology at one speed (e.g. ib-ndr = InfiniBand 400 Gb/s)."""

    protocol: Protocol = Field(description="ib (InfiniBand), roce (RDMA over Ethernet) or tcp (plain Ethernet).")
    gbps: int = Field(gt=0, le=1600, description="Line rate of one logical port in Gb/s.")
    bus_efficiency: float = Field(
        gt=0, le=1, description="Measured all-reduce bus bandwidth as a fraction of line rate at scale."
    )
    latency_us: Annotated[float, Range(0, 10_000, "10 ms per hop is no data-centre fabric", lo_open=True)] = Field(
        description="Per-message latency (alpha) per fabric hop, microseconds.")


class Switch(Sourced):
    """A fixed-configuration switch. Logical radix at speed g = cages x ports_per_cage[g]."""

    protocols: list[Literal["ib", "ethernet"]] = Field(min_length=1, description="Link protocols the switch runs.")
    cages: int = Field(ge=1, le=512, description="Front-panel cages (physical ports).")
    cage_form_factor: str = Field(description="Cage form factor, e.g. qsfp56, qsfp112, osfp.")
    ports_per_cage: dict[Annotated[int, FASTEST_PORT],
                         Annotated[int, Range(1, 8, "a cage has at most 8 electrical lanes (OSFP, QSFP-DD)")]] = Field(
        description="Logical ports per cage at each speed in Gb/s."
    )
    power_w: float = Field(gt=0, le=20_000, description="Switch power without optics, W.")
    rack_units: int = Field(ge=1, le=52, description="Height in rack units (U).")
    cooling: Literal["air", "liquid"] = Field("air", description="How the switch is cooled.")
    role: Literal["compute", "management"] = Field(
        "compute", description="compute: data fabrics (compute and storage networks); management: management network."
    )
    oob_ports: int = Field(1, ge=0, le=4, description=(
        "Management (RJ45) ports: a switch is managed through them (in band over its data ports, which "
        "need no cable of their own); e.g. one 1G RJ45 port on the QM9700 "
        "(https://docs.nvidia.com/networking/display/QM97X0PUB/Interfaces)."))
    uplink_cages: int = Field(0, ge=0, le=16, description=(
        "Management switches only: cages for uplinks besides the device cages (e.g. 4 x QSFP28 beside "
        "48 x RJ45 on the SN2201); 0 when the uplinks take two of the device cages."))
    uplink_cage_form_factor: str | None = Field(None, description="Form factor of the uplink cages.")
    uplink_ports_per_cage: dict[Annotated[int, FASTEST_PORT], Annotated[int, Range(1, 8, "a cage has at most 8 lanes")]] | None = Field(
        None, description="Logical ports per uplink cage at each speed in Gb/s.")

    @field_validator("ports_per_cage", "uplink_ports_per_cage", mode="before")
    @classmethod
    def _speed_keys_as_numbers(cls, value):
        """Instance files quote mapping keys ("400": 2); speeds are integers in Gb/s."""
        if isinstance(value, dict):
            return {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _uplink_cages_complete(self) -> Switch:
        given = [self.uplink_cages > 0, self.uplink_cage_form_factor is not None, bool(self.uplink_ports_per_cage)]
        if any(given) and not all(given):
            raise ValueError("uplink_cages, uplink_cage_form_factor and uplink_ports_per_cage go together")
        if self.uplink_cages and self.role != "management":
            raise ValueError("uplink cages are for management switches (role: management)")
        return self

    def radix(self, gbps: int) -> int:
        """Logical ports at ``gbps``; 0 when the switch cannot run that speed."""
        return self.cages * self.ports_per_cage.get(gbps, 0)

    def uplink_radix(self, gbps: int) -> int:
        """Logical ports of the uplink cages at ``gbps``."""
        return self.uplink_cages * (self.uplink_ports_per_cage or {}).get(gbps, 0)


class LinkPart(Sourced):
    """A cable assembly or a transceiver kit (modules + fibre), priced per assembly.

    End *a* plugs into the upper device of a link (leaf for node links, spine, core);
    end *b* into the lower one (node, leaf, spine). One assembly carries ``links`` logical links
    and occupies ``a_ends`` cages at the upper device and ``b_ends`` cages at the lower one.
    """

    media: Media = Field(description="dac/acc: copper twinax; aoc: active optical; mmf/smf: transceivers over "
                                     "multimode/single-mode fibre; utp: twisted pair.")
    gbps: Annotated[int, FASTEST_PORT] = Field(description="Speed of each logical link in Gb/s.")
    links: int = Field(1, ge=1, le=8, description="Logical links per assembly.")
    a_form_factor: str = Field(description="Form factor of end a (the upper device's cage).")
    a_ends: int = Field(1, ge=1, le=8, description="Cages end a occupies on the upper device.")
    b_form_factor: str = Field(description="Form factor of end b (the lower device's cage).")
    b_ends: int = Field(1, ge=1, le=8, description="Cages end b occupies on the lower device(s).")
    max_reach_m: float = Field(gt=0, le=10_000, description="Longest run the assembly spans, m.")
    power_w_per_a_end: float = Field(ge=0, le=50, description="Power of the module at each a end, W (0 for passive).")
    power_w_per_b_end: float = Field(ge=0, le=50, description="Power of the module at each b end, W (0 for passive).")
    components: str = Field("", description="What one assembly consists of (for the BOM).")
    links_per_fibre: int | None = Field(
        None, ge=1, le=8,
        description="Kits only: links that share one fibre or cord, and so reach one far device (default 1, "
                    "every module port on its own fibre; e.g. 2 when one MPO-16 fibre carries both 200G "
                    "links of a QSFP-DD SR8 module).")

    @field_validator("links_per_fibre")
    @classmethod
    def _fibre_divides_links(cls, value: int | None, info) -> int | None:
        links = info.data.get("links")
        if value is not None and links is not None and links % value:
            raise ValueError(f"links_per_fibre {value} must divide links {links}")
        return value

    @property
    def one_piece(self) -> bool:
        """A cable whose ends are fixed to it (DAC, ACC, AOC, splitters included): all its links
        run between the devices its ends plug into. Otherwise the part is a transceiver kit
        (modules + separate fibres or patch cords): each fibre is cabled on its own, so one
        module's ports may reach different far devices, and kits are counted by cages filled."""
        return self.media in ONE_PIECE_MEDIA

    @property
    def links_together(self) -> int:
        """Links that must reach one far device: all of a one-piece cable's, a kit's per fibre."""
        if self.one_piece:
            return self.links
        return self.links_per_fibre or 1


class RackClass(Sourced):
    power_kw: float = Field(gt=0, le=500, description="Power the rack can supply (and cool), kW.")
    rack_units: int = Field(ge=1, le=60, description="Usable height in rack units (U).")
    cooling: Cooling = Field(description="How the rack is cooled: air, rear_door or liquid.")
    pdus: int = Field(2, ge=0, le=8, description=(
        "Rack PDUs, zero-U, each managed over one 1G RJ45 port on the management network "
        "(estimate: two per rack, one per power feed; a metered zero-U PDU: "
        "https://raw.githubusercontent.com/netbox-community/devicetype-library/master/device-types/APC/AP7830.yaml). "
        "Their price is in the rack's."))


class StorageTier(Sourced):
    """A storage building block; bandwidths per unit in GB/s."""

    kind: StorageKind = Field(description="nvme_of, parallel_fs, object or nfs.")
    capacity_tb: Annotated[float, Range(0, 100_000, "100 PB in one unit is over 100 times the largest in the "
                                                    "catalog (900 TB)", lo_open=True)] = Field(
        description="Usable capacity of one unit, TB.")
    read_gb_per_s: Annotated[float, STORAGE_RATE] = Field(description="Read bandwidth of one unit, GB/s.")
    write_gb_per_s: Annotated[float, STORAGE_RATE] = Field(description="Write bandwidth of one unit, GB/s.")
    latency_class: LatencyClass = Field(description="low, medium or high; data.small_files needs a low tier.")
    power_w: Annotated[float, Range(0, 100_000, "100 kW is more than a whole rack", lo_open=True)] = Field(
        description="Power of one unit, W.")
    rack_units: int = Field(ge=1, le=52, description="Height in rack units (U).")
    cooling: Literal["air", "liquid"] = Field("air", description="How a storage unit is cooled.")
    network_ports: int = Field(ge=1, le=64, description="Data-network ports per unit.")
    port_speeds_gbps: list[Annotated[int, FASTEST_PORT]] = Field(
        min_length=1, description="Speeds (Gb/s) the unit's data ports run."
    )
    port_form_factor: str = Field(description="Cage form factor of the unit's data ports.")
    protocols: list[Literal["ib", "ethernet"]] = Field(min_length=1, description="Protocols of the data ports.")
    oob_ports: int = Field(1, ge=0, le=4, description="Out-of-band management ports, besides the in-band one.")


class ControlNode(Sourced):
    """A control-plane server: a cluster head node (workload manager, provisioning, monitoring).
    It holds no GPU, takes rack units, power and management ports like a node, and is bought
    per design (``site.head_nodes``)."""

    role: Literal["head"] = Field("head", description="head: cluster management (head) node.")
    power_w: Annotated[float, Range(0, 20_000, "20 kW is more than any 1-4U CPU server draws", lo_open=True)] = Field(
        description="Maximum power of one server, W.")
    rack_units: int = Field(ge=1, le=8, description="Height in rack units (U).")
    cooling: Literal["air", "liquid"] = Field("air", description="How the server is cooled.")
    oob_ports: int = Field(1, ge=0, le=4, description="Out-of-band (BMC) management ports, besides the in-band one.")


class ModelArchitecture(Record):
    """A dense decoder-only transformer."""

    params_b: float = Field(gt=0, le=100_000, description="Parameters in billions.")
    layers: int = Field(ge=1, le=1000, description="Transformer layers.")
    hidden_size: Annotated[int, MODEL_WIDTH] = Field(description="Model (embedding) dimension.")
    attention_heads: Annotated[int, MODEL_HEADS] = Field(description="Query attention heads.")
    kv_heads: Annotated[int, MODEL_HEADS] = Field(
        description="Key/value heads (grouped-query attention; = attention_heads for MHA).")
    ffn_hidden_size: Annotated[int, Range(1, 1_048_576, MODEL_WIDTH.why)] = Field(description="MLP inner dimension.")
    vocab_size: Annotated[int, Range(1, 16_777_216, "64 times the largest vocabulary in the catalog (BLOOM: 250,880)")] = (
        Field(description="Vocabulary size in tokens."))
    tied_embeddings: bool = Field(
        False, description="The LM head reuses the input embedding's V×h weights (GPT-2/3, MPT, BLOOM). Default "
                           "false: the head is a V×h matrix of its own, counted in params_b (Llama, Qwen2.5 7B "
                           "and up, Nemotron-4).")


class ModelPreset(ModelArchitecture):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=MAX_ID_CHARS,
                    description="Stable catalog id (lower case).")
    name: str = Field(max_length=MAX_NAME_CHARS, description="Human-readable model name.")
    source: str = Field(min_length=5, description=SOURCE_DESCRIPTION)


PriceProvenance = Literal["quoted", "estimate", "derived"]
"""quoted: a seller's published list price (``source`` is its URL, ``as_of`` the date it was read);
estimate: a figure reasoned from published ones (``source`` says how: ``"estimate: …"``); derived:
computed from another price book by a stated rule (``source``: ``"derived: …"``)."""


class Price(Record):
    """One price book entry: a unit price, where it comes from, and whether the market offers it."""

    price: float = Field(ge=0, le=1e12, description="Price per unit in the book's currency and basis.")
    provenance: PriceProvenance = Field(
        description="quoted (a published list price, source URL and as_of date), estimate (reasoned from "
                    "published figures, source 'estimate: …') or derived (computed from another book, "
                    "source 'derived: …')."
    )
    source: str = Field(min_length=5, description="Where the price comes from: a URL for a quote, "
                                                  "'estimate: <reason>' or 'derived: <rule>'.")
    as_of: str | None = Field(
        None, pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        description="Date the quoted price was published or read (YYYY-MM or YYYY-MM-DD); required for quoted.",
    )
    offered: bool = Field(
        True, description="False: the book's market does not offer the item; its price (derived or estimated) "
                          "is used only when the instance sets catalog.include_not_offered."
    )

    @model_validator(mode="after")
    def _source_matches_provenance(self) -> Price:
        """A quote names its URL and date; an estimate or a derivation says how it was made."""
        if self.provenance == "quoted":
            if "http://" not in self.source and "https://" not in self.source:
                raise ValueError("a quoted price's source must contain the URL of the published list")
            if self.as_of is None:
                raise ValueError("a quoted price needs as_of, the date of the list (YYYY-MM or YYYY-MM-DD)")
        elif not self.source.startswith(f"{self.provenance}:"):
            raise ValueError(f"the source of a price with provenance {self.provenance} must start with "
                             f"'{self.provenance}:'")
        return self


class RentalTerm(Record):
    """A rental period a seller contracts for, and its price as a fraction of the monthly list rent."""

    months: int = Field(ge=1, le=120, description="Length of one term in months.")
    factor: float = Field(gt=0, le=1, description="Rent per month on this term ÷ the monthly list rent "
                                                  "(e.g. 0.85: annual at 85 % of monthly).")
    source: str = Field(min_length=5, description=SOURCE_DESCRIPTION)


class PriceBook(Record):
    id: str
    currency: Literal["CNY", "USD", "EUR"]
    basis: Literal["capex", "monthly_rent"]
    description: str
    prices: dict[str, Price] = Field(description="Price per catalog item id (server = whole node).")
    terms: list[RentalTerm] = Field(
        default_factory=list,
        description="monthly_rent books: the terms a job can be rented for; the shortest is the minimum rental "
                    "period. A job is billed the cheapest whole terms that cover its duration. Empty: billed pro "
                    "rata (rent per month × months of training).",
    )

    @model_validator(mode="after")
    def _terms_fit_the_basis(self) -> PriceBook:
        if self.terms and self.basis != "monthly_rent":
            raise ValueError("terms: rental terms belong to a monthly_rent price book")
        lengths = [term.months for term in self.terms]
        if len(set(lengths)) != len(lengths):
            raise ValueError(f"terms: two terms of the same length ({sorted(lengths)} months)")
        return self


class Catalog(Record):
    gpus: list[Gpu] = Field(default_factory=list)
    servers: list[Server] = Field(default_factory=list)
    nics: list[Nic] = Field(default_factory=list)
    interconnects: list[Interconnect] = Field(default_factory=list)
    switches: list[Switch] = Field(default_factory=list)
    cables: list[LinkPart] = Field(default_factory=list)
    racks: list[RackClass] = Field(default_factory=list)
    storage: list[StorageTier] = Field(default_factory=list)
    control: list[ControlNode] = Field(default_factory=list)
    models: list[ModelPreset] = Field(default_factory=list)
    price_books: list[PriceBook] = Field(default_factory=list)

    def by_id(self, kind: str) -> dict:
        """``{id: item}`` for one kind (``"gpus"``, ``"switches"``, …)."""
        return {item.id: item for item in getattr(self, kind)}
