"""A turn sees what the schedule says it has received: a turn waits for the texts it is shown
(turns of different agents overlap otherwise), a dependency another agent finished is shown as
that agent's text, and the context billed is the token estimate of what the observation shows."""

import ast
import json
import threading

import pytest

from agentbed.testing import require
from environments.cocoder.agents import SimulatedCoder
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.depgraph import estimate_tokens, module_interfaces
from environments.cocoder.facts import parse
from environments.cocoder.tasks import load_task
from suites.cocoder.team import TeamConfig, plan_team, run_team

PERFECT = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)


def signed(source: str, worker: int) -> str:
    """``source`` with a comment naming its writer as the first line of every multi-line body
    (parsed through the project's parse: agents run in threads, and CPython 3.11's AST
    conversion fails when two threads parse at once)."""
    lines = source.splitlines(keepends=True)
    marks = sorted({(n.body[0].lineno, n.body[0].col_offset) for n in ast.walk(parse(source))
                    if isinstance(n, ast.FunctionDef) and n.body[0].lineno > n.lineno}, reverse=True)
    for line, col in marks:
        lines.insert(line - 1, " " * col + f"# written by agent {worker}\n")
    return "".join(lines)


class Recorder(SimulatedCoder):
    """The simulated coder, signing what it writes and keeping every observation it was given
    (in the order the team's turns ran: one shared list)."""

    def __init__(self, worker: int, seen: list, failure: FailureModel = PERFECT) -> None:
        super().__init__(failure, salt=worker)
        self.worker, self.seen = worker, seen

    def act(self, observation, tools):
        action = super().act(observation, tools)
        obs = json.loads(observation)
        if "module" in obs:
            call = json.loads(action.text)
            call["arguments"]["source"] = signed(call["arguments"]["source"], self.worker)
            action.text = json.dumps(call)
            self.seen.append((self.worker, obs, call["arguments"]["source"]))
        return action


def shown_tokens(obs: dict) -> int:
    texts = [obs["skeleton"], *(t for group in ("received", "written_by_you_earlier", "dependency_interfaces")
                                for view in obs[group].values() for t in view.values())]
    if obs.get("repair_request") is not None:
        texts += [obs["previous_source"], obs["repair_request"]]
    return sum(estimate_tokens(t) for t in texts)


def why(result, out_dir) -> str:
    """What each member episode ended with (its footer's status and error): a failed assertion on a
    team's outcome names the episode that went wrong."""
    lines = []
    for member in result.manifest["agents"]:
        footer = json.loads((out_dir / member["log"]).read_text(encoding="utf-8").splitlines()[-1])
        lines.append(f"{member['log']}: {footer.get('status')} {str(footer.get('error'))[-600:]}")
    return "\n".join(lines)


def _team(task, config, tmp_path, seed=0):
    seen: list = []
    result = run_team(task, config, seed, tmp_path, agent_factory=lambda w: Recorder(w, seen, config.failure))
    return result, seen


def test_an_ordered_piece_sees_the_interfaces_another_agent_wrote(sandbox, tmp_path):
    from environments.cocoder.defs import definition_outlines
    from environments.cocoder.tasks import task_ids

    require("tinydb" in task_ids(), "the fetched tinydb repository", "run scripts/fetch-repos tinydb")
    config = TeamConfig(strategy="cocoder", granularity="ordered", failure=PERFECT)
    result, seen = _team("tinydb", config, tmp_path)
    manifest = result.manifest
    assert manifest["plan"] == "split-ordered" and result.record.metrics["pass_rate"] == 1.0, why(result, tmp_path)
    writer = {obs["unit"]: (w, text) for w, obs, text in seen}
    checked = 0
    for w, obs, _ in seen:
        for group in ("received", "written_by_you_earlier"):
            for unit, view in obs[group].items():
                assert manifest["turn_order"].index(unit) < manifest["turn_order"].index(obs["unit"])
                author, text = writer[unit]
                if unit in manifest["pieces"] and manifest["pieces"][unit]["module"] == obs["module"]:
                    # a sibling piece comes as a message from another agent, or as the agent's own earlier text
                    assert (author != w) == (group == "received")
                    # the interfaces of what it uses, cut from what that agent wrote
                    assert view and view == definition_outlines(text, list(view))
                    checked += 1
    assert checked >= 2  # both pieces that wait for tinydb's hub piece


