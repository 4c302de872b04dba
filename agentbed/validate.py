"""Reading untrusted files: bounded, strict UTF-8 JSON, validated by JSON Schema.

Every reader of a file a user hands to the CLI (a log, a run index, run.json, results, a
baseline) goes through here, so a bad file is one :class:`InputError` naming the file, the
line and the field, never a traceback. Sizes are bounded before parsing (a huge line costs
no more than the bound) and so is nesting (the ``json`` module would recurse until
``RecursionError``). Schemas are JSON Schema (draft 2020-12); the engine's files' are in
:mod:`agentbed.schemas` (the trajectory schema in ``agentbed/schema/trajectory.schema.json``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import jsonschema

from agentbed.errors import UsageError

MAX_JSON_BYTES = 64 * 1024 * 1024  # a results file, run.json or baseline; far above any real one
MAX_LINE_BYTES = 64 * 1024 * 1024  # one log record or index line
_DIGITS_AS_NINES = bytes.maketrans(b"0123456789", b"9" * 10)
_LONG_RUN = b"9" * 19  # 2^63 has 19 digits: a shorter integer is within the bound
MAX_DEPTH = 200  # nesting of arrays and objects; real records stay below 20
MAX_INT = 2**63 - 1  # integers beyond a signed 64-bit word are refused (Python would parse 4,300 digits, then fail)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # \ud800-\udfff: legal in pairs, refused alone


class InputError(UsageError):
    """A file's content is unusable. The message names the file, and the line and field if known."""


def where(path: str | os.PathLike[str], line: int | None = None) -> str:
    return f"{path}: line {line}" if line is not None else str(path)


def open_regular(path: str | os.PathLike[str], *, what: str = "file",
                 inside: str | os.PathLike[str] | None = None) -> BinaryIO:
    """An open binary file, refused unless it is a regular file. Opened without blocking, so a
    FIFO or a device is named and refused, never waited on. With ``inside`` (a run directory),
    a path whose links lead out of that directory is refused too."""
    p = Path(path)
    if inside is not None and not Path(os.path.realpath(p)).is_relative_to(os.path.realpath(inside)):
        raise InputError(f"{p}: a link out of {inside}; not followed")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a {what}") from None
    except FileNotFoundError:
        raise InputError(f"{p}: cannot read: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket or special file")
        raise InputError(f"{p}: is {kind}, expected a regular {what}")
    return os.fdopen(fd, "rb")


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_JSON_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    p = Path(path)
    with open_regular(p, what=what) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise InputError(f"{p}: larger than {limit} bytes; not a {what}")
    return data


def bounded_lines(fh: BinaryIO, path: str | os.PathLike[str],
                  error: type[Exception] = InputError) -> Iterator[tuple[int, bytes]]:
    """The lines of an open binary file with their numbers; a line longer than
    ``MAX_LINE_BYTES`` raises ``error`` before more than the bound is read."""
    number = 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise error(f"{path}: line {number} is longer than {MAX_LINE_BYTES} bytes")
        yield number, line


def _check_tree(value: Any, at: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (later code may recurse into it) and non-finite
    numbers (NaN compares false with everything: a gate fed one passes anything)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            raise InputError(f"{at}: JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, float) and not math.isfinite(node):
            raise InputError(f"{at}: field {field_name(path)!r} is {node}, expected a finite number")
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items() if isinstance(v, dict | list | float))
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node) if isinstance(v, dict | list | float))


class _Refused(ValueError):
    """Raised from inside the JSON parser's hooks; becomes an InputError naming the file."""


def _bounded_int(text: str) -> int:
    if len(text) > 20 or abs(value := int(text)) > MAX_INT:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits, beyond the documented bound of "
                       f"{MAX_INT} (2^63 - 1)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _Refused(f"field {name!r} is given twice in one object (which one counts is undefined)")
            seen.add(name)
    return doc


def _lone_surrogate(value: Any) -> str | None:
    """The path of the first string (key or value) holding an unpaired UTF-16 surrogate. Only
    strings and containers are visited, and a node's path is made only for a container (a plan
    of 100,000 seeds is not copied into 100,000 paths to find no string in it)."""
    stack: list[tuple[Any, tuple[Any, ...], Any]] = [(value, (), _ROOT)]  # (node, its parent's path, its key)
    while stack:
        node, parent, key = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return field_name(parent if key is _ROOT else (*parent, key))
        elif isinstance(node, dict | list):
            path = parent if key is _ROOT else (*parent, key)
            for k, v in (node.items() if isinstance(node, dict) else enumerate(node)):
                if isinstance(k, str):
                    stack.append((k, path, k))
                if isinstance(v, str | dict | list):
                    stack.append((v, path, k))
    return None


_ROOT = object()  # the key of the top-level value: it has no path of its own


def parse_own_json(data: bytes, at: str) -> Any:
    """Parse a line this process wrote with ``json.dumps`` from a dict (no lone surrogate: the
    UTF-8 encoding would have failed; keys unique, unless a dict mixed ``1`` and ``"1"``, when the
    last wins as in ``json.loads``). When its bytes cannot hold a non-finite number, nesting beyond
    MAX_DEPTH or an integer beyond 64 bits, the C parser reads it as it is; otherwise it gets every
    check of :func:`parse_json`. A run reads its own index back at its end, and the full checks
    cost more than a trivial episode's run (docs/benchmarks.md)."""
    if (b"NaN" in data or b"Infinity" in data or _long_integer(data)
            or data.count(b"[") + data.count(b"{") >= MAX_DEPTH):
        return parse_json(data, at)
    return json.loads(data)


