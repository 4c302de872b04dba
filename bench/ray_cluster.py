"""The Ray executor on a two-node cluster (no shared disk) against the process executor.

    .venv/bin/python bench/ray_cluster.py [--episodes 1500] [--repeats 20]

The cluster is agentbed/testing_ray.py's: a head on this machine's loopback (1 CPU) and a worker
node in a Docker container that mounts nothing (2 CPUs), so three task slots; the process
executor gets the same three workers. The load is the vault's single-step ``echo`` task, where
nearly all time is overhead: scheduling, shipping each log back, storing it, indexing it. Each
executor's run goes through ``execute`` and a ``RunStore`` as ``agentbed run`` does, timed from
the first episode handed out (the cluster is up and the driver connected before the clock
starts). A second table times shipping one log of 1 MB from the container node to the driver and
storing it durably, against an empty one (median of ``--repeats``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentbed.runner import EpisodeSpec  # noqa: E402
from agentbed.store import RunStore  # noqa: E402
from agentbed.testing_ray import WORKER_RESOURCE, LoopbackCluster, build_worker_image  # noqa: E402


def _timed_run(specs: list[EpisodeSpec], **kw: object) -> tuple[float, int]:
    from agentbed.executors import execute

    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        t0 = time.perf_counter()
        for record in execute(specs, tmp, **kw):
            store.append(record)
        elapsed = time.perf_counter() - t0
        return elapsed, len(store.records())


def _ship(size: int) -> dict[str, bytes]:  # runs on the container node (pickled by value from __main__)
    return {"episodes/big.jsonl": b"x" * (size - 1) + b"\n"} if size else {}


def _shipping(ray: object, repeats: int, size: int) -> list[float]:
    remote = ray.remote(_ship).options(num_cpus=1, resources={WORKER_RESOURCE: 1})  # type: ignore[attr-defined]
    ray.get(remote.remote(0))  # type: ignore[attr-defined] - a warm worker
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        for _ in range(repeats):
            t0 = time.perf_counter()
            store.write_files(ray.get(remote.remote(size)))  # type: ignore[attr-defined]
            times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    specs = [EpisodeSpec("vault", "echo", "oracle", s) for s in range(args.episodes)]
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    image = build_worker_image()
    built = time.perf_counter() - t0
    process_s, n = _timed_run(specs, executor="process", jobs=3)
    assert n == len(specs)
    t0 = time.perf_counter()
    with LoopbackCluster(image, head_cpus=1, worker_cpus=2) as cluster:
        up = time.perf_counter() - t0
        os.environ.update(cluster.env)  # before Ray is imported: it reads these at import
        import ray

        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        try:
            _timed_run(specs[:60], executor="ray", ray_address=cluster.address)  # warm the nodes' workers
            spread_s, n1 = _timed_run(specs, executor="ray", ray_address=cluster.address)
            forced_s, n2 = _timed_run(specs, executor="ray", ray_address=cluster.address,
                                      ray_resources={WORKER_RESOURCE: 1})
            empty = _shipping(ray, args.repeats, 0)
            mb = _shipping(ray, args.repeats, 1_000_000)
        finally:
            ray.shutdown()
    assert n1 == n2 == len(specs)
    print(f"{len(specs)} single-step vault episodes; worker image ready in {built:.1f}s, cluster up in {up:.1f}s "
          "(not included below); load average (1, 5, 15 min) " + " ".join(f"{x:.1f}" for x in load_before) +
          " before, " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " after")
    print(f"{'executor':42} {'wall s':>8} {'per episode':>12} {'vs process':>11}")
    for name, seconds in (("process, 3 workers (one machine)", process_s),
                          ("ray, 2 nodes (head 1 CPU + container 2)", spread_s),
                          ("ray, forced onto the container (2 CPUs)", forced_s)):
        print(f"{name:42} {seconds:8.2f} {seconds / len(specs) * 1e3:9.3f} ms {seconds / process_s:10.2f}x")
    print(f"shipping a log from the container node and storing it (median of {args.repeats}):")
    print(f"  empty: {statistics.median(empty) * 1e3:.1f} ms   1 MB: {statistics.median(mb) * 1e3:.1f} ms   "
          f"1 MB costs {(statistics.median(mb) - statistics.median(empty)) * 1e3:.1f} ms more")


if __name__ == "__main__":
    main()
