"""Repair targets whatever pytest prints (issue 52, item 2): the repository's own options reach
the sandbox's pytest (coloured, verbose, quiet, other --tb styles, ``-p no:``), a run cut off by
the time limit still reports what it finished, and agentbed's plugins stay warning-clean under
``filterwarnings = error``. Every output parsed here is real pytest's."""

import json
import os
import subprocess
import sys

import pytest
from package_files import write_package

from environments.cocoder.outcomes import OUTCOMES_FILE, PLUGIN, PLUGIN_NAME, read_outcomes, strip_ansi
from environments.cocoder.pytestconfig import read_config, run_arguments
from environments.cocoder.reach import traced_run
from environments.cocoder.sandboxed import crash_lines, run_tests

PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/m.py": "def f():\n    raise NotImplementedError\n\n\ndef g():\n    return 2\n",
    "tests/test_m.py": ("from pkg.m import f, g\n\n\ndef test_f():\n    assert f() == 1\n\n\n"
                        "def test_g():\n    assert g() == 2\n\n\ndef test_g_wrong():\n    assert g() == 3\n"),
}
CRASHES = (("pkg/m.py", 2), ("tests/test_m.py", 13))  # f's body; the assertion on g's value
ADDOPTS = ["--color=yes -v", "-vv -rA --tb=native", "-qq --tb=line -p no:warnings -p no:doctest", "--tb=no"]


def _repo(root, addopts="", extra=None):
    files = {**PACKAGE, **(extra or {})}
    files["pyproject.toml"] = f'[tool.pytest.ini_options]\naddopts = "{addopts}"\n' + files.get("pyproject.toml", "")
    write_package(root, files)
    return run_arguments(["tests"], read_config(root))


@pytest.mark.parametrize("addopts", ADDOPTS)
def test_the_repositorys_options_do_not_hide_where_tests_crashed(sandbox, tmp_path, addopts):
    """Before, ``--color=yes`` in addopts hid every frame from the parser: no repair was sent."""
    report = run_tests(tmp_path, _repo(tmp_path, addopts))
    assert (report.passed, report.failed, report.errors) == (1, 2, 0), report.tail
    assert report.crash_lines == CRASHES and report.finished == 3
    assert "\x1b[" not in report.tail


def test_coloured_output_is_stripped_before_parsing(tmp_path):
    """pytest's own coloured --tb=short report, as a repository with ``--color=yes`` gets it."""
    _repo(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=yes", "--tb=short",
                          "-o", "addopts=", "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=_BARE).stdout
    assert "\x1b[" in out
    assert crash_lines(strip_ansi(out)) == CRASHES


def _host_pytest(root, *plugins, env_path):
    """The plugin run by the host's pytest, from a folder beside the tree as in the sandbox."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugins, "--tb=short",
                           "-o", "addopts=", "tests"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**_BARE, "PYTHONPATH": env_path})


# The host's pytest as the sandbox's is: none of this environment's plugins loaded from entry
# points (the sandbox has none of them; here there are dozens, about 3 s of CPU per pytest start)
_BARE = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_reports_through_xdists_transport_give_the_same_targets(tmp_path):
    """pytest-xdist sends each report from a worker to the controller through pytest's own
    ``pytest_report_to_serializable`` / ``pytest_report_from_serializable`` hooks; the
    controller's hooks see the rebuilt report. The plugin's records from reports rebuilt that
    way equal its records from the originals (xdist itself is not installed here)."""
    plugins, tree = tmp_path / "plugins", tmp_path / "work"
    plugins.mkdir()
    _repo(tree)
    (plugins / f"{PLUGIN_NAME}.py").write_text(PLUGIN, encoding="utf-8")
    (plugins / "roundtrip.py").write_text(
        f"import {PLUGIN_NAME} as real\n_config = []\n\n\n"
        "def pytest_configure(config):\n    _config.append(config)\n    real.pytest_configure(config)\n\n\n"
        "def pytest_unconfigure(config):\n    real.pytest_unconfigure(config)\n\n\n"
        "def _rebuilt(report):\n    config = _config[0]\n"
        "    data = config.hook.pytest_report_to_serializable(config=config, report=report)\n"
        "    return config.hook.pytest_report_from_serializable(config=config, data=data)\n\n\n"
        "def pytest_runtest_logstart(nodeid, location):\n    real.pytest_runtest_logstart(nodeid, location)\n\n\n"
        "def pytest_runtest_logreport(report):\n    real.pytest_runtest_logreport(_rebuilt(report))\n\n\n"
        "def pytest_collectreport(report):\n    real.pytest_collectreport(_rebuilt(report))\n", encoding="utf-8")
    records = tmp_path / OUTCOMES_FILE
    _host_pytest(tree, "-p", PLUGIN_NAME, env_path=str(plugins))
    direct = records.read_text(encoding="utf-8")
    records.unlink()
    _host_pytest(tree, "-p", "roundtrip", env_path=str(plugins))
    assert records.read_text(encoding="utf-8") == direct
    outcomes = read_outcomes(direct)
    assert (outcomes.passed, outcomes.failed, outcomes.finished) == (1, 2, 3)
    assert {frames[-1] for frames in outcomes.frames} == set(CRASHES)


def test_a_run_cut_off_by_the_time_limit_keeps_what_it_finished(sandbox, tmp_path):
    """A test that never ends: the sandbox's limit kills pytest before its closing line; the run
    is a timeout with the tests it finished counted, its failures located and the test it was
    running named (with its file: a repair target)."""
    tests = _repo(tmp_path, extra={"tests/test_z_hangs.py": "import time\n\n\ndef test_hangs():\n    time.sleep(600)\n"})
    report = run_tests(tmp_path, tests, timeout=12)
    assert report.status == "timeout"
    assert (report.passed, report.failed, report.finished) == (1, 2, 3)
    assert report.crash_lines == CRASHES
    assert report.running == (("tests/test_z_hangs.py::test_hangs", "tests/test_z_hangs.py"),)


def test_agentbeds_plugins_are_warning_clean_under_filterwarnings_error(sandbox, tmp_path):
    """The profiler (reach) and outcomes plugins under a repository that turns every warning into
    an error, ResourceWarning included (an unclosed file in the profiler failed such a repository)."""
    tests = _repo(tmp_path, extra={"pyproject.toml": 'filterwarnings = ["error", "error::ResourceWarning"]\n'})
    report, reach = traced_run(tmp_path, "pkg", tests + " -W error::ResourceWarning -W error::DeprecationWarning")
    assert (report.passed, report.failed, report.errors) == (1, 2, 0), report.tail
    assert "Warning" not in report.tail and reach is not None
    assert json.dumps(reach.to_json())
