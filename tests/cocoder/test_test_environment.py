"""The repository's own test environment in the sandbox (issue 52, item 1): the pytest version
its test requirements pin, the pytest plugins its conftest relies on, and a refusal that names
the repository's own first cause with pytest's whole output beside it."""

from pathlib import Path

import pytest
from package_files import write_package

from agentbed.errors import UsageError
from environments.cocoder.tasks import load_task
from environments.cocoder.userrepo import benchmark_notes, locate, repo_task_id, sandbox_requirements
from environments.cocoder.wheels import PROVIDED, provided_satisfies

ROOT = Path(__file__).resolve().parents[2]
MODULE = "def f(x):\n    y = x * 2\n    return y\n"


def test_what_the_sandbox_provides_is_what_its_image_pins():
    pins = dict(line.split("==") for line in (ROOT / "docker" / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert PROVIDED == {k.lower(): v for k, v in pins.items()}


def test_a_pinned_pytest_and_the_plugins_a_conftest_uses_are_requirements(tmp_path):
    assert provided_satisfies("pytest>=7") and provided_satisfies("pytest==8.3.4") is False
    assert provided_satisfies("six") is None
    write_package(tmp_path, {"pkg/__init__.py": "", "requirements-test.txt": "pytest==8.3.4\npytest-cov\npytest>=6\n"
                             "pytest-xdist\ntox\n"})
    assert sandbox_requirements(tmp_path, "pkg") == ("pytest-cov", "pytest-xdist", "pytest==8.3.4")


def test_the_repositorys_pytest_and_its_plugins_marker_run_in_the_sandbox(sandbox, tmp_path):
    """A conftest hook with ``path`` (gone in pytest 9) and a marker that only pytest-cov
    registers, under --strict-markers: the reference passes with the repository's pytest 8.3.4
    and pytest-cov fetched (from the real index) and unpacked for the sandbox."""
    test = ("import pytest\nfrom pkg.m import f\n\n\n@pytest.mark.no_cover\ndef test_f():\n"
            "    assert f(2) == 4 and pytest.__version__ == '8.3.4'\n")
    write_package(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/m.py": MODULE, "tests/test_m.py": test,
        "tests/conftest.py": "def pytest_ignore_collect(path, config):\n    return None\n",
        "requirements-test.txt": "pytest==8.3.4\npytest-cov==6.0.0\n",
        "setup.cfg": "[tool:pytest]\naddopts = --strict-markers --cov=pkg\n"})
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 1 and task.modules["pkg.m"].blanked == ["f"]
    assert (task.tree / "_cocoder_site" / "pytest_cov").is_dir()


def test_a_failing_reference_names_its_first_cause_and_keeps_the_whole_output(sandbox, tmp_path, capsys):
    write_package(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/m.py": MODULE,
        "tests/test_m.py": "from pkg.m import f\n\n\ndef test_f():\n    assert f(2) == 5, 'the first real cause'\n\n\n"
                           "def test_g():\n    assert f(1) == 3\n"})
    with pytest.raises(UsageError) as info:
        load_task(repo_task_id(tmp_path / "repo"))
    message = str(info.value)
    assert "AssertionError: the first real cause" in message and "\n" not in message
    output = Path(message.rsplit("its whole output: ", 1)[1])
    text = output.read_text(encoding="utf-8")
    assert "tests/test_m.py:5: in test_f" in text and "tests/test_m.py:9: in test_g" in text
    # through `agentbed run`: the whole output is kept in the run directory, and the line names that copy
    from agentbed.cli import main

    run_dir = tmp_path / "run"
    assert main(["run", "cocoder", "--repo", str(tmp_path / "repo"), "--out", str(run_dir), "--seeds", "1"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    kept = run_dir / "refused" / "reference-output.txt"
    assert "AssertionError: the first real cause" in line and line.endswith(f"its whole output: {kept}")
    assert kept.read_text(encoding="utf-8") == output.read_text(encoding="utf-8") and not (run_dir / "run.json").exists()


def test_of_requirements_files_for_several_pythons_the_sandboxs_is_read(tmp_path):
    """wcwidth 0.2.13 ships requirements-tests36/37/39.txt, pinned sets that conflict (coverage 5.5
    and 7.3.2); before, all three were read and pip refused coverage==5.5."""
    write_package(tmp_path, {"pkg/__init__.py": "", "requirements-tests36.txt": "coverage==5.5\n",
                             "requirements-tests37.txt": "coverage==6.0\n", "requirements-tests39.txt": "coverage==7.3.2\n",
                             "requirements-tests312.txt": "coverage==7.9\n"})
    assert sandbox_requirements(tmp_path, "pkg") == ("coverage==7.3.2",)


def test_the_requirement_to_leave_out_is_the_one_pip_blames():
    """pip's own words, from the runs on wcwidth 0.2.13 and a docopt pin (2026-12-05)."""
    from environments.cocoder.wheels import _culprit

    deep = ("ERROR: Could not find a version that satisfies the requirement untokenize<0.2.0,>=0.1.1 (from "
            "docformatter) (from versions: none)\nERROR: No matching distribution found for untokenize<0.2.0,>=0.1.1 "
            "(from docformatter)\n")
    assert _culprit(("coverage==7.3.2", "docformatter==1.7.5"), deep) == "docformatter==1.7.5"
    assert _culprit(("docopt==0.6.2", "six"), "ERROR: No matching distribution found for docopt==0.6.2\n") == \
        "docopt==0.6.2"
    assert _culprit(("six",), "ERROR: something else\n") == ""


BENCH_TEST = "from pkg.m import f\n\n\ndef test_f(benchmark):\n    assert benchmark(f, 2) == 4\n"


def test_pytest_benchmark_is_dropped_as_tooling_unless_tests_take_its_fixture(tmp_path):
    write_package(tmp_path, {"pkg/__init__.py": "", "tests/test_m.py": "def test_f():\n    pass\n",
                             "requirements-test.txt": "pytest-benchmark==5.1.0\npytest-cov\n"})
    assert sandbox_requirements(tmp_path, "pkg") == ("pytest-cov",)
    assert benchmark_notes(tmp_path, ()) == ()
    (tmp_path / "tests" / "test_m.py").write_text(BENCH_TEST, encoding="utf-8")
    kept = sandbox_requirements(tmp_path, "pkg")
    assert kept == ("pytest-benchmark==5.1.0", "pytest-cov")
    assert benchmark_notes(tmp_path, kept)[0].startswith("pytest-benchmark kept as a test requirement")
    assert "no test requirement declares pytest-benchmark" in benchmark_notes(tmp_path, ("pytest-cov",))[0]
    # its options stay in addopts where the plugin is kept (--benchmark-skip: the repository skips benchmarks)
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = --benchmark-skip --cov=pkg\n", encoding="utf-8")
    assert locate(tmp_path).tests == "tests -o addopts=--benchmark-skip"
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef benchmark():\n"
                                                    "    return lambda f, *a: f(*a)\n", encoding="utf-8")
    assert sandbox_requirements(tmp_path, "pkg") == ("pytest-cov",)  # the repository's own fixture


def test_tests_taking_the_benchmark_fixture_run_with_the_plugin(sandbox, tmp_path):
    """pytest-benchmark fetched (from the real index, pinned by sha256 at plan time) and unpacked
    for the sandbox; the benchmarked test counts as a reference test and the plan notes say why
    the plugin is there."""
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": MODULE, "tests/test_m.py": BENCH_TEST,
                                      "requirements-test.txt": "pytest-benchmark==5.3.1\n"})
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 1 and task.modules["pkg.m"].blanked == ["f"]
    assert (task.tree / "_cocoder_site" / "pytest_benchmark").is_dir()
    assert any(n.startswith("pytest-benchmark kept as a test requirement") for n in task.notes)
