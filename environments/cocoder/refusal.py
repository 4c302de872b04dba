"""Why a repository's reference is refused at preparation, in one line (pytest's own words)."""

from __future__ import annotations

from pathlib import Path

from environments.cocoder.sandboxed import TestReport


def pytest_reason(output: str, limit: int = 600) -> str:
    """pytest's own reason, on one line: its summary lines (FAILED/ERROR ...) and closing line, or
    the last lines of its output when it printed none (e.g. a usage error)."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    summary = [ln for ln in lines if ln.startswith(("FAILED ", "ERROR ", "E "))][-4:]
    cause = [ln for ln in lines if ln.startswith("E ")][:1]  # the first exception, when the summary names none
    picked = (cause if summary and not any(ln.startswith("E ") for ln in summary) else []) + summary or lines[-3:]
    closing = [ln for ln in lines[-1:] if ln not in picked]
    return " | ".join(picked + closing)[:limit] or "no output"


def reference_refusal(name: str, report: TestReport, tests: str, said: str, output: Path) -> str:
    """The message when the reference does not pass: a run that collected no test says so, with
    pytest's default file names and the option that collects others (a unittest-style repository
    whose test modules are not named test_*.py ran "no tests" and was said to fail them)."""
    if report.passed == report.failed == report.errors == 0:
        return (f"task {name!r}: pytest collected no test from {tests or 'the default paths'!r} in the sandbox "
                f"(it collects files named test_*.py or *_test.py unless the repository's pytest configuration "
                f"says otherwise; name them with --tests, e.g. --tests \"DIR -o python_files=*.py\"); "
                f"pytest says: {said}; its whole output: {output}")
    return (f"task {name!r}: the reference does not pass its own tests in the sandbox ({report.passed} passed, "
            f"{report.failed} failed, {report.errors} errors); pytest says: {said}; its whole output: {output}")
