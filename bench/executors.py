"""Executor throughput: serial vs process pool vs Ray on a CPU-bound suite, in one run.

    .venv/bin/python bench/executors.py [--episodes 64] [--jobs 2]

The load is the vault suite's ``proof-of-work`` task: the oracle searches a SHA-256 nonce
(about 0.1 s of CPU per episode), so the pool's speed-up over serial shows how much of the
machine the executor uses. Ray's per-episode overhead is measured on the single-step ``echo``
task, where nearly all time is overhead. Logs of the three executors are compared byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import tempfile
import time
from pathlib import Path

from agentbed.executors import execute
from agentbed.runner import EpisodeSpec


def _timed(specs: list[EpisodeSpec], executor: str, jobs: int) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        records = list(execute(specs, tmp, executor=executor, jobs=jobs))
        elapsed = time.perf_counter() - t0
        assert all(r.success for r in records), [r.error for r in records if not r.success][:1]
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(Path(tmp, "episodes").glob("*.jsonl"))))
        return elapsed, digest.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    heavy = [EpisodeSpec("vault", "proof-of-work", "oracle", s) for s in range(args.episodes)]
    light = [EpisodeSpec("vault", "echo", "oracle", s) for s in range(args.episodes * 8)]
    executors = ["serial", "process"] + (["ray"] if importlib.util.find_spec("ray") else [])
    rows = []
    ray_start = None
    for name in executors:
        if name == "ray":  # started once, outside the timings: its start-up is reported on its own
            import ray

            t0 = time.perf_counter()
            ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
            ray_start = time.perf_counter() - t0
        heavy_s, heavy_digest = _timed(heavy, name, args.jobs)
        light_s, light_digest = _timed(light, name, args.jobs)
        rows.append((name, heavy_s, heavy_digest, light_s, light_digest))
    if ray_start is not None:
        ray.shutdown()
    serial_heavy = rows[0][1]
    print(f"CPU-bound: {len(heavy)} proof-of-work episodes; overhead: {len(light)} single-step episodes; "
          f"{args.jobs} workers")
    print(f"{'executor':10} {'cpu-bound s':>12} {'episodes/s':>11} {'vs serial':>10} {'per-episode (light)':>20}  logs")
    for name, heavy_s, hd, light_s, ld in rows:
        print(f"{name:10} {heavy_s:12.2f} {len(heavy) / heavy_s:11.1f} {serial_heavy / heavy_s:9.2f}x "
              f"{light_s / len(light) * 1e3:17.3f} ms  {hd}/{ld}")
    if ray_start is not None:
        print(f"Ray start-up (local instance, {args.jobs} CPUs): {ray_start:.2f} s, not included above")
    same = len({r[2] for r in rows}) == 1 and len({r[4] for r in rows}) == 1
    print("logs byte-identical across executors:", "yes" if same else "NO")


if __name__ == "__main__":
    main()
