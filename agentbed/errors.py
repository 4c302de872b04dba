"""Errors the CLI reports as one line with exit status 2 (bad input), never a traceback."""

import os
import re
import traceback
from urllib.parse import parse_qsl, urlsplit

# Environment variables whose values are credentials (OPENAI_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY...)
_SECRET_VAR = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$|_KEY_|_TOKEN_")
_MIN_SECRET = 8  # shorter values ("test", "local") would redact ordinary words


class UsageError(Exception):
    """Bad input from a user: an option, a file, a field. The message names the culprit.

    ``evidence``: files the message names as the whole story behind its one line (a failing
    reference run's output); ``agentbed run`` copies them into the run directory it was given and
    names the copies instead, so the evidence stays with the refused run."""

    evidence: tuple[str, ...] = ()


class SuiteError(LookupError):
    """Unknown suite, task, agent or option (the CLI turns it into exit status 2). It lives here,
    not in :mod:`agentbed.suite`, so the CLI can catch it without importing gymnasium and numpy."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's or a service manager's stop), handled as a Ctrl-C is: workers, Ray
    and servers are shut down, what finished is kept, and the CLI exits 143 (128 + SIGTERM).

    ``received`` says one was raised: Ray's core turns an exception a signal handler raises inside
    its calls into a plain KeyboardInterrupt, which must still exit 143."""

    received = False

    def __init__(self, *args: object) -> None:
        Terminated.received = True
        super().__init__(*args)


class BudgetExhausted(RuntimeError):
    """A model call refused because the run's ``--max-cost`` / ``--max-tokens`` could be crossed
    by it: the episode is cut short (an errored episode of kind ``budget``, never a score)."""


class WorkerDied(RuntimeError):
    """A process-pool worker ended without answering (killed, out of memory, a crash in native
    code): not bad input and not a bug in agentbed; the run's recorded episodes are kept."""


def episode_failure(exc: BaseException) -> bool:
    """Whether an exception raised inside an episode is that episode's own failure, recorded as an
    errored episode: everything but a stop of the process (Ctrl-C, SIGTERM's :class:`Terminated`)
    and a generator's close. A ``SystemExit`` from a library or a provider's own ``BaseException``
    (an SDK's cancellation) is the episode's: raised through, it killed the run, or a process-pool
    worker, and lost the episode on every resume (session 17's probe)."""
    return not isinstance(exc, KeyboardInterrupt | GeneratorExit)


def failure_text(exc: BaseException) -> str:
    """What an episode records as its error: a usage error's one line (bad input, or data this
    machine lacks, with the command that installs it; also any exception with a true
    ``one_line`` attribute, e.g. a sandbox backend that cannot run here), else the traceback.

    Never raises and is always UTF-8: an exception whose attributes or ``str()`` raise is named by
    its type, and a lone surrogate (bytes a provider's SDK decoded with ``surrogateescape``) is
    written as its escape, so the log's footer keeps the episode's own error."""
    try:
        if isinstance(exc, UsageError) or getattr(exc, "one_line", False) is True:
            text = f"{type(exc).__name__}: {exc}"
        else:
            text = "".join(traceback.format_exception(exc))
    except Exception as inner:  # noqa: BLE001 - the failure is recorded whatever the exception does
        text = f"{type(exc).__module__}.{type(exc).__qualname__}: (the exception could not be formatted: " \
               f"{type(inner).__name__} while reading it)"
    return redact(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def printable(text: str, *, lines: bool = False) -> str:
    """Text from a run (a model's call, an observation, a provider's message) as a terminal may
    show it: every character that is not printable (an escape sequence's ESC, NUL, a carriage
    return, a bidi override) written as its Python escape, so it is seen, never obeyed; with
    ``lines``, line breaks are kept as they are."""
    return "".join(c if c.isprintable() or (lines and c == "\n") else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def redact(text: str) -> str:
    """``text`` without the value of any credential in the environment (a provider may echo the key
    it refused): each becomes ``[redacted $NAME]``, before anything is written to a log. A URL in
    any variable (``OPENAI_BASE_URL=https://user:pass@host/v1?api-key=...``, a proxy's) is a
    credential in its password and its query's values: those are redacted too (session 18)."""
    for name, value in os.environ.items():
        for secret in _secrets_of(name, value):
            if secret in text:
                text = text.replace(secret, f"[redacted ${name}]")
    return text


def _secrets_of(name: str, value: str) -> list[str]:
    if _SECRET_VAR.search(name.upper()):
        found = [value]
    elif "://" in value:
        try:
            parts = urlsplit(value.strip())
            found = [parts.password or ""] + [v for _, v in parse_qsl(parts.query)]
        except ValueError:  # not a URL after all
            found = []
    else:
        found = []
    return [s for s in found if len(s) >= _MIN_SECRET]
