"""Oversight is visible everywhere: replay (text and JSON), the report and the Inspect export show
each blocked, replaced or handed-over action, who decided it and why. The reason is the overseer's
own text, so it carries markup that must stay inert on every surface."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentbed.testing import require

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert(1)</script>[red]loud[/red]"


def editor_source(reason: str) -> str:
    """A one-file overseer that replaces the first action (giving ``reason``) and stops at step 2:
    one replaced and one blocked decision, whose reason is hostile text of the caller's choosing."""
    return f'''
from agentbed.agents.base import Action
from agentbed.control import CONTINUE, Controller, replace, stop
from agentbed.tools import make_action


class Editor(Controller):
    name = "editor"

    def before_action(self, ctx, proposed):
        if ctx.step == 0:
            return replace(Action(make_action("read_logs", page=9)), reason={reason!r})
        if ctx.step == 2:
            return stop("seen enough")
        return CONTINUE
'''


OVERSEER = editor_source(HOSTILE)


def agentbed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentbed", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def overseen(tmp_path_factory):
    root = tmp_path_factory.mktemp("overseen")
    (root / "editor.py").write_text(OVERSEER)
    out = root / "run"
    result = agentbed("run", "vault", "--agent", "naive", "--task", "long-chores", "--seeds", "1",
                      "--controller", f"{root / 'editor.py'}:Editor", "--controller",
                      "examples/controller/stale_token.py:hand_to_oracle", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return out


def test_replay_json_lists_every_decision(overseen):
    log = overseen / "episodes" / "vault.long-chores.naive.s0.jsonl"
    shown = agentbed("replay", str(log), "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    got = [(d["step"], d["verb"], d["by"], d["reason"]) for d in doc["decisions"]]
    assert got == [(1, "replaced", "editor", HOSTILE), (3, "blocked", "editor", "seen enough")]
    assert json.loads(doc["decisions"][0]["proposed"])["tool"] == "get_token"
    assert json.loads(doc["decisions"][0]["executed"]) == {"tool": "read_logs", "arguments": {"page": 9}}
    assert doc["decisions"][1]["executed"] is None and doc["outcome"]["status"] == "stopped"
    assert len(doc["controllers"]) == 2
    only = json.loads(agentbed("replay", str(log), "--json", "--step", "3").stdout)
    assert [d["verb"] for d in only["decisions"]] == ["blocked"]


def test_replay_text_shows_who_and_why_verbatim(overseen):
    text = agentbed("replay", str(overseen / "episodes" / "vault.long-chores.naive.s0.jsonl")).stdout
    assert "replaced by editor" in text and "blocked by editor: seen enough" in text
    assert "[red]loud[/red]" in " ".join(text.split())  # the overseer's text, not rich markup
    assert "nothing ran: the episode stopped here" in text


def test_the_report_lists_the_decisions_inertly(overseen, tmp_path):
    assert agentbed("report", str(overseen), "--out", str(tmp_path / "r.html")).returncode == 0
    page = (tmp_path / "r.html").read_text()
    section = page[page.index('id="oversight"'):]
    assert "2 decisions in 1 episodes: blocked 1, replaced 1" in section
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "seen enough" in section and "editor" in section


def test_a_handover_is_shown_with_whom_it_went_to(tmp_path):
    out = tmp_path / "run"
    result = agentbed("run", "vault", "--agent", "naive", "--task", "long-chores", "--controller",
                      "examples/controller/stale_token.py:hand_to_oracle", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    log = out / "episodes" / "vault.long-chores.naive.s0.jsonl"
    doc = json.loads(agentbed("replay", str(log), "--json").stdout)
    assert [(d["verb"], d["by"], d["agent"]) for d in doc["decisions"]] == [("handed over", "hand-to-oracle",
                                                                             "oracle")]
    assert "handed to oracle" in agentbed("replay", str(log)).stdout


def test_the_inspect_export_names_the_approver_and_the_reason(overseen, tmp_path):
    require(importlib.util.find_spec("inspect_ai") is not None, "inspect-ai (the [inspect] extra)",
            "pip install -e '.[inspect]'")
    inspect_log = importlib.import_module("inspect_ai.log")
    assert agentbed("export", str(overseen), "--format", "inspect", "--out", str(tmp_path / "i")).returncode == 0
    log = inspect_log.read_eval_log(str(next((tmp_path / "i").glob("*.eval"))))
    approvals = [e for e in log.samples[0].events if e.event == "approval"]
    assert [(a.approver, a.decision, a.explanation) for a in approvals] == [("editor", "modify", HOSTILE),
                                                                            ("editor", "terminate", "seen enough")]
