"""``agentbed sandbox prune`` removes what a crashed process left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

CRASHING_OWNER = """
import sys
from agentbed.sandbox import open_sandbox
sb = open_sandbox(sys.argv[1])
print(getattr(sb, "id", ""), flush=True)
sb.exec("sleep 300", timeout=600)
"""


def _marked_processes(owner: int) -> list[int]:
    marker = f"AGENTBED_SANDBOX_OWNER={owner}\0".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/environ", "rb") as fh:
                    if marker in fh.read() + b"\0":
                        found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_prune_after_a_crash(backend, agentbed_cmd, container_exists_fn):
    owner = subprocess.Popen([sys.executable, "-c", CRASHING_OWNER, backend], stdout=subprocess.PIPE, text=True)
    container_id = owner.stdout.readline().strip()
    time.sleep(1.0)  # let the command start
    owner.send_signal(signal.SIGKILL)
    owner.wait()

    if backend == "docker":
        assert container_exists_fn(container_id)
    else:
        assert _marked_processes(owner.pid)

    done = subprocess.run([*agentbed_cmd, "sandbox", "prune", "--backend", backend],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.match(r"removed \d+ container\(s\), \d+ process\(es\), \d+ workdir\(s\)", done.stdout)
    if backend == "docker":
        assert container_id[:12] in done.stdout
        assert not container_exists_fn(container_id)
    else:
        time.sleep(0.2)
        assert _marked_processes(owner.pid) == []


def test_prune_keeps_live_sandboxes(sandbox, agentbed_cmd):
    done = subprocess.run([*agentbed_cmd, "sandbox", "prune"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sandbox.exec(["echo", "alive"]).stdout == b"alive\n"


def test_sandbox_verb_needs_a_subverb(agentbed_cmd):
    done = subprocess.run([*agentbed_cmd, "sandbox"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "prune" in done.stderr


def test_check_names_each_backend(agentbed_cmd):
    done = subprocess.run([*agentbed_cmd, "sandbox", "check"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert re.search(r"^local: ", done.stdout, re.M) and re.search(r"^docker: ", done.stdout, re.M)
