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
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbed.agents.connections import read_events
from agentbed.store import read_index
from agentbed.testing import cli_in_process, episode_bytes, require

pytestmark = [pytest.mark.timeout(900), pytest.mark.exclusive("ray")]  # one Ray instance on the machine at a time

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
def module_cluster(worker_image):
    from agentbed.testing_ray import LoopbackCluster

    with LoopbackCluster(worker_image) as running:
        yield running


@pytest.fixture
def cluster(module_cluster):
    """The module's cluster, whole, its worker node started with :data:`LOCAL_SANDBOX_OPTIONS`: a
    worker node a test killed or started otherwise is replaced first (the tests that do come
    last, so no test waits for that)."""
    from agentbed.testing_ray import LOCAL_SANDBOX_OPTIONS

    if module_cluster.worker_killed or module_cluster.docker_options != LOCAL_SANDBOX_OPTIONS:
        module_cluster.restart_worker(LOCAL_SANDBOX_OPTIONS)
    return module_cluster


DOCKER_SOCKET = ("-v", "/var/run/docker.sock:/var/run/docker.sock")


@pytest.fixture
def socket_cluster(module_cluster):
    """The module's cluster with a worker node whose only mount is the host's Docker socket, and
    Docker's default options otherwise: it replaces the worker node the node-kill test killed
    (so it comes after that test: a new head and worker node of its own cost about twice as much)."""
    if module_cluster.worker_killed or module_cluster.docker_options != DOCKER_SOCKET:
        module_cluster.restart_worker(DOCKER_SOCKET)
    return module_cluster


def _cli(cluster, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentbed.cli", *args], capture_output=True, text=True,
                          env=cluster.env if cluster else None, timeout=timeout)


def _logs(run: Path, *, apart: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {p.name: episode_bytes(p, other_header=apart) if p.suffix == ".jsonl" else p.read_bytes()
            for p in sorted((run / "episodes").iterdir())}


# A run in the worker's image outside Ray records that installed copy's provenance (no commit),
# a Ray run the driver's, which each spec carries to the node: compared apart from that member.
IN_IMAGE = ("provenance",)


def _serial_in_image(image: str, args: list[str], dest: Path) -> dict[str, bytes]:
    """The same episodes run serially, without Ray, in a container of the worker's image: the
    worker node's software exactly (a log's header records the Python release that ran it)."""
    script = f"agentbed run {' '.join(args)} --executor serial --out /tmp/serial --quiet && tar -C /tmp/serial -cf - episodes"
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "sh", "-c", script],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-C", str(dest), "-xf", "-"], input=done.stdout, check=True)
    return _logs(dest, apart=IN_IMAGE)


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

    assert _logs(ray_run, apart=IN_IMAGE) == _serial_in_image(worker_image, [*VAULT, "--seeds", "4"],
                                                            tmp_path / "in-image")
    serial = _cli(None, "run", *VAULT, "--seeds", "4", "--executor", "serial", "--out", str(serial_run), "--quiet")
    assert serial.returncode == 0, serial.stderr[-3000:]
    # byte for byte as on this machine, though the node may run another patch release of Python:
    # the run's events name the node and its release, the logs only major.minor
    assert _logs(ray_run) == _logs(serial_run)
    assert read_events(ray_run / "events.jsonl") == [
        {"event": "ray_node", "node": cluster.worker_node_id(), "python": _node_python(cluster)}]
    exists = subprocess.run(["docker", "exec", cluster.container, "test", "-e", str(ray_run)])
    assert exists.returncode == 1, "a worker wrote into a copy of the driver's run directory"

    verified = cli_in_process("verify", str(ray_run))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = ray_run / read_index(ray_run / "index.jsonl")[0]["log"]
    shown = cli_in_process("replay", str(log))
    assert shown.returncode == 0 and "vault" in shown.stdout, shown.stdout + shown.stderr
    rerun = cli_in_process("replay", "--rerun", str(log))  # re-executed on the driver's machine
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr


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
        assert done.returncode == 4, done.stderr[-3000:]  # errored episodes (issue 30): never a score
        assert "problems: 2 of 2 episodes errored" in done.stderr and "setup: 2 episodes" in done.stderr
        errors = {r["error"] for r in read_index(tmp_path / name / "index.jsonl")}
        assert len(errors) == 1, errors  # one message, the same for every episode: no traceback
        (error,) = errors
        assert "\n" not in error.strip()
        assert {"pykeen": "run scripts/fetch-pykeen", "cocoder": "run scripts/fetch-repos tinydb",
                "weights": "scripts/setup-local-model"}[name] in error, error


