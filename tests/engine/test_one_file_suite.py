"""One file is a suite: examples/suite/refund_desk.py through every verb, by path and by module;
two claimants of one suite name are refused naming both; colliding episode ids are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentbed.testing import cli_in_process
from agentbed.view.api import runs_document
from agentbed.view.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
SUITE_FILE = "examples/suite/refund_desk.py"


def agentbed(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentbed", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


def in_process(*args: str) -> subprocess.CompletedProcess:
    """``agentbed ARGS`` through the CLI's ``main`` in this process, from the repository root: for
    what a verb does with the suite file (a run, a listing, a refusal), not the process's start. The
    subprocesses left (``agentbed``) are the tests of a later process, its path or its environment."""
    return cli_in_process(*args, cwd=ROOT)


@pytest.fixture(scope="module")
def refunds(tmp_path_factory):
    out = tmp_path_factory.mktemp("refunds") / "run"
    result = in_process("run", SUITE_FILE, "--agent", "careful,credulous", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    return out


def test_list_shows_a_suite_file():
    result = in_process("list", SUITE_FILE, "--json")
    assert result.returncode == 0, result.stderr
    suite = json.loads(result.stdout)["suites"][0]
    assert suite["name"] == "refund-desk" and suite["agents"] == ["careful", "credulous"]
    assert [t["id"] for t in suite["tasks"]] == ["honest", "inflated", "outrageous"]


def test_run_measures_the_difference_and_records_where_the_suite_came_from(refunds):
    index = [json.loads(line) for line in (refunds / "index.jsonl").read_text().splitlines()]
    rate = {a: sum(r["success"] for r in index if r["agent"] == a) / 9 for a in ("careful", "credulous")}
    assert rate == {"careful": 1.0, "credulous": 1 / 3}  # the credulous agent over-refunds two tasks of three
    meta = json.loads((refunds / "run.json").read_text())
    origin = meta["provenance"]["suites"]["refund-desk"]
    assert meta["suite_ref"] == SUITE_FILE and origin["file"] == str(ROOT / SUITE_FILE)
    import hashlib

    assert origin["sha256"] == hashlib.sha256((ROOT / SUITE_FILE).read_bytes()).hexdigest()
    header = json.loads((refunds / index[0]["log"]).read_text().splitlines()[0])
    assert header["provenance"]["suite"] == origin and header["provenance"]["agentbed"]
    assert json.loads((refunds / "results.json").read_text())["provenance"] == meta["provenance"]


def test_every_verb_works_on_it(refunds, tmp_path):
    assert in_process("verify", str(refunds)).returncode == 0
    log = refunds / "episodes" / "refund-desk.inflated.credulous.s1.jsonl"
    assert in_process("replay", str(log), "--rerun").stdout.strip() == "identical"
    branched = in_process("branch", str(refunds / "episodes" / "refund-desk.inflated.careful.s0.jsonl"), "--at", "1",
                        "--agents", "continue", "--out", str(tmp_path / "b"), "--json")
    assert branched.returncode == 0, branched.stderr
    assert json.loads(branched.stdout)["branches"][0]["success"] is True
    report = in_process("report", str(refunds), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    export = in_process("export", str(refunds), "--format", "inspect", "--out", str(tmp_path / "inspect"))
    assert export.returncode == 0, export.stderr
    gate = in_process("gate", str(refunds), "--baseline", str(refunds / "results.json"), "--allow-underpowered")
    assert gate.returncode == 0 and "gate: pass" in gate.stdout, gate.stdout + gate.stderr
    runs = runs_document(Catalog(refunds.parent))["runs"]
    assert [r["suite"] for r in runs] == ["refund-desk"]


def test_resume_finds_the_suite_file_again(tmp_path):
    out = tmp_path / "run"
    assert in_process("run", SUITE_FILE, "--limit", "2", "--out", str(out), "--quiet").returncode == 0
    resumed = agentbed("run", SUITE_FILE, "--resume", "--out", str(out), "--quiet")  # in a process of its own
    assert resumed.returncode == 0, resumed.stderr
    assert len((out / "index.jsonl").read_text().splitlines()) == 9


def test_a_module_reference_works_from_the_current_directory(tmp_path):
    (tmp_path / "mysuites").mkdir()
    (tmp_path / "mysuites" / "__init__.py").write_text("")
    (tmp_path / "mysuites" / "refunds.py").write_text((ROOT / SUITE_FILE).read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = agentbed("run", "mysuites.refunds:SUITE", "--seeds", "1", "--out", "r", "--quiet", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    log = next((tmp_path / "r" / "episodes").glob("*.jsonl"))
    assert agentbed("replay", str(log), "--rerun", cwd=tmp_path, env=env).stdout.strip() == "identical"
    assert json.loads(log.read_text().splitlines()[0])["provenance"]["suite"]["module"] == "mysuites.refunds"


def _suite_file(path: Path, name: str, task_ids: list[str]) -> Path:
    path.write_text(
        "from agentbed.env import TaskSpec\n"
        "from agentbed.suite import make_suite\n"
        "from environments.vault.agents import VaultOracle\n"
        "from environments.vault.env import VaultEnv\n"
        f"SUITE = make_suite({name!r}, world=VaultEnv, agents={{'oracle': VaultOracle}},\n"
        f"                   tasks=[TaskSpec(t, {{'ttl': 60, 'chores': 0}}) for t in {task_ids!r}])\n")
    return path


def test_a_file_claiming_an_installed_name_is_refused_naming_both(tmp_path):
    result = in_process("run", str(_suite_file(tmp_path / "fake.py", "vault", ["a"])), "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "'vault' is claimed by both" in result.stderr and "fake.py" in result.stderr
    assert "vault = suites.vault.suite:SUITE" in result.stderr
    assert not (tmp_path / "r").exists()


def test_two_installed_claimants_are_both_refused(tmp_path):
    """A second distribution that registers the entry point ``vault`` (installed metadata on the path,
    as pip would leave it) makes the name ambiguous: neither runs, and both are named."""
    dist = tmp_path / "site" / "evil_vault-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evil-vault\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentbed.suites]\nvault = evil_vault:SUITE\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}
    run = agentbed("run", "vault", "--out", str(tmp_path / "r"), env=env)
    assert run.returncode == 2, run.stderr
    for needle in ("'vault' is claimed by 2 entry points", "evil_vault:SUITE", "evil-vault 1.0",
                   "suites.vault.suite:SUITE"):
        assert needle in run.stderr, run.stderr
    listed = agentbed("list", env=env)
    assert "vault: unavailable (suite name 'vault' is claimed by 2" in listed.stdout


def test_colliding_episode_ids_are_refused_naming_both(tmp_path):
    suite = _suite_file(tmp_path / "clash.py", "clash", ["reset/a", "reset_a"])
    result = in_process("run", str(suite), "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "task 'reset/a'" in result.stderr and "task 'reset_a'" in result.stderr
    assert "'clash.reset_a.oracle.s0'" in result.stderr and not (tmp_path / "r").exists()


def test_python_dash_m_agentbed_is_the_command():
    result = agentbed("--version")
    assert result.returncode == 0 and result.stdout.startswith("agentbed ")


BAD_DECLARATIONS = [
    ("make_suite('x y', world=VaultEnv, agents={'o': VaultOracle})", "suite name 'x y'"),
    ("make_suite('x', world=dict, agents={'o': VaultOracle})", "is not a subclass of agentbed.env.ToolEnv"),
    ("make_suite('x', world=VaultEnv, agents={})", "agents: give at least one"),
    ("make_suite('x', world=VaultEnv, agents={'o': dict})", "dict is not a subclass of agentbed.agents.base.Agent"),
    ("make_suite('x', world=VaultEnv, agents={'o': VaultOracle}, tasks=[])", "tasks must be a non-empty list"),
    ("make_suite('x', world=VaultEnv, agents={'o': VaultOracle}, seeds=0)", "seeds and max_steps"),
]


@pytest.mark.parametrize("declaration,message", BAD_DECLARATIONS, ids=[m for _, m in BAD_DECLARATIONS])
def test_a_bad_declaration_is_one_line_naming_it(tmp_path, declaration, message):
    path = tmp_path / "bad.py"
    path.write_text("from agentbed.suite import make_suite\nfrom environments.vault.agents import VaultOracle\n"
                    f"from environments.vault.env import VaultEnv\nSUITE = {declaration}\n")
    result = in_process("list", str(path))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr, result.stderr


def test_gate_warns_when_the_worlds_differ(refunds, tmp_path):
    baseline = json.loads((refunds / "results.json").read_text())
    baseline["provenance"]["suites"]["refund-desk"]["sha256"] = "0" * 64  # made by another version of the file
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    gate = in_process("gate", str(refunds), "--baseline", str(tmp_path / "baseline.json"), "--allow-underpowered")
    assert gate.returncode == 0, gate.stdout + gate.stderr  # the numbers agree; the warning says why to doubt them
    assert "warning: suite 'refund-desk' differs" in gate.stderr and "sha256 000000000000" in gate.stderr
    same = in_process("gate", str(refunds), "--baseline", str(refunds / "results.json"))
    assert "warning" not in same.stderr
