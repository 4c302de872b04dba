"""The pinned repositories on the local sandbox, what a machine without Docker runs (issue 55):
transitions' own tests, as pinned, pass there. Its two mypy tests used to fail there (the local
sandbox's Python imports the project's mypy, whose ``mypy`` command was not on PATH, and whose
newer rules fail transitions' own test files once it is), so that no CoCoder test preparing
transitions could pass on such a machine; they are left out of the pinned tests (in the Docker
image, which has no mypy, they skip)."""

from __future__ import annotations

import shlex

from agentbed.testing import require
from environments.cocoder.repos import (
    FETCH_COMMAND,
    REPO_BY_NAME,
    is_fetched,
    package_base,
    pinned_wheels,
    repo_dir,
)
from environments.cocoder.sandboxed import pytest_argv, report_of, sandbox_exec
from environments.cocoder.userrepo import UserRepo, prepare_tree


def test_transitions_codestyle_tests_as_pinned_pass_in_the_local_sandbox(tmp_path):
    from agentbed.sandbox import local_ready

    missing = local_ready()
    require(missing is None, "the local sandbox backend", f"{missing}")
    repo = REPO_BY_NAME["transitions"]
    require(is_fetched(repo), "the pinned repository transitions", f"run {FETCH_COMMAND} transitions")
    tree = tmp_path / "tree"  # the reference tree as a task's preparation makes it, of this test's own
    prepare_tree(UserRepo(repo_dir(repo), repo.package, package_base(repo), repo.tests, ()), tree,
                 wheels=pinned_wheels(repo))
    folder, *arguments = shlex.split(repo.tests)
    tests = shlex.join([f"{folder}/test_codestyle.py", *arguments])  # the file with the mypy tests, alone
    report = report_of(sandbox_exec(tree, pytest_argv(tests), backend="local"))
    assert report.backend == "local"
    assert (report.passed, report.failed, report.errors) == (1, 0, 0), report.tail
