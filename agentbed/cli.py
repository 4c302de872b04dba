"""The ``agentbed`` command line.

Every bad input (unknown suite, task, agent or option; unreadable or malformed file) ends
with one line ``agentbed: error: ...`` naming the culprit and exit status 2, no traceback.
Workloads add their own verbs through the ``agentbed.commands`` entry-point group.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from agentbed.arguments import check_arguments
from agentbed.cli_plugins import add_placeholder, add_plugin_verbs
from agentbed.errors import SuiteError, Terminated, UsageError, WorkerDied
from agentbed.log import LogFormatError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse prints usage too)
        raise UsageError(f"{self.prog}: {message}")


# Built-in verbs by the module that registers them, in ``agentbed --help``'s order. Only the
# module of the verb about to run is imported (``cli_run`` alone pulls in gymnasium and numpy);
# the others are placeholders whose help is read from their source.
BUILTIN_VERBS: dict[str, str] = {
    "list": "agentbed.cli_list", "run": "agentbed.cli_run", "gate": "agentbed.cli_verdicts",
    "report": "agentbed.cli_verdicts", "export": "agentbed.cli_verdicts", "demo": "agentbed.cli_demo",
    "verify": "agentbed.cli_logs", "replay": "agentbed.cli_logs", "branch": "agentbed.cli_logs",
    "view": "agentbed.view.cli",
}


def build_parser(verb: str | None = None, *, every_verb: bool = False) -> argparse.ArgumentParser:
    """The full parser; given the ``verb`` about to run, only that verb is loaded: a verb's module
    imports what it runs on (gymnasium, numpy; a workload: seconds), the others are placeholders
    with their help. ``every_verb`` loads every verb for real (for tools that walk all options)."""
    parser = _Parser(prog="agentbed", description="A testbed for the safety and oversight of tool-using agents.")
    parser.add_argument("--version", action="store_true", help="print agentbed's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    loaded = set(BUILTIN_VERBS.values()) if every_verb else {BUILTIN_VERBS.get(verb or "")}
    for name, module in BUILTIN_VERBS.items():
        if name in sub.choices:  # registered with an earlier verb of the same module
            continue
        if module in loaded:
            importlib.import_module(module).register(sub)  # all of the module's verbs
        else:
            add_placeholder(sub, name, module)
    if verb not in BUILTIN_VERBS:
        add_plugin_verbs(sub, verb, every_verb=every_verb)
    return parser


def _describe_suite_in_help(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """``agentbed run SUITE --help`` also lists the suite's own options (they are not argparse's)."""
    if not {"-h", "--help"} & set(argv) or "run" not in argv:
        return
    at = argv.index("run")
    if at + 1 >= len(argv) or argv[at + 1].startswith("-"):
        return
    from agentbed.cli_list import suite_options_help

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run_parser = sub.choices["run"]
    run_parser.epilog = suite_options_help(argv[at + 1])
    run_parser.formatter_class = argparse.RawDescriptionHelpFormatter


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # a verb given --json answers with one JSON document on stdout, on bad input too
    verb = next((a for a in argv if not a.startswith("-")), "") if "--json" in argv else None
    restore = _terminate_like_ctrl_c()
    from agentbed import cli_json

    cli_json.emitted.clear()
    try:
        return _main(argv, verb)
    finally:
        restore()


def _terminate_like_ctrl_c() -> Callable[[], None]:
    """While a verb runs, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt), so every Ctrl-C
    path (stopping workers, Ray, servers, keeping what finished) runs for it too; returns the undo.
    Only the main thread can set handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum: int, frame: object) -> None:
        raise Terminated()

    Terminated.received = False
    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except (ValueError, OSError):
        return lambda: None

    def undo() -> None:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

    return undo


def _main(argv: list[str], verb: str | None) -> int:
    def fail(message: str, status: int) -> int:
        return _fail(message, status, verb)

    try:
        parser = build_parser(next((a for a in argv if not a.startswith("-")), None))
        _describe_suite_in_help(parser, argv)
        args, extra = parser.parse_known_args(argv)
        if args.version:
            from agentbed import __version__

            print(f"agentbed {__version__}")
            return 0
        if not getattr(args, "func", None):
            parser.print_help()
            return 2 if argv else 0
        if extra and not getattr(args, "accepts_extra", False):
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        check_arguments(parser, args)  # finite, in range, not empty: before the verb does anything
        args.extra = extra
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # inside the try: a closed pipe is caught below, not at shutdown
        return status
    except (UsageError, SuiteError, LogFormatError) as exc:
        return fail(str(exc), 2)
    except BrokenPipeError:  # the reader went away (`agentbed verify DIR | head -1`): stop quietly
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as the shell reports a process killed by it
    except KeyboardInterrupt as exc:
        if isinstance(exc, Terminated) or Terminated.received:
            return fail("terminated (SIGTERM); finished episodes are in the run index (use --resume)", 143)
        return fail("interrupted; finished episodes are in the run index (use --resume)", 130)
    except WorkerDied as exc:  # killed or out of memory: not bad input, not a bug
        return fail(str(exc), EXIT_WORKER_DIED)
    except OSError as exc:  # a path the user named (or its directory) cannot be read or written
        if exc.filename is None:
            return _internal(exc, verb)
        return fail(f"{exc.filename}: {exc.strerror or exc}", 2)
    except Exception as exc:  # noqa: BLE001 - a bug: one line (the traceback on request), never a dump
        return _internal(exc, verb)


EXIT_WORKER_DIED = 75  # sysexits' EX_TEMPFAIL: nothing was wrong with the input; --resume finishes the run


def _internal(exc: BaseException, verb: str | None = None) -> int:
    if os.environ.get("AGENTBED_DEBUG"):
        raise exc
    return _fail(f"internal error (a bug in agentbed; AGENTBED_DEBUG=1 shows the traceback): "
                 f"{type(exc).__name__}: {exc}", 70, verb)


def _fail(message: str, status: int, verb: str | None = None) -> int:
    """One line on stderr (newlines in a message would make it several); under ``--json`` (``verb``
    set) also the verb's one document on stdout: ``ok`` false, the error and the exit status."""
    text = " ".join(message.split()).strip()
    text = text if len(text) <= 2000 else text[:2000] + "..."
    try:
        from agentbed import cli_json

        if verb is not None and not cli_json.emitted:  # a verb that printed its document keeps it alone
            cli_json.emit(verb, {"ok": False, "error": text, "exit_status": status})
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    try:
        print(f"agentbed: error: {text}", file=sys.stderr, flush=True)
    except BrokenPipeError:
        pass
    return status


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    try:
        fileno = sys.stdout.fileno()
    except (OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def run() -> None:
    """The ``agentbed`` command: ``main`` and its exit status. A Ctrl-C that lands after ``main``'s
    own handler (its last lines, or the way out) still exits 130 with no traceback. The hash seed
    was pinned before this module was imported (:mod:`agentbed.hashseed`, from ``agentbed/__init__``)."""
    try:
        status = main()
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


if __name__ == "__main__":
    run()
