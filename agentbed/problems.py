"""Errored episodes as problems a person can act on: each kind of failure once, its count, what to check.

An episode whose provider failed (a refused key, no connection, HTTP 5xx or 429 after the
retries, an overflowing context, a dead local server) ends with status ``error`` (the runner
records the exception); it is never a failed attempt, so every rate leaves it out and says how
many it left out (:func:`excluded_note`). :func:`problems_of` groups a run's errored episodes by
kind, read from the recorded error text (exception types and HTTP statuses, which LangChain's
provider packages carry through), and the CLI prints them as one block at the end of a run
(:func:`problem_lines`); the summary, results.json and the report carry the same list.

``--allow-errors`` (:func:`parse_allowance`) says how many errored episodes a run may have and
still exit 0: a count (``3``) or a share of the run's episodes (``0.05`` or ``5%``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agentbed.errors import UsageError, printable

# The exit status of `agentbed run` when episodes errored beyond --allow-errors (docs/cli.md).
EXIT_ERRORS = 4


@dataclass(frozen=True)
class Kind:
    name: str
    title: str
    check: str
    pattern: re.Pattern[str]


def _kind(name: str, title: str, check: str, *patterns: str) -> Kind:
    return Kind(name, title, check, re.compile("|".join(patterns), re.IGNORECASE))


# In order: the first kind whose pattern matches the error text names it.
KINDS: tuple[Kind, ...] = (
    _kind("local_server", "the local model server died or could not be reached",
          "the server's log in the run directory (local-model-server.log): an out-of-memory kill, a crash",
          r"local model server", r"LocalServerError"),
    _kind("authentication", "the provider refused the credentials (HTTP 401/403)",
          "the provider's key variable (e.g. OPENAI_API_KEY), and that it belongs to the service at the base URL "
          "(OPENAI_BASE_URL)", r"AuthenticationError", r"PermissionDeniedError", r"\bError code: 40[13]\b",
          r"\(HTTP 40[13]\)", r"invalid[_ ]api[_ ]key", r"incorrect api key"),
    _kind("context_overflow", "the conversation outgrew the model's context window",
          "the model's context length against the suite's step budget, or a model with a longer context",
          r"context[_ ]length[_ ]exceeded", r"maximum context length", r"context window", r"exceeds the context",
          r"too many tokens", r"ContextOverflow"),
    _kind("budget", "cut short: the next model call could have crossed --max-cost or --max-tokens",
          "the cost so far (the summary's cost table); --resume --out DIR (with a higher --max-cost) runs "
          "these episodes again", r"\bBudgetExhausted\b"),
    _kind("bad_response", "the provider answered with a malformed, empty or truncated reply after every retry",
          "what answers at the base URL (a proxy, gateway or server version that does not speak the provider's "
          "API) and the provider package's version; --resume --retry-errors runs these episodes again",
          r"\bBadResponse\b"),
    _kind("model_not_found", "the provider does not know the model (HTTP 404)",
          "the model name after 'provider:' and that the base URL serves it", r"NotFoundError",
          r"\bError code: 404\b", r"\(HTTP 404\)", r"model_not_found"),
    _kind("rate_limit", "rate-limited (HTTP 429) after every retry",
          "the provider's rate limits for the key; lower --max-connections or run later",
          r"RateLimitError", r"\bError code: 429\b", r"\(HTTP 429\)"),
    _kind("server_error", "the provider failed (HTTP 5xx) after every retry",
          "the provider's status page (for a server of your own, its log); --resume --retry-errors runs these"
          " episodes again",
          r"InternalServerError", r"\bError code: 5\d\d\b", r"\(HTTP 5\d\d\)", r"ServiceUnavailable"),
    _kind("timeout", "calls timed out after every retry",
          "that the endpoint answers; a slow local model may need fewer --max-connections",
          r"APITimeoutError", r"TimeoutException", r"ReadTimeout", r"TimeoutError", r"timed out"),
    _kind("connection", "no connection to the provider",
          "the base URL (OPENAI_BASE_URL or the provider's), the network and any proxy",
          r"APIConnectionError", r"ConnectError", r"ConnectionError", r"Connection refused", r"RemoteProtocolError",
          r"Name or service not known"),
    _kind("bad_request", "the provider rejected the request (HTTP 400/422)",
          "the generation settings (-M, --temperature, --max-tokens-per-call) and the model's accepted parameters",
          r"BadRequestError", r"UnprocessableEntityError", r"\bError code: 4(00|22)\b", r"\(HTTP 4(00|22)\)"),
)
# the note agentbed.agents.retry adds to an exception the provider's client raised that no kind above names
PROVIDER_NOTE = "agentbed: raised by the provider's client, not the model's answer"
PROVIDER = _kind("provider", "the provider's client failed with an error agentbed has no name for",
                 "the error in the log's footer (agentbed replay LOG): an HTTP status or exception of the provider's "
                 "own; --resume --retry-errors runs these episodes again", re.escape(PROVIDER_NOTE))
SETUP = _kind("setup", "the episode could not be set up on its node (a missing package, data or model)",
              "the command the error names; agentbed list SUITE shows what the suite needs",
              r"^(UsageError|SuiteError|LocalModelMissing)\b",
              r"^\w+: [^\n]*\b(run |install with |needs? )?scripts/[\w-]+[^\n]*\s*$")  # one line naming the set-up
OTHER = Kind("other", "an exception inside the agent or the world (counted as a failed attempt)",
             "the traceback in the episode's log footer (agentbed replay LOG)", re.compile(r"(?!)"))
EXCLUDED_KINDS = frozenset(k.name for k in (*KINDS, PROVIDER, SETUP))
# the note agentbed.agents.retry adds to the error that ends a call's retries, listing every attempt
ATTEMPTS_NOTE = "agentbed: provider call failed after"


_GROUP_RULE = re.compile(r"^[ \t]*(?:\+-[-+ 0-9.]*|\+ Exception Group Traceback.*)$")
_GROUP_MARGIN = re.compile(r"^[ \t]*(?:\| ?)+")


def ungrouped(error: str) -> str:
    """An exception group's traceback (an async SDK's task group raises one around the real error)
    without its box: rules dropped, each line's ``|`` margin removed, so its exceptions and notes
    are read like any other's (session 17's probe: a ConnectionError inside one was kind ``other``,
    a score, and the example line was the box's last rule)."""
    if "Exception Group Traceback" not in error:
        return error
    return "\n".join(_GROUP_MARGIN.sub("", line, count=1) for line in error.splitlines()
                     if not _GROUP_RULE.match(line))


