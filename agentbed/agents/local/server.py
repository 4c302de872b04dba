"""One llama.cpp server per run: started on loopback before the first episode, shared by the
run's workers through an environment variable, stopped when the run ends however it ends.

The server is a child process (``python -m agentbed.agents.local.serve``) in its own session,
so a Ctrl-C at the terminal reaches only ``agentbed``, which then stops it. It also exits by
itself when its parent dies (its stdin closes, its parent pid changes), so even a killed run
leaves no server behind.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from agentbed.agents.local.weights import LocalModelMissing, check_runtime, resolve_weights
from agentbed.errors import UsageError

# model string ("local:NAME") -> base URL of its server, for agents built in worker processes
SERVERS_ENV = "AGENTBED_LOCAL_SERVERS"
LOGS_ENV = "AGENTBED_LOCAL_SERVER_LOGS"  # model string -> its server's log, for errors to name it
PREFIX = "local:"
LOG_NAME = "local-model-server.log"
# threads per server when its settings name none; on a machine shared with other busy processes
# fewer threads than cores decode faster (llama.cpp's threads wait for each other every layer)
THREADS_ENV = "AGENTBED_LOCAL_THREADS"


@dataclass(frozen=True)
class ServerSettings:
    """How the server is sized. ``ctx`` is per slot; ``slots`` requests decode together."""

    ctx: int = 4096
    slots: int = 2
    threads: int | None = None
    ready_timeout: float = 180.0

    @classmethod
    def for_connections(cls, max_connections: int | None) -> ServerSettings:
        """A run's server: it decodes as many sequences together (llama.cpp's slots, continuous
        batching) as the run keeps calls in flight to it (``--max-connections``), up to
        ``MAX_SLOTS``; a slot beyond the calls in flight would only hold context memory."""
        from agentbed.agents.connections import LOCAL_MAX_CONNECTIONS

        wanted = LOCAL_MAX_CONNECTIONS if max_connections is None else max_connections
        return cls(slots=max(1, min(wanted, MAX_SLOTS)))


MAX_SLOTS = 8  # each slot holds its own 4,096-token context


def free_cores() -> int:
    """Cores not already busy: the core count less the last minute's load average, at least one.
    llama.cpp's threads wait for each other at every layer, so a thread on a busy core slows all
    of them (on a 2-core machine beside one busy process, 1 thread decoded at ~3 s a call where 2
    threads took 40-100 s)."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform: assume the cores are free
        load = 0.0
    return max(1, min(cores, cores - round(load)))


class LocalServerError(RuntimeError):
    """The server did not start, or died."""


def server_threads(settings: ServerSettings) -> int:
    """The settings' threads, else ``$AGENTBED_LOCAL_THREADS``, else one per free core."""
    if settings.threads:
        return settings.threads
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return free_cores()
    if not value.isdigit() or int(value) < 1:
        raise UsageError(f"{THREADS_ENV}: {value!r} is not a positive number of threads")
    return int(value)


class LocalServer:
    """A llama.cpp server for one GGUF file; use as a context manager or call start/stop."""

    def __init__(self, model: Path, log_path: Path, settings: ServerSettings = ServerSettings(),
                 alias: str | None = None) -> None:
        self.model, self.log_path, self.settings = Path(model), Path(log_path), settings
        self.alias = alias or self.model.stem
        self.url: str | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root (``.../v1``)."""
        if self.url is None:
            raise LocalServerError("the local model server is not running")
        return self.url + "/v1"

    def start(self, port: int = 0) -> str:
        """Start the server (on ``port``, else a free one) and wait until it answers."""
        check_runtime()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        settings = self.settings
        command = [sys.executable, "-m", "agentbed.agents.local.serve", "--model", str(self.model),
                   "--alias", self.alias, "--ctx", str(settings.ctx), "--slots", str(settings.slots),
                   "--threads", str(server_threads(settings)), "--port", str(port)]
        with self.log_path.open("ab") as log:
            log.write(f"$ {' '.join(command)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                            start_new_session=True)
        atexit.register(self.stop)
        try:
            self.url = self._read_url()
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def _read_url(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        found: list[bytes] = []
        stdout = self.process.stdout
        reader = threading.Thread(target=lambda: found.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.settings.ready_timeout)
        line = found[0] if found else b""
        try:
            return str(json.loads(line)["url"]).rstrip("/")
        except (ValueError, KeyError, TypeError):
            code = self.process.poll()
            state = f"exited with status {code}" if code is not None else \
                f"did not start within {self.settings.ready_timeout:.0f} s"
            raise LocalServerError(f"the local model server for {self.model} {state}; its log: {self.log_path}"
                                   f"{_tail(self.log_path)}") from None

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.settings.ready_timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise LocalServerError(f"the local model server exited while loading; its log: {self.log_path}"
                                       f"{_tail(self.log_path)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200:
                    return
            time.sleep(0.2)
        raise LocalServerError(f"the local model server at {self.url} is not healthy after"
                               f" {self.settings.ready_timeout:.0f} s; its log: {self.log_path}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def restart(self) -> str:
        """Start a dead server again on the same port, so that clients holding its URL (the run's
        workers) reach the new one."""
        port = int(self.url.rsplit(":", 1)[1]) if self.url else 0
        code = self.process.poll() if self.process is not None else None
        with self.log_path.open("ab") as log:
            log.write(f"agentbed: the server exited (status {code}); restarting it on port {port}\n".encode())
        self.stop()
        return self.start(port)

    def stop(self) -> None:
        """Stop the server and wait for it (idempotent)."""
        process, self.process = self.process, None
        atexit.unregister(self.stop)
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin:
                process.stdin.close()  # the server leaves on EOF
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout:
            process.stdout.close()

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return "".join(f"\n  | {line}" for line in text)


def split_model(model: str) -> tuple[str, dict[str, str]]:
    """``local:NAME?max_tokens=64&window=2`` -> ``("local:NAME", {"max_tokens": "64", "window": "2"})``:
    the weights, and the profile's knobs (so a run can change them from the command line)."""
    base, _, query = model.partition("?")
    knobs: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"--model {model!r}: expected KNOB=VALUE after '?', got {item!r}")
        knobs[key] = value
    return base, knobs