@pytest.mark.parametrize("context", ["conversation", "fresh"])
def test_context_billed_is_what_the_observation_shows(sandbox, tmp_path, context):
    config = TeamConfig(strategy="cocoder", granularity="file", failure=PERFECT, context=context)
    _, seen = _team("synth-12", config, tmp_path)
    history: dict[int, int] = {}
    kinds = set()
    for w, obs, text in seen:
        shown = shown_tokens(obs)
        assert obs["fresh_context"] == (context == "fresh")
        assert obs["context_tokens"] == config.cost.prompt_tokens + shown + history.get(w, 0)
        if context == "conversation":
            history[w] = history.get(w, 0) + shown + estimate_tokens(text)  # the conversation keeps it
        for group, kind in (("received", "message"), ("written_by_you_earlier", "own")):
            for unit, view in obs[group].items():  # a finished module: interfaces of its text
                kinds.add(kind)
                author, author_text = next((a, t) for a, o, t in seen if o["unit"] == unit)
                assert (author == w) == (kind == "own")
                assert view and all(module_interfaces(author_text)[n] == v for n, v in view.items())
        kinds |= {"interface"} if obs["dependency_interfaces"] else set()
        kinds |= {"history"} if obs["written_earlier_in_this_conversation"] else set()
    # the agent's own earlier modules: kept in its conversation, or shown again in a fresh one
    assert kinds == {"message", "interface", "history" if context == "conversation" else "own"}


@pytest.mark.parametrize("granularity,context", [("file", "conversation"), ("simultaneous", "conversation"),
                                                 ("file", "fresh"), ("ordered", "fresh")])
def test_with_the_reference_written_the_billed_context_is_the_planned_one(sandbox, tmp_path, granularity, context):
    config = TeamConfig(strategy="cocoder", granularity=granularity, failure=PERFECT, context=context)
    _, _, schedule = plan_team(load_task("synth-12"), config, 0)
    billed = run_team("synth-12", config, 0, tmp_path).record.metrics["context_tokens"]
    assert billed == sum(t.context_tokens for t in schedule.turns)


def test_on_a_real_split_a_piece_sees_what_it_uses_of_its_siblings_and_is_billed_as_planned(sandbox, tmp_path):
    """voluptuous's bounded plan splits ``Schema`` over several pieces: each piece is shown the
    skeleton with the sibling definitions it uses as outlines and without the others, and the
    modules using ``Schema`` receive its interface once (the planned context is what is billed)."""
    from environments.cocoder.defs import piece_outline
    from environments.cocoder.tasks import task_ids

    require("voluptuous" in task_ids(), "the fetched voluptuous repository", "run scripts/fetch-repos voluptuous")
    config = TeamConfig(failure=PERFECT)
    task = load_task("voluptuous")
    _, plan, schedule = plan_team(task, config, 0)
    result, seen = _team("voluptuous", config, tmp_path)
    assert result.record.metrics["context_tokens"] == sum(t.context_tokens for t in schedule.turns), why(result, tmp_path)
    pieces = result.manifest["pieces"]
    assert len({p["module"] for p in pieces.values()}) == 2
    for _, obs, _ in seen:
        skeleton = task.modules[obs["module"]].skeleton
        if obs["unit"] in pieces:
            siblings = [q for n, p in pieces.items() if p["module"] == obs["module"] and n != obs["unit"]
                        for q in p["definitions"]]
            view = piece_outline(skeleton, task.modules[obs["module"]].reference, obs["definitions"], siblings)
            assert obs["skeleton"] == view and len(view) < len(skeleton)
        else:
            assert obs["skeleton"] == skeleton
        shown = [n for g in ("received", "written_by_you_earlier") for v in obs[g].values() for n in v]
        assert len(shown) == len(set(shown))  # Schema's interface comes once, not once per piece


