"""Remove sandboxes that a crashed process left behind.

Containers carry the label ``agentbed.sandbox`` and the owner ``<hostname>:<pid>``; local
sandboxes' host-side processes (holders and sessions) carry ``AGENTBED_SANDBOX_OWNER=<pid>``
in their environment. A local workdir is a tmpfs that ends with its holder; earlier versions
left host directories named ``agentbed-sbx-<pid>-*`` for non-root users, removed here too. A
sandbox whose owner process is gone is an orphan; ``everything=True`` removes live ones too.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agentbed.sandbox.base import SandboxUnavailable
from agentbed.sandbox.local import OWNER_VAR, UID_RANGE, WORKDIR_PREFIX, kill_uid, remove_tree


@dataclass
class PruneReport:
    containers: list[str] = field(default_factory=list)
    processes: list[int] = field(default_factory=list)
    workdirs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _orphaned(owner: int, everything: bool) -> bool:
    return everything or (owner != os.getpid() and not pid_alive(owner))


def prune_containers(everything: bool, report: PruneReport) -> None:
    from agentbed.sandbox.docker_backend import LABEL, OWNER_LABEL, connect

    try:
        client = connect(timeout=5)
    except SandboxUnavailable as exc:
        report.notes.append(f"containers not checked: {exc}")
        return
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        owner_host, _, owner_pid = container.labels.get(OWNER_LABEL, "").rpartition(":")
        dead_owner = owner_host == host and owner_pid.isdigit() and _orphaned(int(owner_pid), False)
        if everything or dead_owner:  # a live owner's container may still be starting
            container.remove(force=True)
            report.containers.append(container.short_id)
    client.close()


def prune_local(everything: bool, report: PruneReport) -> None:
    marker = re.compile(rb"(?:^|\0)" + OWNER_VAR.encode() + rb"=(\d+)(?:\0|$)")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                found = marker.search(fh.read())
        except OSError:
            continue
        if found and _orphaned(int(found.group(1)), everything):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                report.processes.append(int(entry.name))
            except ProcessLookupError:
                pass
    if everything and os.geteuid() == 0:
        uids = {os.stat(e.path).st_uid for e in os.scandir("/proc") if e.name.isdigit() and _exists(e.path)}
        for uid in sorted(u for u in uids if UID_RANGE[0] <= u < UID_RANGE[1]):
            kill_uid(uid)
            report.notes.append(f"killed the processes of sandbox uid {uid}")
    owner = re.compile(re.escape(WORKDIR_PREFIX) + r"(\d+)-")
    for path in Path(tempfile.gettempdir()).glob(WORKDIR_PREFIX + "*"):
        match = owner.match(path.name)
        if match and _orphaned(int(match.group(1)), everything):
            remove_tree(str(path))
            report.workdirs.append(str(path))


def _exists(path: str) -> bool:
    try:
        os.stat(path)
    except OSError:
        return False
    return True


def prune(everything: bool = False, backends: tuple[str, ...] = ("local", "docker")) -> PruneReport:
    report = PruneReport()
    if "local" in backends:
        prune_local(everything, report)
    if "docker" in backends:
        prune_containers(everything, report)
    return report