def final_error(error: str) -> str:
    """The last exception of a recorded error (a traceback, maybe of chained exceptions, or one
    line): its type, message and notes, without the note listing every failed attempt. A failure's
    kind is that of the error that ended the episode, not of a retry before it (a 500 after two
    429s is a server error)."""
    tail = ungrouped(error or "").rsplit("Traceback (most recent call last):", 1)[-1]
    lines = [line for line in tail.splitlines() if line.strip() and not line[:1].isspace()
             and not line.startswith(ATTEMPTS_NOTE)]
    return "\n".join(lines)


def classify(error: str) -> Kind:
    """The kind of failure an episode's recorded error text shows: read from its last exception
    (:func:`final_error`); a set-up failure is a one-line error as a whole."""
    final = final_error(error)
    for kind in (*KINDS, PROVIDER):
        if kind.pattern.search(final):
            return kind
    if SETUP.pattern.search(error or ""):
        return SETUP
    return OTHER


def is_errored(record: Mapping[str, Any] | Any) -> bool:
    """Whether an episode errored for a reason outside the agent and its world (a provider, a
    server, a node's set-up): such an episode is not scored, and this is the one definition every
    count, rate, results file, summary, verify, gate, report and ``--retry-errors`` uses. An
    exception raised by the agent's or the world's own code stays a failed attempt. ``record``
    is an index record (a mapping) or an ``EpisodeRecord``."""
    get = record.get if isinstance(record, Mapping) else (lambda name: getattr(record, name, None))
    return get("status") == "error" and classify(str(get("error") or "")).name in EXCLUDED_KINDS


