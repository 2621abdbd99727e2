"""The instance loader: YAML safety and typing rules, positions, every field group good and bad."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap

import pytest

from topoopt.loader import InputError, LoadedInstance, load_instance
from topoopt.safe_yaml import KEY, MAX_INSTANCE_BYTES, dotted, parse_yaml, resolve_scalar

GOOD = """\
name: unit
workload:
  model: llama3-70b
  training:
    tokens: 2.0e11
    sequence_length: 8192
    global_batch_sequences: 512
budget:
  basis: capex
  currency: USD
  max: 5.0e7
site:
  max_racks: 20
catalog:
  price_book: usd-capex
"""


def load(text: str) -> LoadedInstance:
    return load_instance("unit.yaml", text=text)


def problems(text: str) -> list[str]:
    """Every message for an invalid text (fails the test if the text is valid)."""
    with pytest.raises(InputError) as caught:
        load(text)
    return caught.value.messages


def with_section(section: str) -> str:
    """GOOD plus one more top-level block (or a replacement when the key already exists)."""
    block = textwrap.dedent(section).strip("\n") + "\n"
    key = block.split(":", 1)[0]
    lines = GOOD.splitlines(keepends=True)
    kept, skipping = [], False
    for line in lines:
        if line.startswith(key + ":"):
            skipping = True
            continue
        if skipping and line.startswith(" "):
            continue
        skipping = False
        kept.append(line)
    return "".join(kept) + block


def only_problem(text: str) -> str:
    messages = problems(text)
    assert len(messages) == 1, messages
    return messages[0]


# ---------------------------------------------------------------------------------------------
# YAML 1.2 scalar typing


@pytest.mark.parametrize(
    "plain,expected",
    [
        ("true", True), ("false", False), ("True", True), ("FALSE", False),
        ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("y", "y"), ("n", "n"),
        ("1e3", 1000.0), ("1.5E-2", 0.015), ("-2.5", -2.5), (".5", 0.5), ("6.", 6.0),
        ("42", 42), ("-7", -7), ("+3", 3), ("0777", 777), ("0o17", 15), ("0x1F", 31),
        ("22:22", "22:22"), ("1:30:00", "1:30:00"), ("2024-01-02", "2024-01-02"),
        ("1_000", "1_000"), ("1,000", "1,000"), ("0b101", "0b101"),
        ("~", None), ("null", None), ("", None), ("NULL", None), ("none", "none"),
        ("ib-ndr", "ib-ndr"), ("1e", "1e"), (".", "."),
    ],
)
def test_plain_scalars_follow_yaml_1_2(plain, expected):
    value = resolve_scalar(plain)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("plain", [".inf", "-.Inf", ".NaN", "1e999"])
def test_non_finite_numbers_are_refused(plain):
    with pytest.raises(ValueError):
        resolve_scalar(plain)


def test_quoted_scalars_are_strings_and_explicit_tags_are_checked():
    data, _ = parse_yaml(b'a: "1e3"\nb: \'true\'\nc: !!str 12\nd: !!float 3\ne: !!bool true\nf: |\n  7\n', "t")
    assert data == {"a": "1e3", "b": "true", "c": "12", "d": 3.0, "e": True, "f": "7\n"}
    with pytest.raises(InputError, match="'maybe' is not a valid !!bool"):
        parse_yaml(b"a: !!bool maybe\n", "t")


def test_byte_order_mark_is_accepted():
    data, positions = parse_yaml(b"\xef\xbb\xbfname: x\n", "t")
    assert data == {"name": "x"} and positions[("name",)] == (1, 7)


# ---------------------------------------------------------------------------------------------
# Positions


def test_positions_record_every_key_and_value():
    data, positions = parse_yaml(b"a:\n  b: [1, {c: 2}]\n  d: x\n", "t")
    assert data == {"a": {"b": [1, {"c": 2}], "d": "x"}}
    assert positions[("a", KEY)] == (1, 1)
    assert positions[("a", "b", KEY)] == (2, 3)
    assert positions[("a", "b")] == (2, 6)
    assert positions[("a", "b", 0)] == (2, 7)
    assert positions[("a", "b", 1, "c")] == (2, 14)
    assert positions[("a", "d")] == (3, 6)


def test_where_locates_fields_and_falls_back_to_the_nearest_ancestor():
    loaded = load(GOOD)
    assert loaded.where(("budget", "max")) == "unit.yaml:11:8"
    assert loaded.where("budget.max") == "unit.yaml:11:8"
    assert loaded.where("workload.training.tokens") == "unit.yaml:5:13"
    # Absent from the file (a default): the nearest ancestor that is present.
    assert loaded.where("workload.training.precision") == "unit.yaml:5:5"
    assert loaded.where("constraints.pins.nodes") == "unit.yaml:1:1"
    assert loaded.locate(("budget",)) == (9, 3)


def test_where_handles_list_indices():
    loaded = load(with_section("constraints:\n  gpus:\n    allow: [h100-sxm, h200-sxm]\n"))
    assert loaded.where("constraints.gpus.allow[1]") == "unit.yaml:18:23"
    assert loaded.where(("constraints", "gpus", "allow", 1)) == "unit.yaml:18:23"


def test_dotted_paths():
    assert dotted(("constraints", "gpus", "allow", 2)) == "constraints.gpus.allow[2]"
    assert dotted(()) == "<root>"


def test_loaded_instance_carries_the_file_hash():
    loaded = load(GOOD)
    assert loaded.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()
    assert loaded.instance.name == "unit" and loaded.file == "unit.yaml"


def test_schema_key_for_editors_is_accepted():
    loaded = load('"$schema": ../topoopt.schema.json\n' + GOOD)
    assert loaded.instance.schema_ == "../topoopt.schema.json"


# ---------------------------------------------------------------------------------------------
# Every field group: one good variant that loads, bad values that are located


GOOD_VARIANTS = {
    "inline-model": """
        workload:
          model: {params_b: 13, layers: 40, hidden_size: 5120, attention_heads: 40, kv_heads: 40,
                  ffn_hidden_size: 13824, vocab_size: 32000}
          training: {tokens: 1e11, sequence_length: 4096, global_batch_sequences: 1024}
        """,
    "training-options": """
        workload:
          model: llama3-70b
          training:
            tokens: 15000000000000
            sequence_length: 8192
            global_batch_sequences: 2048
            precision: fp8
            optimizer: adafactor
            activation_recompute: full
            parallelism: {tp: 8, pp: 4, dp: 16, zero_stage: 3, microbatch: 2}
          data: {bytes_per_token: 4.5, dataset_tb: 60, small_files: true, read_safety_factor: 3}
          checkpoint: {interval_hours: 1.5, keep: 5, max_save_time_s: 60}
        """,
    "goal": "goal: {objective: min_time, deadline_days: 45.5}\n",
    "site": """
        site:
          max_racks: 64
          rack_classes: [air-45kw, liquid-80kw]
          power_cap_kw: 2500
          distances: {in_rack_m: 2, in_row_m: 20, across_rows_m: 80, slack_m: 0}
        """,
    "catalog": """
        catalog:
          price_book: usd-capex
          builtin: true
          prices: {dgx-h100: 290000, qm9700: 30000}
          add:
            models:
              - {id: my-13b, name: My 13B, source: "estimate: internal", params_b: 13, layers: 40,
                 hidden_size: 5120, attention_heads: 40, kv_heads: 40, ffn_hidden_size: 13824, vocab_size: 32000}
        """,
    "constraints": """
        constraints:
          gpus: {allow: [h100-sxm, h200-sxm], deny: [h100-pcie]}
          servers: {deny: [hgx-h100]}
          interconnects: {allow: [ib-ndr, roce-400]}
          switches: {allow: [qm9700, sn5600]}
          storage: {deny: [nfs-server]}
          max_oversubscription: 2
          pins: {gpu: h100-sxm, server: dgx-h100, nodes: 16, interconnect: ib-ndr, nic: cx7-osfp,
                 nics_per_node: 8, tiers: 2, leaf_switch: qm9700, rack_class: air-45kw,
                 storage: pfs-building-block}
        """,
}


@pytest.mark.parametrize("section", GOOD_VARIANTS.values(), ids=GOOD_VARIANTS.keys())
def test_good_variants_of_every_field_group_load(section):
    load(with_section(section))


def test_an_added_model_preset_can_be_used():
    text = with_section(GOOD_VARIANTS["catalog"]).replace("model: llama3-70b", "model: my-13b")
    assert load(text).instance.workload.model == "my-13b"


BAD_FIELDS = [
    # (section, field path in the message, words in the message)
    ("name: ''", "name", "at least 1 character"),
    ("description: [a, b]", "description", "valid string"),
    ("workload: {model: llama3-70b, training: {tokens: 0, sequence_length: 8192, global_batch_sequences: 1}}",
     "workload.training.tokens", "greater than 0"),
    ("workload: {model: llama3-70b, training: {tokens: 1e9, sequence_length: 8192, global_batch_sequences: 1, "
     "precision: fp32}}", "workload.training.precision", "'bf16', 'fp16' or 'fp8'"),
    ("workload: {model: llama3-70b, training: {tokens: 1e9, sequence_length: 8192, global_batch_sequences: 1, "
     "parallelism: {tp: 8, pp: 1, zero_stage: 4}}}", "workload.training.parallelism.zero_stage", "0, 1, 2 or 3"),
    ("workload: {model: {params_b: 7}, training: {tokens: 1e9, sequence_length: 8192, global_batch_sequences: 1}}",
     "workload.model.layers", "required"),
    ("workload: {model: llama3-70b, training: {tokens: 1e9, sequence_length: 8192, global_batch_sequences: 1}, "
     "data: {dataset_tb: -1}}", "workload.data.dataset_tb", "greater than or equal to 0"),
    ("workload: {model: llama3-70b, training: {tokens: 1e9, sequence_length: 8192, global_batch_sequences: 1}, "
     "checkpoint: {keep: 0}}", "workload.checkpoint.keep", "greater than or equal to 1"),
    ("goal: {objective: fastest}", "goal.objective", "'min_cost', 'min_time' or 'min_job_cost'"),
    ("goal: {deadline_days: -3}", "goal.deadline_days", "greater than 0"),
    ("budget: {basis: lease, currency: USD, max: 1}", "budget.basis", "'capex' or 'monthly_rent'"),
    ("budget: {basis: capex, currency: GBP, max: 1}", "budget.currency", "'CNY', 'USD' or 'EUR'"),
    ("budget: {basis: capex, currency: USD, max: 1e14}", "budget.max", "less than or equal to"),
    ("site: {max_racks: 2, power_cap_kw: 0}", "site.power_cap_kw", "greater than 0"),
    ("site: {max_racks: 2, distances: {in_rack_m: 500}}", "site.distances.in_rack_m", "less than or equal to 100"),
    ("site: {max_racks: 2, rack_classes: air-45kw}", "site.rack_classes", "valid list"),
    ("catalog: {price_book: usd-capex, builtin: yes}", "catalog.builtin", "only true and false"),
    ("catalog: {price_book: usd-capex, prices: {dgx-h100: -1}}", "catalog.prices.dgx-h100", "greater than or equal to 0"),
    ("catalog: {price_book: usd-capex, prices: {dgx-h1000: 1}}", "catalog.prices.dgx-h1000", "did you mean 'dgx-h100'"),
    ("catalog: {price_book: usd-capex, add: {servers: [{id: x}]}}", "catalog.add.servers[0].gpu", "required"),
    ("constraints: {max_oversubscription: 0.5}", "constraints.max_oversubscription", "greater than or equal to 1"),
    ("constraints: {pins: {nics_per_node: 17}}", "constraints.pins.nics_per_node", "less than or equal to 16"),
    ("constraints: {pins: {interconnect: infiniband}}", "constraints.pins.interconnect", "unknown interconnect id"),
    ("constraints: {pins: {nic: cx7}}", "constraints.pins.nic", "unknown NIC id"),
    ("constraints: {pins: {leaf_switch: qm9700x}}", "constraints.pins.leaf_switch", "did you mean 'qm9700'"),
    ("constraints: {pins: {rack_class: air-45}}", "constraints.pins.rack_class", "unknown rack class id"),
    ("constraints: {pins: {storage: lustre}}", "constraints.pins.storage", "unknown storage tier id"),
    ("constraints: {pins: {gpu: dgx-h100}}", "constraints.pins.gpu", "is a server id"),
    ("constraints: {cables: {allow: [no-such-cable]}}", "constraints.cables.allow[0]", "unknown cable id"),
    ("constraints: {interconnects: {deny: [roce-4000]}}", "constraints.interconnects.deny[0]", "roce-400"),
    ("constraints: {gpus: {allow: [h100-sxm], dney: [t4]}}", "constraints.gpus.dney", "unknown field"),
]


@pytest.mark.parametrize("section,field,words", BAD_FIELDS, ids=[case[1] for case in BAD_FIELDS])
def test_bad_values_in_every_field_group_are_located(section, field, words):
    text = with_section(section)
    line = text.splitlines().index(section) + 1
    messages = problems(text)
    matching = [m for m in messages if f": {field}: " in m]
    assert matching, messages
    assert any(m.startswith(f"unit.yaml:{line}:") and words in m for m in matching), matching


def test_added_server_must_name_known_gpu_and_nics():
    server = (
        "{id: my-node, name: My node, source: 'estimate: quote', gpu: h100-sxmm, gpus_per_node: 8, power_w: 10000, "
        "rack_units: 6, max_compute_nics: 8, nic_options: [cx7-osfp, cx7-osf]}"
    )
    text = with_section(f"catalog:\n  price_book: usd-capex\n  add:\n    servers:\n      - {server}\n")
    messages = problems(text)
    assert any(": catalog.add.servers[0].gpu: unknown GPU id 'h100-sxmm'" in m for m in messages), messages
    assert any(": catalog.add.servers[0].nic_options[1]: unknown NIC id 'cx7-osf'" in m for m in messages), messages


def test_unknown_price_book_does_not_hide_other_unknown_ids():
    text = with_section("catalog: {price_book: eur-capex}").replace("model: llama3-70b", "model: llama4")
    messages = problems(text)
    assert any(": catalog.price_book: unknown price book id 'eur-capex'" in m for m in messages)
    assert any(": workload.model: unknown model preset id 'llama4'" in m for m in messages)


def test_union_errors_show_only_the_branch_the_user_meant():
    text = GOOD.replace("model: llama3-70b", "model: {params_b: 7, layers: 32}")
    messages = problems(text)
    assert all("valid string" not in m for m in messages), messages
    assert any(": workload.model.hidden_size: required field is missing" in m for m in messages)
    merged = only_problem(GOOD.replace("model: llama3-70b", "model: 70"))
    assert merged.startswith("unit.yaml:3:10: workload.model: Input should be a valid string, or a mapping")


def test_integer_keys_must_be_quoted():
    message = only_problem(GOOD + "catalog_: {400: 2}\n")
    assert "mapping keys must be strings, got 400" in message


def test_message_count_is_capped():
    text = GOOD + "".join(f"k{i}: &a{i} 1\n" for i in range(300))
    messages = problems(text)
    assert len(messages) == 101 and "stopped after 100 problems" in messages[-1]


def test_size_cap_applies_to_text_too():
    with pytest.raises(InputError, match="limit"):
        load("a: " + "x" * MAX_INSTANCE_BYTES)


def test_deep_nesting_is_refused_without_recursion_error():
    depth = 100_000
    with pytest.raises(InputError, match="nesting"):
        load("a: " + "[" * depth + "]" * depth)


def test_validation_never_imports_the_solver(tmp_path):
    path = tmp_path / "i.yaml"
    path.write_text(GOOD)
    code = (
        "import sys; from topoopt.loader import load_instance; "
        f"load_instance({str(path)!r}); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ortools', 'networkx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
