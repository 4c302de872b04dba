import json

from agentbed.agents.base import Action, Agent
from agentbed.control import CONTINUE, handover, replace, stop
from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.tools import make_action
from environments.vault.agents import VaultNaive, VaultOracle
from environments.vault.env import VaultEnv

SPEC = EpisodeSpec("vault", "long-chores", "x", 0)


def test_oracle_succeeds_and_naive_sees_expiry():
    ok = run_episode(VaultEnv("long-chores"), VaultOracle(), SPEC)
    assert ok.status == "ok" and ok.success and ok.labels == ["SUCCESS"]
    bad = run_episode(VaultEnv("long-chores"), VaultNaive(), SPEC, budget=Budget(max_steps=8))
    assert not bad.success and "EXPIRED_BEFORE_USE" in bad.labels and bad.status == "budget"


def test_virtual_second_budget():
    record = run_episode(VaultEnv("long-chores"), VaultNaive(), SPEC, budget=Budget(max_virtual_seconds=40))
    assert record.status == "budget" and record.virtual_seconds == 46 and record.steps == 4


class _Talky(Agent):
    name = "talky"

    def act(self, observation, tools):
        from agentbed.agents.base import Usage

        return Action(make_action("wait", seconds=1), usage=Usage(100, 20, 120))


def test_token_budget():
    record = run_episode(VaultEnv("open-fast"), _Talky(), SPEC, budget=Budget(max_tokens=500))
    assert record.status == "budget" and record.tokens == 600 and record.steps == 5


class _Exploding(Agent):
    name = "exploding"

    def act(self, observation, tools):
        raise RuntimeError("provider fell over")


class _BrokenEnv(VaultEnv):
    def tool_get_token(self):
        raise ZeroDivisionError("issuer bug")


def test_exceptions_become_error_episodes(tmp_path):
    writer = TrajectoryWriter(tmp_path / "a.jsonl")
    record = run_episode(VaultEnv("open-fast"), _Exploding(), SPEC, writer=writer)
    assert record.status == "error" and "provider fell over" in record.error
    footer = read_log(writer.path)[-1]
    assert footer["status"] == "error" and "RuntimeError" in footer["error"]
    assert verify_log(writer.path).ok
    record = run_episode(_BrokenEnv("open-fast"), VaultOracle(), SPEC)
    assert record.status == "error" and "ZeroDivisionError" in record.error


class _Overseer:
    def __init__(self, verdicts):
        self.verdicts = verdicts
        self.seen = []

    def before_action(self, ctx, proposed):
        self.seen.append((ctx.step, len(ctx.history)))
        return self.verdicts.get(ctx.step, CONTINUE)


def test_controller_can_replace_hand_over_and_stop(tmp_path):
    writer = TrajectoryWriter(tmp_path / "c.jsonl")
    # the naive agent would fetch the token first; replace that with a chore, then hand over to the oracle
    overseer = _Overseer({0: replace(Action(make_action("read_logs", page=1)), "chores first"),
                          1: handover(VaultOracle(), "defer to expert")})
    record = run_episode(VaultEnv("open-after-chores"), VaultNaive(), SPEC, controller=overseer, writer=writer)
    assert overseer.seen[:2] == [(0, 0), (1, 1)]
    steps = [r for r in read_log(writer.path) if r["type"] == "step"]
    assert steps[0]["control"]["kind"] == "replace" and json.loads(steps[0]["action"])["tool"] == "read_logs"
    assert steps[1]["control"]["kind"] == "handover" and steps[1]["agent"] == "oracle"
    assert record.success

    writer = TrajectoryWriter(tmp_path / "s.jsonl")
    record = run_episode(VaultEnv("open-fast"), VaultNaive(), SPEC, controller=_Overseer({1: stop("too risky")}),
                         writer=writer)
    assert record.status == "stopped" and record.steps == 1
    records = read_log(writer.path)
    assert records[-2]["type"] == "control" and records[-2]["verdict"]["reason"] == "too risky"


