"""A CoCoder team run with the local model end to end (the session's ``local_model``: llama.cpp
serving Gemma 3 270M on loopback): the code the team's tests grade is the bytes the server sent,
the token counts are the server's, the logs verify and rerun identically, and no prompt carries
the reference's bodies. Asserts on the pipeline, never on the score."""

from __future__ import annotations

import json

import httpx
import pytest

from agentbed.agents.local.profile import LocalProfile
from agentbed.agents.replay import ReplayAgent
from agentbed.env import TaskSpec
from agentbed.log import MemoryWriter, read_log
from agentbed.replay import first_divergence
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.cocoder.agents import LOCAL_CODER_OBSERVATION_CHARS, langchain_coder
from environments.cocoder.depgraph import estimate_tokens
from environments.cocoder.env import CoCoderEnv
from environments.cocoder.tasks import load_task
from suites.cocoder.team import TeamConfig, run_team, verify_manifest

pytestmark = [pytest.mark.local_model, pytest.mark.one_worker("local-model")]
TASK = "synth-2"  # two small modules to write


def test_a_local_model_team_writes_what_the_server_sent(local_model, sandbox, tmp_path):
    bodies: list[dict] = []
    requests: list[dict] = []

    def keep(response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            response.read()
            bodies.append(json.loads(response.content))
            requests.append(json.loads(response.request.content))

    # a short cap and no repair round: two model turns, the pipeline checked, not the model's skill
    profile = LocalProfile(max_tokens=160, max_observation_chars=LOCAL_CODER_OBSERVATION_CHARS)
    factory = lambda worker: langchain_coder(local_model.model, 0, base_url=local_model.base_url,  # noqa: E731
                                             http_client=httpx.Client(event_hooks={"response": [keep]}),
                                             profile=profile)
    config = TeamConfig(strategy="sequential", coder=f"model:{local_model.model}", repair_rounds=0)
    result = run_team(TASK, config, 0, tmp_path, agent_factory=factory)
    m = result.record.metrics
    assert bodies and 0.0 <= m["pass_rate"] <= 1.0
    assert verify_manifest(tmp_path / result.record.log.split("/")[-1]) == []
    assert m["provider_tokens"] == sum(b["usage"]["total_tokens"] for b in bodies)  # the server's counts
    task = load_task(TASK)
    skeletons = "\n".join(mt.skeleton for mt in task.modules.values())
    hidden = [line.strip() for mt in task.modules.values() for line in mt.reference.splitlines()
              if line.strip().startswith("return ") and line.strip() not in skeletons]
    assert hidden and not any(h in json.dumps(r["messages"]) for r in requests for h in hidden)  # no reference shown
    sent = [b["choices"][0]["message"]["content"] for b in bodies]
    logs = [tmp_path / a["log"] for a in result.manifest["agents"]]
    steps = [r for log in logs for r in read_log(log) if r["type"] == "step"]
    assert [s["action"] for s in steps] == sent  # every action is the server's reply, byte for byte
    for step in steps:  # a unit the environment accepted is billed for exactly the source the server sent
        if step["info"].get("unit"):
            assert _is_write(step["action"])
            assert step["info"]["out_tokens"] == estimate_tokens(json.loads(step["action"])["arguments"]["source"])
    for log in logs:  # each agent's episode reruns identically from its recorded actions
        recorded = read_log(log)
        header = recorded[0]
        env = CoCoderEnv(TaskSpec(header["info"]["task"], header["task_params"]))
        writer = MemoryWriter()
        spec = EpisodeSpec(header["suite"], header["task"], header["agent_id"], header["seed"], header["options"])
        run_episode(env, ReplayAgent([r for r in recorded if r["type"] == "step"], header["agent"]), spec,
                    budget=Budget(**header["budget"]), writer=writer)
        assert first_divergence(recorded, [json.loads(line) for line in writer.lines]) is None


def _is_write(action: str) -> bool:
    try:
        reply = json.loads(action)
    except ValueError:
        return False
    return isinstance(reply, dict) and reply.get("tool") == "write_file" and \
        isinstance(reply.get("arguments"), dict) and isinstance(reply["arguments"].get("source"), str)
