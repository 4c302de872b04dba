"""A run directory holds its own logs: a log that is a link out of it (to a file with the very
same bytes) is named by verify, refused by --resume and not trusted by the report, as the viewer
never shows it. Session 20's probe: it verified, and the report read it, while the viewer refused it."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from agentbed.cli import main
from agentbed.seal_verdict import seal_status

PLAN = ["run", "vault", "--task", "open-fast", "--seeds", "2", "--executor", "serial", "--quiet"]


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        status = main(list(argv))
    return status, out.getvalue()


def test_a_log_that_links_out_of_its_run_is_named_and_never_resumed_over(tmp_path):
    run = tmp_path / "run"
    assert cli(*PLAN, "--out", str(run))[0] == 0
    log = sorted((run / "episodes").glob("*.jsonl"))[0]
    elsewhere = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(log, elsewhere)
    log.unlink()
    log.symlink_to(elsewhere)  # the very same bytes, held outside the run
    status, said = cli("verify", str(run))
    assert status == 1 and f"{log}: a link out of the run directory; not followed" in said
    assert seal_status(run, None).state == "failed"  # the report's verdict, as verify's
    status, said = cli(*PLAN, "--out", str(run), "--resume")
    assert status == 2 and "a link out of the run directory" in said and "not resuming" in said
    inside = run / "kept.jsonl"  # a link that stays inside the run is only a name: still the run's bytes
    shutil.copyfile(elsewhere, inside)
    log.unlink()
    log.symlink_to(Path("..") / "kept.jsonl")
    assert "a link out" not in cli("verify", str(run))[1]


def test_a_sealed_file_that_links_out_of_its_run_is_named(tmp_path):
    run = tmp_path / "run"
    assert cli(*PLAN, "--out", str(run))[0] == 0
    for name in ("index.jsonl", "results.json", "run.json", "manifest.json"):
        elsewhere = tmp_path / f"elsewhere-{name}"
        shutil.move(run / name, elsewhere)
        (run / name).symlink_to(elsewhere)  # the very same bytes, held outside the run
        status, said = cli("verify", str(run))
        assert status == 1 and f"{run / name}: a link out of the run directory; not followed" in said, name
        (run / name).unlink()
        shutil.move(elsewhere, run / name)
    assert cli("verify", str(run))[0] == 0
