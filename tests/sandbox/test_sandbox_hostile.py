"""Hostile code, the same cases on both backends.

Each case must be contained, end with its status label, leave the host unchanged, and leave
no process behind (the ``sandbox`` fixture checks the last after every test, and that the
container or namespace is gone after cleanup).
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from agentbed.sandbox import SandboxError
from agentbed.sandbox.probes import CPU_SPIN, DISK_FILL, FORK_BOMB, HUGE_FILE, MEMORY_HOG


def py(sandbox, code: str, timeout: float = 30, **kw):
    return sandbox.exec([sandbox.python, "-c", code], timeout=timeout, **kw)


def test_fork_bomb(sandbox, limits, sandbox_leftovers):
    result = py(sandbox, FORK_BOMB, timeout=3)
    assert result.status == "timeout"
    assert sandbox_leftovers(sandbox) == []
    # The limit held: the sandbox is still usable and counts its own processes.
    probe = sandbox.exec("for i in $(seq 8); do sleep 5 & done; ls /proc | grep -c '^[0-9]'", timeout=10)
    assert probe.ok and int(probe.stdout) < limits.processes


def test_shell_fork_bomb(sandbox):
    result = sandbox.exec("b() { b | b & }; b; sleep 3", timeout=6)
    assert result.status in {"ok", "timeout", "nonzero"}  # the shell may give up forking first
    assert sandbox.exec("echo alive").stdout == b"alive\n"


def test_memory_hog(sandbox):
    result = py(sandbox, MEMORY_HOG, timeout=60)
    assert result.status == "oom", result
    assert sandbox.exec("echo alive").ok


def test_cpu_spin_past_the_time_limit(sandbox):
    start = time.monotonic()
    result = py(sandbox, CPU_SPIN, timeout=2)
    assert result.status == "timeout" and result.exit_code != 0
    assert time.monotonic() - start < 10


def test_cpu_time_limit(backend, limits):
    from dataclasses import replace

    from agentbed.sandbox import open_sandbox

    with open_sandbox(backend, replace(limits, cpu_seconds=1)) as sb:
        result = sb.exec([sb.python, "-c", CPU_SPIN], timeout=30)
        assert result.status in {"cpu_limit", "killed"}, result  # SIGXCPU, or SIGKILL at the hard limit
        assert result.duration < 10


def test_single_huge_file(sandbox, limits):
    result = sandbox.exec(HUGE_FILE, timeout=30)
    assert result.status == "disk_full", result
    size = int(sandbox.exec("stat -c %s big.bin").stdout)
    assert size <= limits.file_size_bytes


def test_disk_fill_with_many_files(sandbox, limits, backend):
    from agentbed.testing import require

    if backend == "local":
        require(os.geteuid() == 0, "a size limit on the local sandbox's workdir",
                "run as root: the workdir is then a size-limited tmpfs (see docs/sandbox.md)")
    before = os.statvfs("/").f_bavail
    result = sandbox.exec(DISK_FILL, timeout=60)
    assert result.status == "disk_full", result
    used = int(sandbox.exec("du -sk .").stdout.split()[0]) * 1024
    assert used <= limits.disk_bytes + 1024 * 1024
    assert os.statvfs("/").f_bavail >= before - (64 * 1024 * 1024) // os.statvfs("/").f_frsize  # host disk untouched


@pytest.fixture
def loopback_server():
    """A TCP server on all the host's addresses (loopback included) that records every
    connection it accepts."""
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[tuple] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            accepted.append(addr)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


def test_network_egress(sandbox, loopback_server):
    port, accepted = loopback_server
    # The test's own check that the server answers on every address tried, from the host.
    addresses = ["127.0.0.1", *_host_addresses()]
    for address in addresses:
        socket.create_connection((address, port), timeout=2).close()
    time.sleep(0.3)
    assert len(accepted) == len(addresses)
    connect = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\nprint('connected')\n"
    result = py(sandbox, connect, timeout=20)
    assert result.status == "nonzero" and b"connected" not in result.stdout
    for host_ip in _host_addresses():
        result = py(sandbox, connect.replace("127.0.0.1", host_ip), timeout=20)
        assert result.status == "nonzero" and b"connected" not in result.stdout
    dns = py(sandbox, "import socket\nprint(socket.getaddrinfo('example.com', 443))\n", timeout=20)
    assert dns.status == "nonzero" and b"gaierror" in dns.stderr
    time.sleep(0.3)
    assert len(accepted) == len(addresses)  # nothing from the sandbox arrived
    interfaces = sandbox.exec("cat /proc/net/dev").stdout.decode()
    assert [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]


def _host_addresses() -> list[str]:
    """The host's non-loopback IPv4 address, if it has a route anywhere (no packet is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        address = probe.getsockname()[0]
    except OSError:
        return []
    finally:
        probe.close()
    return [] if address.startswith("127.") else [address]


