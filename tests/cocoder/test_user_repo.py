"""A user's own repository as a task (``run cocoder --repo PATH``), and the refusals of bad ones."""

import pytest
from package_files import write_package
from test_collection_repairs import LAZY_PACKAGE

from agentbed.cli import main
from agentbed.errors import UsageError
from environments.cocoder.blanking import blank_source
from environments.cocoder.costmodel import FailureModel
from environments.cocoder.repos import cache_dir
from environments.cocoder.tasks import load_task
from environments.cocoder.userrepo import repo_task_id, sandbox_requirements
from environments.cocoder.wheels import download_failure, install_wheels
from suites.cocoder.team import TeamConfig, run_team

PERFECT = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)
GOOD_TEST = "from pkg.m import f\n\n\ndef test_f():\n    assert f(2) == 4\n"
GOOD_MODULE = "def f(x):\n    y = x * 2\n    return y\n"


def _refusal(tmp_path, files, capsys) -> str:
    write_package(tmp_path / "repo", files)
    with pytest.raises(UsageError) as info:
        load_task(repo_task_id(tmp_path / "repo"))
    message = str(info.value)
    assert "\n" not in message
    assert main(["run", "cocoder", "--repo", str(tmp_path / "repo"), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return message


def test_a_syntax_error_is_one_line_naming_file_and_line(sandbox, tmp_path, capsys):
    message = _refusal(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": "def f(x):\n    return (x\n\ndef g(:\n",
                                  "tests/test_m.py": GOOD_TEST}, capsys)
    assert f"{tmp_path / 'repo' / 'pkg' / 'm.py'}:4: syntax error" in message  # the user's file, not the cache's


def test_an_empty_package_and_one_with_nothing_to_blank_are_refused(sandbox, tmp_path, capsys):
    assert "all empty" in _refusal(tmp_path / "a", {"pkg/__init__.py": "", "tests/test_m.py": GOOD_TEST}, capsys)
    one_liners = {"pkg/__init__.py": "", "pkg/m.py": "def f(x): return x * 2\n",
                  "tests/test_m.py": GOOD_TEST}
    assert "no function body to blank" in _refusal(tmp_path / "b", one_liners, capsys)


def test_a_package_without_init_is_named(tmp_path, capsys):
    message = _refusal(tmp_path, {"pkg/m.py": GOOD_MODULE, "tests/test_m.py": GOOD_TEST}, capsys)
    assert "pkg/ has Python files but no __init__.py" in message


def test_a_failing_reference_shows_pytest_own_reason(sandbox, tmp_path, capsys):
    message = _refusal(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": GOOD_MODULE,
                                  "tests/test_m.py": "import not_installed_anywhere\n" + GOOD_TEST}, capsys)
    assert "ModuleNotFoundError: No module named 'not_installed_anywhere'" in message


def test_test_requirements_come_from_the_metadata(tmp_path):
    write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["six>=1.0", "tomli; python_version < \'3.11\'"]\n'
                          '[project.optional-dependencies]\ntest = ["pytest", "pytest-cov", "mock"]\n'
                          'docs = ["sphinx"]\n',
        "requirements-test.txt": "# test tools\n-r requirements.txt\nattrs==23.1.0  # pinned\n-e .\n",
        "requirements.txt": "webencodings\n",
    })
    assert sandbox_requirements(tmp_path, "pkg") == ("attrs==23.1.0", "mock", "pytest-cov", "six>=1.0", "webencodings")


def test_a_lazy_package_runs_from_its_checkout_with_its_getattr_kept(sandbox, tmp_path):
    write_package(tmp_path / "repo", LAZY_PACKAGE)
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert "__getattr__" in task.modules["lazy"].skeleton and "raise NotImplementedError" not in \
        task.modules["lazy"].skeleton
    assert task.modules["lazy.things"].blanked == ["Thing.double"]  # cases() runs at collection: kept
    assert task.reference_tests == 2
    m = run_team(task.name, TeamConfig(strategy="cocoder", failure=PERFECT), 0, tmp_path / "out").record.metrics
    assert m["pass_rate"] == 1.0


def test_a_body_that_starts_with_a_decorated_function_is_blanked_whole():
    source = ("import functools\n\n\ndef deprecated(func):\n    \"\"\"Doc.\"\"\"\n\n    @functools.wraps(func)\n"
              "    def wrapper(*args):\n        return func(*args)\n\n    return wrapper\n")
    skeleton, blanked = blank_source(source, filename="pkg/helpers.py")
    assert [b.qualname for b in blanked] == ["deprecated"]
    assert "@functools.wraps" not in skeleton and skeleton.endswith('    """Doc."""\n\n    raise NotImplementedError\n')


