"""``agentbed list`` imports every suite, so each suite's module must leave what only an episode
needs to the episode: a vendor SDK at a module's top costs every listing (docs/cli.md, start-up).

The packages below were made lazy on the listing path: AgentDojo's (its task names come from a
committed index), the contract issuers' SDKs (imported by the issuer calls), jsonschema (the
first action checked). Timings are shown by bench/startup.py, never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

LAZY = ("agentdojo", "anthropic", "openai", "google.genai", "stripe", "botocore", "flask", "flask_wtf", "wtforms",
        "authlib", "slack_sdk", "jwt", "gidgethub", "cryptography", "pyotp", "jsonschema")


def _listing(argv: list[str]) -> tuple[str, list[str]]:
    probe = ("import contextlib, io, json, sys; from agentbed.cli import main\n"
             "out = io.StringIO()\n"
             f"with contextlib.redirect_stdout(out): code = main({argv!r})\n"
             "assert code == 0, code\n"
             f"print(json.dumps([out.getvalue(), sorted(m for m in {LAZY!r} if m in sys.modules)]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    text, imported = json.loads(result.stdout.splitlines()[-1])
    return text, imported


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"]])
def test_listing_every_suite_imports_no_package_an_episode_needs(argv):
    text, imported = _listing(argv)
    assert imported == [], (f"agentbed {' '.join(argv)} imported {imported}: import them in the function that "
                            "uses them (an issuer, a verifier, an episode), not at a module's top")
    names = [s["name"] for s in json.loads(text)["suites"]] if "--json" in argv else text
    assert "agentdojo" in names and "contracts" in names  # the suites that used to pull these in were listed


def test_listing_agentdojo_reads_the_committed_index_not_the_benchmark():
    text, imported = _listing(["list", "agentdojo"])  # counts every benchmark version's tasks
    assert imported == [] and "tasks by --benchmark-version: v1 2613," in text
    text, imported = _listing(["list", "agentdojo", "--json", "--benchmark-version", "v1.1"])
    assert imported == [] and len(json.loads(text)["suites"][0]["tasks"]) == 2613
    text, imported = _listing(["list", "agentdojo", "--json"])
    assert imported == []
    tasks = json.loads(text)["suites"][0]["tasks"]
    assert len(tasks) == 97 + 4 * 949
    assert tasks[-1] == {"id": "slack.user_task_20.injection_task_5.ignore_previous", "hidden": False,
                         "task_suite": "slack", "user_task": "user_task_20", "injection_task": "injection_task_5",
                         "attack": "ignore_previous"}
