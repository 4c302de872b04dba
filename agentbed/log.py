"""Trajectory logs: one JSONL file per episode, each record chained by SHA-256.

A record is one line of compact JSON whose last member is ``"hash"``: the SHA-256 of the
line's bytes up to that member, which include ``"prev"``, the previous record's hash. Any
change to any byte of a record changes its hash or breaks the chain at that record, so
:func:`verify_log` names the first record whose bytes changed. The layout is described by
``agentbed/schema/trajectory.schema.json``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.seal import log_key, mac, mac_ok

SCHEMA_ID = "agentbed.trajectory/1"
GENESIS = "0" * 64
RECORD_TYPES = ("header", "step", "control", "footer")
_HASH_SUFFIX_LEN = len(',"hash":""}') + 64
_MAC_SUFFIX_LEN = len(',"mac":""}') + 64


class LogFormatError(ValueError):
    """A log file is unreadable or not an agentbed trajectory."""


def encode_action(action: str | bytes) -> str | dict[str, str]:
    """Actions are stored verbatim; bytes that are not UTF-8 are kept as base64."""
    if isinstance(action, str):
        try:
            action.encode("utf-8")
            return action
        except UnicodeEncodeError:
            action = action.encode("utf-8", "surrogatepass")
    return {"base64": base64.b64encode(bytes(action)).decode("ascii")}


def decode_action(stored: str | dict[str, str]) -> str | bytes:
    if isinstance(stored, str):
        return stored
    return base64.b64decode(stored["base64"])


def _seal(body: dict[str, Any], prev: str, key: bytes | None = None) -> tuple[str, str]:
    """The record's line and hash. With ``key`` (footers only) a ``"mac"`` member, the HMAC of
    the record's bytes up to it (which include ``prev``, so the whole chain), precedes the hash."""
    body["prev"] = prev
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)
    if key is not None:
        text = text[:-1] + ',"mac":"' + mac(key, text.encode("utf-8")) + '"}'
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text[:-1] + ',"hash":"' + digest + '"}', digest


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_MADE_DIRS: set[Path] = set()


def forget_dirs(root: Path) -> None:
    """Forget the directories made under ``root`` (which its owner removed): a writer there again
    makes them again, and a process that makes and removes many never holds them all."""
    _MADE_DIRS.difference_update([d for d in _MADE_DIRS if d.is_relative_to(root)])


class TrajectoryWriter:
    """Appends chained records to one episode's log file.

    Records are buffered and written in batches: a short episode costs one open and one
    write, since file operations dominate the cost of a trivial episode. A record written
    more than ``FLUSH_SECONDS`` after the last write goes out at once, so a slow episode's
    steps can be followed as they happen (``agentbed view``). A log is complete
    when it ends with a footer and the run index lists it with its digest; a crash can leave
    a log without a footer, which ``verify`` reports and ``--resume`` overwrites.
    """

    FLUSH_RECORDS = 32
    FLUSH_SECONDS = 0.5  # a slow episode (a model's turn) reaches the disk, and a live viewer, at once

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.parent not in _MADE_DIRS:  # one mkdir per directory, not per episode
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _MADE_DIRS.add(self.path.parent)
        self._file = os.fspath(self.path)
        self._fd: int | None = None
        self._pending: list[str] = []
        self._open = True
        self.last_hash = GENESIS
        self.records = 0
        self._key = log_key()  # with a key the footer carries an HMAC (agentbed.seal)
        self._flushed_at = time.monotonic()

    def write(self, record_type: str, **fields: Any) -> str:
        if not self._open:
            raise ValueError(f"{self.path} is closed")
        key = self._key if record_type == "footer" else None
        line, self.last_hash = _seal({"type": record_type, **fields}, self.last_hash, key)
        self._pending.append(line)
        self.records += 1
        if len(self._pending) >= self.FLUSH_RECORDS or time.monotonic() - self._flushed_at >= self.FLUSH_SECONDS:
            self._flush()
        return self.last_hash

    def _flush(self) -> None:
        if self._fd is None:
            self._fd = os.open(self._file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._flushed_at = time.monotonic()
        if self._pending:
            data = ("\n".join(self._pending) + "\n").encode("utf-8")
            self._pending.clear()
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]

    def close(self) -> None:
        if self._open:
            self._flush()
            os.close(self._fd)  # type: ignore[arg-type]
            self._fd, self._open = None, False

    def abandon(self) -> None:
        if self._open:
            if self._fd is not None:
                os.close(self._fd)
            self._fd, self._open = None, False
            self._pending.clear()
            Path(self._file).unlink(missing_ok=True)


