"""The local backend run by an ordinary user (not root), checked for real as ``nobody``.

As root the backend gives each sandbox its own host uid; an ordinary user's sandbox runs as
that user instead, inside a user namespace of its own whose mount namespace holds the workdir
(a tmpfs of ``disk_bytes``) and whose IPC namespace bounds System V shared memory (issue 31:
it used to be a host temp dir, which took 180 MiB under a 32 MiB limit). This runs the
package as ``nobody`` with Debian's python3 (the package is copied where ``nobody`` can read
it), fills the workdir with ten times its bound and pins System V segments past the memory
limit, and checks the host's ``Shmem`` and temp dir.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import agentbed
from agentbed.testing import require

MiB = 1024 * 1024
LIMITS = dict(processes=32, output_bytes=65536, memory_bytes=256 * MiB, disk_bytes=32 * MiB, file_size_bytes=256 * MiB)

SCRIPT = r"""
import glob, json, os, sys, tempfile, time
from agentbed.sandbox import Limits, open_sandbox
from agentbed.sandbox.probes import SEGMENT, SYSV_SHM_HOG, sysv_shm_total

def shmem():
    with open("/proc/meminfo") as fh:
        return int(dict(line.split(":", 1) for line in fh)["Shmem"].split()[0]) * 1024

limits = Limits(**json.loads(sys.argv[1]))
report = {"shmem_before": shmem()}
temp_dirs = set(glob.glob(os.path.join(tempfile.gettempdir(), "agentbed-sbx-*")))
with open_sandbox("local", limits) as sb:
    report["as_root"] = sb.as_root
    fill = sb.exec("i=0; while [ $i -lt 40 ]; do head -c 8M /dev/zero > fill$i || exit 1; i=$((i+1)); done",
                   timeout=120)
    report["fill"] = fill.status
    report["used"] = int(sb.exec(["du", "-skx", "."]).stdout.split()[0]) * 1024
    report["statfs"] = sb.exec(["stat", "-f", "-c", "%b %S %T", "."]).stdout.decode().split()
    hog = sb.exec([sb.python, "-c", SYSV_SHM_HOG, str(SEGMENT), str(3 * limits.memory_bytes // SEGMENT + 1)],
                  timeout=120)
    report["hog"] = [hog.exit_code, hog.stdout.decode().split()[-3:]]
    report["shm_total"] = sysv_shm_total(sb)
    report["raise"] = sb.exec("echo 4000000000 > /proc/sys/kernel/shmall").exit_code
    report["shmall"] = sb.exec("cat /proc/sys/kernel/shmall").stdout.decode().strip()
    report["caps"] = sb.exec("grep CapEff /proc/self/status").stdout.decode().split()
    report["shmem_full"] = shmem()
    report["new_temp"] = sorted(set(glob.glob(os.path.join(tempfile.gettempdir(), "agentbed-sbx-*"))) - temp_dirs)
    sb.exec("rm -f fill*")
    report["id"] = sb.exec(["id", "-u"]).stdout.decode().strip()
    report["root_listing"] = sb.exec("ls -a /").stdout.decode().split()
    report["flood"] = sb.exec(["yes"]).status
    report["timeout"] = sb.exec("trap '' TERM; sleep 60", timeout=1).status
    sb.exec("(sleep 1; echo x > survived) &")
    time.sleep(2)
    report["orphan"] = sb.exec(["cat", "survived"]).status
    report["network"] = sb.exec([sb.python, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)"]).status
    report["fork_bomb"] = sb.exec([sb.python, "-c", "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass"], timeout=3).status
    report["after_bomb"] = sb.exec(["echo", "alive"]).stdout.decode().strip()
    sb.write_file("a.txt", "hello")
    report["file"] = sb.read_file("a.txt").decode()
    report["secret"] = sb.exec(["cat", os.environ["SECRET_PATH"]]).status
    holder = sb._holder.pid
report["holder_gone"] = not os.path.exists(f"/proc/{holder}")
deadline = time.monotonic() + 15  # the kernel frees an IPC namespace from a work queue
while shmem() - report["shmem_before"] > 48 * 1024 * 1024 and time.monotonic() < deadline:
    time.sleep(0.2)
report["shmem_after"] = shmem()
print(json.dumps(report))
"""


def test_local_backend_as_an_ordinary_user():
    runuser, python = shutil.which("runuser"), "/usr/bin/python3"
    require(os.geteuid() == 0 and runuser is not None and os.path.exists(python),
            "root, runuser and /usr/bin/python3 (to run the sandbox as user nobody)",
            "run the tests as root on Debian (python3 and util-linux are in the base system)")
    require(shutil.which("bwrap") is not None, "bubblewrap", "apt-get install bubblewrap")
    # A directory nobody can read (pytest's own tmp root is private to root).
    shared = Path(tempfile.mkdtemp(prefix="agentbed-nonroot-test-"))
    try:
        shared.chmod(0o755)
        package = shared / "pkg" / "agentbed"
        shutil.copytree(Path(agentbed.__file__).parent / "sandbox", package / "sandbox",
                        ignore=shutil.ignore_patterns("__pycache__"))
        init = Path(agentbed.__file__)  # the package's __init__ and the modules it imports, read from it
        for module in ["__init__.py", *(f"{name}.py" for name in re.findall(r"^from agentbed\.(\w+) import",
                                                                           init.read_text(), re.M))]:
            shutil.copy(init.parent / module, package / module)
        secret = shared / "secret.txt"
        secret.write_text("host secret")
        secret.chmod(0o644)  # readable by anyone on the host: the sandbox still must not see it
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shared / "pkg"), "SECRET_PATH": str(secret),
               "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([runuser, "-u", "nobody", "--", python, "-c", SCRIPT, json.dumps(LIMITS)], cwd="/", env=env,
                              capture_output=True, text=True, timeout=180)
    finally:
        shutil.rmtree(shared)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["id"] == "1000"
    assert "root" not in report["root_listing"] and "home" not in report["root_listing"]
    assert (report["flood"], report["timeout"], report["orphan"]) == ("output_limit", "timeout", "nonzero")
    assert (report["network"], report["fork_bomb"], report["after_bomb"]) == ("nonzero", "timeout", "alive")
    assert report["file"] == "hello" and report["secret"] == "nonzero" and report["holder_gone"]
    assert report["as_root"] is False and report["caps"] == ["CapEff:", "0000000000000000"]
    # the workdir: a tmpfs of disk_bytes, full at its bound, nothing written to the host's temp dir
    disk, memory = LIMITS["disk_bytes"], LIMITS["memory_bytes"]
    assert report["fill"] == "disk_full" and report["used"] <= disk + MiB, report
    assert int(report["statfs"][0]) * int(report["statfs"][1]) == disk and report["statfs"][2] == "tmpfs", report
    assert report["new_temp"] == [], report
    # System V shared memory: refused (ENOSPC) at half the memory limit, which the sandbox cannot raise
    code, (word, errno, held) = report["hog"]
    assert (code, word, errno) == (3, "refused", "28") and int(held) <= memory // 2, report
    assert report["shm_total"] == int(held) and report["raise"] != 0, report
    assert int(report["shmall"]) * os.sysconf("SC_PAGE_SIZE") == memory // 2, report
    # the host: at most one workdir and the segments held while full, all of it given back after
    slack = 48 * MiB
    assert report["shmem_full"] - report["shmem_before"] <= disk + memory // 2 + slack, report
    assert report["shmem_after"] - report["shmem_before"] <= slack, report
