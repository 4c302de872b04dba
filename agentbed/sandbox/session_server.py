"""The local sandbox's exec server: PID 1 of its namespaces, one per sandbox.

Runs *inside* the sandbox (standard library only, next to capture.py) so a command costs a
fork and exec instead of building namespaces and mounts again. Requests and replies travel
on stdin/stdout: one JSON line, then raw bytes (the command's stdin; its stdout and stderr).
After every command it SIGKILLs every other process of the namespace (``kill(-1)`` from
PID 1 spares only itself) and reaps them, so nothing a command started outlives it.

Sandboxed code runs as the same uid, so the server makes itself non-dumpable (no ptrace, no
/proc/1/mem or /proc/1/fd) and, as PID 1, receives only the signals it has handlers for;
its handlers do nothing. The host keeps its own deadline and kills the whole namespace if
the server does not answer in time.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import CappedBuffer, pump  # noqa: E402 - the server runs as a script

PR_SET_DUMPABLE = 4


def harden() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda *_: None)  # handlers, unlike SIG_IGN, are reset for children


def kill_everything_else(proc: subprocess.Popen) -> None:
    """SIGKILL every other process of the namespace, again until none is left, and reap."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if proc.returncode is None:
            proc.wait()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return
        time.sleep(0.001)


def read_exactly(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("host closed the request stream")
    return data


def run(request: dict, stdin: bytes | None) -> tuple[dict, bytes, bytes]:
    out, err = CappedBuffer(request["output"]), CappedBuffer(request["output"])
    start = time.monotonic()
    deadline = start + request["timeout"]
    try:
        proc = subprocess.Popen(request["argv"], stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=request["cwd"])
    except (OSError, ValueError) as exc:  # as a shell would: 127 not found, 126 cannot run
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)  # ValueError: a NUL byte
        message = f"{request['argv'][0]!r}: {reason}\n".encode(errors="replace")
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        return {"code": code, "reason": "", "out": 0, "err": len(message),
                "out_truncated": False, "err_truncated": False}, b"", message
    reason = pump(proc, stdin, deadline, out, err, until_exit=True)
    if not reason:
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.001))
        except subprocess.TimeoutExpired:
            reason = "timeout"
    kill_everything_else(proc)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    reply = {"code": code, "reason": reason, "out": len(out.value()), "err": len(err.value()),
             "out_truncated": out.truncated, "err_truncated": err.truncated}
    return reply, out.value(), err.value()


def serve() -> None:
    harden()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    replies.write(b'{"ready": true}\n')
    replies.flush()
    while True:
        line = requests.readline()
        if not line:
            return
        request = json.loads(line)
        stdin = read_exactly(requests, request["stdin"]) if request["stdin"] is not None else None
        reply, out, err = run(request, stdin)
        replies.write(json.dumps(reply).encode() + b"\n" + out + err)
        replies.flush()


if __name__ == "__main__":
    serve()
