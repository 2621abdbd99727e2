"""Safe YAML for untrusted instance files: bytes -> plain data + the position of every key and value.

The text is read as libyaml *events* (PyYAML's constructors never run) and the tree is built
here without recursion. Refused, each at its line and column: anchors and aliases (alias
bombs), merge keys, tags other than the plain YAML core ones (on scalars and on collections),
duplicate keys (naming the first), non-string and complex keys, multi-document streams, empty
documents, a non-mapping top level, nesting deeper than :data:`MAX_NESTING_DEPTH`, input over
:data:`MAX_INSTANCE_BYTES`, and non-UTF-8, binary or control-character input. Plain scalars
follow the YAML 1.2 core schema, as editors do: only ``true``/``false`` are booleans (``yes``,
``no``, ``on`` stay strings), ``1e3`` is a float, ``22:22`` is a string and ``0777`` is 777.

Every problem found is collected (up to :data:`MAX_MESSAGES`) and raised together as one
:class:`InputError`, each message reading ``file:line:column: field.path: message``.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MAX_INSTANCE_BYTES = 5_000_000
"""Largest instance file accepted, in bytes. Real instances are a few kB; the cap bounds memory."""

MAX_NESTING_DEPTH = 32
"""Deepest mapping/sequence nesting accepted. The schema itself is at most 7 levels deep."""

MAX_MESSAGES = 100
MAX_TEXT_CHARS = 4_000
"""Longest string value (a description, a source with its notes); ids and names have lower caps
in the schema. Bounds what one value can add to every output file."""

MAX_COLLECTION_ITEMS = 5_000
"""Most entries in one mapping or items in one list (the schema's own caps are lower: 64 added
items per kind, 2,000 price overrides); stops a 5 MB file of keys from costing gigabytes."""

MAX_KEY_CHARS = 100
"""Longest mapping key: keys are field names, ids (prices) or speeds."""
"""Stop collecting after this many messages, so a garbage file gives a readable report."""

STDIN_NAME = "<stdin>"

_LIBYAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG_PREFIX = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG_PREFIX + name for name in ("str", "int", "float", "bool", "null")}


class _KeyMark:
    """Path suffix under which a mapping key's own position is stored in ``positions``."""

    def __repr__(self) -> str:
        return "KEY"


KEY = _KeyMark()
"""``positions[path + (KEY,)]`` is the (line, column) of the key whose value is at ``path``."""

Path_ = tuple[str | int, ...]
Position = tuple[int, int]


class InputError(Exception):
    """An instance file that cannot be used; ``messages`` holds every problem found.

    Each message reads ``file:line:column: field.path: message`` (only a file that cannot be
    opened at all reads ``file: message``).
    """

    def __init__(self, messages: list[str]):
        super().__init__("\n".join(messages))
        self.messages = list(messages)


# --------------------------------------------------------------------------------------------
# Reading bytes


def read_source(source: str | Path, file: str) -> bytes:
    """The raw bytes of a path, or of stdin for ``"-"``.

    Reads at most one byte past the cap, so a FIFO or /dev/zero cannot exhaust memory.
    """
    try:
        if str(source) == "-":
            if sys.stdin is None:
                raise InputError([f"{file}: cannot read: there is no standard input"])
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(MAX_INSTANCE_BYTES + 1) if stream is not None else sys.stdin.read().encode()
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_INSTANCE_BYTES + 1)
    except IsADirectoryError:
        raise InputError([f"{file}: is a directory, not an instance file"]) from None
    except OSError as exc:
        raise InputError([f"{file}: cannot read: {exc.strerror or exc}"]) from None
    return data


