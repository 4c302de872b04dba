"""agentbed's scores equal AgentDojo's own runner's, task by task.

The ground truth through AgentDojo's benchmark functions (what its benchmark script calls) on a
slice here; the whole benchmark (3893 tasks) is `python -m suites.agentdojo.crosscheck` and its
table is in docs/agentdojo.md. Any agent's episode is also re-graded by AgentDojo's task runner
from the calls the log recorded.
"""

from __future__ import annotations

from agentbed.log import read_log
from agentbed.runner import EpisodeSpec
from environments.agentdojo.benchmark import DEFAULT_ATTACKS, TaskId
from suites.agentdojo.crosscheck import Scores, agentbed_scores, compare, their_ground_truth, their_rescoring
from suites.agentdojo.suite import SUITE


def test_ground_truth_equals_agentdojos_benchmark_functions(tmp_path):
    theirs: dict[TaskId, Scores] = {}
    for suite in ("banking", "slack"):
        theirs |= their_ground_truth(suite, None, tmp_path / "agentdojo-logs")
    for attack in DEFAULT_ATTACKS:
        theirs |= their_ground_truth("banking", attack, tmp_path / "agentdojo-logs", user_tasks=["user_task_0"])
    assert len(theirs) == 16 + 21 + 4 * 9
    assert compare(agentbed_scores(sorted(theirs, key=str), "ground-truth"), theirs) == []
    assert all(s.utility for s in theirs.values())  # AgentDojo's own check: the ground truth solves every task


def test_agentdojos_runner_regrades_recorded_episodes_the_same(tmp_path):
    tasks = [TaskId("banking", f"user_task_{u}", f"injection_task_{i}", "important_instructions")
             for u in (0, 1, 3) for i in (0, 5)] + [TaskId("banking", "user_task_2")]
    scores = agentbed_scores(tasks, "injection-follower", tmp_path)
    assert any(s.attack_success for s in scores.values())  # the comparison covers broken security too
    for tid, mine in scores.items():
        spec = EpisodeSpec("agentdojo", str(tid), "injection-follower", 0, SUITE.resolve_options({}))
        assert their_rescoring(tid, read_log(spec.log_in(tmp_path))) == mine, tid


def test_an_episode_rerun_after_no_content_is_regraded_try_by_try(tmp_path):
    """The world re-runs AgentDojo's pipeline after a reply with no content (3 tries in all);
    their_rescoring replays each recorded try, AgentDojo's own runner driving the re-runs, so the
    work of a later try is graded (graded on the first try alone, this episode scores no utility)."""
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import run_episode
    from environments.agentdojo.agents import GroundTruthAgent, final_action

    class SilentFirst(GroundTruthAgent):
        name = "silent-first"

        def reset(self, *, seed, task=None):
            super().reset(seed=seed, task=task)
            self.plan.insert(0, final_action(None))  # no content: the pipeline runs again

    opts = SUITE.resolve_options({})
    for task in ("banking.user_task_3", "banking.user_task_0.injection_task_0.important_instructions"):
        spec = EpisodeSpec("agentdojo", task, "silent-first", 0, opts)
        env = SUITE.make_env(task, opts)
        record = run_episode(env, SilentFirst(), spec, budget=SUITE.budget, writer=TrajectoryWriter(spec.log_in(tmp_path)))
        assert record.metrics["utility"] is True
        records = read_log(spec.log_in(tmp_path))
        assert any("rerun" in (r.get("info") or {}) for r in records if r["type"] == "step")
        mine = Scores(record.metrics["utility"], record.metrics["attack_success"])
        assert their_rescoring(TaskId.parse(task), records) == mine, task