class _Tracked(VaultEnv):
    ended = 0

    def end_episode(self):
        _Tracked.ended += 1


class _TrackedBroken(_Tracked):
    def tool_get_token(self):
        raise RuntimeError("boom")


def test_end_episode_runs_on_success_and_on_error():
    _Tracked.ended = 0
    run_episode(_Tracked("open-fast"), VaultOracle(), SPEC)
    record = run_episode(_TrackedBroken("open-fast"), VaultOracle(), SPEC)
    assert record.status == "error"
    assert _Tracked.ended == 2


def test_a_long_episode_id_is_shortened_with_a_digest_of_the_whole():
    from agentbed.runner import MAX_EPISODE_ID

    long_options = {"parent": "x" * 300, "rollout": 0}
    a, b = EpisodeSpec("s", "t", "a", 0, long_options), EpisodeSpec("s", "t", "a", 1, long_options)
    assert len(a.episode_id) == MAX_EPISODE_ID and a.episode_id != b.episode_id
    assert a.episode_id == EpisodeSpec("s", "t", "a", 0, dict(long_options)).episode_id
    assert EpisodeSpec("vault", "echo", "oracle", 2).episode_id == "vault.echo.oracle.s2"


def test_header_tools_are_the_episodes_own_after_another_tool_set_is_freed():
    """The header's tool declarations are cached per tool set; a freed set's id, reused by a new
    tool, must never serve the old declarations (CPython reuses freed memory at once)."""
    from agentbed.runner import _tool_dicts
    from agentbed.tools import Tool

    for i in range(300):
        tools = [Tool(f"t{i}", "a tool")]  # the old id-keyed cache answered "t0" from i = 1 on
        assert _tool_dicts(tools)[0]["name"] == f"t{i}"
        del tools


class _SDKCancelled(BaseException):
    """A provider SDK's own BaseException (a cancellation), as some SDKs raise."""


class _NoAttributes(Exception):
    def __getattr__(self, name):
        raise RuntimeError(f"reading {name} fails")


class _Raising(Agent):
    name = "raising"

    def __init__(self, exc):
        self.exc = exc

    def act(self, observation, tools):
        raise self.exc


def test_any_exception_but_a_stop_of_the_process_becomes_an_error_episode(tmp_path):
    """Session 17's probe: an agent (a provider's SDK) raising SystemExit or a BaseException of its
    own, or an exception whose attributes raise, killed the run (a process-pool worker: exit 75 and
    the episode lost on every resume); a lone surrogate in its message replaced the episode's error
    and steps with the log writer's UnicodeEncodeError. Each is now the episode's own error."""
    cases = {"system-exit": (SystemExit(3), "SystemExit: 3"),
             "base": (_SDKCancelled("the SDK's cancellation"), "_SDKCancelled: the SDK's cancellation"),
             "no-attributes": (_NoAttributes("x"), "_NoAttributes: (the exception could not be formatted"),
             "surrogate": (ValueError("bytes \udc80 from a provider"), "ValueError: bytes \\udc80 from a provider")}
    for name, (exc, expected) in cases.items():
        writer = TrajectoryWriter(tmp_path / f"{name}.jsonl")
        record = run_episode(VaultEnv("open-fast"), _Raising(exc), SPEC, writer=writer)
        footer = read_log(writer.path)[-1]
        assert record.status == "error" and expected in record.error and expected in footer["error"], name
        assert verify_log(writer.path).ok
    for halt in (KeyboardInterrupt(), GeneratorExit()):  # a stop of the process is not the episode's
        try:
            run_episode(VaultEnv("open-fast"), _Raising(halt), SPEC)
        except BaseException as exc:  # noqa: BLE001
            assert exc is halt
        else:
            raise AssertionError(f"{halt!r} was swallowed")
