"""Safe, located loading of instance files: YAML text -> validated :class:`Instance`.

Three passes, reporting every problem found as ``file:line:column: field.path: message`` (the
references of the rest of the file are checked even when the schema rejects some values, so one
run names a misspelt field and a misspelt id together):

1. **Safe YAML** (:mod:`topoopt.safe_yaml`): untrusted text becomes plain data plus the position
   of every key and value; anchors/aliases, merge keys, custom tags, duplicate keys, oversized,
   binary or multi-document input are refused; scalars follow YAML 1.2.
2. **Schema:** :meth:`Instance.model_validate` (strict); every pydantic error is mapped back to the
   line and column of the offending value (an unknown key points at the key itself).
3. **References** (:mod:`topoopt.references`): ids are checked against the resolved catalog, and
   the budget's currency and basis against the price book.

This module never imports the solver (ortools): validation stays cheap for embedding tools.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from topoopt.field_hints import empty_section_hint, unknown_field_hint
from topoopt.models.catalog import PriceBook
from topoopt.models.instance import Instance
from topoopt.references import budget_term_problems, check_references
from topoopt.safe_yaml import (
    KEY,
    MAX_INSTANCE_BYTES,
    MAX_MESSAGES,
    MAX_NESTING_DEPTH,
    MAX_TEXT_CHARS,
    STDIN_NAME,
    InputError,
    Path_,
    Position,
    as_path,
    describe_character,
    dotted,
    encode_text,
    first_unprintable,
    format_messages,
    locate,
    looks_numeric,
    parse_yaml,
    read_source,
    show_value,
)


@dataclass(frozen=True)
class LoadedInstance:
    """A validated instance with the position of every value in its source file."""

    instance: Instance
    file: str
    positions: dict = field(repr=False)
    sha256: str

    def locate(self, path: Path_ | str) -> Position:
        """(line, column), 1-based, of the value at ``path`` or of its nearest ancestor in the file."""
        return locate(as_path(path), self.positions)

    def where(self, path: Path_ | str) -> str:
        """``file:line:col`` of a field, e.g. ``where(("budget", "max"))`` -> ``"instance.yaml:12:8"``.

        ``path`` is a tuple of keys and list indices, or a dotted string (``"constraints.pins.nodes"``,
        ``"constraints.gpus.allow[1]"``). A field absent from the file (a default) is located at
        its nearest ancestor that is present.
        """
        line, column = self.locate(path)
        return f"{self.file}:{line}:{column}"


def load_instance(source: str | Path, *, text: str | None = None) -> LoadedInstance:
    """Read, parse and validate one instance file; raise :class:`InputError` with every problem.

    ``source`` is a path, or ``"-"`` for standard input (reported as ``<stdin>``). With ``text``,
    that string is parsed and ``source`` only names it in messages.

    Examples
    --------
    >>> loaded = load_instance("instances/llama2-7b-finetune-8gpu.yaml")
    >>> loaded.instance.budget.max, loaded.where("budget.max")
    (150000.0, 'instances/llama2-7b-finetune-8gpu.yaml:47:8')
    >>> try:
    ...     load_instance("inline.yaml", text="budget: {max: -1}")
    ... except InputError as exc:
    ...     print(exc.messages[-1])
    inline.yaml:1:15: budget.max: Input should be greater than 0, got -1
    """
    file = STDIN_NAME if str(source) == "-" else str(source)
    raw = read_source(source, file) if text is None else encode_text(text, file)
    data, positions = parse_yaml(raw, file)
    instance = _validate_schema(data, positions, file)
    book = instance.catalog.price_book
    if isinstance(book, str) and is_price_book_path(book):
        line, column = locate(("catalog", "price_book"), positions)
        loaded_book = load_price_book(book_path(book, file), referred_from=f"{file}:{line}:{column}")
        instance = instance.model_copy(update={"catalog": instance.catalog.model_copy(update={"price_book": loaded_book})})
    problems = check_references(instance)
    if problems:
        raise InputError(capped(format_messages(problems, positions, file), file))
    return LoadedInstance(instance=instance, file=file, positions=positions, sha256=hashlib.sha256(raw).hexdigest())


def validate_instance(instance: Instance | dict, *, ids: bool = True) -> Instance:
    """``instance`` checked as the loader checks a file, for one that did not come from it: built
    in code, changed with ``model_copy(update=…)`` (which skips pydantic's validation), or plain
    data (a dict as an instance file holds).

    The schema, the strings (printable, bounded), the budget's terms against the price book and,
    with ``ids``, every catalog reference are checked again; raises :class:`InputError` whose
    messages read ``field.path: message``. Returns the re-validated instance (equal to
    ``instance`` when it was valid). ``solve`` and ``estimate`` check with ``ids=False``: an
    unknown id in a pin or a list is an answer they explain (``pins_respected``, …), not a crash.

    Examples
    --------
    >>> loaded = load_instance("instances/llama2-7b-finetune-8gpu.yaml")
    >>> broken = loaded.instance.model_copy(update={"name": ""})
    >>> validate_instance(broken)
    Traceback (most recent call last):
    ...
    topoopt.safe_yaml.InputError: name: String should have at least 1 character, got ''
    """
    data = instance.model_dump(by_alias=True, warnings=False) if isinstance(instance, Instance) else instance
    messages = [f"{dotted(path)}: {problem}" for path, problem in _string_problems(data)]
    try:
        checked = Instance.model_validate(data)
    except ValidationError as exc:
        messages += [f"{dotted(tuple(e['loc']))}: {_explain(e, e['msg'], tuple(e['loc']))}"
                     for e in exc.errors(include_url=False)]
        raise InputError(capped(messages, "<instance>")) from None
    problems = check_references(checked) if ids else budget_term_problems(checked)
    messages += [f"{dotted(path)}: {problem}" for path, problem in problems]
    if messages:
        raise InputError(capped(messages, "<instance>"))
    return checked


def _string_problems(data) -> list[tuple[Path_, str]]:
    """The rules the YAML stage applies to every string (printable, at most MAX_TEXT_CHARS), for
    data that never went through it."""
    problems, stack = [], [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((path + (str(key),), item) for key, item in value.items())
            stack.extend((path, key) for key in value if isinstance(key, str))
        elif isinstance(value, (list, tuple)):
            stack.extend((path + (index,), item) for index, item in enumerate(value))
        elif isinstance(value, str):
            char = first_unprintable(value)
            if char is not None:
                problems.append((path, f"{describe_character(char)} in the text; instance strings must be printable"))
            elif len(value) > MAX_TEXT_CHARS:
                problems.append((path, f"text of {len(value):,} characters; strings are at most {MAX_TEXT_CHARS:,}"))
    return sorted(problems, key=lambda item: dotted(item[0]))


# --------------------------------------------------------------------------------------------
# Price book files


def is_price_book_path(value: str) -> bool:
    """``catalog.price_book`` names a file (``./my-prices.yaml``) rather than a built-in book id."""
    return value.endswith((".yaml", ".yml")) or "/" in value


def book_path(value: str, instance_file: str) -> Path:
    """A price book path relative to the instance file's folder (the working folder for stdin)."""
    path = Path(value)
    if path.is_absolute() or instance_file == STDIN_NAME:
        return path
    return Path(instance_file).parent / path


def load_price_book(path: str | Path, *, referred_from: str | None = None) -> PriceBook:
    """Read, parse and validate a price book file with the instance loader's safety rules (size,
    nesting, aliases, duplicate keys); raise :class:`InputError` with every problem located in the
    book file (``file:line:column: field: message``)."""
    file = str(path)
    try:
        raw = read_source(path, file)
    except InputError as exc:
        raise InputError([f"{referred_from}: catalog.price_book: {message}" if referred_from else message
                          for message in exc.messages]) from None
    data, positions = parse_yaml(raw, file)
    try:
        return PriceBook.model_validate(data)
    except ValidationError as exc:
        raise InputError(schema_messages(exc, positions, file)) from None


# --------------------------------------------------------------------------------------------
# Schema validation, errors mapped to positions


def _validate_schema(data: dict, positions: dict, file: str) -> Instance:
    """The Instance, or InputError with the schema's messages and the duplicate added ids together."""
    duplicates = duplicate_added_ids(data, positions, file)
    try:
        instance = Instance.model_validate(data)
    except ValidationError as exc:
        references = format_messages(_references_despite(data, exc, positions), positions, file)
        messages = sorted(schema_messages(exc, positions, file) + duplicates + references, key=_message_position)
        raise InputError(capped(messages, file)) from None
    if duplicates:
        raise InputError(capped(duplicates, file))
    return instance


def _references_despite(data: dict, exc: ValidationError, positions: dict) -> list[tuple[Path_, str]]:
    """The reference problems (unknown ids, a price book that does not match) of the rest of the
    file, so that one run reports them with the schema's: each value the schema rejects is taken
    out, and when what remains is a valid instance its references are checked. Nothing is
    reported when a required field or a list item would have to go (indices would shift)."""
    repaired = copy.deepcopy(data)
    for err in exc.errors(include_url=False):
        path = _split_loc(err, positions)[0]
        if err["type"] == "missing" or not path or isinstance(path[-1], int):
            return []
        parent = repaired
        for part in path[:-1]:
            if isinstance(parent, dict):
                parent = parent.get(part)
            elif isinstance(parent, list) and isinstance(part, int) and part < len(parent):
                parent = parent[part]
            else:
                parent = None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    try:
        instance = Instance.model_validate(repaired)
    except ValidationError:
        return []
    return check_references(instance)


def duplicate_added_ids(data: dict, positions: dict, file: str) -> list[str]:
    """An id added twice under one kind of ``catalog.add`` (the last would silently win): one
    message at the second, naming the line of the first."""
    added = data.get("catalog", {}).get("add") if isinstance(data.get("catalog"), dict) else None
    if not isinstance(added, dict):
        return []
    messages = []
    for kind, items in added.items():
        if not isinstance(items, list):
            continue
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            item_id = item.get("id") if isinstance(item, dict) else None
            if not isinstance(item_id, str):
                continue
            path = ("catalog", "add", kind, index, "id")
            line, column = locate(path, positions)
            if item_id in first:
                messages.append(f"{file}:{line}:{column}: {dotted(path)}: duplicate id {item_id!r}, first added at "
                                f"line {first[item_id]}; give each added item its own id")
            else:
                first[item_id] = line
    return messages


def capped(messages: list[str], file: str) -> list[str]:
    """At most MAX_MESSAGES messages, then one line saying how many more there were."""
    if len(messages) <= MAX_MESSAGES:
        return messages
    return messages[:MAX_MESSAGES] + [f"{file}: stopped after {MAX_MESSAGES} problems "
                                      f"({len(messages) - MAX_MESSAGES:,} more not shown)"]


def _message_position(message: str) -> tuple[int, int]:
    """(line, column) of a ``file:line:column: …`` message, for sorting; (0, 0) when it has none."""
    match = re.search(r":(\d+):(\d+): ", message)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def schema_messages(exc: ValidationError, positions: dict, file: str) -> list[str]:
    """One located message per pydantic error, with union branches the user did not mean removed.

    pydantic puts union branch names (``str``, ``ModelArchitecture``, ``literal['auto']``) in an
    error's ``loc``; they are not in the document and are skipped. When the value is a mapping
    and one branch is a model, only that branch's errors are shown; when every branch rejects
    the value outright, their messages are merged into one.
    """
    errors = exc.errors(include_url=False)
    located = [_split_loc(err, positions) for err in errors]
    by_union: dict[Path_, dict[str, list[int]]] = {}
    for index, (_, tag_at, _) in enumerate(located):
        if tag_at is not None:
            prefix, branch = tag_at
            by_union.setdefault(prefix, {}).setdefault(branch, []).append(index)
    dropped: set[int] = set()
    merged: dict[int, str] = {}
    for branches in by_union.values():
        deep = {b for b, ids in branches.items() if any(not _is_branch_root(located[i]) for i in ids)}
        if deep:
            dropped.update(i for b, ids in branches.items() if b not in deep for i in ids)
        else:
            ids = [i for b in branches.values() for i in b]
            msgs = list(dict.fromkeys(errors[i]["msg"] for i in ids))
            merged[ids[0]] = msgs[0] + "".join(", or " + m.removeprefix("Input should be ") for m in msgs[1:])
            dropped.update(ids[1:])
    out = []
    for index, err in enumerate(errors):
        if index in dropped:
            continue
        path, _, display = located[index]
        # Unknown keys, missing fields and whole-mapping problems point at the key that names them.
        at_key = err["type"] in ("extra_forbidden", "missing") or isinstance(err.get("input"), (dict, list))
        line, column = locate(path, positions, key=at_key)
        message = merged.get(index) or err["msg"]
        out.append(((line, column), f"{file}:{line}:{column}: {dotted(display)}: {_explain(err, message, display)}"))
    return [text for _, text in sorted(out, key=lambda item: item[0])]


def _split_loc(err: dict, positions: dict) -> tuple[Path_, tuple[Path_, str] | None, Path_]:
    """(document path to point at, (union prefix, branch) or None, path to show the user)."""
    loc = tuple(err["loc"])
    doc_path: list[str | int] = []
    tag_at = None
    shown: list[str | int] = []
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        candidate = tuple(doc_path) + (part,)
        if part == "[key]":
            continue
        if candidate in positions:
            doc_path.append(part)
            shown.append(part)
        elif last and err["type"] == "missing":
            shown.append(part)
        elif tag_at is None and isinstance(part, str):
            tag_at = (tuple(doc_path), part)
    return tuple(doc_path), tag_at, tuple(shown)


def _is_branch_root(entry: tuple[Path_, tuple[Path_, str] | None, Path_]) -> bool:
    """True when the error rejects the whole value for that branch (not a field inside it)."""
    path, tag_at, shown = entry
    return tag_at is not None and shown == tag_at[0]


def _explain(err: dict, message: str, path: Path_ = ()) -> str:
    """pydantic's message, made specific about the value that was given (at ``path``)."""
    kind, value = err["type"], err.get("input")
    message = message.removeprefix("Value error, ")
    message = re.sub(r"a valid dictionary or instance of (\w+)", r"a mapping of \1 fields", message)
    if kind == "extra_forbidden":
        hint = unknown_field_hint(path[:-1], str(path[-1]), value) if path else None
        return f"unknown field; {hint}" if hint else "unknown field (not part of the instance format; check the spelling)"
    if kind == "missing":
        return "required field is missing"
    if value is None and kind in ("model_type", "dict_type") and (empty := empty_section_hint(path)):
        return empty
    shown = show_value(value)
    if kind in ("int_type", "float_type", "int_from_float") and isinstance(value, str):
        if looks_numeric(value):
            return f"{message}, got the string {shown}; write numbers without quotes, underscores or commas (e.g. 15e12)"
        return f"{message}, got the string {shown}"
    if kind in ("int_type", "float_type") and isinstance(value, bool):
        return f"{message}, got the boolean {shown}"
    if kind == "bool_type" and isinstance(value, str):
        return f"{message}, got the string {shown} (only true and false are booleans)"
    if shown is not None and (kind.endswith("_type") or not isinstance(value, (dict, list))):
        return f"{message}, got {shown}"
    return message



__all__ = [
    "KEY",
    "MAX_INSTANCE_BYTES",
    "MAX_NESTING_DEPTH",
    "InputError",
    "LoadedInstance",
    "check_references",
    "dotted",
    "load_instance",
    "schema_messages",
    "validate_instance",
]
