"""The local backend run by an ordinary user (not root), checked for real as ``nobody``.

As root the backend gives each sandbox its own host uid; an ordinary user's sandbox runs as
that user instead, with a host temp dir as workdir. This runs the package as ``nobody``
with Debian's python3 (the package is copied where ``nobody`` can read it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import agentbed
from agentbed.testing import require

SCRIPT = r"""
import json, os, time
from agentbed.sandbox import Limits, open_sandbox
report = {}
with open_sandbox("local", Limits(processes=32, output_bytes=65536)) as sb:
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
    workdir = sb._host_workdir
report["workdir_removed"] = not os.path.exists(workdir)
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
        shutil.copy(Path(agentbed.__file__).parent / "__init__.py", package / "__init__.py")
        secret = shared / "secret.txt"
        secret.write_text("host secret")
        secret.chmod(0o644)  # readable by anyone on the host: the sandbox still must not see it
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shared / "pkg"), "SECRET_PATH": str(secret),
               "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([runuser, "-u", "nobody", "--", python, "-c", SCRIPT], cwd="/", env=env,
                              capture_output=True, text=True, timeout=180)
    finally:
        shutil.rmtree(shared)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["id"] == "1000"
    assert "root" not in report["root_listing"] and "home" not in report["root_listing"]
    assert (report["flood"], report["timeout"], report["orphan"]) == ("output_limit", "timeout", "nonzero")
    assert (report["network"], report["fork_bomb"], report["after_bomb"]) == ("nonzero", "timeout", "alive")
    assert report["file"] == "hello" and report["secret"] == "nonzero" and report["workdir_removed"]
