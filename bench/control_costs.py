"""Control's costs: a control evaluation's cost per episode beside the same episode without a
protocol, and defer-to-resample's k resamples from one state beside k independent runs.

    python bench/control_costs.py [--settings contracts,agentdojo] [--tasks 6] [--k 3] [--repeats 3]

Scripted policies and the scripted monitor: a simulation, so these are the engine's and the
protocols' own costs, not a model's. Every episode (each task of each setting, the honest policy
and each attack strategy, seed 0) runs in this process through the engine's episode loop
(``agentbed.runner.run_episode``, its log written to a scratch directory), as ``agentbed run
control`` runs it, once with no controller (the baseline) and once under each protocol (tm, dtt,
dtr, te at defer 0.3, k resamples), the configurations interleaved in each of ``--repeats`` rounds after
one round not measured (imports, each world's first load), the median round reported. For dtr, the
time inside its resampling (k forks of the agent from the
state before it proposed, each acting once and scored by the monitor) is measured per resample
point, beside what k independent runs of that episode cost (k times the baseline episode): the
alternative way to draw k samples of the untrusted policy at that step without forking.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentbed.log import TrajectoryWriter
from agentbed.runner import EpisodeSpec, run_episode
from controllers.control import protocols
from suites.control.settings import SETTINGS, STRATEGIES
from suites.control.suite import SUITE

CONFIGS = ("none", "tm", "dtt", "dtr", "te")


class ResampleClock:
    """Wraps MicroProtocol._resample: how many resample points, and the seconds spent in them."""

    def __init__(self) -> None:
        self.points, self.seconds = 0, 0.0
        self._inner = protocols.MicroProtocol._resample

    def __enter__(self) -> ResampleClock:
        clock = self

        def timed(protocol: protocols.MicroProtocol, ctx: object, record: dict[str, object]) -> object:
            t0 = time.perf_counter()
            try:
                return clock._inner(protocol, ctx, record)  # type: ignore[arg-type]
            finally:
                clock.points += 1
                clock.seconds += time.perf_counter() - t0

        protocols.MicroProtocol._resample = timed  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        protocols.MicroProtocol._resample = self._inner  # type: ignore[method-assign]


def episodes(settings: list[str], tasks: int) -> list[tuple[str, str]]:
    """(task, policy) pairs: each setting's first ``tasks`` tasks, honest and every attack strategy."""
    out = []
    for name in settings:
        for task in SETTINGS[name].tasks()[:tasks]:
            out += [(f"{name}/{task}", policy) for policy in ("honest", *(f"attack-{s}" for s in STRATEGIES))]
    return out


def run_config(config: str, pairs: list[tuple[str, str]], k: int, scratch: Path) -> float:
    """Wall seconds to run every pair's episode under ``config`` (``none``: no controller)."""
    options = {**SUITE.resolve_options({"settings": ",".join(sorted({t.split('/')[0] for t, _ in pairs}))}),
               "protocol": "tm" if config == "none" else config, "defer": 0.3, "k": k}
    t0 = time.perf_counter()
    for task, policy in pairs:
        spec = EpisodeSpec("control", task, policy, 0, options)
        env = SUITE.make_env(task, options)
        try:
            agent = SUITE.make_agent(spec, env)
            controller = None if config == "none" else SUITE.episode_controller(spec, env)
            run_episode(env, agent, spec, budget=SUITE.budget, controller=controller,
                        writer=TrajectoryWriter(scratch / f"{config}-{spec.episode_id}.jsonl"))
        finally:
            env.close()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="contracts,agentdojo")
    parser.add_argument("--tasks", type=int, default=6, help="tasks per setting")
    parser.add_argument("--k", type=int, default=3, help="dtr's resamples")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    pairs = episodes(args.settings.split(","), args.tasks)
    walls: dict[str, list[float]] = {c: [] for c in CONFIGS}
    clock = ResampleClock()
    with tempfile.TemporaryDirectory(prefix="agentbed-control-costs-") as tmp, clock:
        for config in CONFIGS:  # a round not measured: imports, each world's first load, first-use caches
            run_config(config, pairs, args.k, Path(tmp))
        clock.points, clock.seconds = 0, 0.0
        for _ in range(args.repeats):
            for config in CONFIGS:
                walls[config].append(run_config(config, pairs, args.k, Path(tmp)))
    n = len(pairs)
    base = statistics.median(walls["none"]) / n
    print(f"{n} episodes per configuration ({len(pairs) // (1 + len(STRATEGIES))} tasks of {args.settings}, honest + "
          f"{len(STRATEGIES)} attack strategies, seed 0), scripted policies and monitor, median of {args.repeats} "
          f"rounds; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| configuration | ms/episode | x no protocol |")
    print("|---|---|---|")
    for config in CONFIGS:
        per = statistics.median(walls[config]) / n
        print(f"| {config if config != 'none' else 'no protocol (baseline)'} | {per * 1000:.2f} | {per / base:.2f} |")
    if clock.points:
        per_point = clock.seconds / clock.points
        print(f"dtr: {clock.points // args.repeats} resample points per round; k={args.k} resamples from one state "
              f"{per_point * 1000:.3f} ms per point, against k independent runs of the episode "
              f"{args.k * base * 1000:.2f} ms ({args.k * base / per_point:.0f}x)")
    else:
        print("dtr: no resample point (no proposal scored above 0.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
