"""The local profile's action schema (one object per tool in an ``anyOf``) keeps every ``$ref`` of a
tool's parameters resolvable from its root: llama.cpp refuses a grammar with an unresolved one
("cannot resolve $ref #/$defs/SharingPermission, $defs not found" on AgentDojo's workspace
tools, which made every step of a local model there a provider error)."""

from __future__ import annotations

from typing import Any

import pytest

from agentbed.agents.local.profile import action_schema
from agentbed.tools import Tool


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    return [r for v in node for r in _refs(v)] if isinstance(node, list) else []


def _resolves(schema: dict[str, Any], ref: str) -> bool:
    node: Any = schema
    for part in ref.removeprefix("#/").split("/"):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _with_enum(name: str, values: list[str]) -> Tool:
    return Tool(name, "share", {"type": "object", "properties": {"permission": {"$ref": "#/$defs/Permission"}},
                                "required": ["permission"], "$defs": {"Permission": {"enum": values, "type": "string"}}})


def test_a_tools_definitions_move_to_the_root_where_its_references_resolve():
    schema = action_schema([_with_enum("share_file", ["r", "rw"]), _with_enum("share_event", ["r", "rw"]),
                            Tool("noop", "nothing")])
    assert schema["$defs"] == {"Permission": {"enum": ["r", "rw"], "type": "string"}}
    assert all("$defs" not in option["properties"]["arguments"] for option in schema["anyOf"])
    assert _refs(schema) == ["#/$defs/Permission"] * 2 and all(_resolves(schema, r) for r in _refs(schema))
    assert "$defs" not in action_schema([Tool("noop", "nothing")])  # no definitions: the schema as before


def test_two_tools_defining_one_name_differently_are_refused():
    with pytest.raises(ValueError, match="tools share_file and share_event define \\$defs 'Permission' differently"):
        action_schema([_with_enum("share_file", ["r", "rw"]), _with_enum("share_event", ["r"])])


@pytest.mark.parametrize("suite", ["workspace", "travel", "banking", "slack"])
def test_every_reference_of_agentdojos_real_tools_resolves(suite):
    from environments.agentdojo.env import suite_tools

    schema = action_schema(suite_tools(suite))
    assert all(_resolves(schema, ref) for ref in _refs(schema))