def _on_nodes(cluster, bodies: dict[str, str]) -> dict[str, dict]:
    """Each ``bodies[resource]`` (the statements of a function returning JSON-able data) run as a
    Ray task on the node offering ``resource``, one after another from one driver (one Ray
    connection); defined in ``__main__``, so Ray ships them by value. Their results by resource."""
    probe = "import json, ray\n" f"ray.init(address={cluster.address!r}, log_to_driver=False, configure_logging=False)\n"
    for i, body in enumerate(bodies.values()):
        probe += f"def task{i}():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    calls = ", ".join(f"ray.get(ray.remote(task{i}).options(resources={{{resource!r}: 1}}).remote())"
                      for i, resource in enumerate(bodies))
    probe += f"print('NODES', json.dumps([{calls}]))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cluster.env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("NODES ")]
    return dict(zip(bodies, json.loads(line.removeprefix("NODES ")), strict=True))


_PROBE = ("from dataclasses import asdict\n"
          "from agentbed.sandbox.factory import docker_ready, local_ready\n"
          "from agentbed.sandbox.probes import probe_limits\n"
          "ready = {'docker': docker_ready(), 'local': local_ready()}\n"
          "return {'ready': ready, 'limits': {b: [asdict(p) for p in probe_limits(b)] for b in {BACKENDS}}}")


def _held(probes: list[dict]) -> None:
    assert {p["limit"] for p in probes} == {"memory", "processes", "wall_time", "cpu_time", "file_size", "disk",
                                           "sysv_shm"}
    assert all(p["held"] for p in probes), [p for p in probes if not p["held"]]


def test_sandboxes_run_on_the_node_of_their_episode_and_its_limits_hold(cluster, tmp_path):
    """Each node answers for itself: the container node (no Docker engine; started with the
    options that let it make namespaces) runs the local sandbox, whose limits hold there; the
    host node runs the Docker sandbox on its own engine, whose limits hold there."""
    probed = _on_nodes(cluster, {"container_node": _PROBE.replace("{BACKENDS}", "['local']"),
                                 "host_node": _PROBE.replace("{BACKENDS}", "['docker']")})
    container, host = probed["container_node"], probed["host_node"]
    assert container["ready"]["local"] is None, container["ready"]
    assert "Docker" in container["ready"]["docker"]  # the container's own (absent) engine
    _held(container["limits"]["local"])
    assert host["ready"]["docker"] is None, host["ready"]
    _held(host["limits"]["docker"])

    # an episode whose tool runs in its sandbox, on the container node: `auto` is the local sandbox there
    run = tmp_path / "shell"
    done = _cli(cluster, "run", "shell", "--seeds", "2", *FORCED, "--address", cluster.address, "--out", str(run),
                "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    records = read_index(run / "index.jsonl")
    assert [r["status"] for r in records] == ["ok", "ok"] and all(r["success"] for r in records), records
    assert [e["node"] for e in read_events(run / "events.jsonl")] == [cluster.worker_node_id()]
    assert cli_in_process("verify", str(run)).returncode == 0


def test_a_node_that_cannot_make_namespaces_refuses_the_local_sandbox(worker_image):
    """A container started with Docker's defaults may not make namespaces: the local sandbox is
    refused there with one line naming the options it needs, recorded as each episode's error,
    and never run unsandboxed. (The same code runs in a Ray task: run_spec on that node.)"""
    script = ("agentbed sandbox check; agentbed run shell --seeds 2 --executor serial --out /tmp/r --quiet"
              " && cat /tmp/r/index.jsonl")
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", worker_image, "sh", "-c", script],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("local: ")][0].startswith("local: unavailable: this machine does not"
                                                                          " let the local sandbox make namespaces")
    records = [json.loads(ln) for ln in lines if ln.startswith("{")]
    assert len(records) == 2 and all(r["status"] == "error" and not r["success"] for r in records)
    errors = {r["error"].strip() for r in records}
    assert len(errors) == 1 and "\n" not in next(iter(errors)), errors  # one line, no traceback
    (error,) = errors
    assert error.startswith("SandboxUnavailable: ") and "--security-opt seccomp=unconfined" in error, error


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
    assert _logs(run, apart=IN_IMAGE) == _serial_in_image(worker_image, [*VAULT, "--seeds", str(seeds)],
                                                        tmp_path / "in-image")
    verified = cli_in_process("verify", str(run))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]


