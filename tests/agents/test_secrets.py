"""No secret reaches a run directory: keys, tokens and headers are refused as generation settings
before anything runs, a provider that echoes the refused key has it redacted from the error the
log keeps, and ``-M model_kwargs`` is checked against what the OpenAI client accepts."""

from __future__ import annotations

import json

import pytest
from openai_stub import error, stub_servers
from scripted_models import vault_three_calls

from agentbed.cli import main

SECRET = "sk-live-0123456789abcdefSECRET"


@pytest.fixture
def stub(monkeypatch):
    with stub_servers(monkeypatch, SECRET) as start:
        yield start


def run(*args: str) -> int:
    return main(["run", "vault", "--task", "open-fast", "--no-cache", "--executor", "serial", "--quiet", *args])


@pytest.mark.parametrize("setting", [
    f"api_key={SECRET}", f"openai_api_key={SECRET}", f"default_headers={{\"Authorization\": \"Bearer {SECRET}\"}}",
    f"model_kwargs={{\"extra_headers\": {{\"x-api-key\": \"{SECRET}\"}}}}", f"access_token={SECRET}",
    f"password={SECRET}",
])
def test_a_secret_given_as_a_setting_is_refused_before_anything_is_written(stub, tmp_path, capsys, setting):
    server = stub(vault_three_calls)
    out = tmp_path / "run"
    assert run("--model", "openai:m", "-M", setting, "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "is not a generation setting" in err and err.count("\n") == 1 and SECRET not in err
    assert server.served == 0 and not out.exists()


def test_model_kwargs_are_checked_against_the_openai_client(stub, tmp_path, capsys):
    stub(vault_three_calls)
    assert run("--model", "openai:m", "-M", 'model_kwargs={"no_such_field": 1}', "--out", str(tmp_path / "a")) == 2
    assert "takes no request field 'no_such_field'" in capsys.readouterr().err
    assert run("--model", "openai:m", "-M", "max_tokens=20", "--out", str(tmp_path / "b")) == 0


def test_no_file_of_a_run_holds_the_key_even_when_the_provider_echoes_it(stub, tmp_path):
    echoed = {"on": True}

    def policy(body):
        return _echo_401() if echoed["on"] else vault_three_calls(body)

    stub(policy)
    out, cache = tmp_path / "run", tmp_path / "cache"
    assert run("--agent", "oracle", "--model", "openai:m", "--seeds", "2", "--out", str(out), "--json") == 4
    footer = json.loads((out / "episodes" / "vault.open-fast.model_openai_m.s0.jsonl").read_text().splitlines()[-1])
    assert "[redacted $OPENAI_API_KEY]" in footer["error"]
    echoed["on"] = False
    assert main(["run", "vault", "--resume", "--retry-errors", "--out", str(out), "--quiet",
                 "--cache-dir", str(cache)]) == 0
    assert main(["report", str(out)]) == 0 and main(["export", str(out), "--format", "inspect"]) == 0
    files = [p for p in [*out.rglob("*"), *cache.rglob("*")] if p.is_file()]
    assert len(files) > 10
    leaks = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
    assert leaks == []


def _echo_401():
    reply = error(401)
    reply.content = f"Incorrect API key provided: {SECRET}. You can find your API key at ..."
    return reply


def test_a_password_or_query_value_in_a_url_variable_is_redacted(monkeypatch):
    """Session 18's probe: a key carried in the base URL (``user:pass@`` or ``?api-key=``, as some
    gateways and proxies take it) was written to the log whenever an error quoted the URL: only
    variables named like a credential were redacted."""
    from agentbed.errors import failure_text

    url = "https://alice:pw-SECRETPASS-123@gateway.example/v1?api-key=QSECRET-TOKEN-456&region=eu"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("HTTPS_PROXY", "http://bob:proxy-PASSWORD-789@10.0.0.1:3128")
    try:
        raise ConnectionError(f"POST {url}/chat/completions failed via http://bob:proxy-PASSWORD-789@10.0.0.1:3128")
    except ConnectionError as exc:
        text = failure_text(exc)
    for secret in ("pw-SECRETPASS-123", "QSECRET-TOKEN-456", "proxy-PASSWORD-789"):
        assert secret not in text
    assert "[redacted $OPENAI_BASE_URL]" in text and "[redacted $HTTPS_PROXY]" in text
    assert "region=eu" in text and "gateway.example" in text  # short values and the host stay readable
