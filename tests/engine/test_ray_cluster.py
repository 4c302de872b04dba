"""The Ray executor on a real two-node cluster whose nodes share no file system.

The head runs on this machine; the worker node runs in a Docker container that mounts nothing
of the host and joins over 127.0.0.1 (agentbed/testing_ray.py). Episodes forced onto the
container node must come home: the run finishes, verifies, replays, matches a serial run byte
for byte, and resumes after the driver is killed. Killing the worker node mid-run loses no
episode and records none twice.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbed.store import read_index
from agentbed.testing import require

pytestmark = pytest.mark.timeout(900)

FORCED = ["--executor", "ray", "--ray-resource", "container_node=1"]
VAULT = ["vault", "--agent", "oracle,naive,random"]


@pytest.fixture(scope="session")
def worker_image() -> str:
    require(importlib.util.find_spec("ray") is not None, "Ray", "pip install 'agentbed[ray]' (make test does this)")
    docker = shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True, timeout=30).returncode == 0
    require(docker, "a Docker engine", "run scripts/setup-docker as root (installs docker.io and starts dockerd)")
    from agentbed.testing_ray import build_worker_image

    return build_worker_image()


@pytest.fixture(scope="module")
def cluster(worker_image):
    from agentbed.testing_ray import LoopbackCluster

    with LoopbackCluster(worker_image) as running:
        yield running


def _cli(cluster, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentbed.cli", *args], capture_output=True, text=True,
                          env=cluster.env if cluster else None, timeout=timeout)


def _logs(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "episodes").iterdir())}


def _serial_in_image(image: str, args: list[str], dest: Path) -> dict[str, bytes]:
    """The same episodes run serially, without Ray, in a container of the worker's image: the
    worker node's software exactly (a log's header records the Python release that ran it)."""
    script = f"agentbed run {' '.join(args)} --executor serial --out /tmp/serial --quiet && tar -C /tmp/serial -cf - episodes"
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "sh", "-c", script],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-C", str(dest), "-xf", "-"], input=done.stdout, check=True)
    return _logs(dest)


def _without_python_release(log: bytes) -> list[dict]:
    """A log's records, minus the header's Python release and the hashes that chain it."""
    records = [json.loads(line) for line in log.splitlines()]
    for r in records:
        r.pop("hash", None), r.pop("prev", None)
        r.get("versions", {}).pop("python", None)
    return records


def _ids(run: Path) -> list[str]:
    lines = [ln for ln in (run / "index.jsonl").read_text().splitlines() if ln.strip()]
    return [json.loads(ln)["episode_id"] for ln in lines]


def test_cluster_traffic_stays_on_loopback(cluster):
    nodes = cluster.nodes()
    assert len(nodes) == 2
    assert {n["address"] for n in nodes} == {"127.0.0.1"}
    assert [n for n in nodes if "container_node" in n["resources"]], "the container node has the custom resource"
    mounts = subprocess.run(["docker", "inspect", "--format", "{{json .Mounts}}", cluster.container],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert mounts == "[]", "the worker container must mount nothing of the host"


def test_episodes_on_the_container_node_come_home_identical_to_serial(cluster, worker_image, tmp_path):
    ray_run, serial_run = tmp_path / "ray", tmp_path / "serial"
    done = _cli(cluster, "run", *VAULT, "--seeds", "4", *FORCED, "--address", cluster.address,
                "--out", str(ray_run), "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(_ids(ray_run)) == len(set(_ids(ray_run))) == 3 * 3 * 4

    assert _logs(ray_run) == _serial_in_image(worker_image, [*VAULT, "--seeds", "4"], tmp_path / "in-image")
    serial = _cli(None, "run", *VAULT, "--seeds", "4", "--executor", "serial", "--out", str(serial_run), "--quiet")
    assert serial.returncode == 0, serial.stderr[-3000:]
    here = _logs(serial_run)  # this machine's Python may be another 3.11 release: only the header says so
    assert here.keys() == _logs(ray_run).keys()
    assert all(_without_python_release(log) == _without_python_release(here[name])
               for name, log in _logs(ray_run).items())
    exists = subprocess.run(["docker", "exec", cluster.container, "test", "-e", str(ray_run)])
    assert exists.returncode == 1, "a worker wrote into a copy of the driver's run directory"

    verified = _cli(None, "verify", str(ray_run))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = ray_run / read_index(ray_run / "index.jsonl")[0]["log"]
    shown = _cli(None, "replay", str(log))
    assert shown.returncode == 0 and "vault" in shown.stdout, shown.stdout + shown.stderr
    # re-executed where it ran (the header's Python release is part of what a replay compares)
    rerun = subprocess.run(["docker", "run", "--rm", "-i", "--network", "none", worker_image, "sh", "-c",
                            "cat > /tmp/episode.jsonl && agentbed replay --rerun /tmp/episode.jsonl"],
                           input=log.read_bytes(), capture_output=True, timeout=300)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr).decode()[-3000:]


def test_a_node_without_the_worlds_data_says_so_as_the_episodes_error(cluster, tmp_path):
    from agentbed.suite import get_suite
    from environments.graphrag.real import available

    require(available("nations"), "the pykeen graphs", "run scripts/fetch-pykeen (scripts/setup does this)")
    graphrag = get_suite("graphrag")
    task = graphrag.task_ids(graphrag.resolve_options({"dataset": "nations"}))[0]
    runs = {"pykeen": ["graphrag", "--dataset", "nations", "--task", task],
            "cocoder": ["cocoder", "--task", "tinydb", "--strategy", "sequential"],
            "weights": ["vault", "--task", "open-fast", "--model", "local:gemma-3-270m"]}
    for name, args in runs.items():
        done = _cli(cluster, "run", *args, "--seeds", "2", *FORCED, "--address", cluster.address,
                    "--out", str(tmp_path / name), "--quiet")
        assert done.returncode == 0, done.stderr[-3000:]
        errors = {r["error"] for r in read_index(tmp_path / name / "index.jsonl")}
        assert len(errors) == 1, errors  # one message, the same for every episode: no traceback
        (error,) = errors
        assert "\n" not in error.strip()
        assert {"pykeen": "run scripts/fetch-pykeen", "cocoder": "run scripts/fetch-repos tinydb",
                "weights": "scripts/setup-local-model"}[name] in error, error


def test_sandboxes_are_those_of_the_node_that_runs_the_episode(cluster):
    """The container node has no Docker engine and cannot make namespaces; the host has both.
    A task on the container node must see its own node's answer, not the driver's."""
    from agentbed.sandbox.factory import docker_ready

    probe = ("import json, ray\n"
             f"ray.init(address={cluster.address!r}, log_to_driver=False, configure_logging=False)\n"
             "def check():\n"
             "    from agentbed.sandbox.factory import docker_ready, local_ready\n"
             "    return {'docker': docker_ready(), 'local': local_ready()}\n"
             "task = ray.remote(check).options(resources={'container_node': 1})\n"
             "print('NODE', json.dumps(ray.get(task.remote())))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cluster.env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("NODE ")]
    there = json.loads(line.removeprefix("NODE "))
    assert there["docker"] and "Docker" in there["docker"]  # the container's own (absent) engine
    assert there["local"] and "bubblewrap" in there["local"]
    assert docker_ready() != there["docker"]  # the driver's node answers for itself


def test_driver_killed_with_sigkill_resumes_on_the_cluster(cluster, worker_image, tmp_path):
    run = tmp_path / "run"
    seeds, total = 60, 3 * 3 * 60
    cmd = [sys.executable, "-m", "agentbed.cli", "run", *VAULT, "--seeds", str(seeds), *FORCED,
           "--address", cluster.address, "--out", str(run), "--quiet"]
    driver = subprocess.Popen(cmd, env=cluster.env, start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    index = run / "index.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and driver.poll() is None:
        if index.exists() and index.read_bytes().count(b"\n") >= 60:
            break
        time.sleep(0.05)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait(timeout=30)
    before = len(read_index(index))
    assert 60 <= before < total, f"the driver should have been killed mid-run ({before} of {total} finished)"

    resumed = _cli(cluster, "run", "vault", "--out", str(run), "--resume", *FORCED, "--address", cluster.address,
                   "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ids = _ids(run)
    assert len(ids) == len(set(ids)) == total, "an episode was lost or recorded twice"
    assert _logs(run) == _serial_in_image(worker_image, [*VAULT, "--seeds", str(seeds)], tmp_path / "in-image")
    verified = _cli(None, "verify", str(run))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]


def test_killing_the_worker_node_mid_run_loses_and_duplicates_nothing(worker_image, tmp_path):
    from agentbed.testing_ray import LoopbackCluster

    run, seeds = tmp_path / "run", 200
    total = 3 * 3 * seeds
    with LoopbackCluster(worker_image, head_cpus=1, worker_cpus=2) as cluster:
        cmd = [sys.executable, "-m", "agentbed.cli", "run", *VAULT, "--seeds", str(seeds), "--executor", "ray",
               "--address", cluster.address, "--out", str(run), "--quiet"]
        driver = subprocess.Popen(cmd, env=cluster.env, start_new_session=True, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        try:
            index, deadline = run / "index.jsonl", time.monotonic() + 300
            worked = _container_worked(run, _image_python(worker_image))
            while time.monotonic() < deadline and driver.poll() is None and not (
                    index.exists() and index.read_bytes().count(b"\n") >= total // 5 and worked()):
                time.sleep(0.2)
            assert driver.poll() is None, "the run ended before the worker node was killed"
            cluster.kill_worker()
            killed_at = index.read_bytes().count(b"\n")
            _, err = driver.communicate(timeout=600)
        finally:
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)
        assert driver.returncode == 0, err.decode()[-3000:]
    assert killed_at < total, "the worker node should have been killed mid-run"
    ids = _ids(run)
    assert len(ids) == len(set(ids)) == total, "an episode was lost or recorded twice"
    records = read_index(run / "index.jsonl")
    serial_run = tmp_path / "serial"
    serial = _cli(None, "run", *VAULT, "--seeds", str(seeds), "--executor", "process", "-j", "2",
                  "--out", str(serial_run), "--quiet")
    assert serial.returncode == 0
    expected = _logs(serial_run)  # episodes ran on either node, whose Python releases may differ
    for record in records:  # every episode was retried elsewhere, or says that its node was lost
        name = Path(record["log"]).name
        if record["status"] == "error" and "Ray task" in record["error"]:
            continue
        log = (run / record["log"]).read_bytes()
        assert _without_python_release(log) == _without_python_release(expected[name])
    verified = _cli(None, "verify", str(run))
    assert verified.returncode == 0, verified.stdout[-2000:]
    ran_under = {json.loads(p.read_bytes().split(b"\n", 1)[0])["versions"]["python"]
                 for p in (run / "episodes").iterdir()}
    here = json.loads(next(iter(expected.values())).split(b"\n", 1)[0])["versions"]["python"]
    if _image_python(worker_image) != here:  # a log's header names the node's Python: both nodes worked
        assert ran_under == {here, _image_python(worker_image)}


def _container_worked(run: Path, image_python: str):
    """Whether episodes run on the container node came home: their logs' headers name its Python
    release (when this machine's differs; otherwise the question cannot be told from the logs)."""
    if image_python == platform.python_version():
        return lambda: True

    def worked() -> bool:
        for path in list((run / "episodes").glob("*.jsonl")) if (run / "episodes").is_dir() else []:
            with open(path, "rb") as fh:
                if f'"python":"{image_python}"'.encode() in fh.readline():
                    return True
        return False
    return worked


def _image_python(image: str) -> str:
    return subprocess.run(["docker", "run", "--rm", "--network", "none", image, "python3", "-c",
                           "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()
