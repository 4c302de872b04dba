"""``agentbed sandbox``: prune leftover sandboxes, check which backends can run here."""

from __future__ import annotations

import argparse

from agentbed.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sandbox", help="manage code sandboxes (prune leftovers, check backends)")
    verbs = parser.add_subparsers(dest="sandbox_verb", metavar="VERB")
    prune = verbs.add_parser("prune", help="remove sandboxes whose owner process is gone")
    prune.add_argument("--all", action="store_true", dest="everything",
                       help="remove every agentbed sandbox, also those of running processes")
    prune.add_argument("--backend", choices=("local", "docker", "both"), default="both",
                       help="which backend's leftovers to remove (default: both)")
    check = verbs.add_parser("check", help="say which sandbox backends can run here and what is missing")
    check.add_argument("--limits", action="store_true",
                       help="also run hostile probes in each backend that can run, and say whether its limits hold "
                            "(exit 1 if one does not)")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    if args.sandbox_verb == "prune":
        from agentbed.sandbox.prune import prune

        backends = ("local", "docker") if args.backend == "both" else (args.backend,)
        report = prune(everything=args.everything, backends=backends)
        print(f"removed {len(report.containers)} container(s), {len(report.processes)} process(es), "
              f"{len(report.workdirs)} workdir(s)")
        for item in [*report.containers, *map(str, report.processes), *report.workdirs]:
            print(f"  {item}")
        for note in report.notes:
            print(f"note: {note}")
        return 0
    if args.sandbox_verb == "check":
        from agentbed.sandbox.factory import docker_ready, local_ready

        missing = {"local": local_ready(), "docker": docker_ready()}
        for backend, problem in missing.items():
            print(f"{backend}: {'ready' if problem is None else 'unavailable: ' + problem}")
        print(f"auto: {'docker' if missing['docker'] is None else 'local'}")
        return _check_limits([b for b, problem in missing.items() if problem is None]) if args.limits else 0
    raise UsageError("agentbed sandbox: give a verb, 'prune' or 'check'")


def _check_limits(backends: list[str]) -> int:
    from agentbed.sandbox.probes import probe_limits

    held = True
    for backend in backends:
        for probe in probe_limits(backend):
            held = held and probe.held
            print(f"{backend} {probe.limit}: {'holds' if probe.held else 'DOES NOT HOLD'} ({probe.detail})")
    return 0 if held else 1