class MemoryWriter(TrajectoryWriter):
    """A writer that keeps the lines in memory (used by replay to compare byte for byte)."""

    def __init__(self) -> None:  # noqa: D107 - no file
        self.lines: list[str] = []
        self.last_hash = GENESIS
        self.records = 0
        self.path = Path("<memory>")

    def write(self, record_type: str, **fields: Any) -> str:
        line, self.last_hash = _seal({"type": record_type, **fields}, self.last_hash)
        self.lines.append(line)
        self.records += 1
        return self.last_hash

    def close(self) -> None:
        pass

    def abandon(self) -> None:
        pass


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    records: int
    first_bad: int | None = None  # 1-based line number of the first record whose bytes changed
    reason: str = ""
    digest: str = ""
    mac: str = ""  # the footer's HMAC: "checked" (with the key), "unchecked" (no key), "" (none)

    def message(self, path: str) -> str:
        if self.ok:
            return f"{path}: ok ({self.records} records, last hash {self.digest[:16]})"
        return f"{path}: record {self.first_bad} changed: {self.reason}"


def _footer_mac(line: bytes) -> tuple[bytes, str] | None:
    """(bytes the footer's HMAC covers, the HMAC) when the record carries one."""
    body = line[:-_HASH_SUFFIX_LEN] + b"}"
    if len(body) <= _MAC_SUFFIX_LEN or body[-_MAC_SUFFIX_LEN:-66] != b',"mac":"':
        return None
    return body[:-_MAC_SUFFIX_LEN] + b"}", body[-66:-2].decode("ascii", "replace")


def verify_lines(lines: list[bytes], expected_digest: str | None = None, key: bytes | None = None) -> VerifyResult:
    """Check every record's hash and the chain; with ``key``, also the footer's HMAC (a log
    without one fails: whoever re-chained it could have dropped it)."""
    prev = GENESIS
    record: dict[str, Any] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip(b"\n")
        if len(line) <= _HASH_SUFFIX_LEN or not line.endswith(b'"}') or line[-_HASH_SUFFIX_LEN:-66] != b',"hash":"':
            return VerifyResult(False, len(lines), number, "no hash member at the end of the record")
        claimed = line[-66:-2].decode("ascii", "replace")
        body = line[:-_HASH_SUFFIX_LEN] + b"}"
        if hashlib.sha256(body).hexdigest() != claimed:
            return VerifyResult(False, len(lines), number, "content does not match its hash")
        try:
            record = json.loads(body)
        except (ValueError, RecursionError):  # bad JSON or UTF-8, or an integer of thousands of digits
            return VerifyResult(False, len(lines), number, "not valid JSON")
        if record.get("prev") != prev:
            return VerifyResult(False, len(lines), number, "chain broken: prev does not match the previous record")
        if number == 1 and (record.get("type") != "header" or record.get("schema") != SCHEMA_ID):
            return VerifyResult(False, len(lines), 1, f"first record is not a {SCHEMA_ID} header")
        prev = claimed
    if not lines:
        return VerifyResult(False, 0, 1, "empty log")
    if expected_digest is not None and prev != expected_digest:
        return VerifyResult(False, len(lines), len(lines), "last record differs from the digest recorded for this log (run index or team manifest)")
    if record.get("type") != "footer":
        return VerifyResult(False, len(lines), len(lines) + 1, "log ends without a footer (truncated)")
    sealed = _footer_mac(lines[-1].rstrip(b"\n"))
    if key is None:
        return VerifyResult(True, len(lines), None, "", prev, "unchecked" if sealed else "")
    if sealed is None:
        return VerifyResult(False, len(lines), len(lines), "the footer carries no HMAC, and a key is set")
    if not mac_ok(key, *sealed):
        return VerifyResult(False, len(lines), len(lines),
                            "the footer's HMAC does not match the key (re-chained by someone without it, "
                            "or written under another key)")
    return VerifyResult(True, len(lines), None, "", prev, "checked")


def looks_like_log(first_line: bytes) -> bool:
    """Whether a file's first line is a trajectory header as the writer starts one (a file
    that is not is "not a log", which verify reports as bad input, not as a changed log)."""
    return first_line.startswith(b'{"type":"header",') and b'"schema":"agentbed.trajectory/' in first_line


