"""Scale: does a run of 100,000 episodes cost ten times a run of 10,000, in time and not in memory?

    .venv/bin/python bench/scale.py --sizes 10000,100000 [--steps run,verify,report,view] [--out DIR]
                                    [--baseline SRC]

For each size, a real run of one-step episodes (``agentbed run vault --task echo --agent oracle
--seeds N``, serial, so the driver is the only process and its peak memory is the run's), then the
readers a user meets on it: ``agentbed verify``, ``agentbed report``, and the viewer's runs list
(its first, cold ``/api/runs``, which reads the whole run). Each command runs in a process of its
own; its peak resident set is that process's ``ru_maxrss``, read by a small parent that does
nothing else. Per-episode time is wall time over episodes, and CPU time (user + system) over episodes, which a
loaded machine changes far less (the viewer's: the request's own, in its process). Linear means the per-episode time of
the larger size is about that of the smaller; flat memory means the run's peak RSS barely grows.
``--baseline SRC`` (a source tree of another commit, e.g. from ``git archive``) measures each step
with that code too, just before this code's, so both rows are taken at the same load; its run is
deleted once measured and the readers of both read this code's run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTBED = [sys.executable, "-m", "agentbed.cli"]

VIEW_RUNS_LIST = """
import sys, time, urllib.request
from agentbed.view.server import ViewServer
server = ViewServer(sys.argv[1], port=0)
server.serve_in_thread()
try:
    t0, c0 = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(server.url.rstrip("/") + "/api/runs", timeout=3600) as resp:
        resp.read()
    print(time.perf_counter() - t0, time.process_time() - c0)
finally:
    server.shutdown()
"""


def measured(cmd: list[str], code: Path = ROOT) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS in MiB, stdout and CPU seconds (user + system) of ``cmd`` with the
    agentbed of source tree ``code``,
    run by a fresh parent that measures only it (``RUSAGE_CHILDREN`` of a process whose one child
    is the command)."""
    probe = ("import json, resource, subprocess, sys, time; t0 = time.perf_counter(); "
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(json.dumps({'wall': time.perf_counter() - t0, 'rc': p.returncode, 'out': p.stdout, "
             "'err': p.stderr[-2000:], 'rss_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
             "'cpu': resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime "
             "+ resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime}))")
    done = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, check=True, cwd=code,
                          env={**os.environ, "PYTHONPATH": str(code)})  # -m and -c put the cwd first
    result = json.loads(done.stdout)
    if result["rc"] != 0:
        raise SystemExit(f"scale: {' '.join(cmd[2:5])} exited {result['rc']}: {result['err']}")
    return result["wall"], result["rss_kib"] / 1024, result["out"], result["cpu"]


STEPS = ("run", "verify", "report", "view")


def one_size(episodes: int, scratch: Path, steps: tuple[str, ...] = STEPS,
             baseline: Path | None = None) -> dict[str, dict[str, float]]:
    """Each step's wall seconds and peak MiB; a run already in ``scratch`` (``--out``) is read
    again, not re-run, so a reader can be measured after a change without the run's hour."""
    run = scratch / f"vault-{episodes}"
    rows: dict[str, dict[str, float]] = {}
    codes: list[tuple[str, Path]] = ([(", baseline", baseline)] if baseline is not None else []) + [("", ROOT)]

    def keep(name: str, wall: float, rss: float, cpu: float) -> None:
        rows[name] = {"wall": wall, "rss": rss, "cpu": cpu}
        print(f"{episodes} episodes, {name}: {wall / episodes * 1000:.3f} ms/episode, CPU {cpu / episodes * 1000:.3f} "
              f"ms/episode, {rss:.0f} MiB (load average {os.getloadavg()[0]:.1f})", file=sys.stderr,
              flush=True)  # each step at once: a stopped run keeps it

    def run_with(code: Path, out: Path) -> tuple[float, float, str, float]:
        return measured([*AGENTBED, "run", "vault", "--task", "echo", "--agent", "oracle", "--seeds", str(episodes),
                         "--executor", "serial", "--quiet", "--out", str(out)], code)

    if "run" in steps or not (run / "manifest.json").is_file():
        for label, code in codes:
            out = run if code == ROOT else scratch / f"vault-{episodes}-baseline"
            wall, rss, _, cpu = run_with(code, out)
            keep(f"run (serial){label}", wall, rss, cpu)
            if out != run:
                shutil.rmtree(out)  # the readers read one run, which the viewer must list alone
    for label, code in codes if "verify" in steps else ():
        wall, rss, _, cpu = measured([*AGENTBED, "verify", str(run)], code)
        keep(f"verify{label}", wall, rss, cpu)
    for label, code in codes if "report" in steps else ():
        wall, rss, _, cpu = measured([*AGENTBED, "report", str(run), "--out", str(scratch / f"report-{episodes}.html")],
                                     code)
        keep(f"report{label}", wall, rss, cpu)
    for label, code in codes if "view" in steps else ():
        _, rss, printed, _ = measured([sys.executable, "-c", VIEW_RUNS_LIST, str(scratch)], code)
        wall, cpu = map(float, printed.strip().splitlines()[-1].split())  # the request's own, not start-up
        keep(f"viewer runs list (cold){label}", wall, rss, cpu)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated episode counts")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help="comma-separated, of " + ", ".join(STEPS) + " (without run, the run kept in --out "
                             "is read; there is none, it runs)")
    parser.add_argument("--out", type=Path, help="keep each size's run in DIR/N (default: a temporary folder)")
    parser.add_argument("--baseline", type=Path, help="a source tree whose agentbed is measured too, step by step "
                                                      "before this one's, at the same load")
    args = parser.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "agentbed" / "__init__.py").is_file():
        parser.error(f"--baseline: {args.baseline} has no agentbed package")
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
    steps = tuple(args.steps.split(","))
    if unknown := set(steps) - set(STEPS):
        parser.error(f"--steps: unknown {', '.join(sorted(unknown))}")
    sizes = [int(s) for s in args.sizes.split(",")]
    table: dict[int, dict[str, dict[str, float]]] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"agentbed-scale-{n}-") as tmp:
            # the viewer lists every run under its folder: one size per folder
            folder = Path(tmp) if args.out is None else args.out / str(n)
            folder.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            table[n] = one_size(n, folder, steps, args.baseline)
            print(f"{n} episodes measured in {time.perf_counter() - t0:.0f} s: " + "; ".join(
                f"{name} {row['wall'] / n * 1000:.3f} ms/episode, {row['rss']:.0f} MiB" for name, row in table[n].items()),
                file=sys.stderr, flush=True)  # each size at once: a long run stopped early keeps what it measured
    names = [name for name in table[sizes[0]] if all(name in table[n] for n in sizes)]
    head = " | ".join(f"{n:,} ms/episode | {n:,} CPU ms/episode | {n:,} peak MiB" for n in sizes)
    print(f"| step | {head} |")
    print("|---|" + "---|" * (3 * len(sizes)))
    for name in names:
        cells = " | ".join(f"{table[n][name]['wall'] / n * 1000:.3f} | {table[n][name]['cpu'] / n * 1000:.3f} | "
                           f"{table[n][name]['rss']:.0f}" for n in sizes)
        print(f"| {name} | {cells} |")
    print(f"(load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"peak RSS of this parent: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
