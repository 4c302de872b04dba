"""A chat model as base agent: the real LangChain OpenAI client against the project's loopback
stub (tests/agents/openai_stub.py); its stated confidence becomes the risk score."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402 - the shared stub lives beside the chat tests

from agentbed.agents.chat import REFLECT_PROMPT  # noqa: E402
from controllers.oversight.dataset import BuildConfig  # noqa: E402
from suites.oversight.build import build_dataset  # noqa: E402

ASKED_TO_REFLECT: list[bool] = []
SAMPLING: list[tuple[float, int]] = []


def _model(body):
    # reads log pages forever, stating confidence 0.3: the episode runs out of steps unless overseen
    ASKED_TO_REFLECT.append(any(str(m.get("content") or "").startswith(REFLECT_PROMPT) for m in body["messages"]))
    SAMPLING.append((body.get("temperature"), body.get("seed")))
    if len(SAMPLING) % 5 == 0:  # now and then no confidence at all: counted, never a silent 0.5
        return Reply([("read_logs", '{"page": 1}')], content="reading on")
    return Reply([("read_logs", '{"page": 1}')], content="confidence: 0.3")


def test_chat_model_trajectories_are_branched_with_stated_confidence_as_risk(monkeypatch):
    stub = OpenAIStub(_model)
    stub.start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        ds = build_dataset(BuildConfig("vault", games=2, flaws=["noisy", "model:openai:stub-model"], rollouts=2,
                                       checkpoints=1, first=2))
    finally:
        stub.stop()
    model_rows = [r for r in ds.rows if r["flaw"] == "model:openai:stub-model"]
    assert model_rows and all(abs(r["risk"] - 0.7) < 1e-9 for r in model_rows)  # stated, or carried forward
    counts = ds.provenance["counts_per_flaw"]["model:openai:stub-model"]
    assert 0 < counts["missing_risk_steps"] < counts["base_steps"]
    # sampled above temperature 0, a seed per rollout
    assert {t for t, _ in SAMPLING} == {0.7} and len({seed for _, seed in SAMPLING}) >= 2  # rollout 1: its own
    outcome = {r["action"]: r["success"] for r in model_rows
               if r["game"] == ds.provenance["games"][0] and r["rollout"] == 0}
    assert outcome["continue"] is False and outcome["expert"] is True
    # reflect is the chat model asked to reflect (it keeps reading logs here, so it still fails)
    assert outcome["reflect"] is False and ds.provenance["counts"]["branch_errors"] == 0
    assert any(ASKED_TO_REFLECT) and not all(ASKED_TO_REFLECT)
    assert stub.served > 0


def test_the_local_profile_reads_the_confidence_of_its_json_reply():
    from langchain_core.messages import AIMessage

    from controllers.oversight.chat_base import ConfidentProfile

    profile = ConfidentProfile()
    said = AIMessage('{"tool": "act", "arguments": {"command": "go to desk 1"}, "confidence": 0.8}')
    action = profile.action(said, {}, [])
    assert action.text == said.content and abs(action.risk - 0.2) < 1e-9  # the env still gets the bytes
    cut = AIMessage('{"tool": "act", "arguments": {"command": "go to desk 1"}, "confi')  # at the token cap
    assert profile.action(cut, {}, []).risk is None
    assert profile.action(AIMessage("garbage"), {}, []).risk is None


def test_a_local_base_agent_keeps_the_knobs_of_its_model_string(monkeypatch):
    from agentbed.agents.local.server import SERVERS_ENV
    from controllers.oversight.chat_base import DEFAULT_TEMPERATURE, ConfidentProfile, chat_base_agent

    monkeypatch.setenv(SERVERS_ENV, '{"local:gemma-3-270m": "http://127.0.0.1:9/v1"}')  # never called

    agent = chat_base_agent("local:gemma-3-270m?window=2&max_observation_chars=800", seed=3)
    assert isinstance(agent.reply_format, ConfidentProfile)
    assert (agent.reply_format.window, agent.reply_format.max_observation_chars) == (2, 800)
    assert agent.reply_format.temperature == DEFAULT_TEMPERATURE  # sampled, not greedy, unless told
    assert chat_base_agent("local:gemma-3-270m?temperature=0.3", seed=3).reply_format.temperature == 0.3