def verify_log(path: str | os.PathLike[str], expected_digest: str | None = None,
               key: bytes | None = None) -> VerifyResult:
    """Check every record's hash and the chain; name the first record whose bytes changed."""
    from agentbed.validate import InputError, bounded_lines, open_regular

    try:
        with open_regular(path, what="trajectory log") as fh:
            lines = [line for _, line in bounded_lines(fh, path, LogFormatError)]
    except InputError as exc:
        raise LogFormatError(str(exc)) from None
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from exc
    return verify_lines(lines, expected_digest, key)


def verify_log_file(path: str | os.PathLike[str], expected_digest: str | None = None,
                    key: bytes | None = None) -> VerifyResult:
    """:func:`verify_log` for a file a user named: a file that is not a trajectory log at all,
    or a well-chained log whose records break the schema, raises :class:`LogFormatError`
    (bad input); a log whose bytes changed is a result that says where."""
    return verify_and_read(path, expected_digest, key)[0]


def verify_and_read(path: str | os.PathLike[str], expected_digest: str | None = None,
                    key: bytes | None = None) -> tuple[VerifyResult, list[dict[str, Any]]]:
    """:func:`verify_log_file`, also returning the records it read and checked against the
    schema when the chain holds (empty otherwise), so a caller need not read them again."""
    from agentbed.validate import InputError, open_regular

    try:
        with open_regular(path, what="trajectory log") as fh:
            first = fh.readline(4096)
    except InputError as exc:
        raise LogFormatError(str(exc)) from None
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    if not looks_like_log(first):
        raise LogFormatError(f"{path}: not an agentbed trajectory log (line 1 is no {SCHEMA_ID} header)")
    result = verify_log(path, expected_digest, key)
    records: list[dict[str, Any]] = []
    if result.ok or result.first_bad == result.records + 1:  # the chain holds (perhaps without a footer)
        records = read_log(path)  # raises on a malformed record, naming its line and field
    return result, records


def read_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All records of a log, parsed. Raises :class:`LogFormatError` with the file and line."""
    return list(iter_records(path))


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Records of a log, each checked against the trajectory schema: a malformed file raises
    :class:`LogFormatError` naming the file, line and field (bounded: a record longer than
    ``MAX_LINE_BYTES`` is refused before it is parsed)."""
    from agentbed.schemas import record_schema
    from agentbed.validate import InputError, bounded_lines, check_line, open_regular, parse_json

    try:
        fh = open_regular(path, what="trajectory log")
    except InputError as exc:
        raise LogFormatError(str(exc)) from None
    with fh:
        number = 0
        for number, line in bounded_lines(fh, path, LogFormatError):
            try:
                record = parse_json(line, f"{path}: line {number}")
                if number == 1 and (not isinstance(record, dict) or record.get("schema") != SCHEMA_ID):
                    raise LogFormatError(f"{path}: line 1 is not an {SCHEMA_ID} header; not a trajectory log")
                if not isinstance(record, dict):
                    raise LogFormatError(f"{path}: line {number} is a JSON {type(record).__name__}, not a record")
                if number > 1 and record.get("type") == "header":
                    raise LogFormatError(f"{path}: line {number} is a second header")
                kind = record.get("type")
                if kind not in RECORD_TYPES:  # before the schema, whose if/then branches key on it
                    shown = "missing" if "type" not in record else f"{json.dumps(kind)[:40]}, expected one of"
                    raise LogFormatError(f"{path}: line {number}: field 'type' is {shown}"
                                         f"{' ' + ', '.join(RECORD_TYPES) if 'type' in record else ''}")
                check_line(line, record, record_schema(kind), f"{path}: line {number} ({kind})")
            except InputError as exc:
                raise LogFormatError(str(exc)) from None
            yield record
        if number == 0:
            raise LogFormatError(f"{path}: empty; not a trajectory log")


def system_prompt_of(record: Mapping[str, Any]) -> str | None:
    """The system prompt's text a step record carries: a chat agent records it in the model output
    of the first call that sent it (again if it changes); None for other records and older logs."""
    output = record.get("model_output") if record.get("type") == "step" else None
    prompt = output.get("system_prompt") if isinstance(output, Mapping) else None
    return prompt if isinstance(prompt, str) else None


def first_system_prompt(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The first system prompt an episode's log records (see :func:`system_prompt_of`)."""
    return next((p for r in records if (p := system_prompt_of(r)) is not None), None)
