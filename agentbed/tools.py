"""Tools declared with JSON schemas, and the parsing of raw action text into tool calls.

An action is the JSON text ``{"tool": NAME, "arguments": {...}}`` exactly as the agent
produced it. Parsing never raises: anything malformed becomes an :class:`ActionError` that
the environment turns into an observation, so a bad action is something the agent sees and
can recover from, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema loads with the first action checked, not with every module that names a tool
    import jsonschema

# An action larger than this is refused before it is decoded (10 MB strings are a test case).
DEFAULT_MAX_ACTION_BYTES = 1_000_000


@dataclass(frozen=True)
class Tool:
    """A function the agent may call: name, description, JSON schema, virtual cost."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    cost: float = 1.0  # virtual seconds charged per call

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI function-calling form, accepted by LangChain's ``bind_tools``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters, "cost": self.cost}


def tool(name: str, description: str, cost: float = 1.0, required: tuple[str, ...] | None = None,
         **properties: dict[str, Any]) -> Tool:
    """Shorthand: ``tool("fetch", "...", url={"type": "string"})``; every property is required
    unless ``required`` names a subset. Extra arguments are refused."""
    names = tuple(properties) if required is None else required
    schema = {"type": "object", "properties": properties, "required": list(names), "additionalProperties": False}
    return Tool(name, description, schema, cost)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    raw: str  # the action text as received, before any parsing


@dataclass(frozen=True)
class ActionError:
    """Why an action could not be executed. ``code`` is stable, ``detail`` is for the agent."""

    code: str
    detail: str

    def observation(self) -> str:
        return json.dumps({"error": self.code, "detail": self.detail}, ensure_ascii=False)


_validators: dict[int, jsonschema.protocols.Validator] = {}


def _validator(t: Tool) -> jsonschema.protocols.Validator:
    key = id(t.parameters)
    v = _validators.get(key)
    if v is None:
        from jsonschema import Draft202012Validator

        v = Draft202012Validator(t.parameters)
        _validators[key] = v
    return v


def _reject_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_reject_nul(k) or _reject_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_reject_nul(v) for v in value)
    return False


def decode_action(action: str | bytes, max_bytes: int = DEFAULT_MAX_ACTION_BYTES) -> str | ActionError:
    """Action text as ``str``; invalid UTF-8 and oversized actions are errors."""
    if isinstance(action, bytes | bytearray):
        if len(action) > max_bytes:
            return ActionError("action_too_large", f"action is {len(action)} bytes; the limit is {max_bytes}")
        try:
            return bytes(action).decode("utf-8")
        except UnicodeDecodeError as exc:
            return ActionError("invalid_utf8", f"action is not valid UTF-8 ({exc.reason} at byte {exc.start})")
    if not isinstance(action, str):
        return ActionError("invalid_action", f"action must be JSON text, got {type(action).__name__}")
    # len() counts characters; the byte size can only be larger, so this is a cheap first test.
    if len(action) > max_bytes or len(action.encode("utf-8", "surrogatepass")) > max_bytes:
        return ActionError("action_too_large", f"action exceeds the limit of {max_bytes} bytes")
    try:
        action.encode("utf-8")
    except UnicodeEncodeError:
        return ActionError("invalid_utf8", "action contains lone surrogates and is not valid UTF-8")
    return action


def split_action(action: str | bytes, max_bytes: int = DEFAULT_MAX_ACTION_BYTES
                 ) -> tuple[str, Any, str] | ActionError:
    """(tool name, arguments as sent, text) of an action shaped like a tool call, checked against
    no tool set: for worlds whose own runtime checks names and arguments (AgentDojo's)."""
    text = decode_action(action, max_bytes)
    if isinstance(text, ActionError):
        return text
    if "\x00" in text:
        return ActionError("nul_byte", "action contains a NUL byte")
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return ActionError("invalid_json", f"action is not JSON: {str(exc)[:200]}")
    if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str):
        return ActionError("invalid_action", 'expected {"tool": NAME, "arguments": {...}}')
    return obj["tool"], obj.get("arguments", {}), text


def parse_action(action: str | bytes, tools: dict[str, Tool],
                 max_bytes: int = DEFAULT_MAX_ACTION_BYTES) -> ToolCall | ActionError:
    """Turn raw action text into a validated :class:`ToolCall`, or say what is wrong."""
    split = split_action(action, max_bytes)
    if isinstance(split, ActionError):
        return split
    name, arguments, text = split
    spec = tools.get(name)
    if spec is None:
        known = ", ".join(sorted(tools))
        return ActionError("unknown_tool", f"no tool named {name[:80]!r}; tools: {known}")
    if not isinstance(arguments, dict):
        return ActionError("invalid_arguments", f"arguments of {name} must be an object")
    if _reject_nul(arguments):
        return ActionError("nul_byte", f"an argument of {name} contains a NUL character")
    from jsonschema.exceptions import best_match

    error = best_match(_validator(spec).iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        return ActionError("invalid_arguments", f"{name}: {where}: {error.message[:300]}")
    return ToolCall(name, arguments, text)


def make_action(tool_name: str, **arguments: Any) -> str:
    """Serialize a tool call the way scripted agents send it."""
    return json.dumps({"tool": tool_name, "arguments": arguments}, ensure_ascii=False)
