"""AgentDojo's protocol for ``--model`` (environments/agentdojo/protocol.py), piece by piece, with the
real OpenAI client against the loopback stub: AgentDojo's system message and tools only, every call
of a reply executed in order, arguments that are not JSON answered (AgentDojo's own element raises),
the other protocol kept under its name, and providers it is not written for refused."""

from __future__ import annotations

import json

import pytest
from openai_stub import OpenAIStub, Reply

from agentbed.agents.chat import ChatAgent
from agentbed.errors import UsageError
from agentbed.runner import EpisodeSpec, run_episode
from environments.agentdojo.benchmark import task_suite
from environments.agentdojo.protocol import DojoAgent
from suites.agentdojo.model_crosscheck import openai_endpoint
from suites.agentdojo.suite import SUITE

TASK = "banking.user_task_1"
MODEL = "model:openai:gpt-4o-2024-05-13"


def play(script, options=None):
    stub = OpenAIStub(script)
    opts = SUITE.resolve_options(options or {})
    spec = EpisodeSpec("agentdojo", TASK, MODEL, 0, opts)
    try:
        with openai_endpoint(stub.start()):
            env = SUITE.make_env(TASK, opts)
            record = run_episode(env, SUITE.make_agent(spec, env), spec, budget=SUITE.budget)
    finally:
        stub.stop()
    return record, env, stub.requests


def test_agentdojos_messages_tools_and_every_call_of_a_reply():
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message

    record, env, requests = play([
        Reply(tool_calls=[("get_balance", "{}"), ("get_most_recent_transactions", '{"n": 100}')]),
        Reply(content="You spent 1050.")])
    assert record.status == "ok" and record.steps == 3 and record.metrics["utility"] is True
    first, second = requests
    assert first["messages"][0] == {"role": "developer", "content": [{"type": "text", "text": load_system_message(None)}]}
    assert {t["function"]["name"] for t in first["tools"]} == {f.name for f in task_suite("banking").tools}
    assert first["tool_choice"] == "auto" and "temperature" not in first  # AgentDojo's 0.0 is never sent
    assert [m["role"] for m in second["messages"]] == ["developer", "user", "assistant", "tool", "tool"]
    assert [m["name"] for m in second["messages"][3:]] == ["get_balance", "get_most_recent_transactions"]
    assert [m["tool_call"].function for m in env.state["messages"] if m["role"] == "tool"] == \
        ["get_balance", "get_most_recent_transactions"]


def test_arguments_that_are_not_json_are_an_error_observation_where_agentdojos_element_raises():
    from agentdojo.agent_pipeline.llms.openai_llm import OpenAILLM
    from agentdojo.functions_runtime import FunctionsRuntime
    from agentdojo.types import ChatUserMessage, text_content_block_from_string

    script = [Reply(tool_calls=[("get_balance", "{not json")]), Reply(content="Sorry.")]
    record, env, requests = play(list(script))
    assert record.status == "ok" and record.steps == 2 and record.metrics["utility"] is False
    assert requests[1]["messages"][-1]["role"] == "tool" and "must be an object" in requests[1]["messages"][-1]["content"]
    stub = OpenAIStub(list(script))
    try:
        import openai

        llm = OpenAILLM(openai.OpenAI(base_url=stub.start(), api_key="x"), "gpt-4o-2024-05-13")
        with pytest.raises(json.JSONDecodeError):
            llm.query("", FunctionsRuntime(list(task_suite("banking").tools)), messages=[
                ChatUserMessage(role="user", content=[text_content_block_from_string("hi")])])
    finally:
        stub.stop()


def test_the_one_call_protocol_stays_under_its_name_and_other_providers_are_refused():
    opts = SUITE.resolve_options({"protocol": "agentbed"})
    env = SUITE.make_env(TASK, opts)
    assert "final_answer" in {t.name for t in env.tool_specs()}
    default = SUITE.resolve_options({})
    with openai_endpoint("http://127.0.0.1:9/v1"):  # built, never called
        assert type(SUITE.make_agent(EpisodeSpec("agentdojo", TASK, MODEL, 0, opts), env)) is ChatAgent
        assert isinstance(SUITE.make_agent(EpisodeSpec("agentdojo", TASK, MODEL, 0, default)), DojoAgent)
    with pytest.raises(UsageError, match="--protocol agentbed"):
        SUITE.make_agent(EpisodeSpec("agentdojo", TASK, "model:anthropic:claude-3-5-sonnet", 0, default))


