"""What each test did, as pytest's own hooks say it, whatever the terminal prints.

The terminal report depends on the repository's options (``--color=yes``, ``-v``, ``-qq``,
``--tb=line``, ``-p no:...``) and ends without a closing line when the run is cut off by the
time limit. So every sandboxed pytest run also loads a small plugin (:data:`PLUGIN`) that writes
one JSON line per test report, as it happens, to a file beside the tree: the test's id, its
phase and outcome, and for a failure the ``file:line`` frames of its traceback (pytest's own
``longreprtext`` in ``--tb=short``, never coloured). :func:`read_outcomes` turns that file back
into counts and crash locations; a run that timed out still has the tests it finished, and the
test(s) it was running when killed: the plugin also writes a line as each test starts (its file,
absolute), and a started test without a teardown report is one the kill cut off.

The plugin is warning-clean under the repository's ``filterwarnings = error``: it closes what it
opens and uses only plain hooks that exist since pytest 3.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

PLUGIN_DIR = "_cocoder_plugins"  # beside the tree in the sandbox (``/sandbox/_cocoder_plugins``)
PLUGIN_NAME = "_cocoder_outcomes"
OUTCOMES_FILE = "_cocoder_outcomes.jsonl"  # beside the tree: a test that cleans its folder cannot remove it
FRAME = re.compile(r"^(\S+?\.py):(\d+): in ")  # a --tb=short frame
SYNTAX = re.compile(r'^E?\s+File "([^"]+?\.py)", line (\d+)')  # where a SyntaxError points
DOCTEST = re.compile(r"^(\S+?\.\w+):(\d+): DocTestFailure$")  # the example of a doctest (.py, .rst, .txt) that gave a wrong value
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colour and cursor sequences (CSI)

PLUGIN = ('''"""agentbed: one JSON line per pytest report (environments/cocoder/outcomes.py)."""
import json
import os
import re

_FRAME = re.compile(@FRAME@)
_SYNTAX = re.compile(@SYNTAX@)
_DOCTEST = re.compile(@DOCTEST@)
_PATH = os.path.join(os.path.dirname(os.getcwd()), @FILE@)
_state = {}


def pytest_configure(config):
    _state["out"] = open(_PATH, "a", encoding="utf-8")
    _state["root"] = str(getattr(config, "rootpath", None) or config.rootdir)


def pytest_unconfigure(config):
    out = _state.pop("out", None)
    if out is not None:
        out.close()


def _record(report, when):
    out = _state.get("out")
    if out is None:
        return
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    frames = []
    if report.failed:
        for line in (report.longreprtext or "").splitlines():
            found = _FRAME.match(line) or _SYNTAX.match(line) or _DOCTEST.match(line)
            if found:
                frames.append([found.group(1), int(found.group(2))])
    out.write(json.dumps({"id": report.nodeid, "when": when, "outcome": outcome, "frames": frames}) + "\\n")
    out.flush()


def pytest_runtest_logstart(nodeid, location):
    out = _state.get("out")
    if out is not None:
        path = os.path.join(_state["root"], location[0])
        out.write(json.dumps({"id": nodeid, "when": "start", "outcome": "", "file": path}) + "\\n")
        out.flush()


def pytest_runtest_logreport(report):
    _record(report, report.when)


def pytest_collectreport(report):
    if report.failed:
        _record(report, "collect")
'''.replace("@FRAME@", repr(FRAME.pattern)).replace("@SYNTAX@", repr(SYNTAX.pattern))
          .replace("@DOCTEST@", repr(DOCTEST.pattern)).replace("@FILE@", repr(OUTCOMES_FILE)))


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour sequences (a repository's ``--color=yes``)."""
    return ANSI.sub("", text)


@dataclass(frozen=True)
class Outcomes:
    """What the plugin recorded: pytest's counts and, per failed report, its traceback frames."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    finished: int = 0  # tests whose call phase (or skip) was reported: what a cut-off run got through
    frames: tuple[tuple[tuple[str, int], ...], ...] = ()  # per failed report, its file:line frames in order
    running: tuple[tuple[str, str], ...] = ()  # (test id, its file) started and never torn down: cut off by a kill

    @property
    def recorded(self) -> bool:
        return bool(self.finished or self.frames)


def read_outcomes(text: str) -> Outcomes:
    """Counts as pytest's closing line gives them (a setup, teardown or collection failure is an
    error; xfail and xpass are neither passed nor failed) from the plugin's lines; a line cut off
    by a kill is ignored."""
    passed = failed = errors = skipped = finished = 0
    frames: list[tuple[tuple[str, int], ...]] = []
    started: dict[str, str] = {}  # test id -> file, until its teardown is reported
    for line in text.splitlines():
        try:
            rec = json.loads(line)
            when, outcome = rec["when"], rec["outcome"]
        except (ValueError, KeyError, TypeError):
            continue
        if when == "start":
            started[str(rec["id"])] = str(rec.get("file", ""))
            continue
        if when == "teardown":
            started.pop(str(rec["id"]), None)
        if outcome == "failed":
            frames.append(tuple((str(p), int(n)) for p, n in rec.get("frames", [])))
            if when == "call":
                failed += 1
            else:
                errors += 1
        elif outcome == "passed" and when == "call":
            passed += 1
        elif outcome == "skipped":
            skipped += 1
        if when == "call" or (outcome == "skipped" and when == "setup"):
            finished += 1
    return Outcomes(passed, failed, errors, skipped, finished, tuple(frames), tuple(started.items()))
