"""Sandbox exec round trip and start time, side by side in one run.

Round trip of a trivial command (``true``): plain ``subprocess.run`` on the host (the
baseline), the local sandbox (bubblewrap session, limits, output capture), the Docker
sandbox (a warm container, commands through its exec server), and a plain ``docker exec``
(SDK ``exec_run``) in that same warm container, for reference. Then the time to start and
clean up a sandbox: a local one, and a container. Goals (issue 3): local within 3x plain
subprocess; warm Docker within 10x the local sandbox.

    .venv/bin/python bench/sandbox_exec.py --iterations 100 --starts 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable

from agentbed.sandbox import open_sandbox
from agentbed.sandbox.factory import docker_ready, local_ready


def timed(fn: Callable[[], object], n: int) -> list[float]:
    fn()  # warm-up
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


def start_and_stop(backend: str) -> None:
    open_sandbox(backend).cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=100, help="round trips per configuration")
    parser.add_argument("--starts", type=int, default=5, help="sandbox starts per backend")
    args = parser.parse_args()

    rows: list[tuple[str, list[float]]] = []
    rows.append(("plain subprocess.run", timed(lambda: subprocess.run(["true"], capture_output=True), args.iterations)))
    backends = [b for b, problem in (("local", local_ready()), ("docker", docker_ready())) if problem is None]
    for backend in backends:
        with open_sandbox(backend) as sb:
            label = "local sandbox exec" if backend == "local" else "docker sandbox exec, warm container"
            rows.append((label, timed(lambda sb=sb: sb.exec(["true"]), args.iterations)))
            if backend == "docker":
                rows.append(("plain docker exec, same container",
                             timed(lambda sb=sb: sb.container.exec_run(["true"]), args.iterations)))
    for backend in backends:
        label = "start+cleanup: local sandbox" if backend == "local" else "start+cleanup: container"
        rows.append((label, timed(lambda backend=backend: start_and_stop(backend), args.starts)))

    print(f"{'configuration':38} {'n':>5} {'median ms':>10} {'p90 ms':>9}")
    medians = {}
    for label, samples in rows:
        p90 = sorted(samples)[max(0, int(0.9 * len(samples)) - 1)]
        medians[label] = statistics.median(samples)
        print(f"{label:38} {len(samples):>5} {medians[label]:>10.2f} {p90:>9.2f}")
    plain = medians["plain subprocess.run"]
    if "local sandbox exec" in medians:
        ratio = medians["local sandbox exec"] / plain
        print(f"local sandbox / plain subprocess: {ratio:.1f}x (goal <= 3x: {'met' if ratio <= 3 else 'NOT met'})")
    docker = "docker sandbox exec, warm container"
    if docker in medians and "local sandbox exec" in medians:
        ratio = medians[docker] / medians["local sandbox exec"]
        print(f"docker sandbox / local sandbox: {ratio:.1f}x (goal <= 10x: {'met' if ratio <= 10 else 'NOT met'})")
    missing = [f"{b}: {p}" for b, p in (("local", local_ready()), ("docker", docker_ready())) if p]
    for line in missing:
        print(f"not measured, {line}")


if __name__ == "__main__":
    main()
