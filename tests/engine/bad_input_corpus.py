"""A corpus of malformed inputs for every file the CLI reads, generated from valid ones.

Grow it when a reader is added: give the new file kind a ``KINDS`` entry (how to find a valid
instance in a run directory, its schema) and a verb in ``test_bad_input.py`` that reads it.

Two families:
- ``generic_contents()``: bytes no reader should accept (empty, binary, UTF-16, a BOM,
  nesting far past any limit, a line past the size limit, JSON of the wrong shape);
- ``field_mutations(doc, schema)``: for every field of a valid document, the document with
  that field deleted or given a value of the wrong type, kept only when the schema rejects it
  (so the reader must refuse it and name the field).
Logs are re-chained after a mutation (:func:`rechain`), so a mutated log passes the hash
chain and reaches the readers' field checks: this is what a careless tool, not an attacker,
would write, and it must still be one line, not a traceback.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from agentbed.log import GENESIS, _seal
from agentbed.validate import MAX_DEPTH, MAX_LINE_BYTES

# contents that leave a log recognisable as one (its header line intact): a checking verb
# (verify, report) may call them "changed" (exit 1) rather than refuse them (exit 2)
DAMAGED_LOGS = {"latin1", "truncated"}
DEEP = 100_000  # nesting levels: past Python's recursion limit, far past MAX_DEPTH


def generic_contents(valid: bytes) -> Iterator[tuple[str, bytes]]:
    """(name, content) pairs that are not a valid file of any kind."""
    yield "empty", b""
    yield "blank-lines", b"\n\n  \n"
    yield "binary", bytes(range(256)) * 8
    yield "nul-bytes", b"\0" * 4096
    yield "utf16", valid.decode("utf-8").encode("utf-16")
    yield "utf8-bom", b"\xef\xbb\xbf" + valid
    yield "latin1", valid.replace(b"}", b"\xe9}", 1)
    yield "deep-array", b"[" * DEEP + b"]" * DEEP
    yield "deep-object", b'{"a":' * DEEP + b"1" + b"}" * DEEP
    yield "deep-just-past-limit", b"[" * (MAX_DEPTH + 5) + b"]" * (MAX_DEPTH + 5)
    yield "json-scalar", b"42\n"
    yield "json-list", b"[1, 2, 3]\n"
    yield "json-null", b"null\n"
    yield "nan", b'{"x": NaN}\n'
    yield "truncated", valid[: max(1, len(valid) // 3)]


def huge_line() -> bytes:
    """One line longer than any reader accepts (written to disk only once per kind)."""
    return b'{"x": "' + b"a" * (MAX_LINE_BYTES + 16) + b'"}\n'


def wrong_values(value: Any) -> list[Any]:
    """Values of another JSON type than ``value`` (and, for numbers, a non-finite one)."""
    if isinstance(value, bool):
        return ["yes", 1]
    if isinstance(value, int):
        return ["7", 1.5, [value]]
    if isinstance(value, float):
        return ["0.5", None, 1e999]
    if isinstance(value, str):
        return [7, {"text": value[:10]}, None]
    if isinstance(value, dict):
        return [[], "object"]
    if isinstance(value, list):
        return [{}, "list"]
    return [[], {"x": 1}]  # null


def field_mutations(doc: dict[str, Any], schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(description, field, mutated document) for every top-level field the schema rejects
    when it is deleted or given a wrong type. ``field`` is what the error must name."""
    validator = jsonschema.validators.validator_for(schema)(schema)
    for key in list(doc):
        if key in ("hash", "prev"):
            continue
        deleted = {k: v for k, v in doc.items() if k != key}
        if not validator.is_valid(deleted):
            yield f"{key}: deleted", key, deleted
        for wrong in wrong_values(doc[key]):
            mutated = copy.deepcopy(doc)
            mutated[key] = wrong
            if not validator.is_valid(json.loads(json.dumps(mutated))) or _non_finite(wrong):
                yield f"{key}: {json.dumps(wrong)[:20]}", key, mutated


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and value != value or value in (float("inf"), float("-inf"))


def rechain(records: list[dict[str, Any]]) -> bytes:
    """Serialise records as a log whose hash chain is intact (the writer's own sealing)."""
    prev, lines = GENESIS, []
    for record in records:
        body = {k: v for k, v in record.items() if k not in ("prev", "hash")}
        line, prev = _seal(body, prev) if _finite_all(body) else _seal_lenient(body, prev)
        lines.append(line)
    return ("\n".join(lines) + "\n").encode("utf-8")


def _finite_all(body: dict[str, Any]) -> bool:
    try:
        json.dumps(body, allow_nan=False)
        return True
    except ValueError:
        return False


def _seal_lenient(body: dict[str, Any], prev: str) -> tuple[str, str]:
    """Like the writer's seal, but writes non-finite numbers (``Infinity``) as a careless tool might."""
    import hashlib

    body["prev"] = prev
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text[:-1] + ',"hash":"' + digest + '"}', digest


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)
