"""Every registered agentbed environment honours the gymnasium Env contract."""

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from agentbed.suite import broken_suites, load_suites

load_suites()  # importing the suites registers their environments
AGENTBED_ENVS = sorted(env_id for env_id in gymnasium.registry if env_id.startswith("agentbed/"))


def test_no_installed_suite_is_broken():
    assert broken_suites() == {}


def test_environments_are_registered():
    assert "agentbed/vault-v0" in AGENTBED_ENVS


@pytest.mark.filterwarnings("error::UserWarning")  # gymnasium reports contract violations as warnings
@pytest.mark.parametrize("env_id", AGENTBED_ENVS)
def test_check_env(env_id):
    env = gymnasium.make(env_id, render_mode="ansi")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()
