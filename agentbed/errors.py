"""Errors the CLI reports as one line with exit status 2 (bad input), never a traceback."""

import traceback


class UsageError(Exception):
    """Bad input from a user: an option, a file, a field. The message names the culprit."""


class SuiteError(LookupError):
    """Unknown suite, task, agent or option (the CLI turns it into exit status 2). It lives here,
    not in :mod:`agentbed.suite`, so the CLI can catch it without importing gymnasium and numpy."""


class WorkerDied(RuntimeError):
    """A process-pool worker ended without answering (killed, out of memory, a crash in native
    code): not bad input and not a bug in agentbed; the run's recorded episodes are kept."""


def failure_text(exc: BaseException) -> str:
    """What an episode records as its error: a usage error's one line (bad input, or data this
    machine lacks, with the command that installs it; also any exception with a true
    ``one_line`` attribute, e.g. a sandbox backend that cannot run here), else the traceback."""
    if isinstance(exc, UsageError) or getattr(exc, "one_line", False) is True:
        return f"{type(exc).__name__}: {exc}"
    return "".join(traceback.format_exception(exc))
