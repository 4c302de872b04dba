"""Doctests the repository's own configuration runs (``--doctest-modules``, and ``--doctest-glob``
for .rst/.txt files) count as reference tests (issue 52, item 5), and a doctest that fails points
the leader's repair at the function it documents."""

from package_files import write_package

from environments.cocoder.pytestconfig import tox_pytest
from environments.cocoder.sandboxed import run_tests
from environments.cocoder.tasks import assemble, load_task
from environments.cocoder.userrepo import find_tests, repo_task_id
from suites.cocoder.repairs import repair_targets
from suites.cocoder.team import TeamConfig, plan_team

MODULE = '''def double(x):
    """Twice ``x``.

    >>> double(2)
    4
    """
    y = x * 2
    return y


def half(x):
    """Half of ``x``; no test but its doctest checks it.

    >>> half(4)
    2.0
    """
    y = x / 2
    return y
'''
FILES = {"pkg/__init__.py": "", "pkg/m.py": MODULE,
         "tests/test_m.py": "from pkg.m import double\n\n\ndef test_double():\n    assert double(3) == 6\n"}


def test_the_tox_command_is_read(tmp_path):
    (tmp_path / "tox.ini").write_text("[tox]\nenvlist = py311\n\n[testenv]\ndeps = pytest\ncommands =\n"
                                      "    - python -m pytest --doctest-modules src/pkg tests {posargs}\n")
    assert tox_pytest(tmp_path) == ["--doctest-modules", "src/pkg", "tests"]
    write_package(tmp_path, {"src/pkg/__init__.py": "", "tests/test_m.py": ""})
    assert find_tests(tmp_path, "pkg") == "pkg tests --doctest-modules"  # the tree moves src/pkg up


def test_doctests_run_by_tox_count_and_are_blanked_like_tests(sandbox, tmp_path):
    write_package(tmp_path / "repo", {**FILES, "tox.ini": "[testenv]\ncommands = pytest --doctest-modules pkg tests "
                                                          "{posargs}\n"})
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 3  # one test and two doctests
    assert task.modules["pkg.m"].blanked == ["double", "half"]  # half is reached by its doctest alone


def test_doctests_in_addopts_collect_the_package(sandbox, tmp_path):
    write_package(tmp_path, {**FILES, "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules\n"})
    tests = find_tests(tmp_path, "pkg")
    assert tests.split()[:2] == ["tests", "pkg"]
    broken = MODULE.replace("y = x / 2", "y = x / 3")
    (tmp_path / "pkg" / "m.py").write_text(broken, encoding="utf-8")
    report = run_tests(tmp_path, tests)
    assert (report.passed, report.failed) == (2, 1)
    line = broken.splitlines().index("    >>> half(4)") + 1
    assert report.crash_lines == (("pkg/m.py", line),)  # inside half: its repair target


README = "Example\n=======\n\n.. code-block:: python\n\n    >>> from pkg.m import half\n    >>> half(4)\n    2.0\n"


def test_text_doctests_of_a_tox_command_are_named_with_their_glob(tmp_path):
    write_package(tmp_path, {**FILES, "docs/usage.txt": README, "notes/other.txt": README, "tox.ini":
                             "[testenv]\ncommands = pytest --doctest-glob='*.txt' tests docs {posargs}\n"})
    assert find_tests(tmp_path, "pkg") == "tests docs '--doctest-glob=*.txt'"
    (tmp_path / "tox.ini").write_text("[testenv]\ncommands = pytest --doctest-glob '*.txt' {posargs}\n")
    assert find_tests(tmp_path, "pkg") == "tests docs/usage.txt notes/other.txt '--doctest-glob=*.txt'"


def test_rst_doctests_of_addopts_count_and_are_blanked_like_tests(sandbox, tmp_path):
    """``--doctest-glob=*.rst`` in addopts and no testpaths: a bare pytest collects README.rst and
    docs/*.rst, so the task names them; README's doctest is the only test reaching ``half``.
    Files under build/ or a hidden folder (pytest's norecursedirs) are not collected."""
    write_package(tmp_path / "repo", {**FILES, "README.rst": README, "build/old.rst": ">>> 1\n2\n",
                                      ".hidden/x.rst": ">>> 1\n2\n",
                                      "setup.cfg": "[tool:pytest]\naddopts = --doctest-glob=*.rst\n"})
    assert find_tests(tmp_path / "repo", "pkg").split()[:2] == ["tests", "README.rst"]
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 2  # one test and README.rst (a text file is one doctest item)
    assert task.modules["pkg.m"].blanked == ["double", "half"]  # half is reached by README's doctest alone
    # a wrong half() fails README's doctest: it points at the example's line and the repair at pkg.m
    broken = {"pkg.m": MODULE.replace("y = x / 2", "y = x / 3")}
    report = run_tests(assemble(task, broken, tmp_path / "final"), task.tests)
    assert (report.passed, report.failed) == (1, 1) and report.crash_lines == (("README.rst", 7),), report.tail
    graph, plan, _ = plan_team(task, TeamConfig(granularity="file"), 0)
    assert repair_targets(task, plan, graph, report, broken) == ["pkg.m"]
