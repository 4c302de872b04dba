"""A model run checks its model without importing the provider's client, and imports it only at
a call the model-call cache does not answer (issue 55, item 3).

The oracles are LangChain's and the OpenAI client's own: the provider table read from source is
LangChain's imported one, the check's verdict on every key and setting is the real build's, and
a key made from a stored profile is the key the built model gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from openai_stub import stub_servers  # noqa: E402 - needs the path above
from scripted_models import vault_three_calls  # noqa: E402

from agentbed.agents.building import LazyModel, _built_model  # noqa: E402
from agentbed.agents.cache import ModelCallCache  # noqa: E402
from agentbed.agents.chat import ChatAgent  # noqa: E402
from agentbed.agents.precheck import builtin_providers, checked_without_client, recipe_of  # noqa: E402
from agentbed.errors import UsageError  # noqa: E402
from agentbed.testing import episode_bytes  # noqa: E402
from agentbed.tools import Tool  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ("langchain", "langchain_openai", "openai")


def test_the_provider_table_read_from_source_is_langchains_own():
    from langchain.chat_models import base

    assert builtin_providers() == {name: entry[0] for name, entry in base._BUILTIN_PROVIDERS.items()}


KEYS = [{"OPENAI_API_KEY": "sk-x"}, {}, {"OPENAI_API_KEY": ""}, {"OPENAI_ADMIN_KEY": ""},
        {"OPENAI_API_KEY": "", "OPENAI_ADMIN_KEY": "adm"}, {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
        {"OPENAI_API_KEY": "sk-x", "AGENTBED_MODEL_TIMEOUT": "soon"}]
SETTINGS = [{}, {"temperature": 0.3}, {"max_tokens": 7}, {"temperature": 0.0, "max_tokens": 1}]


@pytest.mark.parametrize("keys", KEYS)
@pytest.mark.parametrize("settings", SETTINGS)
def test_the_check_refuses_exactly_what_building_the_model_refuses(keys, settings, monkeypatch):
    for name in [n for n in os.environ if n.startswith("OPENAI_")] + ["AGENTBED_MODEL_TIMEOUT"]:
        monkeypatch.delenv(name, raising=False)
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    model = "openai:gpt-4o-mini"

    def verdict(check):
        try:
            check()
        except UsageError as exc:
            return "refused", str(exc).splitlines()
        return "accepted", []

    def build():
        from agentbed.agents.generation import timeout_from_environment

        _built_model(model, "openai", timeout_from_environment(), dict(settings), settings)

    mine, theirs = verdict(lambda: checked_without_client(model, settings)), verdict(build)
    assert mine[0] == theirs[0], (mine, theirs)
    assert len(mine[1]) <= 1  # one line
    if mine[0] == "refused" and "AGENTBED_MODEL_TIMEOUT" not in keys:
        assert "OPENAI_API_KEY" in mine[1][0]


@pytest.mark.parametrize("model, settings", [("openai:m", {"top_p": 0.5}), ("openai:m", {"model_kwargs": {}}),
                                             ("anthropic:claude", {}), ("local:gemma-3-270m", {}),
                                             ("openai:m?temperature=1", {})])
def test_what_only_a_build_can_tell_is_left_to_the_build(model, settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert checked_without_client(model, settings) is False


TOOLSETS = [[], [Tool("open", "Open the vault.", {"type": "object", "properties": {}})],
            [Tool("enter", "Enter a code.", {"type": "object", "properties": {"code": {"type": "string"}},
                                             "required": ["code"]}), Tool("look", "Look.", {"type": "object"})]]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("tools", TOOLSETS)
def test_a_key_made_from_the_stored_profile_is_the_built_models_key(settings, tools, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-y")
    cache = ModelCallCache(tmp_path)
    built = ChatAgent.from_model_string("openai:gpt-4o-mini", seed=3, generation=settings)
    assert built._lazy is not None and not built.cache
    built.cache = cache
    built.reset(seed=3)
    built._add_observation("You stand before a vault.")
    bound = built._bind(tools)
    built._keep_profile(bound)
    expected = built._cache_key(bound)

    def no_client():
        raise AssertionError("the model was built")

    recipe = recipe_of("openai:gpt-4o-mini", None, settings)
    assert recipe == built._lazy.recipe
    fresh = ChatAgent(LazyModel(no_client, None, recipe), seed=3, model_id="openai:gpt-4o-mini")
    fresh.cache = cache
    fresh.reset(seed=3)
    fresh._add_observation("You stand before a vault.")
    assert fresh._key_unbuilt(tools) == expected
    other = ChatAgent(LazyModel(no_client, None, recipe_of("openai:gpt-4o-mini", 5.0, settings)), seed=3,
                      model_id="openai:gpt-4o-mini")
    other.cache = cache
    assert other._key_unbuilt(tools) is None  # built otherwise: no stored profile is reused


def test_planning_a_model_run_imports_no_provider_client(monkeypatch):
    probe = ("import json, sys\n"
             "from agentbed.cli import build_parser\n"
             "from agentbed.cli_plan import plan\n"
             "from agentbed.suite import get_suite\n"
             "args = build_parser('run').parse_args(['run', 'vault', '--model', 'openai:gpt-4o-mini',"
             " '--temperature', '0.2'])\n"
             "args.extra = []\n"
             "specs, meta = plan(get_suite('vault'), args, {'temperature': 0.2})\n"
             f"print(json.dumps([len(specs), sorted({{m.split('.')[0] for m in sys.modules}} & set({CLIENTS!r}))]))")
    env = {**os.environ, "OPENAI_API_KEY": "sk-x", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr
    planned, clients = json.loads(result.stdout.splitlines()[-1])
    assert planned > 0 and clients == []


def test_a_cached_rerun_never_imports_the_client_and_a_partly_cached_one_builds_it(monkeypatch, tmp_path):
    """The first run fills the cache; a rerun of the same episodes is answered by it without the
    client, writing the same bytes; a rerun with episodes the cache lacks builds it at the first miss."""
    with stub_servers(monkeypatch, "test") as start:
        server = start(vault_three_calls)
        common = ["run", "vault", "--task", "open-fast", "--model", "openai:stub-m", "--cache-dir",
                  str(tmp_path / "cache"), "--quiet", "-j", "1"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

        def run(seeds: int, out: str) -> list[str]:
            probe = ("import json, sys\nfrom agentbed.cli import main\n"
                     f"code = main({common + ['--seeds', str(seeds), '--out', str(tmp_path / out)]!r})\n"
                     f"print(json.dumps([code, sorted({{m.split('.')[0] for m in sys.modules}} & set({CLIENTS!r}))]))")
            result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                                    timeout=300, cwd=ROOT)
            assert result.returncode == 0, result.stderr
            code, clients = json.loads(result.stdout.splitlines()[-1])
            assert code == 0, result.stderr
            return clients

        assert "langchain_openai" in run(2, "first")
        served = server.served
        assert run(2, "again") == []
        assert server.served == served, "a cached rerun called the provider"
        for log in sorted((tmp_path / "first" / "episodes").glob("*.jsonl")):
            assert episode_bytes(tmp_path / "again" / "episodes" / log.name) == episode_bytes(log)
        assert "langchain_openai" in run(3, "more")  # the third seed's calls are not cached
        assert server.served == served + 3
        for log in sorted((tmp_path / "first" / "episodes").glob("*.jsonl")):
            assert episode_bytes(tmp_path / "more" / "episodes" / log.name) == episode_bytes(log)
