"""`topoopt validate` / `topoopt schema` through the CLI: bad input exits 2 with file:line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import topoopt.cli  # noqa: F401  (registers the commands)
from topoopt.cli.app import app
from topoopt.cli.validate import schema_text
from topoopt.loader import MAX_INSTANCE_BYTES, MAX_NESTING_DEPTH

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "instances").glob("*.yaml"))

BASE = """\
# A small valid instance; each bad case below changes one thing.
name: base
workload:
  model: llama3-8b
  training:
    tokens: 1.0e10
    sequence_length: 4096
    global_batch_sequences: 256
    parallelism: auto
  data:
    small_files: false
goal:
  objective: min_cost
  deadline_days: 10
budget:
  basis: monthly_rent
  currency: CNY
  max: 500000
site:
  max_racks: 4
  rack_classes: [air-30kw, air-45kw]
catalog:
  price_book: cny-monthly-rent
constraints:
  gpus:
    allow: [h100-sxm, a100-80gb-sxm]
  switches:
    deny: [tor-32x100]
  pins:
    nodes: 2
"""


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def swap(old: str, new: str) -> tuple[str, int]:
    """BASE with one line's text replaced, and that line's number."""
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new), BASE[: BASE.index(old)].count("\n") + 1


def invoke(args: list[str], stdin: str | bytes | None = None):
    return CliRunner().invoke(app, args, input=stdin)


# ---------------------------------------------------------------------------------------------
# Bad inputs: (id, file content, expected line, expected field path in the same message)


def _cases() -> list[tuple[str, str | bytes, int, str]]:
    cases: list[tuple[str, str | bytes, int, str]] = []

    def add(case_id: str, old: str, new: str, field: str, line: int | None = None) -> None:
        text, at = swap(old, new)
        cases.append((case_id, text, line or at, field))

    # Malformed YAML
    add("unclosed-flow-list", "allow: [h100-sxm, a100-80gb-sxm]", "allow: [h100-sxm, a100-80gb-sxm",
        "constraints.gpus.allow", line_of(BASE, "switches:"))
    add("tab-indentation", "    nodes: 2", "\tnodes: 2", "constraints.pins")
    add("bad-indentation", "  currency: CNY", "   currency: CNY", "budget")
    # Wrong types
    add("quoted-number", "max: 500000", 'max: "500000"', "budget.max")
    add("number-with-commas", "max: 500000", "max: 500,000", "budget.max")
    add("yes-for-int", "nodes: 2", "nodes: yes", "constraints.pins.nodes")
    add("bool-for-int", "max_racks: 4", "max_racks: true", "site.max_racks")
    add("float-for-int", "sequence_length: 4096", "sequence_length: 4096.5", "workload.training.sequence_length")
    add("list-for-mapping", "budget:\n  basis: monthly_rent\n  currency: CNY\n  max: 500000\n",
        "budget: [monthly_rent, CNY, 500000]\n", "budget")
    add("mapping-for-string", "name: base", "name: {first: base}", "name")
    add("on-for-bool", "small_files: false", "small_files: on", "workload.data.small_files")
    add("sexagesimal-is-a-string", "deadline_days: 10", "deadline_days: 1:30", "goal.deadline_days")
    add("bad-enum", "objective: min_cost", "objective: cheapest", "goal.objective")
    add("bad-parallelism", "parallelism: auto", "parallelism: manual", "workload.training.parallelism")
    add("pinned-parallelism-zero-tp", "parallelism: auto", "parallelism: {tp: 0, pp: 1}",
        "workload.training.parallelism.tp")
    # Negative, zero, absurd
    add("negative-budget", "max: 500000", "max: -5", "budget.max")
    add("zero-racks", "max_racks: 4", "max_racks: 0", "site.max_racks")
    add("absurd-tokens", "tokens: 1.0e10", "tokens: 1e30", "workload.training.tokens")
    add("absurd-nodes", "nodes: 2", "nodes: 10000000", "constraints.pins.nodes")
    add("infinite-number", "deadline_days: 10", "deadline_days: .inf", "goal.deadline_days")
    add("not-a-number", "deadline_days: 10", "deadline_days: .nan", "goal.deadline_days")
    add("integer-too-long", "nodes: 2", "nodes: " + "9" * 5000, "constraints.pins.nodes")
    add("both-data-rates", "small_files: false", "bytes_per_token: 4\n    bytes_per_sample: 8", "workload.data",
        line_of(BASE, "data:"))
    # Unknown and missing fields
    add("typo-field", "deadline_days: 10", "deadline_dayz: 10", "goal.deadline_dayz")
    add("unknown-top-level-field", "name: base", "name: base\ncolour: blue", "colour", line_of(BASE, "name: base") + 1)
    add("missing-budget-max", "  max: 500000\n", "", "budget.max", line_of(BASE, "budget:"))
    add("missing-site", "site:\n  max_racks: 4\n  rack_classes: [air-30kw, air-45kw]\n", "", "site", line_of(BASE, "name: base"))
    # Unknown ids and mismatches against the catalog
    add("unknown-model", "model: llama3-8b", "model: llama3-8B", "workload.model")
    add("unknown-price-book", "price_book: cny-monthly-rent", "price_book: cny-hourly", "catalog.price_book")
    add("unknown-pin", "nodes: 2", "server: dgx-h1000", "constraints.pins.server")
    add("unknown-allow-id", "allow: [h100-sxm, a100-80gb-sxm]", "allow: [h100-sxm, a100-80gb]",
        "constraints.gpus.allow[1]")
    add("unknown-deny-id", "deny: [tor-32x100]", "deny: [tor-32x1000]", "constraints.switches.deny[0]")
    add("id-of-wrong-kind", "allow: [h100-sxm, a100-80gb-sxm]", "allow: [dgx-h100]", "constraints.gpus.allow[0]")
    add("unknown-rack-class", "rack_classes: [air-30kw, air-45kw]", "rack_classes: [air-30kw, air-99kw]",
        "site.rack_classes[1]")
    add("currency-mismatch", "currency: CNY", "currency: USD", "budget.currency")
    add("basis-mismatch", "basis: monthly_rent", "basis: capex", "budget.basis")
    # YAML features refused for safety
    add("duplicate-key", "  max: 500000", "  max: 500000\n  max: 5", "budget.max", line_of(BASE, "max: 500000") + 1)
    add("anchor", "max: 500000", "max: &cap 500000", "budget.max")
    add("alias", "nodes: 2", "nodes: *cap", "constraints.pins.nodes")
    add("merge-key", "  max_racks: 4", "  <<: {max_racks: 4}", "site")
    add("python-object-tag", "name: base", "name: !!python/object/apply:os.system [echo pwned]", "name")
    add("python-tag-on-mapping", "budget:", "budget: !!python/object:topoopt.models.instance.Budget", "budget")
    add("local-tag-on-sequence", "allow: [h100-sxm, a100-80gb-sxm]", "allow: !ids [h100-sxm]", "constraints.gpus.allow")
    add("binary-tag", "name: base", "name: !!binary aGVsbG8=", "name")
    add("bad-explicit-int", "nodes: 2", "nodes: !!int two", "constraints.pins.nodes")
    add("non-string-key", "  max_racks: 4", "  4: max_racks", "site")
    add("null-key", "  max_racks: 4", "  null: 4", "site")
    add("complex-key", "  max_racks: 4", "  ? [max_racks]\n  : 4", "site")
    add("multi-document", "catalog:", "---\ncatalog:", "<root>")
    bomb = "lol: &a0 [lol, lol]\n" + "".join(f"l{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 12))
    cases.append(("alias-bomb", BASE.replace("name: base\n", "name: base\n" + bomb), line_of(BASE, "name:") + 1, "lol"))
    deep = "nest: " + "[" * (MAX_NESTING_DEPTH + 5) + "]" * (MAX_NESTING_DEPTH + 5) + "\n"
    cases.append(("deeply-nested", deep + BASE, 1, "nest"))
    # Not an instance at all
    cases.append(("empty-file", "", 1, "<root>"))
    cases.append(("whitespace-only", "  \n\n   \n", 1, "<root>"))
    cases.append(("comments-only", "# nothing here\n", 1, "<root>"))
    cases.append(("null-document", "~\n", 1, "<root>"))
    cases.append(("top-level-list", "- name: base\n- name: other\n", 1, "<root>"))
    cases.append(("top-level-scalar", "just a sentence\n", 1, "<root>"))
    cases.append(("binary-garbage", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", 1, "<root>"))
    latin1 = BASE.replace("name: base", "name: caf\xe9").encode("latin-1")
    cases.append(("invalid-utf8", latin1, line_of(BASE, "name: base"), "name"))
    nul = BASE.replace("name: base", "name: ba\x00se").encode()
    cases.append(("nul-byte", nul, line_of(BASE, "name: base"), "name"))
    huge = (BASE + "description: " + "x" * (MAX_INSTANCE_BYTES + 10) + "\n").encode()
    cases.append(("huge-file", huge, 1, "<root>"))
    return cases


BAD_CASES = _cases()


@pytest.mark.parametrize("content,line,field", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_input_exits_2_naming_line_and_field(tmp_path, content, line, field):
    path = tmp_path / "instance.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    result = invoke(["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    prefix = f"{path}:{line}:"
    located = [m for m in result.stderr.splitlines() if m.startswith(prefix)]
    assert located, f"no message at {prefix}\n{result.stderr}"
    assert any(f": {field}:" in m or f": {field}." in m or f": {field}[" in m for m in located), result.stderr


def test_there_are_at_least_35_bad_input_cases():
    assert len(BAD_CASES) >= 35


def test_every_problem_is_reported_not_just_the_first(tmp_path):
    text = BASE.replace("max: 500000", "max: -1").replace("max_racks: 4", "max_racks: 0").replace(
        "deadline_days: 10", "deadline_dayz: 10"
    )
    path = tmp_path / "many.yaml"
    path.write_text(text)
    result = invoke(["validate", str(path)])
    assert result.exit_code == 2
    for field in ("budget.max", "site.max_racks", "goal.deadline_dayz"):
        assert f": {field}: " in result.stderr
    assert "3 problem(s)" in result.stderr


def test_duplicate_key_message_names_the_first_line(tmp_path):
    text, line = swap("  max: 500000", "  max: 500000\n  max: 5")
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    result = invoke(["validate", str(path)])
    assert f"first defined at line {line}" in result.stderr


def test_typo_points_at_the_key_not_the_value(tmp_path):
    text, line = swap("deadline_days: 10", "deadline_dayz: 10")
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    result = invoke(["validate", str(path)])
    assert f"{path}:{line}:3: goal.deadline_dayz: unknown field" in result.stderr


def test_nonexistent_file_exits_2_without_traceback(tmp_path):
    missing = tmp_path / "nope.yaml"
    result = invoke(["validate", str(missing)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"{missing}: cannot read" in result.stderr


def test_directory_exits_2(tmp_path):
    result = invoke(["validate", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path}: is a directory" in result.stderr


def test_stdin_good():
    result = invoke(["validate", "-"], stdin=BASE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("OK <stdin>: 'base'")
    assert len(result.stdout.splitlines()) == 1


def test_stdin_bad_is_reported_as_stdin():
    text, line = swap("max: 500000", "max: -5")
    result = invoke(["validate", "-"], stdin=text)
    assert result.exit_code == 2
    assert f"<stdin>:{line}:" in result.stderr and "budget.max" in result.stderr


def test_stdin_huge_input_is_capped():
    result = invoke(["validate", "-"], stdin=b"a: " + b"x" * (MAX_INSTANCE_BYTES + 1))
    assert result.exit_code == 2
    assert "limit" in result.stderr


def test_valid_file_prints_one_ok_line(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(BASE)
    result = invoke(["validate", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"OK {path}: 'base' — llama3-8b")
    assert "500,000 CNY/month" in result.stdout
    assert result.stdout.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# Shipped examples and the schema


def test_there_are_example_instances():
    names = {path.name for path in EXAMPLES}
    assert {"llama2-7b-finetune-8gpu.yaml", "llama3-70b-roce-cny.yaml", "llama3-405b-16k-usd.yaml",
            "frontier-131k.yaml", "infeasible-budget.yaml", "estimate-pinned-h100.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_validates(path):
    result = invoke(["validate", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("OK ")


def test_schema_command_prints_the_instance_schema():
    result = invoke(["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$id"].startswith("urn:topoopt:")
    assert schema["title"] == "topoopt instance"
    assert schema["additionalProperties"] is False
    assert "$schema" in schema["properties"]
    assert set(schema["required"]) == {"name", "workload", "budget", "site", "catalog"}
    budget = schema["$defs"]["Budget"]["properties"]["max"]
    assert budget["exclusiveMinimum"] == 0 and "description" in budget


def test_checked_in_schema_is_up_to_date():
    shipped = (REPO / "topoopt.schema.json").read_text(encoding="utf-8")
    assert shipped == schema_text(), "topoopt.schema.json is stale: run `topoopt schema > topoopt.schema.json`"


def test_examples_point_editors_at_the_schema():
    for path in EXAMPLES:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=../topoopt.schema.json", path.name


def test_the_documented_example_validates():
    doc = (REPO / "docs" / "instance-format.md").read_text(encoding="utf-8")
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    result = invoke(["validate", "-"], stdin=example)
    assert result.exit_code == 0, result.stderr
