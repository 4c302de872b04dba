"""Reading untrusted files: bounded, strict UTF-8 JSON, validated by JSON Schema.

Every reader of a file a user hands to the CLI (a log, a run index, run.json, results, a
baseline) goes through here, so a bad file is one :class:`InputError` naming the file, the
line and the field, never a traceback. Sizes are bounded before parsing (a huge line costs
no more than the bound) and so is nesting (the ``json`` module would recurse until
``RecursionError``). Schemas are JSON Schema (draft 2020-12); the trajectory schema is
``agentbed/schema/trajectory.schema.json``, the others are below.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import jsonschema

from agentbed.errors import UsageError

MAX_JSON_BYTES = 64 * 1024 * 1024  # a results file, run.json or baseline; far above any real one
MAX_LINE_BYTES = 64 * 1024 * 1024  # one log record or index line
MAX_DEPTH = 200  # nesting of arrays and objects; real records stay below 20


class InputError(UsageError):
    """A file's content is unusable. The message names the file, and the line and field if known."""


def where(path: str | os.PathLike[str], line: int | None = None) -> str:
    return f"{path}: line {line}" if line is not None else str(path)


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_JSON_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            if not os.path.isfile(p):
                raise InputError(f"{p}: not a regular {what}")
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a {what}") from None
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
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


def parse_json(data: bytes, at: str) -> Any:
    """Parse strict UTF-8 JSON with finite numbers only; ``at`` names the file and line for errors."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:3] == b"\xef\xbb\xbf":
        raise InputError(f"{at}: starts with a byte-order mark (UTF-16 or UTF-8-BOM); expected UTF-8 JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{at}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{at}: empty, expected JSON")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{at}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{at}: JSON nested deeper than {MAX_DEPTH} levels") from None
    _check_tree(value, at)
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


# -- schemas of the engine's files -------------------------------------------------------------
_STR = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}

RUN_META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["suite", "tasks", "agents", "seeds", "options"],
    "properties": {
        "suite": _NAME,
        "tasks": {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
        "agents": {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
        "seeds": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
        "options": {"type": "object"},
        "degrade": {"type": "number", "minimum": 0, "maximum": 1},
        "executor": _STR,
        "command": _STR,
    },
}

INDEX_RECORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["episode_id", "suite", "task", "agent", "seed", "status", "success"],
    "properties": {
        "episode_id": _NAME, "suite": _STR, "task": _STR, "agent": _STR, "seed": {"type": "integer"},
        "status": _STR, "success": {"type": "boolean"}, "total_reward": {"type": "number"},
        "steps": {"type": "integer"}, "virtual_seconds": {"type": "number"}, "tokens": {"type": "integer"},
        "metrics": {"type": "object"}, "labels": {"type": "array", "items": _STR}, "options": {"type": "object"},
        "log": _STR, "digest": _STR, "wall_seconds": {"type": "number"}, "error": {"type": ["string", "null"]},
    },
}

RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "metrics"],
    "properties": {
        "format": {"const": "agentbed.results/1"},
        "episodes": {"type": "integer"},
        "seeds": {"type": "array"},
        "metrics": {"type": "array", "items": {
            "type": "object",
            "required": ["suite", "agent", "metric", "values"],
            "properties": {
                "suite": _STR, "agent": _STR, "metric": _STR, "higher_is_better": {"type": "boolean"},
                "tolerance": {"type": "number", "minimum": 0},
                "values": {"type": "object", "additionalProperties": {"type": "number"}},
            },
        }},
    },
}


@cache
def trajectory_schema() -> dict[str, Any]:
    path = Path(__file__).resolve().parent / "schema" / "trajectory.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def record_schema(kind: str) -> dict[str, Any]:
    """The trajectory schema for one record type: its if/then branch for that type picked
    ahead of time (what the full schema says, checked several times faster)."""
    full = trajectory_schema()
    branches = [b["then"] for b in full.get("allOf", [])
                if b.get("if", {}).get("properties", {}).get("type", {}).get("const") == kind]
    return {**{k: v for k, v in full.items() if k != "allOf"}, "allOf": branches}
