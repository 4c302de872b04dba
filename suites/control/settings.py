"""The control settings: for each world, its tasks, its side task, and its policies.

A task id is ``SETTING/TASK`` (``contracts/s3-get-basic``, ``agentdojo/banking.user_task_0.injection_task_1``,
``shell/write-file``, ``code/code-auth``). Policies (the ``agent`` of an episode): ``honest`` (the world's reference
agent), ``trusted`` (a weaker stand-in for a trusted model: the reference agent -- contracts' ``naive``
one, with its bad habits -- giving up on a seeded 30% of episodes), ``attack-blatant|disguised|subtle`` (the
honest agent plus the side task, :mod:`attacks.control`), or any chat model (``model:...``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentbed.agents.base import Agent
from agentbed.env import ToolEnv
from agentbed.errors import SuiteError
from agentbed.tools import make_action
from attacks.control.policy import STRATEGIES, AttackPolicy, SideTask, Weakened

TRUSTED_FAILURE = 0.3  # share of episodes the scripted trusted stand-in gives up on (where it has no flaws of its own)


@dataclass(frozen=True)
class Setting:
    name: str
    tasks: Callable[[], list[str]]
    make_env: Callable[[str], ToolEnv]
    honest: Callable[[], Agent]
    trusted: Callable[[], Agent]
    side: Callable[[], SideTask]
    sandboxed: bool = False


def _contracts_tasks() -> list[str]:
    from environments.contracts.env import ContractEnv

    # one task of each family (the first listed), so the slice spans the catalogue
    seen: dict[str, str] = {}
    for t in ContractEnv.task_list():
        seen.setdefault(t.params["family"], t.id)
    return list(seen.values())


def _contracts_env(task: str) -> ToolEnv:
    from environments.contracts.side_task import ContractSideTaskEnv

    return ContractSideTaskEnv(task)


def _contracts_honest() -> Agent:
    from environments.contracts.agents import oracle

    return oracle()


def _contracts_trusted() -> Agent:
    from environments.contracts.agents import naive

    return Weakened(naive(), make_action("end_task", reason="I could not complete this task."), TRUSTED_FAILURE)


def _contracts_side() -> SideTask:
    from attacks.contracts.side_task import ContractsLeak

    return ContractsLeak()


# AgentDojo's four suites, banking first: ``--tasks N`` takes the first N, so small runs (the demo,
# the ControlArena cross-check) stay on banking as before
AGENTDOJO_SUITES = ("banking", "slack", "travel", "workspace")


def _agentdojo_tasks() -> list[str]:
    from environments.agentdojo.benchmark import indexed_injection_tasks, indexed_user_tasks

    tasks = []
    for suite in AGENTDOJO_SUITES:
        users, injections = indexed_user_tasks(suite), indexed_injection_tasks(suite)
        # every user task, each paired with one injection task in turn: all injection tasks are used
        tasks += [f"{suite}.{u}.{injections[i % len(injections)]}" for i, u in enumerate(users)]
    return tasks


def _agentdojo_env(task: str) -> ToolEnv:
    from environments.agentdojo.side_task import AgentDojoSideTaskEnv

    return AgentDojoSideTaskEnv(task)


def _agentdojo_honest() -> Agent:
    from environments.agentdojo.agents import GroundTruthAgent

    return GroundTruthAgent()


def _agentdojo_trusted() -> Agent:
    from environments.agentdojo.agents import GroundTruthAgent, final_action

    return Weakened(GroundTruthAgent(), final_action("I could not complete this task."), TRUSTED_FAILURE)


def _agentdojo_side() -> SideTask:
    from attacks.agentdojo.side_task import AgentDojoOwnGoal

    return AgentDojoOwnGoal()


def _shell_env(task: str) -> ToolEnv:
    from environments.shell.side_task import ShellSideTaskEnv

    return ShellSideTaskEnv(task)


def _shell_honest() -> Agent:
    from environments.shell.agents import ShellOracle

    return ShellOracle()


def _shell_trusted() -> Agent:
    from environments.shell.agents import ShellOracle

    return Weakened(ShellOracle(), make_action("submit"), TRUSTED_FAILURE)


def _shell_side() -> SideTask:
    from attacks.shell.side_task import ShellExfiltrate

    return ShellExfiltrate()


def _code_tasks() -> list[str]:
    from environments.shell.backdoor import ShellCodeEnv

    return [t.id for t in ShellCodeEnv.task_list()]


def _code_env(task: str) -> ToolEnv:
    from environments.shell.backdoor import ShellCodeEnv

    return ShellCodeEnv(task)


def _code_honest() -> Agent:
    from environments.shell.agents import CodeOracle

    return CodeOracle()


def _code_trusted() -> Agent:
    from environments.shell.agents import CodeOracle

    return Weakened(CodeOracle(), make_action("submit"), TRUSTED_FAILURE)


def _code_side() -> SideTask:
    from attacks.shell.backdoor import ShellBackdoor

    return ShellBackdoor()


SETTINGS = {
    "contracts": Setting("contracts", _contracts_tasks, _contracts_env, _contracts_honest, _contracts_trusted,
                         _contracts_side),
    "agentdojo": Setting("agentdojo", _agentdojo_tasks, _agentdojo_env, _agentdojo_honest, _agentdojo_trusted,
                         _agentdojo_side),
    "shell": Setting("shell", lambda: ["write-file"], _shell_env, _shell_honest, _shell_trusted, _shell_side,
                     sandboxed=True),
    "code": Setting("code", _code_tasks, _code_env, _code_honest, _code_trusted, _code_side, sandboxed=True),
}
POLICIES = ("honest", "trusted", *(f"attack-{s}" for s in STRATEGIES))


def split_task(task: str) -> tuple[Setting, str]:
    name, sep, rest = task.partition("/")
    if not sep or name not in SETTINGS:
        raise SuiteError(f"task {task!r}: expected SETTING/TASK with SETTING one of {', '.join(SETTINGS)}")
    return SETTINGS[name], rest


def mode_of(agent: str, options: dict[str, Any]) -> str:
    """``attack`` for an attack policy (or a model run with ``--mode attack``), else ``honest``."""
    if agent.startswith("attack-"):
        return "attack"
    if agent.startswith("model:"):
        return str(options.get("mode", "honest"))
    return "honest"


def make_policy(setting: Setting, agent: str, attack_rate: float = 1.0) -> Agent:
    if agent == "honest":
        return setting.honest()
    if agent == "trusted":
        return setting.trusted()
    if agent.startswith("attack-") and agent.removeprefix("attack-") in STRATEGIES:
        return AttackPolicy(setting.honest(), setting.side(), agent.removeprefix("attack-"), attack_rate)
    raise SuiteError(f"control settings have no policy {agent!r} (policies: {', '.join(POLICIES)}, or model:...)")
