"""What bounds the local sandbox's storage that no per-process limit covers: its workdir and
System V IPC.

Each local sandbox has a *holder*: a process that owns a private mount namespace, in which
the workdir is a tmpfs of ``disk_bytes``, and a private IPC namespace, whose System V limits
are set from ``memory_bytes`` before any sandboxed code runs (see :func:`ipc_sysctls`). Every
session of the sandbox enters both namespaces (``nsenter``) and starts bubblewrap there, so
the workdir and any System V segments or queues outlive a killed session and end with the
holder. Run by root, the holder is ``unshare --mount --ipc`` and its namespaces belong to the
host's root: the sandbox's uid can neither write the limits nor reach the mount. Run by an
ordinary user, it is ``unshare --user --map-root-user --mount --ipc``: that user is root of
a user namespace of its own there, which is what lets it mount a sized tmpfs and set its IPC
namespace's limits; the sandbox inside cannot change them (bubblewrap drops every
capability, its /proc/sys is read-only and it cannot make user namespaces of its own).

Where the kernel or the machine refuses one of these steps, the sandbox does not start: the
holder names the step, and :class:`~agentbed.sandbox.base.SandboxUnavailable` carries it as
one line. Nothing falls back to an unbounded workdir or IPC namespace.
"""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Sequence

from agentbed.sandbox.base import Limits, SandboxUnavailable

PAGE = os.sysconf("SC_PAGE_SIZE")
MSGMNB = 16384  # bytes one System V message queue may hold (the kernel's default, set explicitly)
MSGMNI_MAX = 32000  # the kernel's default number of queues per IPC namespace
SYSCTL_DIR = "/proc/sys/kernel"  # seen through /proc, a sysctl of the IPC namespace of the one reading it
UNSHARE = "unshare"

# Run by unshare in the new namespaces. Arguments: hold|probe, the workdir's size, extra tmpfs
# options, how many NAME=VALUE sysctls follow, the sysctls, then host paths to stage (root only).
_HOLDER_SCRIPT = r"""
set -u
fail() { echo "missing: $1"; exit 1; }
mode=$1; disk=$2; owner=$3; count=$4; shift 4
mount -t tmpfs -o mode=0755,size=1m agentbed-stage /mnt 2>/dev/null \
  || fail "a tmpfs mount in the sandbox's own mount namespace"
mkdir /mnt/work
mount -t tmpfs -o "mode=0700,size=$disk$owner" agentbed-work /mnt/work 2>/dev/null \
  || fail "a tmpfs mount of $disk bytes for the workdir"
while [ "$count" -gt 0 ]; do
  name=${1%%=*}; value=${1#*=}; shift; count=$((count-1))
  { echo "$value" > "$SYSCTL_DIR/$name"; } 2>/dev/null \
    && [ "$(cat "$SYSCTL_DIR/$name" 2>/dev/null)" = "$value" ] \
    || fail "kernel.$name cannot be set in the sandbox's own IPC namespace ($SYSCTL_DIR/$name)"
done
i=0
for src in "$@"; do
  mkdir "/mnt/ro$i"; mount --bind "$src" "/mnt/ro$i" || fail "a bind mount of $src"; i=$((i+1))
done
echo ready
[ "$mode" = hold ] && exec sleep infinity
exit 0
"""

ROOT_HINT = "run as root, or allow unprivileged user namespaces"


def ipc_sysctls(limits: Limits) -> dict[str, int]:
    """System V limits of a sandbox's IPC namespace: shared memory in all at most half of
    ``memory_bytes`` (``shmall`` pages, and no segment larger), message queues in all at most
    the other half (``msgmni`` queues of ``msgmnb`` bytes, at most the kernel's default 32,000
    queues). Half, so that in a memory cgroup (Docker), which counts touched segments, what
    they pin never starves the exec server. Semaphores keep the kernel's small defaults."""
    cap = ipc_cap(limits)
    return {"shmmax": cap, "shmall": cap // PAGE, "msgmnb": MSGMNB,
            "msgmni": max(1, min(MSGMNI_MAX, cap // MSGMNB))}


def ipc_cap(limits: Limits) -> int:
    """Bytes of System V shared memory a sandbox may hold in all (and, apart, of queued messages)."""
    return max(1, limits.memory_bytes // 2 // PAGE) * PAGE


def holder_argv(as_root: bool, mode: str, limits: Limits, uid: int | None = None,
                stage: Sequence[str] = ()) -> list[str]:
    """The holder's command: unshare of a mount and an IPC namespace (plus, for an ordinary
    user, a user namespace whose root is that user) running the holder script."""
    namespaces = ["--mount", "--ipc"] if as_root else ["--user", "--map-root-user", "--mount", "--ipc"]
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    sysctls = [f"{name}={value}" for name, value in ipc_sysctls(limits).items()]
    return [UNSHARE, *namespaces, "--propagation", "private", "--", "/bin/sh", "-c",
            f"SYSCTL_DIR={SYSCTL_DIR}\n{_HOLDER_SCRIPT}", "sh", mode, str(limits.disk_bytes), owner,
            str(len(sysctls)), *sysctls, *stage]


def refusal(as_root: bool, detail: str) -> str:
    """The one line a sandbox that cannot bound its workdir and System V IPC gives instead."""
    detail = " ".join(detail.split())[:300] or "no answer"
    if as_root:
        return (f"the local sandbox cannot bound its workdir and System V IPC here ({detail}); in a Docker "
                "container, run it with --cap-add SYS_ADMIN --security-opt seccomp=unconfined "
                "--security-opt systempaths=unconfined (see docs/sandbox.md)")
    return (f"the local sandbox run by an ordinary user bounds its workdir and System V IPC in a user, mount "
            f"and IPC namespace of its own, and this machine refused it ({detail}): {ROOT_HINT}; in a Docker "
            "container, run it with --security-opt seccomp=unconfined --security-opt systempaths=unconfined "
            "(see docs/sandbox.md)")


def start_holder(argv: list[str], env: dict[str, str], as_root: bool) -> subprocess.Popen[bytes]:
    """Start the holder and wait for its ``ready``; SandboxUnavailable naming what failed."""
    try:
        holder = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, start_new_session=True)
    except OSError as exc:
        raise SandboxUnavailable(refusal(as_root, f"{os.path.basename(argv[0])}: {exc.strerror}")) from exc
    assert holder.stdout is not None and holder.stderr is not None
    ready, _, _ = select.select([holder.stdout], [], [], 15)
    line = holder.stdout.readline().decode(errors="replace").strip() if ready else ""
    holder.stdout.close()
    if line != "ready":
        holder.kill()
        said = holder.stderr.read().decode(errors="replace").strip().splitlines()
        holder.wait()
        holder.stderr.close()
        raise SandboxUnavailable(refusal(as_root, line.removeprefix("missing: ") or (said[-1] if said else "")))
    holder.stderr.close()
    return holder


def bounds_refused(as_root: bool, limits: Limits | None = None) -> str | None:
    """None when this machine lets a sandbox bound its workdir and System V IPC, else the
    one-line reason (the holder's steps, run once and ended: a few milliseconds)."""
    argv = holder_argv(as_root, "probe", limits or Limits())
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return refusal(as_root, f"{os.path.basename(argv[0])}: {exc}")
    lines = done.stdout.decode(errors="replace").split()
    if done.returncode == 0 and lines[-1:] == ["ready"]:
        return None
    said = done.stdout.decode(errors="replace").strip() or done.stderr.decode(errors="replace").strip()
    return refusal(as_root, said.splitlines()[-1].removeprefix("missing: ") if said else "")