def test_turns_wait_for_what_they_are_shown_and_repeat_byte_for_byte(sandbox, tmp_path):
    config = TeamConfig(strategy="cocoder", cost=CostModel(latency=5.0), failure=PERFECT)
    a, seen = _team("synth-12", config, tmp_path / "a", seed=3)
    timeline, order = a.manifest["timeline"], a.manifest["turn_order"]
    assert sorted(order) == sorted(timeline) and len({w for w, _, _ in seen}) > 1
    starts = [timeline[u][0] for u in order]
    assert starts == sorted(starts)  # the manifest lists units by their start on the virtual clock
    ran = [obs["unit"] for _, obs, _ in seen]  # the order the threads actually ran them in
    shown = 0
    for i, (_, obs, _) in enumerate(seen):  # every text a turn is shown was written before it acted
        for unit in (*obs["received"], *obs["written_by_you_earlier"]):
            assert unit in ran[:i]
            shown += 1
    assert shown
    b, _ = _team("synth-12", config, tmp_path / "b", seed=3)
    assert b.manifest["turn_order"] == order
    for member in a.manifest["agents"]:
        assert (tmp_path / "a" / member["log"]).read_bytes() == (tmp_path / "b" / member["log"]).read_bytes()


class Meets(Recorder):
    """Agents 0 and 1 meet inside their first turn: possible only if their turns overlap."""

    def __init__(self, worker: int, seen: list, barrier: threading.Barrier) -> None:
        super().__init__(worker, seen)
        self.barrier, self.met = barrier, False

    def act(self, observation, tools):
        if self.worker in (0, 1) and not self.met and "module" in json.loads(observation):
            self.met = True
            self.barrier.wait(timeout=60)
        return super().act(observation, tools)


def test_independent_turns_of_different_agents_overlap(sandbox, tmp_path):
    barrier, seen = threading.Barrier(2), []
    config = TeamConfig(strategy="file-parallel", failure=PERFECT)  # no turn waits for another
    result = run_team("synth-12", config, 0, tmp_path, agent_factory=lambda w: Meets(w, seen, barrier))
    assert result.record.status == "ok" and not barrier.broken
    assert result.record.metrics["pass_rate"] == 1.0


@pytest.mark.parametrize("strategy", ["file-parallel", "per-file", "cocoder"])
def test_fresh_contexts_bill_no_history(sandbox, tmp_path, strategy):
    config = TeamConfig(strategy=strategy, failure=PERFECT)  # cocoder: context="fresh" by default
    _, seen = _team("synth-12", config, tmp_path)
    for _, obs, _ in seen:
        assert obs["context_tokens"] == config.cost.prompt_tokens + shown_tokens(obs)
    if strategy == "file-parallel":  # nothing waits: every dependency is an interface from the skeleton
        assert not any(obs["received"] for _, obs, _ in seen)


class Quits(Recorder):
    """Fails on its second turn (a model error): the team must go on without it."""

    def act(self, observation, tools):
        if sum(w == self.worker for w, _, _ in self.seen) == 1 and "module" in json.loads(observation):
            raise RuntimeError("model unavailable")
        return super().act(observation, tools)


def test_an_agent_that_stops_early_does_not_block_the_others(sandbox, tmp_path):
    seen: list = []
    config = TeamConfig(strategy="cocoder", failure=PERFECT, repair_rounds=0)
    result = run_team("synth-12", config, 0, tmp_path,
                      agent_factory=lambda w: (Quits if w == 0 else Recorder)(w, seen, PERFECT))
    assert result.record.status == "error"
    units = next(m["units"] for m in result.manifest["agents"] if m["worker"] == 0)
    timeline = result.manifest["timeline"]
    assert len(units) > 1 and all(timeline[u][0] == timeline[u][1] for u in units[1:])  # took no time
    assert len(timeline) == len(result.manifest["turn_order"]) + len(units) - 1
