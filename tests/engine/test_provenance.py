"""Which code made a log: the version written in one place, a dirty checkout detected and named
by its changes, the driver's provenance carried by every spec an executor runs, and the
committed baselines' provenance printed by gate."""

from __future__ import annotations

import json
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import agentbed
from agentbed import executors
from agentbed.cli import main
from agentbed.executors import execute
from agentbed.provenance import code_commit, describe, differing_worlds, tree_state
from agentbed.runner import EpisodeSpec

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_written_once_in_pyproject():
    written = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert agentbed.__version__ == version("agentbed") == written, \
        "the installed metadata is stale: pip install --no-deps -e . refreshes it"
    assert written not in (ROOT / "agentbed" / "__init__.py").read_text()  # not a second copy


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / ".gitignore").write_text("/runs/\n")
    (root / "world.py").write_text("REWARD = 1\n")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    return root


def _state(root: Path) -> dict:
    tree_state.cache_clear()
    return tree_state(root)


def test_a_dirty_checkout_is_detected_and_named_by_its_changes(checkout):
    assert code_commit(checkout) == _git(checkout, "rev-parse", "HEAD").strip()
    assert _state(checkout) == {"dirty": False}
    (checkout / "runs").mkdir()
    (checkout / "runs" / "out.json").write_text("{}")  # ignored output leaves it clean
    assert _state(checkout) == {"dirty": False}

    (checkout / "world.py").write_text("REWARD = 2\n")
    edited = _state(checkout)
    assert edited["dirty"] is True and len(edited["diff_sha256"]) == 64
    assert _state(checkout) == edited  # one uncommitted state, one digest
    _git(checkout, "add", "world.py")  # staged or not, the same change against the commit
    assert _state(checkout) == edited
    (checkout / "world.py").write_text("REWARD = 3\n")
    assert _state(checkout)["diff_sha256"] != edited["diff_sha256"]

    _git(checkout, "checkout", "-q", "--", ".")
    _git(checkout, "reset", "-q", "--hard")
    (checkout / "extra.py").write_text("X = 1\n")  # an untracked file is code too
    untracked = _state(checkout)
    assert untracked["dirty"] is True
    (checkout / "extra.py").write_text("X = 2\n")
    assert _state(checkout)["diff_sha256"] != untracked["diff_sha256"]


def test_a_run_directory_inside_the_checkout_is_output_not_code(checkout):
    """Else a run with --out in a checkout (not under the ignored runs/) would name other code at
    its resume than at its start, and --resume would refuse it."""
    run = checkout / "my runs" / "r1"
    (run / "episodes").mkdir(parents=True)
    for name in ("run.json", "index.jsonl", "episodes/a.jsonl"):
        (run / name).write_text("{}")
    assert _state(checkout) == {"dirty": False}
    (checkout / "my runs" / "notes.py").write_text("X = 1\n")  # beside the run, not in it: code
    assert _state(checkout)["dirty"] is True
    (checkout / "my runs" / "notes.py").unlink()
    (checkout / "world.py").write_text("REWARD = 2\n")
    with_run = _state(checkout)
    for name in ("run.json", "index.jsonl", "episodes/a.jsonl"):
        (run / name).unlink()
    assert _state(checkout) == with_run  # the change is named by itself, whatever runs lie beside it


def test_outside_a_checkout_nothing_is_claimed(tmp_path):
    assert code_commit(tmp_path) is None and _state(tmp_path) == {}


def test_every_spec_an_executor_runs_carries_the_drivers_provenance(monkeypatch, tmp_path):
    made = {"agentbed": "9.9.9", "commit": "f" * 40, "dirty": True, "diff_sha256": "e" * 64, "suite": None}
    monkeypatch.setattr(executors, "header_provenance", lambda suite: {**made, "suite": {"name": suite}})
    specs = [EpisodeSpec("vault", "open-fast", "oracle", s) for s in range(2)]
    given = EpisodeSpec("vault", "open-fast", "random", 0, provenance={"agentbed": "given"})
    for record in execute([*specs, given], tmp_path, executor="serial"):
        header = json.loads((tmp_path / record.log).read_text().splitlines()[0])
        want = {"agentbed": "given"} if record.agent == "random" else {**made, "suite": {"name": "vault"}}
        assert header["provenance"] == want


def test_gate_prints_what_made_each_side_and_the_baselines_record_it(tmp_path, capsys):
    for path in sorted((ROOT / "baselines").glob("*.json")):
        recorded = json.loads(path.read_text())["provenance"]
        assert recorded["agentbed"] and len(recorded["commit"]) == 40 and recorded["suites"], path.name
    run = tmp_path / "run"
    assert main(["run", "vault", "--seeds", "10", "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["gate", str(run), "--baseline", str(ROOT / "baselines" / "vault.json"), "--allow-underpowered"]) == 0
    out, err = capsys.readouterr()
    baseline = json.loads((ROOT / "baselines" / "vault.json").read_text())["provenance"]
    assert f"baseline made by: agentbed {baseline['agentbed']}, commit {baseline['commit'][:12]}" in out
    assert f"results made by: agentbed {agentbed.__version__}" in out
    assert "warning" not in err  # agentbed's own vault in both: its version is printed, not a different world


def test_describe_keeps_a_files_text_printable():
    line = describe({"agentbed": "1\x1b[2J", "commit": "a" * 40, "dirty": False,
                     "suites": {"x\x07": {"file": "w\nx.py", "sha256": "0" * 64}}})
    assert "\x1b" not in line and "\x07" not in line and "\n" not in line
    assert describe(None) == "no provenance recorded"


def test_a_plugins_version_is_a_different_world_agentbeds_own_is_not():
    ours = {"suites": {"vault": {"distribution": "agentbed", "version": "0.1.0", "entry_point": "vault = a:B"}}}
    newer = {"suites": {"vault": {"distribution": "agentbed", "version": "0.2.0", "entry_point": "vault = a:B"}}}
    assert differing_worlds(ours, newer) == []
    plugin = {"suites": {"vault": {"distribution": "vault-plus", "version": "1", "entry_point": "vault = p:S"}}}
    assert differing_worlds(ours, plugin) and differing_worlds(
        plugin, {"suites": {"vault": {**plugin["suites"]["vault"], "version": "2"}}})