def errored(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in records if is_errored(r)]


def scored(records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The episodes that count toward rates, lazily and uncopied: every one that did not error
    (:func:`is_errored`)."""
    return (r for r in records if not is_errored(r))


def problems_of(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per kind of failure among the episodes with status ``error``, most frequent
    first: ``{"kind", "title", "check", "count", "excluded", "agents", "example_episode",
    "example_log", "example_error"}``; ``excluded`` says whether those episodes are left out of
    the rates (every kind but ``other``)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    kinds: dict[str, Kind] = {}
    for record in (r for r in records if r.get("status") == "error"):
        kind = classify(str(record.get("error") or ""))
        groups[kind.name].append(record)
        kinds[kind.name] = kind
    out = []
    for name, group in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        first = min(group, key=lambda r: str(r.get("episode_id", "")))
        out.append({"kind": name, "title": kinds[name].title, "check": kinds[name].check, "count": len(group),
                    "excluded": name in EXCLUDED_KINDS,
                    "agents": sorted({str(r.get("agent", "?")) for r in group}),
                    "example_episode": first.get("episode_id", "?"), "example_log": first.get("log", ""),
                    "example_error": last_line(str(first.get("error") or ""))})
    return out


def last_line(error: str) -> str:
    """The line of a traceback that says what went wrong (the exception), shortened."""
    lines = [line.strip() for line in ungrouped(error).strip().splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith((ATTEMPTS_NOTE, PROVIDER_NOTE, "File ", "^"))]
    text = (useful or lines or ["?"])[-1]
    # a provider's or agent's message reaches a terminal: no escape sequence, NUL or bidi control of
    # its own (session 17's probe printed NUL and U+202E raw), each written as its escape
    text = printable(text)
    return text if len(text) <= 240 else text[:237] + "..."


def errors_by_agent(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    return dict(sorted(Counter(str(r.get("agent", "?")) for r in errored(records)).items()))


def excluded_note(records: list[Mapping[str, Any]]) -> str:
    """What a table of rates says of the episodes it leaves out."""
    by_agent = errors_by_agent(records)
    if not by_agent:
        return "no episode errored"
    parts = ", ".join(f"{agent} {n}" for agent, n in by_agent.items())
    return f"{sum(by_agent.values())} errored episodes are excluded from every rate ({parts}); see the problems"


def problem_lines(problems: list[dict[str, Any]], total: int) -> list[str]:
    """The terminal's problems block: each kind once, with its count and what to check."""
    if not problems:
        return []
    count = sum(p["count"] for p in problems if p["excluded"])
    raised = sum(p["count"] for p in problems if not p["excluded"])
    lines = [f"problems: {count} of {total} episodes errored (excluded from every rate)"
             + (f"; {raised} raised inside the agent or world (counted as failures)" if raised else "")]
    for p in problems:
        lines.append(f"  {p['kind']}: {p['count']} episodes ({', '.join(p['agents'])}): {p['title']}")
        lines.append(f"    check: {p['check']}")
        lines.append(f"    e.g. {p['example_log'] or p['example_episode']}: {p['example_error']}")
    return lines


def parse_allowance(text: str | None) -> float | int:
    """``--allow-errors``: a count of episodes (``3``), or a share of the run (``0.05``, ``5%``)."""
    if text is None:
        return 0
    value = text.strip()
    try:
        if value.endswith("%"):
            share = float(value[:-1]) / 100.0
        elif re.fullmatch(r"\d+", value):
            return int(value)
        else:
            share = float(value)
    except ValueError:
        raise UsageError(f"--allow-errors {text!r}: expected a count (3) or a share of the episodes "
                         "(0.05 or 5%)") from None
    if not 0.0 <= share <= 1.0:  # also refuses nan
        raise UsageError(f"--allow-errors {text!r}: a share must be between 0 and 1 (0% and 100%)")
    return share


def within_allowance(errors: int, total: int, allowance: float | int) -> bool:
    if isinstance(allowance, int):
        return errors <= allowance
    return errors <= allowance * total
