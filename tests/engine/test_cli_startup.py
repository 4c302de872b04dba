"""Every agentbed command pays for what ``import agentbed.cli`` imports: it must stay light.

A verb imports its heavy dependencies (gymnasium, numpy, LangChain, a workload) when it runs,
never when the CLI module loads. Timings are shown by bench/, never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("gymnasium", "numpy", "jsonschema", "langchain", "langchain_core", "scipy", "sklearn", "networkx",
         "environments", "attacks", "controllers", "suites")


def test_importing_the_cli_pulls_in_no_heavy_package():
    probe = ("import json, sys; import agentbed.cli; "
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [], "import agentbed.cli imported these; import them inside the verb"


def test_help_lists_every_workload_verb_without_importing_it():
    probe = ("import contextlib, io, json, sys; from agentbed.cli import main\n"
             "out = io.StringIO()\n"
             "try:\n"
             "    with contextlib.redirect_stdout(out): code = main(['--help'])\n"
             "except SystemExit as exit: code = exit.code\n"
             f"print(json.dumps([code, out.getvalue(), sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    code, text, heavy = json.loads(result.stdout)
    assert code == 0
    assert heavy == [], f"agentbed --help imported {heavy}; built-in verbs load only when they run (BUILTIN_VERBS)"
    for verb in ("list", "run", "gate", "report", "export", "demo", "verify", "replay", "branch", "view"):
        assert any(line.strip().split(" ")[0] == verb for line in text.splitlines()), verb
    for verb, help_words in (("oversight", "prefix-branching oversight"), ("graphrag", "GraphRAG poisoning"),
                             ("cocoder-plan", "dependency graph"), ("sandbox", "sandboxes")):
        lines = text.splitlines()
        at = next(i for i, x in enumerate(lines) if x.strip().split(" ")[0] == verb)
        assert help_words in " ".join(lines[at:at + 2]), f"{verb}: {lines[at:at + 2]!r}"  # long names wrap


def test_a_workload_verb_is_loaded_when_it_runs(capsys):
    from agentbed.cli import build_parser, main

    assert main(["oversight", "benchmarks"]) == 0
    assert "alfworld" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # every verb loaded for real: oversight's own verbs parse
        build_parser(every_verb=True).parse_args(["oversight", "build", "--help"])
    assert "--games" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "module"), [(["verify", "x"], "agentbed.cli_logs"),
                                             (["gate", "x", "--baseline", "b.json"], "agentbed.cli_verdicts")])
def test_a_built_in_verb_loads_its_module_and_only_its_module(argv, module):
    modules = ("agentbed.cli_logs", "agentbed.cli_run", "agentbed.cli_demo", "agentbed.cli_verdicts")
    probe = ("import json, sys; from agentbed.cli import build_parser\n"
             f"p = build_parser({argv[0]!r}); p.parse_args({argv!r})\n"
             f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [module]
    from agentbed.cli import build_parser

    for argv in (["gate", "runs/x", "--baseline", "b.json"], ["export", "runs/x", "--format", "inspect"],
                 ["report", "runs/x"]):  # verbs sharing cli_verdicts' module register together, no conflict
        assert build_parser(argv[0]).parse_args(argv).command == argv[0]


def test_a_verbs_help_is_parsed_once_per_version_of_its_module(tmp_path, monkeypatch):
    """Each ``main()`` builds the whole parser: the placeholders' help comes from a cache keyed by
    the module file's version, so a changed file is read again and an unchanged one is not."""
    from agentbed import cli_plugins

    parses: list[str] = []
    real = cli_plugins.parse_python
    monkeypatch.setattr(cli_plugins, "parse_python", lambda source, name: parses.append(name) or real(source, name))
    package = tmp_path / "helpprobe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    module = package / "cli.py"
    module.write_text('"""A probe."""\n\ndef register(sub):\n    sub.add_parser("probe", help="first help")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [cli_plugins.verb_help(v, "helpprobe.cli") for v in ("probe", "other", "probe")] == [
        "first help", "A probe.", "first help"]
    assert parses == [str(module)]
    module.write_text('"""A probe."""\n\ndef register(sub):\n    sub.add_parser("probe", help="the second help")\n')
    assert cli_plugins.verb_help("probe", "helpprobe.cli") == "the second help"
    assert parses == [str(module)] * 2
