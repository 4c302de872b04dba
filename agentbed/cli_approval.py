"""``agentbed run``'s human-approval options (``--approver human``), kept apart from the run verb."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentbed.approval import TIMEOUT_POLICIES, ApproverConfig, approver_set, flagger_of
from agentbed.errors import UsageError
from agentbed.rendezvous import private_folder


def add_approver_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--approver", choices=["human"], help="ask a person before each proposed tool call (in the "
                   "terminal, and in `agentbed view --approvals DIR`); episodes then run one at a time")
    p.add_argument("--approvals", metavar="DIR", help="the folder where questions and decisions meet "
                   "(default: RUN_DIR.approvals beside the run directory, never inside it)")
    p.add_argument("--approval-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long to wait for an answer (default 300)")
    p.add_argument("--approval-timeout-policy", choices=TIMEOUT_POLICIES, default="reject",
                   help="the decision when nobody answers in time (default reject: the episode stops)")
    p.add_argument("--approve-flagged", metavar="SPEC", default="",
                   help="ask only about calls a controller flags: risk>=X (the agent's own risk), or "
                        "module:factory (a callable returning a controller; a non-continue verdict flags)")


def approver_config(args: argparse.Namespace, run_dir: Path) -> ApproverConfig | None:
    if getattr(args, "approver", None) is None:
        if args.approvals or args.approve_flagged:
            raise UsageError("--approvals and --approve-flagged need --approver human")
        return None
    if not args.approval_timeout > 0:  # also refuses nan
        raise UsageError(f"--approval-timeout must be a positive number of seconds, not {args.approval_timeout}")
    folder = Path(args.approvals) if args.approvals else run_dir.with_name(run_dir.name + ".approvals")
    if folder.resolve().is_relative_to(run_dir.resolve()):
        raise UsageError(f"--approvals {folder}: inside the run directory; it must be beside it (the viewer never "
                         "writes into a run)")
    flagger_of(args.approve_flagged)  # a bad spec is an error before anything runs
    return ApproverConfig(folder, args.approval_timeout, args.approval_timeout_policy, args.approve_flagged)


@contextmanager
def asking(config: ApproverConfig | None) -> Iterator[None]:
    """Episodes run inside ask ``config``'s human (nothing changes without one)."""
    if config is None:
        yield
        return
    private_folder(config.folder)  # the run's own: made 0700 here, refused if a link or open to others
    with approver_set(config):
        yield
