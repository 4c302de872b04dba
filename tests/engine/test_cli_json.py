"""The CLI's shared conventions: ``--version`` and the one ``--json`` document format."""

import io
import json

from agentbed import __version__
from agentbed.cli import main
from agentbed.cli_json import FORMAT, emit


def test_version_prints_the_version_and_exits_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentbed {__version__}"


def test_a_json_document_names_its_format_and_command_and_is_strict_json():
    out = io.StringIO()
    emit("replay", {"steps": [{"reward": float("nan")}], "low": float("-inf"), "n": 3}, stream=out)
    line = out.getvalue()
    assert line.count("\n") == 1
    doc = json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert list(doc)[:2] == ["format", "command"]
    assert doc == {"format": FORMAT, "command": "replay", "steps": [{"reward": None}], "low": None, "n": 3}


def _run_flags() -> set[str]:
    import argparse

    from agentbed.cli import build_parser

    parser = build_parser("run")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {s.lstrip("-").replace("-", "_") for a in sub.choices["run"]._actions for s in a.option_strings}


def test_no_suite_option_is_shadowed_by_or_named_like_an_engine_flag():
    from agentbed.suite import load_suites

    flags = _run_flags()
    near = flags | {f + "s" for f in flags} | {f.rstrip("s") for f in flags}  # --agents beside --agent
    clashes = {(name, key) for name, suite in load_suites().items() for key in suite.options if key in near}
    assert not clashes, f"suite options that an engine flag shadows or resembles: {sorted(clashes)}"


def test_run_suite_help_lists_the_suites_options(capsys):
    import pytest

    with pytest.raises(SystemExit) as done:
        main(["run", "vault", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "suite vault:" in out and "agents: naive, oracle" in out and "--max-connections" in out


def test_replay_branch_and_export_print_one_json_document(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "vault", "--task", "open-fast", "--agent", "oracle", "--seeds", "1", "--out", str(out),
                 "--quiet"]) == 0
    log = next((out / "episodes").glob("*.jsonl"))
    capsys.readouterr()
    assert main(["replay", str(log), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "replay" and doc["outcome"]["success"] is True and doc["steps"][0]["i"] == 1
    assert main(["replay", str(log), "--rerun", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is True
    assert main(["branch", str(log), "--at", "1", "--agents", "oracle,naive", "--json",
                 "--out", str(tmp_path / "br")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "branch" and {b["agent"].split("@")[0] for b in doc["branches"]} == {"oracle", "naive"}
    assert main(["export", str(out), "--format", "inspect", "--json", "--out", str(tmp_path / "insp")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "export" and doc["files"] and doc["malformed"] == []
