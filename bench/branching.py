"""Cost of branching K actions x R rollouts at step t: snapshot/restore vs replay of the prefix.

One command, one table: for each fork step t across a long episode, the wall time of running
K candidate continuations R times each from the state after t steps, once with the engine's
ForkPoint restoring a snapshot per branch and once replaying the verified prefix per branch.
The environment is the vault (it snapshots) with a long chore list, so episodes are long.

    python bench/branching.py [--k 4] [--r 3] [--chores 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from agentbed.branch import ForkPoint, Prefix
from agentbed.env import TaskSpec
from agentbed.runner import Budget, EpisodeSpec
from environments.vault.env import VaultEnv
from suites.oversight.benchmarks.flawed import Flaws
from suites.oversight.benchmarks.vault import VaultExpert, VaultFlawed


def record_prefix(task: TaskSpec, steps: int) -> Prefix:
    env, agent = VaultEnv(task), VaultFlawed(Flaws(noise=0.2), seed=0)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    actions, observations = [], [obs]
    for _ in range(steps):
        action = agent.act(obs, env.tool_specs()).text
        obs, _, terminated, _, _ = env.step(action)
        actions.append(action)
        observations.append(obs)
        if terminated:
            break
    return Prefix(task.id, 0, actions, observations)


def branch_all(task: TaskSpec, prefix: Prefix, t: int, method: str, k: int, r: int, cap: int,
               run: bool = True) -> float:
    """CPU seconds to reconstruct the fork state K x R times and (if ``run``) play each branch out."""
    start = time.process_time()
    point = ForkPoint(lambda: VaultEnv(task), prefix, t, method, seed_global_random=False)
    for a in range(k):
        for rollout in range(r):
            env = point.materialize()
            if not run:
                continue
            agent = VaultExpert(env) if a == 0 else VaultFlawed(Flaws(noise=0.1 * a), seed=rollout)
            agent.reset(seed=rollout) if a else None
            spec = EpisodeSpec("bench", task.id, f"a{a}", 0, {"rollout": rollout})
            point.run(agent, spec, budget=Budget(max_steps=cap), env=env)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=4, help="candidate actions per fork")
    parser.add_argument("--r", type=int, default=3, help="rollouts per action")
    parser.add_argument("--chores", type=int, default=40, help="episode length is about chores + 2 steps")
    parser.add_argument("--repeats", type=int, default=3, help="timings per cell (the median is shown)")
    args = parser.parse_args()
    task = TaskSpec(f"bench-chores{args.chores}", {"ttl": 10_000, "chores": args.chores}, "long vault episode")
    cap = args.chores + 10
    prefix = record_prefix(task, args.chores)
    steps = len(prefix)
    print(f"vault, {steps}-step prefix, K={args.k} actions x R={args.r} rollouts per fork, "
          f"median of {args.repeats} runs, CPU seconds of this process; each branch runs to the end of the episode")
    print("| fork step t | reconstruct: snapshot s | reconstruct: replay s | replay / snapshot "
          "| with branches: snapshot s | with branches: replay s | replay / snapshot |")
    print("|---|---|---|---|---|---|---|")
    for t in sorted({0, steps // 4, steps // 2, 3 * steps // 4, steps}):
        cells = []
        for run in (False, True):
            snap, rep = (statistics.median(branch_all(task, prefix, t, m, args.k, args.r, cap, run)
                                           for _ in range(args.repeats)) for m in ("snapshot", "replay"))
            cells.append(f"{snap:.4f} | {rep:.4f} | {rep / snap:.2f}x")
        print(f"| {t} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
