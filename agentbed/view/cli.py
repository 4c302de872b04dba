"""The ``agentbed view`` verb."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentbed.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="read, compare and steer runs live in the browser (a local web app)")
    p.add_argument("dir", nargs="?", default="runs", help="a run directory or a folder of runs (default: runs)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; any other "
                   "needs --token)")
    p.add_argument("--port", type=int, default=7575, help="port (default 7575; 0 picks a free one)")
    p.add_argument("--token", help="a secret every request must carry (required beyond loopback)")
    p.add_argument("--approvals", metavar="DIR", help="answer `agentbed run --approver human` questions from "
                   "this folder (the run's --approvals; default for a run directory R: R.approvals if it exists; "
                   "for a folder of runs: every run's R.approvals inside it)")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from agentbed.view.server import ViewServer

    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"{args.dir}: not a directory (a run directory or a folder of runs)")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    from agentbed.view.catalog import is_run

    approvals = Path(args.approvals) if args.approvals else None
    if approvals is not None:
        from agentbed.rendezvous import outside_every_run

        outside_every_run(approvals, given=(root,) if is_run(root) else ())
    beside = root.resolve().with_name(root.resolve().name + ".approvals")
    if approvals is None and beside.is_dir():
        approvals = beside
    # a folder of runs: every run's R.approvals inside it, found as runs start
    under = root if approvals is None and not is_run(root) else None
    try:
        server = ViewServer(root, args.host, args.port, args.token, approvals, under)
    except OSError as exc:
        raise UsageError(f"--host {args.host} --port {args.port}: cannot listen ({exc.strerror or exc})") from None
    print(f"agentbed view: {server.url}  (serving {root}; Ctrl-C stops)", flush=True)
    if approvals is not None:
        print(f"agentbed view: answering approvals from {approvals}", flush=True)
    elif under is not None:
        print(f"agentbed view: answering the approvals of every run under {root} (R.approvals)", flush=True)
    server.serve_in_thread()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("agentbed view: stopped", flush=True)
        return 0
    finally:
        server.shutdown()
        server.server_close()
