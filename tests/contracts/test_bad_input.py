"""Bad input from an agent (wrong types, malformed URLs and tokens, huge or binary-looking
strings) is an observation, never an exception, for every tool of every task."""

from __future__ import annotations

import json

from agentbed.tools import make_action
from environments.contracts.env import ContractEnv

NASTY = ["", "http://[", "%%%", "a" * 20000, "\u212b\u00e9\n\r\t", "=&?#", "t=abc,v1=zz", "0" * 3,
         "https://x/?X-Amz-Date=bad&X-Amz-Expires=-1", "W10=", "eyJ9.e30.x", "[1]|x", "\\u0000"]


def _value(schema: dict, text: str):
    kind = schema.get("type")
    if kind == "integer":
        return len(text)
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return bool(len(text) % 2)
    if "enum" in schema:
        return schema["enum"][0]
    return text


def test_every_tool_answers_garbage_with_an_observation():
    for spec in ContractEnv.task_list():
        env = ContractEnv(spec.id)
        env.reset(seed=0)
        for tool in env.tools:
            if tool.name in ("end_task", "wait", "run_job", "read_logs"):
                continue
            props = tool.parameters.get("properties", {})
            for text in NASTY:
                obs, _, _, _, _ = env.step(make_action(tool.name, **{k: _value(s, text) for k, s in props.items()}))
                assert isinstance(json.loads(obs), dict), (spec.id, tool.name, text)


def test_an_escaped_lone_surrogate_in_any_string_argument_is_a_400_observation():
    # "\\ud800" is valid JSON text but decodes to a string that cannot be encoded as UTF-8
    for spec in ContractEnv.task_list():
        env = ContractEnv(spec.id)
        env.reset(seed=0)
        for tool in env.tools:
            props = tool.parameters.get("properties", {})
            if tool.name == "end_task" or not any(s.get("type") == "string" and "enum" not in s for s in props.values()):
                continue
            args = {k: ("SURROGATE" if s.get("type") == "string" and "enum" not in s else _value(s, "abc"))
                    for k, s in props.items()}
            raw = json.dumps({"tool": tool.name, "arguments": args}).replace("SURROGATE", "\\ud800x")
            obs = json.loads(env.step(raw)[0])
            assert obs["status"] == 400 and "lone surrogate" in obs["body"]["message"], (spec.id, tool.name)