def encode_text(text: str, file: str) -> bytes:
    """A str given directly, as UTF-8 bytes (what a file would have held)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates smuggled in a str
        raise InputError([f"{file}:1:1: <root>: text is not valid Unicode ({exc.reason})"]) from None


def _decode(raw: bytes, file: str) -> str:
    """UTF-8 text (a BOM is allowed); binary input and control characters are refused, located."""
    if len(raw) > MAX_INSTANCE_BYTES:
        raise InputError([f"{file}:1:1: <root>: file is larger than the {MAX_INSTANCE_BYTES:,}-byte limit for instances"])
    body = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark is harmless
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = body[: exc.start].decode("utf-8", errors="replace")
        line, column = _line_col(prefix, len(prefix))
        problem = f"not UTF-8 text (byte 0x{body[exc.start]:02x}); instance files must be UTF-8"
        raise InputError([_located(body.decode("utf-8", errors="replace"), file, line, column, problem)]) from None
    # libyaml refuses these too, but less clearly ("special characters are not allowed").
    match = _CONTROL.search(text)
    if match:
        line, column = _line_col(text, match.start())
        name = "NUL byte" if match.group() == "\x00" else f"control character U+{ord(match.group()):04X}"
        raise InputError([_located(text, file, line, column, f"{name} found; instance files must be plain text")])
    return text


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
"""Characters refused in every string after YAML's escapes are decoded: C0 controls but tab and
line feed (terminal escapes, carriage returns that overwrite a line, NUL), DEL and the C1
controls (U+009B is a terminal escape too), the bidirectional overrides that make text read
differently from what it is ("Trojan Source", CVE-2021-42574), surrogates and the noncharacters
U+FFFE/U+FFFF (not allowed in XML, so they would break the SVG and GraphML)."""


def first_unprintable(text: str) -> str | None:
    """The first character of ``text`` that instance (and design) strings may not hold, or None."""
    match = _UNPRINTABLE.search(text)
    return match.group() if match else None


def describe_character(char: str) -> str:
    """``'control character U+001B'``, ``'bidirectional control U+202E'``, ...

    >>> describe_character("\x1b"), describe_character("\u202e")
    ('control character U+001B', 'bidirectional control U+202E')
    """
    code = ord(char)
    kind = ("NUL byte" if code == 0 else "control character" if code < 0xA0 else
            "bidirectional control" if 0x202A <= code <= 0x2069 else "non-character")
    return kind if code == 0 else f"{kind} U+{code:04X}"


def _located(text: str, file: str, line: int, column: int, problem: str) -> str:
    """A message for a bad character, naming the field it sits in when the rest of the text parses."""
    return f"{file}:{line}:{column}: {dotted(_path_before(text, line, column))}: {problem}"


def _path_before(text: str, line: int, column: int) -> Path_:
    """The path of the last key or value that starts at or before (line, column); () if none."""
    builder = _TreeBuilder("", text)
    try:
        for event in yaml.parse(_CONTROL.sub(" ", text), Loader=_LIBYAML_LOADER):
            builder.feed(event)
    except (yaml.YAMLError, _TooMany):
        pass
    best: tuple[Position, int, Path_] = ((0, 0), 0, ())
    for path, position in builder.positions.items():
        if path and path[-1] is KEY:
            path = path[:-1]
        if position <= (line, column):
            best = max(best, (position, len(path), path), key=lambda item: item[:2])
    return best[2]


def _line_col(buffer: bytes | str, offset: int) -> Position:
    newline = b"\n" if isinstance(buffer, bytes) else "\n"
    line = buffer.count(newline, 0, offset) + 1
    column = offset - (buffer.rfind(newline, 0, offset) + 1) + 1
    return line, column


# --------------------------------------------------------------------------------------------
# Safe YAML -> plain data + positions


def parse_yaml(raw: bytes, file: str) -> tuple[dict, dict]:
    """Parse one YAML mapping from ``raw``; return ``(data, positions)`` or raise InputError.

    ``positions[path]`` is the 1-based (line, column) of the value at ``path`` and
    ``positions[path + (KEY,)]`` that of its key. The tree is built from libyaml's event stream
    without recursion, so nesting depth is bounded by our own check, not by the C stack.
    """
    text = _decode(raw, file)
    builder = _TreeBuilder(file, text)
    try:
        for event in yaml.parse(text, Loader=_LIBYAML_LOADER):
            builder.feed(event)
    except yaml.YAMLError as exc:
        builder.syntax_error(exc)
    except _TooMany:
        pass
    return builder.finish()


class _TooMany(Exception):
    """Raised internally once MAX_MESSAGES is reached, or on a fatal structural problem."""


@dataclass
class _Frame:
    """An open mapping or sequence while events stream in."""

    container: dict | list | None  # None: the document level (expects one root node)
    path: Path_
    discard: bool = False  # a subtree we have already reported (dup key, complex key)
    key: str | None = None  # a mapping's pending key
    key_pending: bool = False
    key_lines: dict = field(default_factory=dict)
    flow: bool = False  # written inline: {…} or […]


class _TreeBuilder:
    """Turns parser events into dicts/lists/scalars, collecting every policy violation."""

    def __init__(self, file: str, text: str):
        self.file = file
        self.text = text
        self.messages: list[str] = []
        self.positions: dict = {}
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.documents = 0
        self.root_position: Position = (1, 1)

    # -- reporting ------------------------------------------------------------------------

    def error(self, mark: Any, path: Path_, message: str, *, fatal: bool = False) -> None:
        self.messages.append(f"{self.file}:{mark.line + 1}:{mark.column + 1}: {dotted(path)}: {message}")
        if len(self.messages) >= MAX_MESSAGES:
            self.messages.append(f"{self.file}:{mark.line + 1}:{mark.column + 1}: {dotted(path)}: "
                                 f"stopped after {MAX_MESSAGES} problems")
            raise _TooMany
        if fatal:
            raise _TooMany

    def syntax_error(self, exc: yaml.YAMLError) -> None:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None) or yaml.Mark("", 0, 0, 0, None, None)
        problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
        if "tab" in problem or _char_at(self.text, mark.line, mark.column) == "\t":
            problem += " (found a tab: indent with spaces, YAML does not allow tabs there)"
        path: Path_ = ()
        if self.stack:
            frame = self.stack[-1]
            # A key whose value never arrived: the problem is in that value.
            pending = isinstance(frame.container, dict) and frame.key_pending and frame.key is not None
            path = frame.path + (frame.key,) if pending else frame.path
        self.messages.append(f"{self.file}:{mark.line + 1}:{mark.column + 1}: {dotted(path)}: YAML syntax error: {problem}")

    def finish(self) -> tuple[dict, dict]:
        if not self.messages:
            where = f"{self.file}:{self.root_position[0]}:{self.root_position[1]}: <root>:"
            if self.documents == 0:
                self.messages.append(f"{self.file}:1:1: <root>: the file is empty (no YAML document)")
            elif self.root is None:
                self.messages.append(f"{where} the document is empty; an instance is a mapping of fields")
            elif not isinstance(self.root, dict):
                kind = "a list" if isinstance(self.root, list) else f"the value {self.root!r}"
                self.messages.append(f"{where} the top level must be a mapping of instance fields, not {kind}")
        if self.messages:
            raise InputError(self.messages)
        return self.root, self.positions

    # -- events ---------------------------------------------------------------------------

    def feed(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self.error(event.start_mark, (), "more than one YAML document ('---'); put one instance per file", fatal=True)
            self.stack.append(_Frame(container=None, path=()))
        elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self._node(event)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent, yaml.DocumentEndEvent)):
            self.stack.pop()

    def _node(self, event: Any) -> None:
        frame = self.stack[-1]
        starts_item = isinstance(frame.container, list) or (isinstance(frame.container, dict) and not frame.key_pending)
        if starts_item and len(frame.container) >= MAX_COLLECTION_ITEMS:
            kind = "entries in one mapping" if isinstance(frame.container, dict) else "items in one list"
            self.error(event.start_mark, frame.path, f"more than {MAX_COLLECTION_ITEMS:,} {kind}; no instance field "
                                                     f"takes that many", fatal=True)
        if isinstance(frame.container, dict) and not frame.key_pending:
            self._key(event, frame)
            return
        if isinstance(frame.container, list):
            path = frame.path + (len(frame.container),)
        elif isinstance(frame.container, dict):
            path = frame.path + (frame.key,) if frame.key is not None else frame.path
        else:
            path = ()
        discard = frame.discard or (isinstance(frame.container, dict) and frame.key is None)
        value = self._value(event, path, discard)
        if isinstance(frame.container, dict):
            frame.key_pending = False
        if discard:
            return
        if isinstance(frame.container, list):
            frame.container.append(value)
        elif isinstance(frame.container, dict):
            frame.container[frame.key] = value
        else:
            self.root = value
            self.root_position = (event.start_mark.line + 1, event.start_mark.column + 1)

    def _key(self, event: Any, frame: _Frame) -> None:
        """A mapping key: a plain or quoted string, unique within its mapping."""
        frame.key_pending, frame.key = True, None
        if isinstance(event, yaml.AliasEvent):
            self.error(event.start_mark, frame.path, f"YAML aliases (*{event.anchor}) are not allowed")
            return
        if not isinstance(event, yaml.ScalarEvent):
            self.error(event.start_mark, frame.path, "complex mapping keys ('? ...') are not allowed")
            self._open(event, frame.path, discard=True)
            return
        if event.anchor is not None:
            self.error(event.start_mark, frame.path, f"YAML anchors (&{event.anchor}) are not allowed")
        if event.value == "<<" and event.tag is None and event.implicit[0]:
            self.error(event.start_mark, frame.path, "YAML merge keys (<<) are not allowed; write the fields out")
            return
        key = self._scalar(event, frame.path)
        if isinstance(key, str) and len(key) > MAX_KEY_CHARS:
            self.error(event.start_mark, frame.path, f"a key of {len(key):,} characters; keys are at most "
                                                     f"{MAX_KEY_CHARS} (they are field names and ids)")
            return
        if isinstance(key, str) and ("\n" in key or "\t" in key):
            self.error(event.start_mark, frame.path, f"a line break or tab in the key {key!r}; keys are field names")
            return
        after_comma = self.text[: event.start_mark.index].rstrip().endswith(",")
        if isinstance(key, int) and not isinstance(key, bool) and frame.flow and after_comma:
            self.error(event.start_mark, frame.path, f"{event.value!r} after a comma reads as a new key: inside {{…}} "
                                                     f"commas separate entries, so write numbers without commas "
                                                     f"(e.g. 1500000 or 1.5e6)")
            return
        if not isinstance(key, str):
            self.error(event.start_mark, frame.path, f"mapping keys must be strings, got {show_value(key)}; quote it: \"{event.value}\"")
            return
        if frame.discard:
            frame.key = key
            return
        if key in frame.key_lines:
            self.error(
                event.start_mark,
                frame.path + (key,),
                f"duplicate key {key!r} (first defined at line {frame.key_lines[key]}); the second value is ignored",
            )
            return
        frame.key = key
        frame.key_lines[key] = event.start_mark.line + 1
        self.positions[frame.path + (key, KEY)] = (event.start_mark.line + 1, event.start_mark.column + 1)

    def _value(self, event: Any, path: Path_, discard: bool) -> Any:
        if not discard:
            self.positions[path] = (event.start_mark.line + 1, event.start_mark.column + 1)
        if isinstance(event, yaml.AliasEvent):
            self.error(event.start_mark, path, f"YAML aliases (*{event.anchor}) are not allowed; repeat the value instead")
            return None
        if event.anchor is not None:
            self.error(event.start_mark, path, f"YAML anchors (&{event.anchor}) are not allowed")
        if isinstance(event, yaml.ScalarEvent):
            return self._scalar(event, path)
        return self._open(event, path, discard)

    def _open(self, event: Any, path: Path_, discard: bool) -> dict | list:
        """Start a mapping or sequence; its items arrive as later events."""
        expected = _TAG_PREFIX + ("map" if isinstance(event, yaml.MappingStartEvent) else "seq")
        if event.tag is not None and event.tag != expected:
            self.error(event.start_mark, path, f"YAML tag {_show_tag(event.tag)} is not allowed here")
        if len(self.stack) > MAX_NESTING_DEPTH:
            self.error(event.start_mark, path, f"nesting deeper than {MAX_NESTING_DEPTH} levels", fatal=True)
        container: dict | list = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(container=container, path=path, discard=discard, flow=bool(event.flow_style)))
        return container

    def _scalar(self, event: yaml.ScalarEvent, path: Path_) -> Any:
        """YAML 1.2 core-schema typing; quoted and block scalars are always strings."""
        tag, value = event.tag, event.value
        if tag is not None and tag not in _SCALAR_TAGS:
            self.error(event.start_mark, path, f"YAML tag {_show_tag(tag)} is not allowed")
            return None
        plain = tag is None and event.implicit[0]
        if tag is None and not plain:
            return self._printable(event, path, value)
        kind = tag.removeprefix(_TAG_PREFIX) if tag else None
        try:
            resolved = resolve_scalar(value, kind)
        except ValueError as exc:
            self.error(event.start_mark, path, str(exc))
            return None
        return self._printable(event, path, resolved) if isinstance(resolved, str) else resolved

    def _printable(self, event: yaml.ScalarEvent, path: Path_, text: str) -> str:
        """``text`` when it holds no unprintable character once YAML's escapes (``"\\e"``,
        ``"\\0"``, ``"\\x9b"``, ``"\\u202e"``) are decoded; else report it and return the text
        with those characters spelled out, so later messages cannot carry them to a terminal."""
        if len(text) > MAX_TEXT_CHARS:
            self.error(event.start_mark, path, f"text of {len(text):,} characters; strings are at most "
                                               f"{MAX_TEXT_CHARS:,}")
            return text[:60]
        match = _UNPRINTABLE.search(text)
        if match is None:
            return text
        self.error(event.start_mark, path, f"{describe_character(match.group())} in the text (after YAML escapes); "
                                           f"instance strings must be printable")
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_NULLS = {"", "~", "null", "Null", "NULL"}
_TRUES = {"true", "True", "TRUE"}
_FALSES = {"false", "False", "FALSE"}
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_NON_FINITE = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


def resolve_scalar(value: str, kind: str | None = None) -> Any:
    """Type a plain scalar by the YAML 1.2 core schema, or check it against an explicit tag.

    ``kind`` is None for an untagged plain scalar, else one of str/int/float/bool/null. Raises
    ValueError for a value the tag does not admit and for non-finite numbers (``.inf``, ``.nan``),
    which no instance field means.

    >>> [resolve_scalar(v) for v in ("no", "on", "1e3", "22:22", "0777", "true", "~")]
    ['no', 'on', 1000.0, '22:22', 777, True, None]
    """
    if kind == "str":
        return value
    if kind in (None, "null") and value in _NULLS:
        return None
    if kind in (None, "bool") and value in _TRUES | _FALSES:
        return value in _TRUES
    if kind in (None, "int", "float") and _INT.fullmatch(value):
        number = _int(value)
        return float(number) if kind == "float" else number
    if kind in (None, "float") and _FLOAT.fullmatch(value):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"number {value!r} is out of range")
        return number
    if kind in (None, "float") and _NON_FINITE.fullmatch(value):
        raise ValueError(f"non-finite number {value!r} is not allowed")
    if kind is None:
        return value
    raise ValueError(f"{value!r} is not a valid !!{kind}")


def _int(value: str) -> int:
    try:
        if value.startswith("0o"):
            return int(value[2:], 8)
        if value.startswith("0x"):
            return int(value[2:], 16)
        return int(value, 10)  # YAML 1.2: a leading zero is not octal
    except ValueError:  # Python refuses int strings over 4300 digits
        raise ValueError(f"integer with {len(value)} digits is out of range") from None


def _char_at(text: str, line: int, column: int) -> str:
    """The character at a 0-based (line, column) of ``text``, or '' past its end."""
    lines = text.split("\n", line + 1)
    return lines[line][column : column + 1] if line < len(lines) else ""


def show_value(value: Any) -> str | None:
    """A short rendering of a value for messages: scalars as written, collections by kind."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def looks_numeric(text: str) -> bool:
    """True for a string that would be a number without its quotes, underscores, commas or spaces."""
    compact = text.replace("_", "").replace(",", "").replace(" ", "")
    return bool(_INT.fullmatch(compact) or _FLOAT.fullmatch(compact))


