"""The LangChain coder through the real ChatOpenAI client against the loopback stub of tests/agents."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402 - the shared stub lives beside the chat tests

from environments.cocoder.agents import langchain_coder  # noqa: E402
from environments.cocoder.tasks import load_task  # noqa: E402
from environments.cocoder.team import TeamConfig, run_team  # noqa: E402

TASK = "synth-12"


def _policy(body):
    """Answer each observation with the reference file (a perfect model), as raw tool-call text."""
    for message in reversed(body["messages"]):
        try:
            obs = json.loads(message.get("content") or "")
        except (TypeError, ValueError):
            continue
        if isinstance(obs, dict) and "module" in obs:
            source = load_task(TASK).modules[obs["module"]].reference
            return Reply([("write_file", json.dumps({"module": obs["module"], "source": source}))],
                         prompt_tokens=100, completion_tokens=50)
    return Reply(content="nothing to do")


def test_team_of_langchain_coders_with_provider_token_counts(sandbox, tmp_path):
    stub = OpenAIStub(_policy)
    base_url = stub.start() or stub.base_url
    try:
        factory = lambda worker: langchain_coder("openai:stub-model", 0, base_url=base_url,  # noqa: E731
                                                 api_key="test", timeout=10.0)
        result = run_team(TASK, TeamConfig(strategy="cocoder", agents=2, coder="model:openai:stub-model"), 0,
                          tmp_path, agent_factory=factory)
    finally:
        stub.stop()
    m = result.record.metrics
    assert result.record.status == "ok", result.record.error
    assert m["pass_rate"] == 1.0
    assert m["provider_tokens"] == 150 * m["modules"]  # every turn's usage as the provider reported it
    tools = {t["function"]["name"] for t in stub.requests[0]["tools"]}
    assert tools == {"write_file"}