@pytest.fixture
def host_secrets(tmp_path):
    """Secret files where the host keeps them: the user's home, /root, the project checkout."""
    token = "agentbed-secret-" + hashlib.sha256(os.urandom(16)).hexdigest()[:16]
    places = [Path.home() / f".agentbed-test-secret-{os.getpid()}", Path(__file__).parent / f".secret-{os.getpid()}",
              tmp_path / "secret.txt"]
    for place in places:
        place.write_text(token)
    yield token, places
    for place in places:
        place.unlink(missing_ok=True)


def test_reading_host_secrets(sandbox, host_secrets):
    token, places = host_secrets
    for place in places:
        result = sandbox.exec(["cat", str(place)])
        assert result.status == "nonzero" and token.encode() not in result.stdout
    # Everywhere the sandbox can see, but the big read-only trees (/usr, the Python install).
    search = sandbox.exec(f"grep -rsl {token} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr "
                          "--exclude-dir=.venv --exclude-dir=.pyenv --exclude-dir=dev; true", timeout=120)
    assert token.encode() not in search.stdout
    shadow = sandbox.exec(["cat", "/etc/shadow"])
    assert shadow.status == "nonzero" and b"root:" not in shadow.stdout


def test_writing_outside_the_workdir(sandbox, tmp_path):
    target = tmp_path / "planted.txt"
    for path in (target, Path("/etc/agentbed-planted"), Path("/usr/agentbed-planted"), Path("/root/agentbed-planted")):
        sandbox.exec(f"echo pwned > {path}")
        assert not path.exists()
    sandbox.exec("echo pwned > /tmp/planted-in-tmp")
    assert not Path("/tmp/planted-in-tmp").exists()


def test_symlink_escape(sandbox, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("original")
    shadow_hash = _hash("/etc/shadow")
    sandbox.exec(f"ln -s {victim} to_victim; ln -s /etc/shadow to_shadow; ln -s / to_root")
    # Through commands inside: the link resolves in the sandbox's own view.
    sandbox.exec("echo pwned > to_victim; echo pwned > to_shadow; echo pwned > to_root/etc/passwd")
    # Through the host-side file API: it must not follow links onto the host.
    for name in ("to_victim", "to_shadow"):
        with pytest.raises((SandboxError, FileNotFoundError)):
            sandbox.write_file(name, b"pwned")
        with pytest.raises((SandboxError, FileNotFoundError)):
            data = sandbox.read_file(name)
            assert b"root:" not in data and b"original" not in data
            raise SandboxError("read through a link returned no host data")
    assert victim.read_text() == "original"
    assert _hash("/etc/shadow") == shadow_hash


def _hash(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_proc_tricks(sandbox, monkeypatch):
    secret = "proc-secret-" + os.urandom(6).hex()
    os.environ["AGENTBED_PROC_SECRET"] = secret  # set for the host process and its children
    try:
        for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"):
            result = sandbox.exec(["cat", path])
            assert secret.encode() not in result.stdout
        host_pids = len([p for p in os.listdir("/proc") if p.isdigit()])
        inside = sandbox.exec("ls /proc | grep -c '^[0-9]'")
        assert int(inside.stdout) < min(10, host_pids)  # only the sandbox's own processes
        # The project checkout is not there (the local backend shows only the venv and the
        # exec server's directory inside it).
        listing = sandbox.exec(["ls", "-a", str(Path(__file__).resolve().parents[2])])
        assert b"pyproject.toml" not in listing.stdout and b".git" not in listing.stdout
    finally:
        del os.environ["AGENTBED_PROC_SECRET"]


def test_output_flood(sandbox, limits):
    result = sandbox.exec(["yes", "flood"], timeout=30)
    assert result.status == "output_limit" and result.stdout_truncated
    assert len(result.stdout) == limits.output_bytes
    result = sandbox.exec("yes err >&2", timeout=30)
    assert result.status == "output_limit" and result.stderr_truncated and not result.stdout_truncated


def test_orphaned_background_processes(sandbox, sandbox_leftovers):
    result = sandbox.exec("(sleep 2; echo survived > marker) & setsid sh -c 'sleep 300' & nohup sleep 300 >/dev/null 2>&1 & echo started")
    assert result.stdout == b"started\n"
    assert sandbox_leftovers(sandbox) == []
    time.sleep(3)
    assert sandbox.exec(["cat", "marker"]).status == "nonzero"


def test_command_that_ignores_sigterm(sandbox):
    start = time.monotonic()
    result = py(sandbox, "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(300)\n", timeout=1)
    assert result.status == "timeout"
    assert time.monotonic() - start < 10
    result = sandbox.exec("trap '' TERM INT HUP; sleep 300", timeout=1)
    assert result.status == "timeout"
