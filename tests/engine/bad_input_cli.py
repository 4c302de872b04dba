"""What the bad-input tests share: a valid run directory to damage, the CLI in-process and as a
memory-bounded subprocess, and the check that a refusal is one line naming its culprit."""

from __future__ import annotations

import contextlib
import functools
import io
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

from agentbed import cli
from agentbed.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = "episodes/vault.open-fast.oracle.s0.jsonl"
MEMORY_LIMIT = 3 << 30


def make_valid_run(out: Path) -> Path:
    """Four oracle episodes of the vault world: every file kind a run directory holds."""
    result = subprocess.run([sys.executable, "-m", "agentbed.cli", "run", "vault", "--agent", "oracle", "--task",
                             "open-fast", "--task", "open-after-chores", "--seeds", "2", "--executor", "serial",
                             "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return out


_build_parser = cli.build_parser


@functools.cache
def _parser(verb: str | None) -> object:
    return _build_parser(verb)


def in_process(argv: list[str]) -> tuple[int, str, str]:
    """``agentbed.cli.main(argv)`` and what it wrote. Its parser is built once per verb and reused
    (parsing leaves it as it was): the corpus makes about 1,700 calls, and building the parser
    (argparse, each verb's placeholder and help) was a third of their time. The parser depends
    on the verb alone, never on the files the corpus damages."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            mock.patch.object(cli, "build_parser", _parser):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def subprocess_cli(argv: list[str], timeout: float = 120) -> tuple[int, str, str]:
    result = subprocess.run([sys.executable, "-m", "agentbed.cli", *argv], capture_output=True, text=True,
                            timeout=timeout, cwd=ROOT, preexec_fn=_limits)
    return result.returncode, result.stdout, result.stderr


def assert_refused(outcome: tuple[int, str, str], *names: str, what: str = "") -> None:
    status, out, err = outcome
    lines = err.strip().splitlines()
    assert "Traceback" not in err and "Traceback" not in out, f"{what}: traceback\n{err[-2000:]}"
    assert status == 2, f"{what}: exit {status}\nstdout: {out[-500:]}\nstderr: {err[-500:]}"
    assert len(lines) == 1 and lines[0].startswith("agentbed: error:"), f"{what}: stderr {err[-1000:]!r}"
    for name in names:
        assert name in lines[0], f"{what}: {name!r} not named in {lines[0]!r}"


def copy_run(valid_run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(valid_run, target, ignore=shutil.ignore_patterns(".lock"))
    return target