def local_models(agents: Iterable[str]) -> list[str]:
    """The distinct local models (``local:NAME``, knobs left out) among agent ids
    (``model:local:NAME``) or model strings: one server each."""
    found = []
    for agent in agents:
        model = split_model(agent.removeprefix("model:"))[0]
        if model.startswith(PREFIX) and model not in found:
            found.append(model)
    return found


def failure_note(model: str) -> str:
    """What a call to a ``local:`` model that failed after its retries adds to its error: the
    server and its log (the episode's problem is that server, not a provider's status page)."""
    model = split_model(model)[0]
    url = json.loads(os.environ.get(SERVERS_ENV) or "{}").get(model, "?")
    log = json.loads(os.environ.get(LOGS_ENV) or "{}").get(model)
    return f"agentbed: the local model server for {model} ({url}) failed this call" + (f"; its log: {log}" if log
                                                                                       else "")


def base_url_for(model: str) -> str:
    """The base URL of the server this run started for ``model`` (a ``local:`` string)."""
    model = split_model(model)[0]
    servers = json.loads(os.environ.get(SERVERS_ENV) or "{}")
    if model not in servers:
        raise UsageError(f"--model {model!r}: no local model server is running for it (`agentbed run` starts"
                         " one; in Python use agentbed.agents.local.serving, or pass base_url=)")
    return servers[model]


@contextlib.contextmanager
def serving(agents: Iterable[str], run_dir: Path, settings: ServerSettings = ServerSettings(), *,
            exit_on_sigterm: bool = True, announce: bool = False) -> Iterator[dict[str, str]]:
    """Start one server per distinct local model among ``agents``, logging to ``run_dir``, and
    make them reachable from this process and its workers (``announce``: each start is one line
    on stderr, :func:`_start_announced`). On the way out (normal end, error,
    Ctrl-C, or SIGTERM, which ``exit_on_sigterm`` turns into SystemExit meanwhile) every server
    is stopped. (A test session passes ``exit_on_sigterm=False``: pytest would report the
    SystemExit as one failed test and go on.)"""
    models = local_models(agents)
    if not models:
        yield {}
        return
    servers: dict[str, LocalServer] = {}
    previous_env, previous_logs = os.environ.get(SERVERS_ENV), os.environ.get(LOGS_ENV)
    restore_sigterm = _exit_on_sigterm() if exit_on_sigterm else (lambda: None)
    try:
        for i, model in enumerate(models):
            name = model.removeprefix(PREFIX)
            path = resolve_weights(name)
            log = run_dir / (LOG_NAME if i == 0 else f"local-model-server-{i}.log")
            server = servers[model] = LocalServer(path, log, settings, alias=Path(name).stem)
            try:
                _start_announced(server, model, announce)
            except LocalServerError as exc:
                raise UsageError(f"--model {model}: {exc}") from None
        urls = {model: server.base_url for model, server in servers.items()}
        os.environ[SERVERS_ENV] = json.dumps({**json.loads(previous_env or "{}"), **urls})
        os.environ[LOGS_ENV] = json.dumps({**json.loads(previous_logs or "{}"),
                                           **{model: str(server.log_path) for model, server in servers.items()}})
        WATCHED.update({model: Watched(server) for model, server in servers.items()})
        yield urls
    finally:
        for model, server in servers.items():
            WATCHED.pop(model, None)
            server.stop()
        for name, previous in ((SERVERS_ENV, previous_env), (LOGS_ENV, previous_logs)):
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous
        restore_sigterm()


def _start_announced(server: LocalServer, model: str, announce: bool) -> None:
    """Start ``server``; with ``announce``, one line on stderr: begun before the model loads (the
    seconds a run would otherwise be silent) and ended with how long it took, or that it failed."""
    def say(text: str, end: str = "\n") -> None:
        if announce:
            print(text, end=end, file=sys.stderr, flush=True)

    began = time.monotonic()
    say(f"agentbed: starting the local model server for {model} ...", end="")
    try:
        server.start()
    except BaseException:
        say(f" failed after {time.monotonic() - began:.1f} s")
        raise
    say(f" ready in {time.monotonic() - began:.1f} s")


@dataclass
class Watched:
    server: LocalServer
    restarts: int = 0


# the servers this process serves, by model string (agentbed.agents.local.watch keeps them alive)
WATCHED: dict[str, Watched] = {}

def _exit_on_sigterm() -> Callable[[], None]:
    """While serving, SIGTERM unwinds like Ctrl-C (:class:`agentbed.errors.Terminated`) so the
    ``finally`` stops the servers; returns
    the undo. Only the main thread can set handlers; elsewhere the servers' own watchdogs (stdin,
    parent pid) are the safety net."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def leave(signum: int, frame: object) -> None:
        from agentbed.errors import Terminated

        raise Terminated()  # unwinds like a Ctrl-C; the CLI exits 143

    previous = signal.signal(signal.SIGTERM, leave)

    def undo() -> None:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

    return undo


__all__ = ["LocalModelMissing", "LocalServer", "LocalServerError", "ServerSettings", "base_url_for", "serving",
           "local_models"]