def _long_integer(data: bytes) -> bool:
    """Whether ``data`` may hold an integer of 19 digits or more (strings count too: a false alarm
    only costs the full checks). A run of digits after a "." is a fraction, which only rounds:
    every ``wall_seconds`` of an index line has one, and a regular expression that counted it
    sent nearly every line down the slow path; this scan costs a tenth of ``json.loads``."""
    nines = data.translate(_DIGITS_AS_NINES)
    at = nines.find(_LONG_RUN)
    while at != -1:  # the leftmost match starts its run of digits
        if at == 0 or nines[at - 1] != 0x2E:  # not after a "."
            return True
        end = at + len(_LONG_RUN)
        while end < len(nines) and nines[end] == 0x39:
            end += 1
        at = nines.find(_LONG_RUN, end)
    return False


def parse_json(data: bytes, at: str) -> Any:
    """Parse strict UTF-8 JSON with finite numbers only, integers within 64 bits, no key twice
    in one object and no lone surrogate; ``at`` names the file and line for errors."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:3] == b"\xef\xbb\xbf":
        raise InputError(f"{at}: starts with a byte-order mark (UTF-16 or UTF-8-BOM); expected UTF-8 JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{at}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{at}: empty, expected JSON")
    try:
        value = json.loads(text, parse_int=_bounded_int, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"{at}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except _Refused as exc:
        raise InputError(f"{at}: {exc}") from None
    except RecursionError:
        raise InputError(f"{at}: JSON nested deeper than {MAX_DEPTH} levels") from None
    _check_tree(value, at)
    if _SURROGATE_ESCAPE.search(data) and (bad := _lone_surrogate(value)) is not None:
        raise InputError(f"{at}: field {bad!r} holds a lone UTF-16 surrogate (\\ud800-\\udfff unpaired), "
                         "not text")
    return value


def read_text(path: str | os.PathLike[str], *, what: str = "file") -> str:
    """A regular file's text (bounded, strict UTF-8, no lone surrogate possible)."""
    data = read_bytes(path, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def parse_yaml(text: str, at: str) -> Any:
    """YAML (safe loader) held to what JSON files are: finite numbers, bounded nesting, integers
    within 64 bits, text without lone surrogates."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{at}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise InputError(f"{at}: YAML nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer of thousands of digits, a bad date
        raise InputError(f"{at}: a value YAML cannot hold ({str(exc)[:80]})") from None
    _check_tree(value, at)
    stack = [value]
    while stack:  # _check_tree bounded the depth
        node = stack.pop()
        if isinstance(node, int) and not isinstance(node, bool) and abs(node) > MAX_INT:
            raise InputError(f"{at}: an integer beyond the documented bound of {MAX_INT} (2^63 - 1)")
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if (bad := _lone_surrogate(value)) is not None:
        raise InputError(f"{at}: field {bad!r} holds a lone UTF-16 surrogate, not text")
    return value


def read_json(path: str | os.PathLike[str], *, what: str = "JSON file", schema: dict[str, Any] | None = None) -> Any:
    """Read, parse and (with ``schema``) validate one JSON file."""
    doc = parse_json(read_bytes(path, what=what), str(path))
    if schema is not None:
        check(doc, schema, str(path))
    return doc


def field_name(parts: Any) -> str:
    name = ""
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "(top level)"


def check(instance: Any, schema: dict[str, Any], at: str) -> None:
    """Validate against a JSON Schema; the error names the deepest failing field."""
    validator = _validator(schema)
    if validator.is_valid(instance):  # the common case, without collecting errors
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is None:
        return
    path = list(error.absolute_path)
    if error.validator == "required":  # name the missing field itself
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        raise InputError(f"{at}: field {field_name([*path, missing])!r} is missing")
    value = json.dumps(error.instance, default=str)
    value = value if len(value) <= 60 else value[:60] + "..."
    expected = error.schema.get("type") or error.schema.get("enum") or error.schema.get("const") or error.validator
    raise InputError(f"{at}: field {field_name(path)!r} is {value}, expected {_expected(expected, error)}")


# Lines already found valid, by (schema, SHA-256 of the line): a line's bytes determine the value it
# parses to, so it is valid again. Reading a run checks the same records many times over (``report``
# verifies every log, then reads it for the page; the viewer re-reads runs), and validation is
# ~80% of reading a log. Only valid lines are kept: every refusal is found and worded as before.
_VALID_LINES: dict[tuple[int, bytes], None] = {}
_VALID_LINES_MAX = 1 << 16  # ~6 MB of keys; emptied when full (no eviction order to race on between threads)


def check_line(line: bytes, instance: Any, schema: dict[str, Any], at: str) -> None:
    """:func:`check` for ``instance``, the value ``line`` parsed to (by :func:`parse_json`)."""
    key = (id(schema), hashlib.sha256(line).digest())
    if key in _VALID_LINES:
        return
    check(instance, schema, at)  # registers the schema in _VALIDATORS, which keeps it (and its id) alive
    if len(_VALID_LINES) >= _VALID_LINES_MAX:
        _VALID_LINES.clear()
    _VALID_LINES[key] = None


def is_valid(instance: Any, schema: dict[str, Any]) -> bool:
    """Whether ``instance`` holds to ``schema`` (what :func:`check` accepts), without a message."""
    return bool(_validator(schema).is_valid(instance))


def _expected(expected: Any, error: jsonschema.ValidationError) -> str:
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "pattern", "minItems", "minLength",
                           "uniqueItems", "maxLength"):
        return f"{error.validator} {error.validator_value}"
    if isinstance(expected, list):
        return " or ".join(map(str, expected))
    return str(expected)


_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    """One compiled validator per schema object (the schemas are module constants; the entry
    keeps its schema alive, so the id is never reused)."""
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        entry = _VALIDATORS[id(schema)] = (schema, cls(schema))
    return entry[1]


def finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
