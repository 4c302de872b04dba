"""A fast path for validating many small records against a simple JSON Schema.

A viewer reads a 10,000-line run index on its first look; jsonschema's validator costs about a
millisecond a line there. For schemas made only of ``type``, ``required``, ``properties``,
``items``, ``minLength`` and ``additionalProperties`` (the run index's is one), :func:`compile_simple`
builds a plain predicate that is never looser than the schema: when it says True the record is
valid; when it says False the caller runs the full :func:`agentbed.validate.check`, which
decides and names the field. Other schemas get None (always use the full check).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Predicate = Callable[[Any], bool]
_SUPPORTED = {"type", "required", "properties", "items", "minLength", "additionalProperties", "description"}
# exact Python types per JSON type (a subclass, or 1.0 as an integer, goes the full way: stricter)
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "boolean": (bool,), "integer": (int,),
                                       "number": (int, float), "object": (dict,), "array": (list,),
                                       "null": (type(None),)}
_MISSING = object()


def compile_simple(schema: dict[str, Any]) -> Predicate | None:
    """A predicate equivalent to or stricter than ``schema``; None if the schema uses more."""
    if not isinstance(schema, dict) or set(schema) - _SUPPORTED:
        return None
    kinds = schema.get("type")
    allowed: frozenset[type] | None = None
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if any(n not in _TYPES for n in names):
            return None
        allowed = frozenset(t for n in names for t in _TYPES[n])
    min_length = schema.get("minLength")
    required = tuple(schema.get("required", ()))
    props: list[tuple[str, Predicate]] = []
    for name, sub in (schema.get("properties") or {}).items():
        compiled = compile_simple(sub)
        if compiled is None:
            return None
        props.append((name, compiled))
    extra = schema.get("additionalProperties", True)
    if extra not in (True, False):
        return None
    known = frozenset(name for name, _ in props)
    item: Predicate | None = None
    if "items" in schema:
        item = compile_simple(schema["items"])
        if item is None:
            return None

    def valid(value: Any) -> bool:
        kind = type(value)
        if allowed is not None and kind not in allowed:
            return False
        if kind is str:
            return min_length is None or len(value) >= min_length
        if kind is dict:
            for name in required:
                if name not in value:
                    return False
            for name, check in props:
                got = value.get(name, _MISSING)
                if got is not _MISSING and not check(got):
                    return False
            return extra is True or value.keys() <= known
        if kind is list and item is not None:
            return all(item(x) for x in value)
        return True

    return valid