def test_the_model_chosen_filter_with_a_local_model_is_refused_as_agentdojos_runner_refuses_it():
    """AgentDojo's from_config builds its tool filter for its OpenAI element only; its --model local
    pipeline (a LocalLLM) with the filter is a ValueError there, so AgentDojo's protocol has nothing
    to follow: refused naming the two ways that run (agentbed's protocol, the oracle selection)."""
    from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline, PipelineConfig
    from agentdojo.agent_pipeline.llms.local_llm import LocalLLM

    local = LocalLLM(None, "local-model")  # type: ignore[arg-type]  # never called
    with pytest.raises(ValueError, match="Tool filter is only supported for OpenAI models"):
        AgentPipeline.from_config(PipelineConfig(llm=local, model_id=None, defense="tool_filter",
                                                 system_message_name=None, system_message=None))
    AgentPipeline.from_config(PipelineConfig(llm=local, model_id=None, defense="repeat_user_prompt",
                                             system_message_name=None, system_message=None))  # the others build
    local_model = "model:local:gemma-3-270m"
    filtered = SUITE.resolve_options({"defense": "tool_filter"})
    with pytest.raises(UsageError, match=r"Tool filter is only supported for OpenAI models.*--protocol agentbed runs"
                                         r" the filter.*tool_filter_oracle"):
        SUITE.make_agent(EpisodeSpec("agentdojo", TASK, local_model, 0, filtered))
    for defense in ("repeat_user_prompt", "spotlighting_with_delimiting", "tool_filter_oracle"):  # built, never called
        options = SUITE.resolve_options({"defense": defense})
        assert isinstance(SUITE.make_agent(EpisodeSpec("agentdojo", TASK, local_model, 0, options)), DojoAgent)
    agentbeds = SUITE.resolve_options({"defense": "tool_filter", "protocol": "agentbed"})
    assert SUITE.model_agent(EpisodeSpec("agentdojo", TASK, local_model, 0, agentbeds), None) is None  # its chat agent


def test_success_is_utility_without_the_attack_in_every_surface():
    """An episode whose injection worked is not a success anywhere (the outcome the log footer, the
    index, branch and the viewer read), though its utility is True; both scores sit side by side."""
    from environments.agentdojo.agents import InjectionFollower
    from suites.agentdojo.branching import secure_success

    task = "banking.user_task_0.injection_task_1.important_instructions"
    opts = SUITE.resolve_options({})
    env = SUITE.make_env(task, opts)
    record = run_episode(env, InjectionFollower(), EpisodeSpec("agentdojo", task, "injection-follower", 0, opts),
                         budget=SUITE.budget)
    assert record.metrics["utility"] is True and record.metrics["attack_success"] is True
    assert record.success is False and record.success == secure_success(record.metrics)
    assert "ATTACK_SUCCEEDED" in record.labels and "UTILITY" in record.labels


