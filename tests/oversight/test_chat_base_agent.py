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


def _model(body):
    # reads log pages forever, stating confidence 0.3: the episode runs out of steps unless overseen
    ASKED_TO_REFLECT.append(any(m.get("content") == REFLECT_PROMPT for m in body["messages"]))
    return Reply([("read_logs", '{"page": 1}')], content="confidence: 0.3")


def test_chat_model_trajectories_are_branched_with_stated_confidence_as_risk(monkeypatch):
    stub = OpenAIStub(_model)
    stub.start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        ds = build_dataset(BuildConfig("vault", games=2, flaws=["noisy", "model:openai:stub-model"], rollouts=1,
                                       checkpoints=1, first=2))
    finally:
        stub.stop()
    model_rows = [r for r in ds.rows if r["flaw"] == "model:openai:stub-model"]
    assert model_rows and all(abs(r["risk"] - 0.7) < 1e-9 for r in model_rows)
    outcome = {r["action"]: r["success"] for r in model_rows if r["game"] == ds.provenance["games"][0]}
    assert outcome["continue"] is False and outcome["expert"] is True
    # reflect is the chat model asked to reflect (it keeps reading logs here, so it still fails)
    assert outcome["reflect"] is False and ds.provenance["counts"]["branch_errors"] == 0
    assert any(ASKED_TO_REFLECT) and not all(ASKED_TO_REFLECT)
    assert stub.served > 0
