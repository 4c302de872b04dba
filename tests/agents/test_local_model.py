"""The local model end to end, against the real llama.cpp server (the session's ``local_model``):
the bytes the environment and its grader receive are the bytes the server sent, usage is the
server's count, the log verifies and reruns identically (a vault episode; contracts has its own in
tests/contracts/test_local_model.py). Asserts on the pipeline, never on the score."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import jsonschema
import pytest

from agentbed.agents.chat import ChatAgent
from agentbed.agents.local.profile import LocalProfile, action_schema, constrained_schema, constrained_to
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.vault.env import VaultEnv

# a busy 2-core machine decodes at a few tokens per second: no test here is about speed
pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model"), pytest.mark.timeout(1800)]
# enough for vault's and TOTP's short actions; the tests check the pipeline, not the play
CAP = 32


class Wire:
    """The chat-completion bodies exactly as the server sent them (an httpx response hook)."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []

    def client(self) -> httpx.Client:
        def keep(response: httpx.Response) -> None:
            if response.request.url.path.endswith("/chat/completions"):
                response.read()
                self.bodies.append(json.loads(response.content))

        return httpx.Client(event_hooks={"response": [keep]})


def wired_agent(local_model, wire: Wire, seed: int = 0, **profile) -> ChatAgent:
    return local_model.agent(seed, model_kwargs={"http_client": wire.client()}, **profile)


def grader_inputs(env) -> list[str]:
    """The raw action text of every tool call the environment executed (what its grader reads)."""
    seen: list[str] = []
    execute = env.call_tool

    def recording(call):
        seen.append(call.raw)
        return execute(call)

    env.call_tool = recording
    return seen


def play(env, agent, tmp_path: Path, name: str, suite: str, max_steps: int = 3):
    log = tmp_path / f"{name}.jsonl"
    spec = EpisodeSpec(suite, env.task.id, agent.name, 0)
    record = run_episode(env, agent, spec, budget=Budget(max_steps=max_steps), writer=TrajectoryWriter(log))
    return record, read_log(log), log


def steps_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "step"]


