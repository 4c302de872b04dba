"""Handing an ALFWorld episode to the handcoded expert: with an object of the wrong kind in hand, or not.

One command, one table. Scripted base agents play generated games; at the first step where the
agent holds an object of the wrong kind (the "wrong object in hand" checkpoints), and at a
control step (step 4, holding nothing of the wrong kind), the episode is handed to ALFWorld's
handcoded expert, once as ALFWorld ships it and once with its move/put bookkeeping fixed
(environments/alfworld/tw.py, SeededAlfredExpert). The expert plays to the 50-step cap; the
table gives its success rate with a 95% bootstrap interval over games.

A third row hands over from the same wrong-object states after one scripted "move O to R"
(the agent puts the object down first): if the unfixed expert then still fails, what it cannot
handle is not the object in hand but its own record of it.

    python bench/expert_handover.py [--games 30] [--flaws forgetful,mixed,noisy] [--seeds 2] [--no-control]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agentbed.stats import bootstrap_ci
from agentbed.tools import make_action
from environments.alfworld.agents import make_base_agent
from environments.alfworld.env import AlfworldEnv, parse_observation
from environments.alfworld.policy import object_class, parse_goal

CAP = 50
CONTROL_STEP = 4


def play_prefix(spec, flaw: str, seed: int) -> tuple[list[str], int | None, bool]:
    """The base agent's commands; the first step holding a wrong-kind object (None if never);
    whether the agent held a wrong object at the control step."""
    env = AlfworldEnv(spec)
    obs, _ = env.reset(seed=seed)
    agent = make_base_agent(flaw, seed)
    agent.reset(seed=seed, task=env.task)
    goal = parse_goal(parse_observation(obs)[0])
    commands: list[str] = []
    wrong_at, wrong_at_control = None, False
    for t in range(CAP - 10):
        action = agent.act(obs, env.tool_specs())
        holding = agent.memory.holding
        wrong = bool(holding and goal and object_class(holding) != goal.obj)
        if t == CONTROL_STEP:
            wrong_at_control = wrong
        if wrong and wrong_at is None:
            wrong_at = t
            break
        obs, _, term, trunc, _ = env.step(action.text)
        commands.append(action.text)
        if term or trunc:
            break
    env.close()
    return commands, wrong_at, wrong_at_control


def hand_over(spec, prefix: list[str], seed: int, fixed: bool, put_down_first: bool = False) -> bool:
    env = AlfworldEnv(spec, fix_expert_bookkeeping=fixed)
    obs, _ = env.reset(seed=seed)
    steps = 0
    for command in prefix:
        obs, *_ = env.step(command)
        steps += 1
    if put_down_first:
        _, commands = parse_observation(obs)
        moves = [c for c in commands if c.startswith("move ")]
        if moves:
            obs, *_ = env.step(make_action("act", command=moves[0]))
            steps += 1
    won = False
    while steps < CAP and not won:
        command = env.expert_command() or "look"
        _, _, won, _, _ = env.step(make_action("act", command=command))
        steps += 1
    env.close()
    return bool(won)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--flaws", default="forgetful,mixed,noisy")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--no-control", action="store_true", help="skip the control hand-overs at step 4")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    specs = AlfworldEnv.tasks(0, args.games)
    outcomes: dict[str, list[tuple[str, bool]]] = {}
    for spec in specs:
        for flaw in args.flaws.split(","):
            for seed in range(args.seeds):
                prefix, wrong_at, _ = play_prefix(spec, flaw, seed)
                if wrong_at is not None:
                    for fixed in (False, True):
                        key = f"wrong object in hand, expert {'fixed' if fixed else 'as shipped'}"
                        outcomes.setdefault(key, []).append((spec.id, hand_over(spec, prefix, seed, fixed)))
                    outcomes.setdefault("wrong object put down first, expert as shipped", []).append(
                        (spec.id, hand_over(spec, prefix, seed, False, put_down_first=True)))
                if not args.no_control and (wrong_at is None or wrong_at > CONTROL_STEP):  # control: step 4, nothing wrong in hand
                    control = prefix[:CONTROL_STEP]
                    for fixed in (False, True):
                        key = f"control (step {CONTROL_STEP}), expert {'fixed' if fixed else 'as shipped'}"
                        outcomes.setdefault(key, []).append((spec.id, hand_over(spec, control, seed, fixed)))
    print("| hand-over | n | expert success [95% CI over games] |\n|---|---|---|")
    for key in sorted(outcomes):
        games, wins = zip(*outcomes[key], strict=True)
        ci = bootstrap_ci(np.asarray(wins, dtype=float), groups=list(games), seed=0)
        print(f"| {key} | {len(wins)} | {ci.estimate:.2f} [{ci.low:.2f}, {ci.high:.2f}] |")
    print(f"({args.games} games, flaws {args.flaws}, {args.seeds} seeds; {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
