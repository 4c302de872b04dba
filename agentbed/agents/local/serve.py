"""The server process: llama.cpp's own OpenAI-compatible HTTP server (through xllamacpp) on
loopback, started by :class:`agentbed.agents.local.server.LocalServer`.

It prints one JSON line ``{"url": ...}`` on stdout once the model is loaded and the port is
bound, then serves until its parent closes its stdin, the parent dies, or a signal ends it.
llama.cpp's own log goes to stderr, which the parent points at the run directory.

    python -m agentbed.agents.local.serve --model FILE [--ctx 4096] [--slots 2] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m agentbed.agents.local.serve")
    p.add_argument("--model", required=True, help="a GGUF file")
    p.add_argument("--alias", help="the model name the server reports")
    p.add_argument("--ctx", type=int, default=4096, help="context tokens per slot")
    p.add_argument("--slots", type=int, default=2, help="requests decoded together")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--port", type=int, default=0, help="0: a free port chosen by the system")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    parent = os.getppid()
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    if args.alias:
        params.model_alias = args.alias
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.ctx * args.slots  # llama.cpp splits the context among the slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cache_ram_mib = 256  # the prompt cache shares a small machine
    # llama.cpp first loads the model a second time, without its weights, to fit the context to the
    # free device memory: it changes nothing for a 300 MiB model on CPU and cost ~0.85 s of CPU and
    # 3-5 s of wall per start on a busy machine
    params.fit_params = False
    server = xllamacpp.Server(params)
    ready = json.dumps({"url": server.listening_address, "pid": os.getpid()})
    print(f"agentbed: serving {ready}", file=sys.stderr, flush=True)  # the log says which process it was
    print(ready, flush=True)

    closed = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.buffer.read()  # returns at EOF: the parent closed the pipe or died
        closed.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    # the stdin watcher wakes this at once (a stop no longer waits out a poll interval); the parent
    # pid is looked at every half second
    while not closed.wait(0.5) and os.getppid() == parent:
        pass
    # llama.cpp's server threads are not ours to join: leave at once, the OS frees the model.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
