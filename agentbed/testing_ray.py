"""A two-node Ray cluster on this machine's loopback, for tests and benchmarks of the Ray executor.

The head runs on the host; the worker node runs in a Docker container that mounts nothing of
the host (image: docker/ray-worker/build) and joins with ``--network host``. Every address is
127.0.0.1: cluster traffic never leaves loopback and no private-range address is used. The
worker node offers the custom resource :data:`WORKER_RESOURCE`, which the head lacks, so a run
with ``--ray-resource container_node=1`` executes every episode inside the container (and
``host_node=1`` on the host). The container gets the options that let the local sandbox run in
it (:data:`LOCAL_SANDBOX_OPTIONS`); it has no Docker engine.

Processes are started in their own session and stopped by their own ids (never ``ray stop``,
which would stop every Ray on the machine).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "docker" / "ray-worker" / "build"
LOOPBACK = "127.0.0.1"
WORKER_RESOURCE = "container_node"
HEAD_RESOURCE = "host_node"  # only the head offers it: pins a task to the host (and its Docker engine)
# What lets the local sandbox make its namespaces in the container (Docker refuses each by
# default; --privileged is not needed, and the engine here cannot grant it): SYS_ADMIN for the
# root holder's mount namespace, no seccomp filter for the namespace system calls, and /proc
# without Docker's masked paths, which make the kernel refuse a fresh /proc in a new PID namespace.
LOCAL_SANDBOX_OPTIONS = ("--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined",
                         "--security-opt", "systempaths=unconfined")
# The head's checks of its nodes every second instead of every 3 s: a killed node is counted dead
# after 5 refused checks, about 5 s instead of 15 s. A node that answers late is not: each check
# still waits Ray's 10 s for its answer, and a node is dead only after 5 checks fail in a row.
HEAD_HEALTH_CHECK = {"RAY_health_check_period_ms": "1000"}
_CLUSTERS = itertools.count()
# A driver that joins the cluster at ADDRESS and prints its live nodes once COUNT are alive or
# SECONDS have passed (asking the head every half second; COUNT 1 and SECONDS 0: at once).
_NODES = """
import json, sys, time, ray
address, count, deadline = sys.argv[1], int(sys.argv[2]), time.monotonic() + float(sys.argv[3])
ray.init(address=address, log_to_driver=False, configure_logging=False)
while True:
    alive = [{"id": n["NodeID"], "address": n["NodeManagerAddress"], "resources": n["Resources"]}
             for n in ray.nodes() if n["Alive"]]
    if len(alive) >= count or time.monotonic() > deadline:
        break
    time.sleep(0.5)
print("NODES", json.dumps(alive))
"""


def _session_members(session: int) -> list[int]:
    """The live processes of a session (field 6 of /proc/PID/stat), by their ids."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[3]) == session:
            members.append(int(entry.name))
    return members


