"""``agentbed run``'s human-approval options (``--approver human``), kept apart from the run verb."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentbed.approval import TIMEOUT_POLICIES, ApproverConfig, approver_set, flagger_of
from agentbed.errors import UsageError
from agentbed.rendezvous import outside_every_run, private_folder


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
    outside_every_run(folder, given=(run_dir,))
    flagger_of(args.approve_flagged)  # a bad spec is an error before anything runs
    return ApproverConfig(folder, args.approval_timeout, args.approval_timeout_policy, args.approve_flagged)


def resumed_approver(args: argparse.Namespace, recorded: Any, where: str, run_dir: Path) -> ApproverConfig | None:
    """The approver a ``--resume`` runs with: the one run.json recorded (its policy is bound into
    every log's header), so the episodes left are asked as the first ones were. ``--approver human``
    on a run recorded without one, or with another policy, is an error naming the field; without
    ``--approver`` the recorded human is asked again (``--approvals`` may move its folder)."""
    given = approver_config(args, run_dir)
    if not isinstance(recorded, dict):
        if given is not None:
            raise UsageError(f"--approver human contradicts {where}: field 'approver' is not set (the run asks nobody)")
        return None
    kept = ApproverConfig(Path(recorded["folder"]), recorded["timeout"], recorded["on_timeout"], recorded["flagged"])
    if given is None:
        return kept
    for name, option in (("timeout", "--approval-timeout"), ("on_timeout", "--approval-timeout-policy"),
                         ("flagged", "--approve-flagged")):
        if getattr(given, name) != recorded[name]:
            raise UsageError(f"{option} {getattr(given, name)!r} contradicts {where}: field 'approver.{name}' is "
                             f"{recorded[name]!r}")
    return given if args.approvals else kept


@contextmanager
def asking(config: ApproverConfig | None) -> Iterator[None]:
    """Episodes run inside ask ``config``'s human (nothing changes without one)."""
    if config is None:
        yield
        return
    private_folder(config.folder)  # the run's own: made 0700 here, refused if a link or open to others
    with approver_set(config):
        yield