def check_pipeline(records: list[dict], log: Path, wire: Wire, executed: list[str], model: str) -> None:
    """The log holds the server's bytes and counts, the grader saw those bytes, the log verifies
    and reruns identically (through the CLI, as a user would)."""
    steps = steps_of(records)
    assert steps and len(steps) == len(wire.bodies)
    sent = [body["choices"][0]["message"]["content"] for body in wire.bodies]
    for step, body, text in zip(steps, wire.bodies, sent, strict=True):
        assert step["action"] == text  # the environment got the server's bytes
        usage = body["usage"]
        assert step["usage"] == {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                                 "total_tokens": usage["total_tokens"]}
        assert step["model_output"]["arguments_source"] == "content"
        assert step["model_output"]["finish_reason"] == body["choices"][0]["finish_reason"]
    assert executed == [t for t, s in zip(sent, steps, strict=True) if not s["info"].get("action_error")]
    assert records[-1]["tokens"] == sum(b["usage"]["total_tokens"] for b in wire.bodies)
    assert records[0]["agent"]["model"] == model
    assert verify_log(log).ok
    recorded, replayed = rerun(log)
    assert first_divergence(recorded, replayed) is None
    done = subprocess.run([sys.executable, "-m", "agentbed.cli", "replay", str(log), "--rerun"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "identical", done.stdout + done.stderr


def test_a_vault_episode_carries_the_servers_bytes_and_counts(local_model, tmp_path):
    wire, env = Wire(), VaultEnv("open-fast")
    executed = grader_inputs(env)
    record, records, log = play(env, wired_agent(local_model, wire, max_tokens=CAP), tmp_path, "vault", "vault")
    assert record.status != "error", record.error
    check_pipeline(records, log, wire, executed, local_model.model)
    assert records[0]["agent"]["reply_format"]["max_tokens"] == CAP


def test_the_request_is_the_compact_profile(local_model, tmp_path):
    """What the server is asked: the token cap, the tool menu in the prompt, the grammar over it."""
    seen: list[dict] = []

    def keep(request: httpx.Request) -> None:
        seen.append(json.loads(request.content))

    agent = local_model.agent(model_kwargs={"http_client": httpx.Client(event_hooks={"request": [keep]})})
    env = VaultEnv("open-fast")
    observation, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(observation, env.tool_specs())
    body = seen[0]
    assert "tools" not in body and body["max_completion_tokens"] == LocalProfile().max_tokens
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert all(f"- {t.name}(" in body["messages"][0]["content"] for t in env.tool_specs())
    assert "response_format" not in body and body["grammar"] == constrained_to(action_schema(env.tool_specs()))["grammar"]
    options = constrained_schema(body)["anyOf"]
    assert [o["properties"]["tool"]["const"] for o in options] == [t.name for t in env.tool_specs()]
    assert options[3]["properties"]["arguments"] == env.tool_specs()[3].parameters


def test_the_compact_grammar_writes_one_line_and_every_schema_keyword_still_binds(local_model):
    """``COMPACT_JSON`` changes only the whitespace between JSON tokens: a prompt that shows indented
    JSON still gets one line, the reply is valid against the schema, and a schema that leaves one
    reply (page 7 and nothing else) gets exactly that reply."""
    tools = VaultEnv.tools

    def ask(schema: dict, user: str) -> str:
        body = {"messages": [{"role": "system", "content": LocalProfile().system_prompt(None, tools)},
                             {"role": "user", "content": user}],
                "max_tokens": 48, "temperature": 0.0, "seed": 0, **constrained_to(schema)}
        reply = httpx.post(local_model.base_url + "/chat/completions", json=body, timeout=600).json()
        assert reply["choices"][0]["finish_reason"] == "stop", reply
        return reply["choices"][0]["message"]["content"]

    indented = json.dumps({"tool": "read_logs", "arguments": {"page": 2}}, indent=2)
    schema = action_schema(tools)
    text = ask(schema, f"Last time you answered:\n{indented}\nRead the next page of the audit log.")
    jsonschema.validate(json.loads(text), schema)
    assert text == json.dumps(json.loads(text))  # one line, the separators ", " and ": ", nothing else
    only_seven = {"type": "object", "properties": {"tool": {"const": "read_logs"}, "arguments": {
        "type": "object", "properties": {"page": {"type": "integer", "minimum": 7, "maximum": 7}},
        "required": ["page"], "additionalProperties": False}}, "required": ["tool", "arguments"],
        "additionalProperties": False}
    assert ask(only_seven, f"Last time you answered:\n{indented}\nRead page 5000.") == \
        '{"tool": "read_logs", "arguments": {"page": 7}}'


def test_llguidance_compiles_the_action_schema_of_every_tool_menu_in_the_repository(local_model):
    """The server compiles the grammar when it is asked (a schema it cannot compile is an HTTP
    error at the first step): every suite's tools, AgentDojo's four suites one by one."""
    from environments.agentdojo.env import suite_tools

    menus = {suite: suite_tools(suite) for suite in ("workspace", "travel", "banking", "slack")}
    menus["the other worlds"] = every_other_tool()
    for name, tools in menus.items():
        body = {"messages": [{"role": "user", "content": "Act."}], "max_tokens": 1, "temperature": 0.0,
                **constrained_to(action_schema(tools))}
        reply = httpx.post(local_model.base_url + "/chat/completions", json=body, timeout=600)
        assert reply.status_code == 200, (name, reply.text[:400])


def every_other_tool() -> list:
    """The tools of every world but AgentDojo's, contracts' families' included, one per name."""
    from environments.alfworld.env import AlfworldEnv
    from environments.cocoder.env import CoCoderEnv
    from environments.contracts.env import COMMON_TOOLS
    from environments.contracts.family import FAMILIES
    from environments.graphrag.env import GraphRAGEnv
    from environments.scienceworld.env import ScienceWorldToolEnv
    from environments.shell.env import ShellEnv

    tools = [*VaultEnv.tools, *AlfworldEnv.tools, *CoCoderEnv.tools, *COMMON_TOOLS, *GraphRAGEnv.tools,
             *ScienceWorldToolEnv.tools, *ShellEnv.tools, *(t for family in FAMILIES.values() for t in family.tools)]
    return list({t.name: t for t in tools}.values())