def build_worker_image(python: str = sys.executable) -> str:
    """Build (or find up to date) the worker image; return its name."""
    done = subprocess.run([str(BUILD)], capture_output=True, text=True, env={**os.environ, "PYTHON": python},
                          timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{BUILD} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind((LOOPBACK, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _node_ports(ports: list[int], min_worker: int) -> list[str]:
    """Explicit ports for one node: two nodes share the host's network, so no defaults may clash."""
    manager, objects, agent, agent_grpc, metrics, runtime_env = ports
    return [f"--node-manager-port={manager}", f"--object-manager-port={objects}",
            f"--dashboard-agent-listen-port={agent}", f"--dashboard-agent-grpc-port={agent_grpc}",
            f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}",
            f"--min-worker-port={min_worker}", f"--max-worker-port={min_worker + 199}"]


class LoopbackCluster:
    """``with LoopbackCluster(image) as cluster:`` a head on the host and a worker in a container."""

    def __init__(self, image: str, *, head_cpus: int = 1, worker_cpus: int = 2,
                 docker_options: tuple[str, ...] = LOCAL_SANDBOX_OPTIONS) -> None:
        self.image, self.head_cpus, self.worker_cpus = image, head_cpus, worker_cpus
        self.docker_options = docker_options
        self.token = uuid.uuid4().hex  # token authentication, as Ray 2.60 does by default
        # every port at once, so that none is handed out twice; worker processes get a range each,
        # below the kernel's ephemeral ports
        self.port, client, *ports = _free_ports(14)
        base = 20000 + ((os.getpid() + next(_CLUSTERS)) % 30) * 400
        self._head_ports = [f"--ray-client-server-port={client}", *_node_ports(ports[:6], base)]
        self._worker_ports = _node_ports(ports[6:], base + 200)
        self.address = f"{LOOPBACK}:{self.port}"
        self.temp_dir = tempfile.mkdtemp(prefix="abray-", dir="/tmp")  # short: Ray's sockets live here
        self.container = f"agentbed-ray-worker-{uuid.uuid4().hex[:8]}"
        self.head: subprocess.Popen[bytes] | None = None
        self._joined: list[dict[str, Any]] | None = None  # the nodes when the last wait_for_nodes ended
        self.worker_killed = False  # by kill_worker, until restart_worker

    @property
    def env(self) -> dict[str, str]:
        """What a driver process needs to join the cluster."""
        # Ray turns a loopback address into the outward interface's unless clusters are "disabled",
        # which keeps 127.0.0.1 and only forbids this process to start a worker node
        return {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token,
                "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

    def __enter__(self) -> LoopbackCluster:
        try:
            try:
                self.start_head()
            except RuntimeError:  # once more: Ray gives its raylet 30 s to register, which a loaded start can miss
                self._kill_head()
                self.start_head()
            self._start_worker_retried()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start_head(self) -> None:
        ray = str(Path(sys.executable).with_name("ray"))
        cmd = [ray, "start", "--head", "--block", f"--node-ip-address={LOOPBACK}", f"--port={self.port}",
               f"--num-cpus={self.head_cpus}", f"--resources={json.dumps({HEAD_RESOURCE: self.head_cpus})}",
               "--include-dashboard=false", "--disable-usage-stats",
               f"--temp-dir={self.temp_dir}", *self._head_ports]
        self.head = subprocess.Popen(cmd, env={**self.env, **HEAD_HEALTH_CHECK}, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.wait_for_nodes(1)

    def start_worker(self) -> None:
        resources = json.dumps({WORKER_RESOURCE: self.worker_cpus})
        cmd = ["docker", "run", "-d", "--name", self.container, "--network", "host",
               "-e", "RAY_AUTH_MODE=token", "-e", f"RAY_AUTH_TOKEN={self.token}", "-e", "RAY_USAGE_STATS_ENABLED=0",
               *self.docker_options, self.image, "python3", "/usr/local/lib/agentbed/loopback_node.py", "start", "--block", f"--address={self.address}",
               f"--node-ip-address={LOOPBACK}", f"--num-cpus={self.worker_cpus}", f"--resources={resources}",
               "--disable-usage-stats", *self._worker_ports]
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)
        self.wait_for_nodes(2)
        self.worker_killed = False

    def _start_worker_retried(self) -> None:
        try:
            self.start_worker()
        except RuntimeError:  # once more: on a loaded machine a node's start can fail (its raylet's 30 s)
            subprocess.run(["docker", "rm", "-f", self.container], capture_output=True, timeout=60)
            self.start_worker()

    def kill_worker(self) -> None:
        """The worker node dies at once, as a machine that loses power."""
        subprocess.run(["docker", "kill", self.container], capture_output=True, timeout=60)
        self._joined = None
        self.worker_killed = True

    def restart_worker(self, docker_options: tuple[str, ...] | None = None) -> None:
        """A new worker node in place of the current one (a new container of the same name and
        ports; with ``docker_options`` instead of the present ones if given), once it has joined:
        the cluster is whole again without a new head. A live worker is killed first, and the new
        one starts once the head no longer counts the old node alive (at once after a run that
        retried the killed node's tasks elsewhere: the head had noticed)."""
        if not self.worker_killed:
            self.kill_worker()
        self._wait_for_worker_gone()
        subprocess.run(["docker", "rm", "-f", self.container], capture_output=True, timeout=60)
        if docker_options is not None:
            self.docker_options = docker_options
        self._start_worker_retried()

    def _wait_for_worker_gone(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while any(WORKER_RESOURCE in n["resources"] for n in self.nodes()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the head still counted the killed worker node alive after {timeout:.0f}s")
            time.sleep(1)

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's live nodes (address and resources), as a separate driver sees them."""
        try:
            done = subprocess.run([sys.executable, "-c", _NODES, self.address, "1", "0"], capture_output=True,
                                  text=True, env=self.env, timeout=60)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the Ray head at {self.address} did not answer within 60s") from None
        return self._read_nodes(done.returncode, done.stdout, done.stderr)

    def _read_nodes(self, returncode: int, stdout: str, stderr: str) -> list[dict[str, Any]]:
        if returncode != 0:
            raise RuntimeError(f"cannot reach the Ray head at {self.address}:\n{stderr[-2000:]}")
        (line,) = [ln for ln in stdout.splitlines() if ln.startswith("NODES ")]
        return list(json.loads(line.removeprefix("NODES ")))

    def joined_nodes(self) -> list[dict[str, Any]]:
        """The live nodes as the last wait for nodes saw them once the worker node had joined (no
        driver process: asking the head takes seconds), or asked anew after a worker was killed."""
        return self._joined or self.nodes()

    def worker_node_id(self) -> str:
        """The Ray node id of the container node (the one offering :data:`WORKER_RESOURCE`)."""
        (node,) = [n for n in self.joined_nodes() if WORKER_RESOURCE in n["resources"]]
        return str(node["id"])

    def wait_for_nodes(self, count: int, timeout: float = 120) -> None:
        """Until ``count`` nodes are alive: first until the head's port answers (a socket, no
        process), then one driver that asks the head every half second (a driver process each
        second cost about as much CPU as the nodes' own start: Ray's import and connection)."""
        deadline = time.monotonic() + timeout
        while not self._head_answers():
            self._head_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray head at {self.address} did not answer within {timeout:.0f}s")
            time.sleep(0.2)
        while True:
            left = max(deadline - time.monotonic(), 1.0)
            probe = subprocess.Popen([sys.executable, "-c", _NODES, self.address, str(count), str(left)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
            out, err = self._wait_probe(probe, left + 60)
            try:
                nodes = self._read_nodes(probe.returncode, out, err)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
            else:
                if len(nodes) >= count:
                    self._joined = nodes
                    return
            if time.monotonic() > deadline:
                logs = subprocess.run(["docker", "logs", self.container], capture_output=True, text=True)
                raise RuntimeError(f"the cluster did not reach {count} nodes in {timeout:.0f}s; the worker "
                                   f"container said:\n{(logs.stdout + logs.stderr)[-3000:]}")
            time.sleep(1)

    def _head_answers(self) -> bool:
        try:
            with socket.create_connection((LOOPBACK, self.port), timeout=1):
                return True
        except OSError:
            return False

    def _head_alive(self) -> None:
        if self.head is not None and self.head.poll() is not None:
            assert self.head.stderr is not None  # started with stderr=PIPE
            raise RuntimeError(f"the Ray head exited: {self.head.stderr.read().decode()[-2000:]}")

    def _wait_probe(self, probe: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
        """The probe's output, checking each second that the head lives (a dead head fails at once)."""
        limit = time.monotonic() + timeout
        while True:
            try:
                return probe.communicate(timeout=1)
            except subprocess.TimeoutExpired:
                exited = self.head is not None and self.head.poll() is not None
                if exited or time.monotonic() > limit:
                    probe.kill()
                    probe.communicate()
                    self._head_alive()
                    raise RuntimeError(f"the Ray head at {self.address} did not answer within {timeout:.0f}s") from None

    def stop(self) -> None:
        subprocess.run(["docker", "rm", "-f", self.container], capture_output=True, timeout=60)
        self._kill_head()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def _kill_head(self) -> None:
        # The head's graceful shutdown (SIGTERM) took 30-35 s, and a throwaway cluster keeps
        # nothing: its processes are killed, the head's group and then what Ray started in
        # groups of their own within the head's session (its workers), also when the head
        # itself has already exited (a start that timed out can leave its GCS running).
        if self.head is None:
            return
        session = self.head.pid
        if self.head.poll() is None:
            os.killpg(session, signal.SIGKILL)
            self.head.wait(timeout=30)
        for pid in _session_members(session):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.head = None