def test_a_compiled_dependency_installs_from_its_wheel_for_the_sandbox(sandbox, tmp_path):
    """MarkupSafe publishes compiled wheels (and an sdist), no pure one: the manylinux wheel for the
    sandbox's CPython is fetched from the real index, its sha256 recorded, and its C speedups load."""
    test = ("import markupsafe\nfrom markupsafe import _speedups\nfrom pkg.m import f\n\n\n"
            "def test_f():\n    assert f(2) == 4 and str(markupsafe.escape('<')) == '&lt;'\n")
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": GOOD_MODULE, "tests/test_m.py": test,
                                      "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["markupsafe==3.0.2"]\n'})
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert task.reference_tests == 1 and task.modules["pkg.m"].blanked == ["f"]
    site = task.tree / "_cocoder_site"
    assert any(p.suffix == ".so" for p in (site / "markupsafe").iterdir())
    from environments.cocoder.wheels import LOCK_FILE

    locks = [p for p in (cache_dir() / "wheels").glob(f"*/{LOCK_FILE}") if "MarkupSafe-3.0.2-cp311" in p.read_text()]
    assert locks and all(len(line.split()[0]) == 64 for line in locks[0].read_text().splitlines())


def test_a_dependency_with_no_wheel_at_all_is_named_and_left_out(sandbox, tmp_path, capsys):
    """docopt 0.6.2 is published as an sdist only (the real index is asked): the plan names it as
    not met offline, and the tests show whether it mattered (here not: no test imports it)."""
    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": GOOD_MODULE, "tests/test_m.py": GOOD_TEST,
                                      "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["docopt==0.6.2", '
                                                        '"six==1.17.0"]\n'})
    task = load_task(repo_task_id(tmp_path / "repo"))
    assert any("not met offline: docopt==0.6.2 (test dependency 'docopt==0.6.2' has no wheel for the sandbox's "
               "CPython 3.11" in note for note in task.notes), task.notes
    assert (task.tree / "_cocoder_site" / "six.py").is_file()  # the others are fetched
    assert main(["cocoder-plan", str(tmp_path / "repo")]) == 0
    assert "declared test requirements not met offline: docopt==0.6.2" in capsys.readouterr().out


def test_a_wheel_the_sandbox_cannot_import_is_refused_by_name(tmp_path):
    import zipfile

    wheel = tmp_path / "fastthing-1.0-cp311-cp311-macosx_11_0_arm64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fastthing/__init__.py", "")
    tags = {"python": "3.11", "tags": ["cp311-cp311-manylinux_2_17_x86_64", "py3-none-any"]}
    with pytest.raises(UsageError, match="test dependency 'fastthing' has no wheel for the sandbox's CPython 3.11"):
        install_wheels([wheel], tmp_path / "tree", tags)
    wheel.rename(tmp_path / "fastthing-1.0-cp311-cp311-manylinux_2_17_x86_64.whl")
    assert install_wheels([tmp_path / "fastthing-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"], tmp_path / "tree", tags)


def test_a_dependency_of_a_dependency_without_a_pure_wheel_is_named():
    pip_said = ("ERROR: Cannot install jinja2==3.1.5 and jinja2==3.1.6 because these package versions have "
                "conflicting dependencies.\n\nThe conflict is caused by:\n    jinja2 3.1.6 depends on MarkupSafe>=2.0\n"
                "    jinja2 3.1.5 depends on MarkupSafe>=2.0\n\nERROR: ResolutionImpossible: for help visit ...\n")
    message = download_failure(("jinja2",), pip_said)
    assert "test dependency 'MarkupSafe>=2.0' has no wheel for the sandbox" in message
    assert "required by jinja2 3.1.6 of jinja2" in message and "\n" not in message


def test_a_reference_run_that_collects_no_test_says_so(tmp_path, monkeypatch):
    """Session 16's probe: aioitertools (unittest modules not named test_*.py) ran no test in the
    sandbox and was refused as "does not pass its own tests (0 passed, 0 failed, 0 errors)". The
    refusal now says pytest collected nothing from where, and how to name such tests."""
    import environments.cocoder.tasks as tasks
    from environments.cocoder.sandboxed import TestReport

    write_package(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/m.py": GOOD_MODULE, "tests/checks.py": GOOD_TEST})
    ran = TestReport(0, 0, 0, 0, "ok", "docker", tail="no tests ran in 0.01s")
    monkeypatch.setattr(tasks, "traced_run", lambda *a, **k: (ran, None))
    with pytest.raises(UsageError) as info:
        load_task(repo_task_id(tmp_path / "repo"))
    message = str(info.value)
    assert "pytest collected no test from 'tests'" in message and "-o python_files=*.py" in message, message
    assert "does not pass" not in message and "\n" not in message
