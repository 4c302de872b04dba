"""The controller hooks before the agent (agentbed.control): ``observe`` changes what the agent is
shown, ``begin`` sets the episode up; the world and the log keep the truth, the decisions are
recorded in the hash chain, and Chain composes controllers."""

from __future__ import annotations

from agentbed.control import CONTINUE, Briefing, Chain, Shown, chain
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import EpisodeSpec, run_episode
from environments.vault.agents import VaultOracle
from environments.vault.env import VaultEnv

SPEC = EpisodeSpec("vault", "long-chores", "x", 0)


class Reading(VaultOracle):
    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []
        self.instructions: list[str] = []

    def act(self, observation, tools):
        self.read.append(observation)
        return super().act(observation.removeprefix("[").removesuffix("]"), tools)

    def add_instruction(self, text):
        self.instructions.append(text)


class Bracket:
    def __init__(self, left="[", right="]"):
        self.left, self.right = left, right

    def begin(self, ctx, tools):
        return Briefing(instruction=" mind the brackets", record={"by": "bracket"})

    def observe(self, ctx):
        if ctx.step == 0:
            return None
        return Shown(f"{self.left}{ctx.observation}{self.right}", {"by": "bracket", "step": ctx.step})

    def before_action(self, ctx, proposed):
        return CONTINUE


def test_observe_changes_what_the_agent_reads_and_the_log_keeps_the_truth(tmp_path):
    agent = Reading()
    writer = TrajectoryWriter(tmp_path / "a.jsonl")
    record = run_episode(VaultEnv("long-chores"), agent, SPEC, controller=Bracket(), writer=writer)
    assert record.status == "ok" and record.success
    log = read_log(writer.path)
    steps = [r for r in log if r["type"] == "step"]
    assert agent.read[0] == log[0]["observation"]  # the request is shown as it is
    assert agent.read[1:] == [f"[{s['observation']}]" for s in steps[:-1]]
    assert steps[0]["control"]["begin"] == {"by": "bracket", "instruction_taken": True}
    assert agent.instructions == [" mind the brackets"]
    assert [s["control"].get("shown") for s in steps] == [None] + [{"by": "bracket", "step": i}
                                                                   for i in range(1, len(steps))]
    assert verify_log(writer.path).ok


def test_an_agent_without_a_prompt_is_recorded_as_not_taking_the_instruction(tmp_path):
    writer = TrajectoryWriter(tmp_path / "b.jsonl")
    run_episode(VaultEnv("long-chores"), VaultOracle(), SPEC, controller=Bracket(), writer=writer)
    first = next(r for r in read_log(writer.path) if r["type"] == "step")
    assert first["control"]["begin"]["instruction_taken"] is False


def test_chain_composes_what_is_shown_and_what_is_offered():
    agent = Reading()
    both = chain(Bracket(), None, Bracket("<", ">"))
    assert isinstance(both, Chain) and chain(None) is None
    run_episode(VaultEnv("long-chores"), agent, SPEC, controller=both)
    assert agent.read[1].startswith("<[") and agent.read[1].endswith("]>")

    class Offer:
        def __init__(self, names):
            self.names = names

        def begin(self, ctx, tools):
            return Briefing(tools=self.names)

        def before_action(self, ctx, proposed):
            return CONTINUE

    tools = VaultEnv("long-chores").tool_specs()
    names = [t.name for t in tools]
    briefing = Chain([Offer(tuple(names[:3])), Offer(tuple(names[1:]))]).begin(None, tools)
    assert briefing.tools == tuple(names[1:3])


def test_a_world_that_cannot_narrow_its_tools_says_so():
    class Narrow(Bracket):
        def begin(self, ctx, tools):
            return Briefing(tools=("nothing",))

    record = run_episode(VaultEnv("long-chores"), VaultOracle(), SPEC, controller=Narrow())
    assert record.status == "error" and "cannot narrow the tools it offers" in record.error
