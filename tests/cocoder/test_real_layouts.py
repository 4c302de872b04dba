"""A repository as pytest and pip see it: its pytest configuration, its own metadata installed,
what its tests reach; and the checkouts that are refused before anything is copied."""

import os

import pytest
from package_files import write_package

from agentbed.cli import main
from agentbed.errors import UsageError
from environments.cocoder.pytestconfig import read_config, split_addopts
from environments.cocoder.tasks import load_task
from environments.cocoder.userrepo import find_tests, repo_task_id

PYPROJECT = '''[project]
name = "shapes-kit"
version = "2.5.1"
[project.scripts]
shapes = "shapes.cli:main"
[project.entry-points."shapes.plugins"]
square = "shapes.square:area"
[tool.pytest.ini_options]
testpaths = ["checks"]
python_files = ["check_*.py"]
python_functions = ["check_*"]
addopts = "--cov=shapes --cov-report term -n 2 --strict-markers -p no:randomly"
markers = ["slow: a slow check"]
'''
CHECKS = '''import importlib.metadata as md
import subprocess
import sys

import pytest

from shapes import square


@pytest.mark.slow
def check_version_and_entry_points(unit):
    assert md.version("shapes-kit") == "2.5.1"
    (ep,) = md.entry_points(group="shapes.plugins")
    assert ep.load() is square.area
    assert [e.value for e in md.entry_points(group="console_scripts") if e.name == "shapes"] == ["shapes.cli:main"]


def check_area(unit):
    assert square.area(unit) == 9


def check_a_subprocess_sees_the_package_and_its_metadata():
    code = "import importlib.metadata as md, shapes; print(md.version('shapes-kit'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "2.5.1", done.stderr
'''
FILES = {
    "shapes/__init__.py": "",
    "shapes/square.py": ("def area(side):\n    value = side * side\n    return value\n\n\n"
                         "def perimeter(side):\n    value = 4 * side\n    return value\n"),
    "shapes/cli.py": "def main():\n    print('shapes')\n    return 0\n",
    "checks/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef unit():\n    return 3\n",
    "checks/check_square.py": CHECKS,
    "tests/test_wrong_folder.py": "def test_never_collected():\n    assert False\n",
    "pyproject.toml": PYPROJECT,
}


def test_the_repository_configuration_decides_what_runs(tmp_path):
    write_package(tmp_path, FILES)
    config = read_config(tmp_path)
    assert config.source == "pyproject.toml" and config.testpaths == ("checks",)
    assert config.dropped == ("--cov=shapes", "--cov-report", "term", "-n", "2")
    assert find_tests(tmp_path, "shapes") == "checks -o 'addopts=--strict-markers -p no:randomly'"
    assert find_tests(tmp_path, "shapes", "tests -k x") == "tests -k x"  # --tests overrides it


def test_addopts_of_tooling_plugins_are_dropped_and_others_kept():
    kept, dropped = split_addopts(["-ra", "--cov", "--cov-report=xml", "-n4", "-p", "pytest_cov", "--doctest-modules",
                                   "--benchmark-skip", "-x"])
    assert kept == ["-ra", "--doctest-modules", "-x"] and dropped == ["--cov", "--cov-report=xml", "-n4", "-p",
                                                                      "pytest_cov", "--benchmark-skip"]


def test_a_repository_runs_as_configured_installed_and_traced(sandbox, tmp_path):
    """testpaths, python_files, markers (strict), addopts and a conftest fixture from the
    repository's pyproject; its version and entry points through importlib.metadata; and what
    no test reaches (cli.main, square.perimeter) stays as written, named in the notes."""
    write_package(tmp_path / "repo", FILES)
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 3  # the three checks; tests/ is not the repository's test folder
    assert task.modules["shapes.square"].blanked == ["area"]
    assert not task.modules["shapes.cli"].blanked
    assert task.untested == {"shapes.cli": ["main"], "shapes.square": ["perimeter"]}
    assert task.tests_reaching["shapes.square"] == 1 and task.tests_reaching["shapes.cli"] == 0
    (note,) = [n for n in task.notes if n.startswith("untested:")]
    assert "2 functions in 2 modules reached by no reference test" in note and "modules no test reaches: shapes.cli" in note


def _refused(tmp_path, capsys) -> str:
    with pytest.raises(UsageError) as info:
        load_task(repo_task_id(tmp_path / "repo"))
    assert main(["cocoder-plan", str(tmp_path / "repo")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return str(info.value)


def test_a_symlink_leaving_the_checkout_is_refused(tmp_path, capsys):
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": "def f():\n    x = 1\n    return x\n"})
    (tmp_path / "secret").write_text("host file", encoding="utf-8")
    os.symlink(tmp_path / "secret", tmp_path / "repo" / "pkg" / "data.txt")
    message = _refused(tmp_path, capsys)
    assert f"{tmp_path / 'repo' / 'pkg' / 'data.txt'}: a symlink leaving the repository" in message


@pytest.mark.parametrize("target", ["loop", "..", "."])
def test_a_symlink_loop_is_refused(tmp_path, capsys, target):
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": "def f():\n    x = 1\n    return x\n"})
    os.symlink(target, tmp_path / "repo" / "pkg" / "loop")
    assert "loop" in _refused(tmp_path, capsys)


@pytest.mark.parametrize("source", ["x = " + "+".join(["a"] * 200_000) + "\n",
                                    "x = " + "-" * 100_000 + "1\n",
                                    "def f(y):\n    if y == 0:\n        return 0\n"
                                    + "".join(f"    elif y == {i}:\n        return {i}\n" for i in range(1, 3000))])
def test_code_nested_too_deeply_is_refused_in_one_line(tmp_path, capsys, source):
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/deep.py": source, "tests/test_x.py": ""})
    message = _refused(tmp_path, capsys)
    assert f"{tmp_path / 'repo' / 'pkg' / 'deep.py'}:1: syntax error: code nested too deeply" in message


def test_an_sdist_refusal_names_the_archive_not_its_copy_in_the_cache(tmp_path, capsys):
    import tarfile

    write_package(tmp_path / "src" / "pkg-1.0", {"pkg/__init__.py": "", "pkg/m.py": "def f(:\n    pass\n",
                                                 "tests/test_m.py": "def test_x():\n    pass\n",
                                                 "PKG-INFO": "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"})
    archive = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "src" / "pkg-1.0", arcname="pkg-1.0")
    with pytest.raises(UsageError) as info:
        load_task(repo_task_id(archive))
    assert str(info.value).startswith(f"{archive}!/pkg/m.py:1: syntax error") and "cocoder/user" not in str(info.value)
