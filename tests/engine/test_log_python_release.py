"""A log does not depend on the patch release of the Python that wrote it.

Nodes of a cluster may run other patch releases of the same Python (a Ray cluster requires the
same major.minor); the header records Python as major.minor, so their logs are byte-identical.
Logs written before that named the patch release; they still re-execute without a divergence.
"""

from __future__ import annotations

import subprocess
import sys

from agentbed import runner
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import EpisodeSpec, python_release, run_episode
from environments.vault.agents import VaultOracle
from environments.vault.env import VaultEnv

# one vault episode, run in a fresh interpreter that believes it is Python 3.11.<patch>
_EPISODE = """
import platform, sys
platform.python_version = lambda: sys.argv[2]
from agentbed.log import TrajectoryWriter
from agentbed.runner import EpisodeSpec, run_episode
from environments.vault.agents import VaultOracle
from environments.vault.env import VaultEnv
run_episode(VaultEnv("open-fast"), VaultOracle(), EpisodeSpec("vault", "open-fast", "oracle", 1),
            writer=TrajectoryWriter(sys.argv[1]))
"""


def test_python_is_recorded_as_major_minor():
    assert python_release("3.11.7") == python_release("3.11.2") == "3.11"
    assert runner.VERSIONS["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"


def test_logs_written_under_two_patch_releases_are_byte_identical(tmp_path):
    logs = []
    for patch in ("3.11.2", "3.11.99"):
        path = tmp_path / f"{patch}.jsonl"
        subprocess.run([sys.executable, "-c", _EPISODE, str(path), patch], check=True, timeout=120)
        logs.append(path.read_bytes())
    assert logs[0] == logs[1]
    assert b'"python":"3.11"' in logs[0].split(b"\n", 1)[0]


def _old_log(tmp_path, monkeypatch, python: str):
    """A log as written before: the header names ``python`` as given."""
    monkeypatch.setattr(runner, "VERSIONS", {**runner.VERSIONS, "python": python})
    writer = TrajectoryWriter(tmp_path / f"old-{python}.jsonl")
    run_episode(VaultEnv("open-fast"), VaultOracle(), EpisodeSpec("vault", "open-fast", "oracle", 1), writer=writer)
    monkeypatch.undo()
    return writer.path


def test_an_old_log_naming_a_patch_release_verifies_and_reruns_clean(tmp_path, monkeypatch):
    path = _old_log(tmp_path, monkeypatch, "3.11.7")
    assert read_log(path)[0]["versions"]["python"] == "3.11.7"
    assert verify_log(path).ok
    assert first_divergence(*rerun(path)) is None


def test_another_minor_release_is_still_a_divergence(tmp_path, monkeypatch):
    divergence = first_divergence(*rerun(_old_log(tmp_path, monkeypatch, "3.10.4")))
    assert divergence is not None and divergence.field == "header.versions"
