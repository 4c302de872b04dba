"""The LangChain coder through the real ChatOpenAI client against the loopback stub of tests/agents."""

import json
import sys
from pathlib import Path

from agentbed.testing import require

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402 - the shared stub lives beside the chat tests

from environments.cocoder.agents import langchain_coder  # noqa: E402
from environments.cocoder.tasks import load_task  # noqa: E402
from suites.cocoder.team import TeamConfig, run_team  # noqa: E402

TASK = "synth-12"


def _last_observation(body):
    for message in reversed(body["messages"]):
        try:
            obs = json.loads(message.get("content") or "")
        except (TypeError, ValueError):
            continue
        if isinstance(obs, dict) and "module" in obs:
            return obs
    return None


def _policy(task):
    """Answer each observation with the reference file (a perfect model), as raw tool-call text."""
    def answer(body):
        obs = _last_observation(body)
        if obs is None:
            return Reply(content="nothing to do")
        source = load_task(task).modules[obs["module"]].reference
        return Reply([("write_file", json.dumps({"module": obs["module"], "source": source}))],
                     prompt_tokens=100, completion_tokens=50)
    return answer


def _run(task, config, tmp_path):
    stub = OpenAIStub(_policy(task))
    base_url = stub.start() or stub.base_url
    try:
        factory = lambda worker: langchain_coder("openai:stub-model", 0, base_url=base_url,  # noqa: E731
                                                 api_key="test", timeout=10.0)
        return run_team(task, config, 0, tmp_path, agent_factory=factory), stub
    finally:
        stub.stop()


def test_team_of_langchain_coders_with_provider_token_counts(sandbox, tmp_path):
    result, stub = _run(TASK, TeamConfig(strategy="cocoder", agents=2, coder="model:openai:stub-model"), tmp_path)
    m = result.record.metrics
    assert result.record.status == "ok", result.record.error
    assert m["pass_rate"] == 1.0
    assert m["provider_tokens"] == 150 * m["modules"]  # every turn's usage as the provider reported it
    tools = {t["function"]["name"] for t in stub.requests[0]["tools"]}
    assert tools == {"write_file"}


def test_an_ordered_piece_prompt_carries_the_interfaces_its_sibling_wrote(sandbox, tmp_path):
    from environments.cocoder.defs import definition_outlines
    from environments.cocoder.tasks import task_ids

    require("tinydb" in task_ids(), "the fetched tinydb repository", "run scripts/fetch-repos tinydb")
    config = TeamConfig(strategy="cocoder", granularity="ordered", coder="model:openai:stub-model")
    result, stub = _run("tinydb", config, tmp_path)
    assert result.record.status == "ok", result.record.error
    assert result.manifest["plan"] == "split-ordered" and result.record.metrics["pass_rate"] == 1.0
    hub = next(n for n, p in result.manifest["pieces"].items() if p["hub"])
    reference = load_task("tinydb").modules["tinydb.table"].reference
    def hub_view(obs):  # from another agent, or the same agent's earlier (fresh-context) turn
        return {**obs.get("received", {}), **obs.get("written_by_you_earlier", {})}.get(hub)

    prompts = [obs for obs in map(_last_observation, stub.requests) if obs and obs["module"] == "tinydb.table"
               and hub_view(obs)]
    assert len({obs["unit"] for obs in prompts}) == 2  # both pieces that wait for the hub piece
    for obs in prompts:  # the hub's interfaces as its agent wrote them, in the prompt sent to the model
        shown = hub_view(obs)
        assert shown and shown == definition_outlines(reference, list(shown))
        assert set(shown) <= set(result.manifest["pieces"][hub]["definitions"])


def test_a_fresh_context_turn_starts_a_new_chat_and_a_conversation_keeps_it(sandbox, tmp_path):
    lengths = {}
    for context in ("fresh", "conversation"):
        config = TeamConfig(strategy="cocoder", agents=2, coder="model:openai:stub-model", context=context)
        result, stub = _run(TASK, config, tmp_path / context)
        assert result.record.status == "ok" and result.record.metrics["pass_rate"] == 1.0
        lengths[context] = [len(body["messages"]) for body in stub.requests]
    assert set(lengths["fresh"]) == {2}  # system prompt and the turn's observation, every time
    assert max(lengths["conversation"]) > 2  # an agent's later turns continue its chat


def _strings(value):
    """Every text in a request: the messages' contents, and inside a JSON observation each string."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return [value]
        return _strings(inner) if isinstance(inner, dict | list) else [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_no_strategy_shows_the_model_a_reference_body_on_a_real_repository(sandbox, tmp_path):
    """A coder that writes the skeleton back (so nothing it is shown comes from a correct answer):
    no request of any strategy, write phase or repair, holds a line only the reference has."""
    from environments.cocoder.tasks import task_ids

    require("zxcvbn" in task_ids(), "the fetched zxcvbn repository", "run scripts/fetch-repos zxcvbn")
    task = load_task("zxcvbn")
    visible = {ln.strip() for mt in task.modules.values() for ln in mt.skeleton.splitlines()}
    hidden = {ln.strip() for mt in task.modules.values() for ln in mt.reference.splitlines()
              if len(ln.strip()) >= 16 and ln.strip() not in visible}
    assert len(hidden) > 100

    def echo_skeleton(body):
        obs = _last_observation(body)
        if obs is None or "skeleton" not in obs:
            return Reply(content="nothing to do")
        return Reply([("write_file", json.dumps({"module": obs["module"], "source": obs["skeleton"]}))])

    for strategy, granularity in [("sequential", "function"), ("file-parallel", "function"), ("per-file", "function"),
                                  ("cocoder", "function"), ("cocoder", "ordered")]:
        stub = OpenAIStub(echo_skeleton)
        base_url = stub.start() or stub.base_url
        try:
            factory = lambda worker, url=base_url: langchain_coder("openai:stub-model", 0, base_url=url,  # noqa: E731
                                                                   api_key="test", timeout=10.0)
            config = TeamConfig(strategy=strategy, granularity=granularity, coder="model:openai:stub-model")
            run_team("zxcvbn", config, 0, tmp_path / f"{strategy}-{granularity}", agent_factory=factory)
        finally:
            stub.stop()
        observations = [obs for obs in map(_last_observation, stub.requests) if obs]
        assert any(obs.get("repair_request") for obs in observations)  # the repair round was asked too
        texts = [s for body in stub.requests for s in _strings(body["messages"])]
        assert texts and any("raise NotImplementedError" in t for t in texts)
        leaked = sorted(h for h in hidden if any(h in t for t in texts))
        assert not leaked, f"{strategy}/{granularity}: reference lines shown to the model: {leaked[:3]}"
