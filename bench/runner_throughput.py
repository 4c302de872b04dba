"""Runner throughput: agentbed's episode loop with full logging, beside a bare gymnasium loop
and Inspect AI on the equivalent one-turn task, in one process and one run.

    .venv/bin/python bench/runner_throughput.py [--episodes 2000] [--inspect-samples 1000] [--profile]
    .venv/bin/python bench/runner_throughput.py --command-only --episodes 8000 --command-repeats 9

The workload is the vault's ``echo`` task: one observation (a word), one action (submit it).

* bare loop: ``env.reset(seed)``, the scripted oracle's ``act``, ``env.step`` on one env object,
  nothing recorded: the floor for this environment.
* agentbed: what a serial run does per episode: a fresh env, ``run_episode`` with the oracle,
  a ``TrajectoryWriter`` writing the chained JSONL log to a temporary directory.
* Inspect AI: ``eval()`` of a task with one sample per seed (input: the same observation,
  target: the word), ``generate()`` + ``match()``, against its ``mockllm`` provider whose
  callable output answers with the word, as the oracle does. Inspect's mockllm counts input
  tokens with tiktoken's o200k_base encoding, which tiktoken downloads on first use; offline
  that fails every sample. This process (and only it) replaces the function Inspect calls,
  ``inspect_ai.model._model.count_text_tokens``, with a length/4 estimate; nothing is installed
  or changed on disk.

* agentbed run (the real path): the ``agentbed run vault --task echo --agent oracle`` command a
  user types, in a subprocess, durability included (log files, the index's group-committed fsyncs,
  the seal), serially and with two worker processes. Its per-episode cost is the difference of two
  runs' wall times (``--episodes`` and a tenth of it) over the difference of their sizes, so the
  command's fixed start-up is not spread over the episodes; the start-up is shown apart.

Goals: agentbed >= 50x Inspect's throughput, and agentbed's per-episode time within 20x of the
bare loop; through ``agentbed run``: at most 3 ms per episode serially and at least 1.7x that
throughput with two workers (issue 37). ``--profile`` prints where agentbed's time goes (cProfile, top functions). One
diagnostic row measures the engine change the profile points to (see ``shared_text_spaces``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentbed.log import TrajectoryWriter, verify_log  # noqa: E402
from agentbed.runner import Budget, EpisodeSpec, run_episode  # noqa: E402
from environments.vault.agents import VaultOracle  # noqa: E402
from environments.vault.env import VaultEnv  # noqa: E402

TASK = "echo"
GOAL_VS_INSPECT = 50.0
GOAL_VS_BARE = 20.0
GOAL_RUN_MS = 3.0
GOAL_TWO_WORKERS = 1.7


def bare_loop(episodes: int) -> int:
    env, agent = VaultEnv(TASK), VaultOracle()
    tools = env.tool_specs()
    solved = 0
    for seed in range(episodes):
        observation, _ = env.reset(seed=seed)
        agent.reset(seed=seed)
        _, reward, terminated, _, _ = env.step(agent.act(observation, tools).text)
        solved += int(terminated and reward > 0)
    return solved


def agentbed_loop(episodes: int, log_dir: Path | None) -> int:
    budget = Budget(max_steps=5)
    solved = 0
    for seed in range(episodes):
        spec = EpisodeSpec("vault", TASK, "oracle", seed)
        writer = TrajectoryWriter(log_dir / f"{spec.episode_id}.jsonl") if log_dir is not None else None
        record = run_episode(VaultEnv(TASK), VaultOracle(), spec, budget=budget, writer=writer)
        solved += int(record.success)
    return solved


class Timing:
    """Wall-clock and CPU seconds of one contestant (the median over repeats), and episodes solved.

    CPU time is shown beside wall time because a shared 2-core machine slows every contestant by
    a different amount in wall time; CPU time counts the work each one did."""

    def __init__(self, n: int, wall: float, cpu: float, solved: int) -> None:
        self.n, self.wall, self.cpu, self.solved = n, wall, cpu, solved

    def per(self, clock: str) -> float:
        return (self.wall if clock == "wall" else self.cpu) / self.n


def timed(fn: Callable[[], int], n: int, repeats: int) -> Timing:
    walls, cpus, result = [], [], 0
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return Timing(n, statistics.median(walls), statistics.median(cpus), result)


def inspect_run(samples: int, log_dir: Path) -> tuple[Timing, float]:
    """Timing of ``eval()`` and Inspect's own reported duration."""
    import inspect_ai.model._model as inspect_model

    inspect_model.count_text_tokens = lambda text: max(1, int(len(text) / 4 * 1.1))  # see module docstring

    from datetime import datetime

    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    dataset = []
    env = VaultEnv(TASK)
    for seed in range(samples):
        observation, _ = env.reset(seed=seed)
        dataset.append(Sample(id=seed, input=observation, target=json.loads(observation)["word"]))

    def answer(messages, tools, tool_choice, config) -> ModelOutput:  # the oracle's policy
        word = json.loads(messages[-1].text)["word"]
        return ModelOutput.from_content(model="mockllm/model", content=word)

    model = get_model("mockllm/model", custom_outputs=answer)
    task = Task(dataset=MemoryDataset(dataset), solver=generate(), scorer=match())
    t0, c0 = time.perf_counter(), time.process_time()
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if log.status != "success":
        raise SystemExit(f"Inspect eval failed: {log.error.message if log.error else log.status}")
    own = (datetime.fromisoformat(log.stats.completed_at) - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    correct = round(log.results.scores[0].metrics["accuracy"].value * samples)
    return Timing(samples, wall, cpu, correct), own


def agentbed_command(seeds: int, out: Path, executor: str, jobs: int) -> float:
    """Wall seconds of one ``agentbed run`` of ``seeds`` echo episodes, start-up included."""
    command = [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", TASK, "--agent", "oracle",
               "--seeds", str(seeds), "--out", str(out), "--quiet", "--executor", executor, "-j", str(jobs)]
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"agentbed run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    lines = (out / "index.jsonl").read_text().splitlines()
    assert len(lines) == seeds, f"{out}: {len(lines)} index lines, {seeds} planned"
    return wall


def file_creation_us(directory: Path, files: int = 500) -> float:
    """Microseconds to create and write one 2.7 KB file (an echo episode's log) in a fresh
    directory: the disk's state, printed beside the command's rows. On ext4 without a journal
    (this machine's disk) the inode allocator reads and skips recently freed inodes, so after
    thousands of files were deleted, creating one costs about 1 ms of kernel time instead of about
    30 us, for minutes (perf: ``recently_deleted`` under ``__ext4_new_inode``; docs/benchmarks.md).
    Nothing is deleted while this bench runs."""
    directory.mkdir()
    data = b"x" * 2725
    t0 = time.perf_counter()
    for k in range(files):
        (directory / f"probe-{k}.jsonl").write_bytes(data)
    return (time.perf_counter() - t0) / files * 1e6


def free_cores() -> float:
    """Cores not busy with other work when the bench starts (cores minus the 1-minute load)."""
    return max(0.0, (os.cpu_count() or 1) - os.getloadavg()[0])


def command_costs(episodes: int, tmp: Path, repeats: int) -> tuple[list[tuple[str, float, float]], list[float]]:
    """(executor, seconds per episode, start-up seconds) of ``agentbed run``, serially and with two
    workers: two sizes differenced, and each round's two-worker / serial throughput ratio. The
    executors alternate within each round, so a slow spell of the disk falls on both."""
    small = max(1, episodes // 10)
    per: dict[str, list[float]] = {"serial": [], "process": []}
    startup: dict[str, list[float]] = {"serial": [], "process": []}
    for r in range(repeats):
        for executor, jobs in (("serial", 1), ("process", 2)):
            t_small = agentbed_command(small, tmp / f"run-{executor}-small-{r}", executor, jobs)
            t_big = agentbed_command(episodes, tmp / f"run-{executor}-big-{r}", executor, jobs)
            per[executor].append((t_big - t_small) / (episodes - small))
            startup[executor].append(t_small - small * per[executor][-1])
    ratios = [s / p for s, p in zip(per["serial"], per["process"], strict=True)]
    return [(e, statistics.median(per[e]), statistics.median(startup[e])) for e in ("serial", "process")], ratios


def command_rows(episodes: int, tmp_path: Path, repeats: int, inspect_per_sample: float | None) -> None:
    """The ``agentbed run`` rows, with the conditions they were measured in."""
    cores, probe_before = free_cores(), file_creation_us(tmp_path / "probe-before")
    ((_, serial, serial_startup), (_, two, two_startup)), ratios = command_costs(episodes, tmp_path, repeats)
    probe_after = file_creation_us(tmp_path / "probe-after")
    print(f"\nthrough `agentbed run` (the real path, durability included; {episodes} vs "
          f"{max(1, episodes // 10)} episodes differenced, executors alternating, median of {repeats}):")
    print("| executor | wall ms/episode | episodes/s | command start-up s |")
    print("|---|---|---|---|")
    print(f"| serial | {serial * 1e3:.2f} | {1 / serial:,.0f} | {serial_startup:.2f} |")
    print(f"| process, 2 workers | {two * 1e3:.2f} | {1 / two:,.0f} | {two_startup:.2f} |")
    ratio = statistics.median(ratios)
    vs_inspect = f"; Inspect's eval per sample / agentbed run's per episode: {inspect_per_sample / serial:.1f}x" \
        if inspect_per_sample else ""
    print(f"serial: {serial * 1e3:.2f} ms per episode (goal <= {GOAL_RUN_MS:.0f} ms: "
          f"{verdict(serial * 1e3, GOAL_RUN_MS, False)}); two workers: {ratio:.2f}x serial's throughput, the "
          f"median of the rounds' ratios (range {min(ratios):.2f}-{max(ratios):.2f}; goal >= {GOAL_TWO_WORKERS}x: "
          f"{verdict(ratio, GOAL_TWO_WORKERS, True)}){vs_inspect}")
    print(f"conditions: {cores:.1f} of {os.cpu_count()} cores free at the start (1-minute load); creating a "
          f"log-sized file took {probe_before:.0f} us before the rounds and {probe_after:.0f} us after "
          f"(about 30 us on a healthy disk, about 1,000 us in its slow spells after mass deletion on ext4 "
          f"without a journal; the two-worker row means little then, or with fewer than 2 free cores)")


def row(name: str, t: Timing, bare: Timing) -> str:
    return (f"| {name} | {t.n} | {t.per('wall') * 1e6:,.1f} | {t.n / t.wall:,.0f} | {t.per('cpu') * 1e6:,.1f} "
            f"| {t.n / t.cpu:,.0f} | {t.solved}/{t.n} | {t.per('wall') / bare.per('wall'):.1f}x "
            f"| {t.per('cpu') / bare.per('cpu'):.1f}x |")


def verdict(ratio: float, goal: float, at_least: bool) -> str:
    return "met" if (ratio >= goal if at_least else ratio <= goal) else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2000, help="episodes per agentbed / bare-loop run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the fast loops (the median is shown)")
    parser.add_argument("--command-repeats", type=int, default=5,
                        help="rounds of `agentbed run` (serial and two workers in each; the median is shown)")
    parser.add_argument("--inspect-samples", type=int, default=1000, help="samples in the Inspect eval")
    parser.add_argument("--log-dir", help="where the temporary logs go (default: the system temp dir)")
    parser.add_argument("--profile", action="store_true", help="profile agentbed's loop and print the top functions")
    parser.add_argument("--command-only", action="store_true",
                        help="only the `agentbed run` rows (serial and two workers), without the loops and Inspect")
    args = parser.parse_args()
    if min(args.episodes, args.inspect_samples, args.repeats, args.command_repeats) < 1:
        parser.error("--episodes, --repeats, --command-repeats and --inspect-samples must be at least 1")

    with tempfile.TemporaryDirectory(prefix="agentbed-bench-", dir=args.log_dir) as tmp:
        tmp_path = Path(tmp)
        if args.command_only:
            command_rows(args.episodes, tmp_path, args.command_repeats, None)
            return 0
        bare_loop(50), agentbed_loop(50, None)  # warm imports and caches
        bare = timed(lambda: bare_loop(args.episodes), args.episodes, args.repeats)
        nolog = timed(lambda: agentbed_loop(args.episodes, None), args.episodes, args.repeats)

        def logged() -> int:
            return agentbed_loop(args.episodes, Path(tempfile.mkdtemp(dir=tmp_path)))

        full = timed(logged, args.episodes, args.repeats)
        logs = sorted(tmp_path.glob("*/*.jsonl"))
        assert len(logs) == args.episodes * args.repeats and verify_log(logs[0]).ok, "agentbed logs missing"
        inspect, inspect_own = inspect_run(args.inspect_samples, tmp_path / "inspect-logs")

        print(f"runner throughput, vault '{TASK}' task (one step); agentbed and the bare loop: median of "
              f"{args.repeats} runs of {args.episodes} episodes; Inspect: one eval of {args.inspect_samples} samples; "
              f"logs under {tmp_path.parent}\n")
        print("| harness | episodes | wall us/episode | episodes/s (wall) | CPU us/episode | episodes/s (CPU) "
              "| solved | wall vs bare | CPU vs bare |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(row("bare gymnasium loop (no runner, no log)", bare, bare))
        print(row("agentbed run_episode, no log (diagnostic)", nolog, bare))
        print(row("agentbed run_episode + TrajectoryWriter", full, bare))
        print(row("Inspect AI eval, mockllm", inspect, bare))
        print(f"\nInspect's own reported duration: {inspect_own:.1f} s "
              f"({inspect_own / args.inspect_samples * 1e3:.2f} ms per sample)")
        for clock in ("wall", "cpu"):
            vs_inspect = inspect.per(clock) / full.per(clock)
            vs_bare = full.per(clock) / bare.per(clock)
            print(f"{clock:>4}: agentbed throughput / Inspect's = {vs_inspect:,.0f}x (goal >= {GOAL_VS_INSPECT:.0f}x: "
                  f"{verdict(vs_inspect, GOAL_VS_INSPECT, True)}); agentbed time / bare loop's = {vs_bare:.1f}x "
                  f"(goal <= {GOAL_VS_BARE:.0f}x: {verdict(vs_bare, GOAL_VS_BARE, False)})")
        print(f"share of agentbed's wall time spent logging: {(full.wall - nolog.wall) / full.wall:.0%}")

        command_rows(args.episodes, tmp_path, args.command_repeats, inspect.per('wall'))

        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(agentbed_loop, args.episodes, Path(tempfile.mkdtemp(dir=tmp_path)))
            print("\nagentbed loop with logging, cProfile, top 25 by own time:")
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