def _node_worked(run: Path, node: str):
    """Whether episodes run on ``node`` have come home (the run's events name each node once it has)."""
    return lambda: any(e.get("node") == node for e in read_events(run / "events.jsonl"))


def _node_python(cluster) -> str:
    """The Python release of the worker node's container (of the worker's image): asked in the
    running container, not a new one."""
    return subprocess.run(["docker", "exec", cluster.container, "python3", "-c",
                           "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_one_cap_across_the_nodes_and_the_drivers_cache_on_the_cluster(cluster, tmp_path):
    """Model episodes on both nodes share one cap (the loopback server counts the most calls it held
    at once) and the driver's cache: the cached rerun on the cluster makes no call."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
    from openai_stub import OpenAIStub
    from scripted_models import vault_three_calls

    stub = OpenAIStub(lambda body: vault_three_calls(body, delay=0.2))
    stub.start()
    try:
        env = {**cluster.env, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
        args = ["run", "vault", "--task", "open-fast", "--model", "openai:stub-model", "--seeds", "6",
                "--executor", "ray", "--address", cluster.address, "-j", "3", "--max-connections", "1",
                "--cache-dir", str(tmp_path / "cache"), "--quiet"]
        for name in ("live", "again"):
            done = subprocess.run([sys.executable, "-m", "agentbed.cli", *args, "--out", str(tmp_path / name)],
                                  capture_output=True, text=True, env=env, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            if name == "live":
                served = stub.served
                assert served == 18 and stub.peak == 1
        assert stub.served == served, "the cached rerun on the cluster called the provider"
        nodes = {e["node"] for e in read_events(tmp_path / "live" / "events.jsonl") if e.get("event") == "ray_node"}
        assert len(nodes) == 2, "the episodes ran on both nodes"
    finally:
        stub.stop()


def test_killing_the_worker_node_mid_run_loses_and_duplicates_nothing(cluster, tmp_path):
    """On the module's cluster (a head of 1 CPU, a worker node of 2), last but one: its worker node
    is killed, and the test after it starts the worker node it needs in its place."""
    run, seeds = tmp_path / "run", 200
    total = 3 * 3 * seeds
    nodes = {str(n["id"]) for n in cluster.joined_nodes()}  # before the run: as the worker node joined
    worked = _node_worked(run, cluster.worker_node_id())
    cmd = [sys.executable, "-m", "agentbed.cli", "run", *VAULT, "--seeds", str(seeds), "--executor", "ray",
           "--address", cluster.address, "--out", str(run), "--quiet"]
    driver = subprocess.Popen(cmd, env=cluster.env, start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        index, deadline = run / "index.jsonl", time.monotonic() + 300
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
    expected = _logs(serial_run)
    for record in records:  # every episode was retried elsewhere, or says that its node was lost
        name = Path(record["log"]).name
        if record["status"] == "error" and "Ray task" in record["error"]:
            continue
        assert episode_bytes(run / record["log"]) == expected[name]  # with the driver's provenance
    verified = cli_in_process("verify", str(run))
    assert verified.returncode == 0, verified.stdout[-2000:]
    assert {e["node"] for e in read_events(run / "events.jsonl")} == nodes  # both nodes ran episodes


def test_the_docker_sandbox_runs_on_the_container_node_through_the_engine_it_reaches(socket_cluster, tmp_path):
    """The docker sandbox needs none of the node's files in the engine's machine, only an engine the
    node reaches: here the host's, through its socket, this node's only mount (a container here
    cannot run an engine of its own). Each sandbox is started by the node running its episode."""
    cluster = socket_cluster
    mounts = subprocess.run(["docker", "inspect", "--format", "{{range .Mounts}}{{.Source}} {{end}}", cluster.container],
                            capture_output=True, text=True, check=True).stdout.split()
    assert mounts == ["/var/run/docker.sock"]
    node = _on_nodes(cluster, {"container_node": _PROBE.replace("{BACKENDS}", "['docker']")})["container_node"]
    assert node["ready"]["docker"] is None, node["ready"]
    assert "namespaces" in node["ready"]["local"]  # Docker's default options: only docker can succeed
    _held(node["limits"]["docker"])
    run = tmp_path / "shell"  # `auto` is the docker sandbox on that node
    done = _cli(cluster, "run", "shell", "--seeds", "2", *FORCED, "--address", cluster.address,
                "--out", str(run), "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    records = read_index(run / "index.jsonl")
    assert [r["status"] for r in records] == ["ok", "ok"] and all(r["success"] for r in records), records
    assert [e["node"] for e in read_events(run / "events.jsonl")] == [cluster.worker_node_id()]