def test_utility_and_attack_success_sit_beside_success_in_replay_branch_and_the_viewer(tmp_path, capsys):
    """Item 6 of issue 47: replay (text and --json), branch (text and --json), the viewer's
    episode row, transcript footer and branch tree, and the report's episode table show both of
    AgentDojo's scores."""
    from agentbed.cli import main
    from agentbed.view.api import episode_document
    from agentbed.view.catalog import Catalog

    out = tmp_path / "runs" / "r"
    assert main(["run", "agentdojo", "--task", "banking.user_task_0.injection_task_1.important_instructions",
                 "--agent", "injection-follower", "--out", str(out), "--quiet"]) == 0
    (log,) = (out / "episodes").glob("*.jsonl")
    capsys.readouterr()
    assert main(["replay", str(log)]) == 0
    assert "success False  utility True  attack_success True" in capsys.readouterr().out
    assert main(["replay", str(log), "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)["outcome"]
    assert outcome["success"] is False and outcome["scores"] == {"utility": True, "attack_success": True}
    assert main(["branch", str(log), "--at", "1", "--agents", "continue,refuse", "--out", str(out / "branches")]) == 0
    text = capsys.readouterr().out
    assert "success=False  utility=True   attack_success=True" in text, text
    assert "success=False  utility=False  attack_success=False" in text, text  # refusing costs the task
    assert main(["branch", str(log), "--at", "1", "--agents", "continue", "--out", str(tmp_path / "b2"), "--json"]) == 0
    (branch,) = json.loads(capsys.readouterr().out)["branches"]
    assert branch["scores"] == {"utility": True, "attack_success": True} and branch["success"] is False
    view = Catalog(tmp_path / "runs").run("r")
    assert view is not None
    doc = episode_document(view, view.refresh()["rows"][0]["id"])
    assert doc["row"]["scores"] == {"utility": True, "attack_success": True} and doc["row"]["success"] is False
    assert doc["transcript"]["footer"]["metrics"]["attack_success"] is True
    assert main(["report", str(out), "--out", str(tmp_path / "report.html")]) == 0
    assert "<td>no utility True  attack_success True</td>" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_episodes_share_one_client_per_endpoint_and_another_endpoint_gets_its_own():
    """A run's episodes reuse one OpenAI client (building one loads the CA bundle: 34 ms of CPU
    each); a different ``OPENAI_*`` environment or timeout is another client."""
    from environments.agentdojo.openai_chat import OpenAIChat

    with openai_endpoint("http://127.0.0.1:9/v1"):
        first, second = OpenAIChat("m").client, OpenAIChat("m").client
        slower = OpenAIChat("m", timeout=5.0).client
    with openai_endpoint("http://127.0.0.1:10/v1"):
        other = OpenAIChat("m").client
    assert first is second and slower is not first and other is not first
    assert str(first.base_url) == "http://127.0.0.1:9/v1/" and str(other.base_url) == "http://127.0.0.1:10/v1/"


@pytest.mark.parametrize("settings", [{}, {"temperature": 0.5, "seed": 3, "max_tokens": 64, "top_p": 0.9}])
def test_a_request_goes_out_as_the_sdks_create_sends_it(settings):
    """OpenAIChat.create posts the body itself (the SDK's walk of it cost 6 ms a request): the same
    bytes to the same path as ``chat.completions.create(**body)``, and the same completion back."""
    import httpx
    import openai

    from environments.agentdojo.openai_chat import OpenAIChat, filter_request, request, tool_param

    completion = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
                  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                      "role": "assistant", "content": None, "tool_calls": [
                          {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}}],
                  "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
    sent: list[tuple[str, bytes]] = []

    def answer(req: httpx.Request) -> httpx.Response:
        sent.append((str(req.url), req.content))
        return httpx.Response(200, json=completion)

    client = openai.OpenAI(api_key="k", base_url="http://stub.invalid/v1", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    chat = OpenAIChat("gpt-4o-2024-05-13", settings, client=client)
    functions = list(task_suite("banking").tools)[:3]
    wire = [{"role": "developer", "content": [{"type": "text", "text": "You are a helpful assistant."}]},
            {"role": "user", "content": [{"type": "text", "text": "Pay the bill, 2026-12-06 10:00."}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "t0", "type": "function", "function": {"name": functions[0].name, "arguments": "{}"}}]},
            {"role": "tool", "content": [{"type": "text", "text": "[]"}], "tool_call_id": "t0",
             "name": functions[0].name}]
    bodies = [{**request(chat.model, [], functions, settings), "messages": wire},
              {**filter_request(chat.model, [], functions, 0.0), "messages": wire},
              {**request(chat.model, [], [], settings), "messages": wire}]
    assert bodies[0]["tools"] == [tool_param(f) for f in functions]
    for body in bodies:
        theirs = client.chat.completions.create(**body)
        ours = chat.create(body)
        assert sent[-1] == sent[-2] and sent[-1][0].endswith("/v1/chat/completions")
        assert ours.model_dump() == theirs.model_dump()
    assert len(sent) == 6
