"""scripts/setup-docker must start an engine after an unclean stop (a stale pid file)."""

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "setup-docker"


def _clear(pidfile: Path, name: str) -> str:
    result = subprocess.run(
        ["bash", "-c", f'source "{SCRIPT}" && clear_stale_pidfile "$1" "$2"', "_", str(pidfile), name],
        capture_output=True, text=True, check=True,
    )
    return result.stdout


def test_a_pid_file_of_a_dead_dockerd_is_removed(tmp_path: Path) -> None:
    pidfile = tmp_path / "docker.pid"
    pidfile.write_text("999999999")  # above pid_max: no process has it
    assert "removing stale" in _clear(pidfile, "dockerd")
    assert not pidfile.exists()


def test_a_pid_file_of_another_program_is_removed(tmp_path: Path) -> None:
    with subprocess.Popen(["sleep", "30"]) as sleeper:
        pidfile = tmp_path / "docker.pid"
        pidfile.write_text(str(sleeper.pid))
        _clear(pidfile, "dockerd")
        sleeper.kill()
    assert not pidfile.exists()


def test_the_pid_file_of_a_running_daemon_is_kept(tmp_path: Path) -> None:
    with subprocess.Popen(["sleep", "30"]) as sleeper:
        pidfile = tmp_path / "sleep.pid"
        pidfile.write_text(str(sleeper.pid))
        assert _clear(pidfile, "sleep") == ""
        sleeper.kill()
    assert pidfile.exists()