def _show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG_PREFIX) if tag.startswith(_TAG_PREFIX) else repr(tag)


# --------------------------------------------------------------------------------------------
# Paths and positions


def dotted(path: Path_) -> str:
    """``("constraints", "gpus", "allow", 1)`` -> ``"constraints.gpus.allow[1]"``; ``()`` -> ``"<root>"``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def as_path(path: Path_ | str) -> Path_:
    """A tuple path from a tuple or a dotted string: ``"pins.allow[1]"`` -> ``("pins", "allow", 1)``."""
    if not isinstance(path, str):
        return tuple(path)
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        parts.append(int(index) if index else name)
    return tuple(parts)


def locate(path: Path_, positions: dict, *, key: bool = False) -> Position:
    """Position of ``path`` (its key's with ``key=True``) or of its nearest ancestor present."""
    for end in range(len(path), -1, -1):
        prefix = path[:end]
        if key and end == len(path) and prefix + (KEY,) in positions:
            return positions[prefix + (KEY,)]
        if prefix in positions:
            return positions[prefix]
    return (1, 1)


def format_messages(problems: list[tuple[Path_, str]], positions: dict, file: str, *, key: bool = False) -> list[str]:
    """``file:line:column: field.path: message`` for each ``(path, message)``."""
    out = []
    for path, message in problems:
        line, column = locate(path, positions, key=key)
        out.append(f"{file}:{line}:{column}: {dotted(path)}: {message}")
    return out


__all__ = [
    "KEY",
    "MAX_COLLECTION_ITEMS",
    "MAX_INSTANCE_BYTES",
    "MAX_KEY_CHARS",
    "MAX_MESSAGES",
    "MAX_TEXT_CHARS",
    "MAX_NESTING_DEPTH",
    "STDIN_NAME",
    "InputError",
    "as_path",
    "dotted",
    "describe_character",
    "encode_text",
    "first_unprintable",
    "format_messages",
    "locate",
    "looks_numeric",
    "parse_yaml",
    "read_source",
    "resolve_scalar",
    "show_value",
]
