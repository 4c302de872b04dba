"""Every registered agentbed environment honours the gymnasium Env contract."""

import importlib.util
import shutil

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from agentbed.suite import broken_suites, load_suites
from agentbed.testing import require

load_suites()  # importing the suites registers their environments
AGENTBED_ENVS = sorted(env_id for env_id in gymnasium.registry if env_id.startswith("agentbed/"))

# environments whose engine is an external component: (is it here?, what to install)
NEEDS = {
    "agentbed/scienceworld-v0": (lambda: shutil.which("java") is not None,
                                 "Java for ScienceWorld: apt-get install default-jre-headless"),
    "agentbed/alfworld-v0": (lambda: importlib.util.find_spec("alfworld") is not None,
                             "pip install -e '.[alfworld]' (make test does this)"),
    "agentbed/agentdojo-v0": (lambda: importlib.util.find_spec("agentdojo") is not None,
                              "pip install -e '.[agentdojo]' (make test does this)"),
}


def test_no_installed_suite_is_broken():
    assert broken_suites() == {}


def test_environments_are_registered():
    assert "agentbed/vault-v0" in AGENTBED_ENVS


@pytest.mark.filterwarnings("error::UserWarning")  # gymnasium reports contract violations as warnings
@pytest.mark.parametrize("env_id", AGENTBED_ENVS)
def test_check_env(env_id):
    if env_id in NEEDS:
        available, how = NEEDS[env_id]
        require(available(), env_id, how)
    env = gymnasium.make(env_id, render_mode="ansi")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()
