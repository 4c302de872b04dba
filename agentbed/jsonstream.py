"""A JSON document one of whose members lists every episode, read and written without holding it.

:func:`dump_streamed` writes ``json.dumps(doc, ...)``'s bytes where a :class:`Streamed` member is
written as its items come (results.json's values per unit and seeds; the manifest's HMAC input).
:func:`read_streamed` reads a file as :func:`agentbed.validate.read_json` does, except that one
top-level array (the manifest's sealed pairs) is read item by item, each time it is iterated,
from the same open file: a file rewritten meanwhile (by rename) is not mixed in. It takes every
item through the same strict parser and checks as ``read_json``; whatever it is not sure of (a
malformed file, an item the caller's check refuses) is left to ``read_json`` on the whole file,
so the messages on bad input are ``read_json``'s exactly. :func:`text_of` gives the same parser
to a reader that streams deeper (results.json's values per unit: :func:`agentbed.results.load_results`).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from agentbed.schemas import fold_seeds
from agentbed.validate import (
    MAX_JSON_BYTES,
    InputError,
    _bounded_int,
    _check_tree,
    _lone_surrogate,
    _unique_keys,
    check,
    open_regular,
    read_json,
)

CHUNK = 1 << 16  # bytes read at a time (1 MiB chunks and their copies were 2-3 MiB of a reader's peak RSS)


class Streamed:
    """A JSON object (``pairs``: its ``(key, value)`` items, keys sorted) or array whose items
    :func:`dump_streamed` writes as they come, never holding them."""

    def __init__(self, items: Iterable[Any], *, pairs: bool = True) -> None:
        self.items, self.pairs = items, pairs


def dump_streamed(doc: Any, fh: TextIO, *, indent: int | None = 1, separators: tuple[str, str] | None = None,
                  ensure_ascii: bool = True) -> None:
    """``json.dump(doc, fh, sort_keys=True, ...)``, byte for byte, where each :class:`Streamed` in
    ``doc`` is written as the object or array of its items (:func:`iter_streamed`)."""
    for piece in iter_streamed(doc, indent=indent, separators=separators, ensure_ascii=ensure_ascii):
        fh.write(piece)


def iter_streamed(doc: Any, *, indent: int | None = 1, separators: tuple[str, str] | None = None,
                  ensure_ascii: bool = True) -> Iterator[str]:
    """The text of ``json.dumps(doc, sort_keys=True, ...)`` in pieces, where each :class:`Streamed`
    in ``doc`` (and each ``range``, as the list of its integers: a plan's seeds) is written as its
    items come: the rest of the document is encoded with a marker in its place, and the items are
    written where the marker stands, indented as the encoder would have (with ``indent``, items
    must be scalars)."""
    token = secrets.token_hex(8)
    streams: list[Streamed] = []

    def mark(value: Any) -> Any:
        if isinstance(value, range):
            value = Streamed(value, pairs=False)
        if isinstance(value, Streamed):
            streams.append(value)
            return f"\0{token}-{len(streams) - 1}\0"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mark(v) for v in value]
        return value

    options: dict[str, Any] = {"indent": indent, "separators": separators, "ensure_ascii": ensure_ascii}
    item_sep, key_sep = separators or ((",", ": ") if indent is not None else (", ", ": "))
    encode = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=(item_sep, key_sep)).encode
    text = json.dumps(mark(doc), sort_keys=True, **options)
    at = 0
    for found in re.finditer(rf'"(?:\\u0000|\0){token}-(\d+)(?:\\u0000|\0)"', text):
        yield text[at:found.start()]
        at = found.end()
        stream = streams[int(found[1])]
        if indent is not None:
            line = text[text.rfind("\n", 0, found.start()) + 1:found.start()]
            outer = "\n" + line[:len(line) - len(line.lstrip(" "))]  # the line of the member holding it
            inner = outer + " " * indent
            sep = item_sep + inner
        else:
            outer, inner, sep = "", "", item_sep
        opening, closing = "{}" if stream.pairs else "[]"
        first, batch = True, []
        for item in stream.items:
            batch.append(opening + inner if first else sep)
            batch.append(f"{encode(item[0])}{key_sep}{encode(item[1])}" if stream.pairs else encode(item))
            first = False
            if len(batch) >= 2048:
                yield "".join(batch)
                batch.clear()
        yield "".join(batch) + (opening + closing if first else outer + closing)
    yield text[at:]


class NotSure(Exception):
    """The streamed read leaves this file to ``read_json`` (or the reader's own whole reading)."""


_DECODER = json.JSONDecoder(parse_int=_bounded_int, object_pairs_hook=_unique_keys)  # parse_json's parser
_SPACE = re.compile(r"[ \t\n\r]*")
_INT_ITEM = re.compile(r"[ \t\n\r]*(-?(?:0|[1-9][0-9]{0,19}))[ \t\n\r]*([,\]])")  # an integer and what ends it


class _Text:
    """The text of an open UTF-8 file, decoded a chunk at a time, parsed a value at a time."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.decode = fh, codecs.getincrementaldecoder("utf-8")("strict").decode
        self.text, self.at, self.eof = "", 0, False

    def more(self, at_least: int = 0) -> bool:
        if self.eof:
            return False
        data = self.fh.read(max(CHUNK, at_least))
        self.eof = not data
        self.text = self.text[self.at:] + self.decode(data, final=self.eof)
        self.at = 0
        return True

    def char(self) -> str:
        """The next character that is not white space (not taken), "" at the end."""
        while True:
            self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]
            if self.at < len(self.text) or not self.more():
                return self.text[self.at:self.at + 1]

    def take(self, *expected: str) -> str:
        c = self.char()
        if c not in expected or not c:
            raise NotSure
        self.at += 1
        return c

    def value(self) -> Any:
        self.char()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.at)
            except ValueError:  # cut by the chunk's end, or malformed (hooks refuse with ValueError too)
                if self.more(len(self.text) - self.at):  # the text held at least doubles: a long value is
                    continue  # parsed again a logarithmic number of times, not once per chunk
                raise NotSure from None
            if len(self.text) - end <= 2 and self.more():
                continue  # a number may go on in the next chunk (cut as "1", "0." or "1e-")
            self.at = end
            return value

    def members(self) -> Iterator[str]:
        """Each key of the object that starts here, the text then at its value, which the caller
        reads (:meth:`value`, or :meth:`members`/:meth:`items` of it) before the next key. The
        caller refuses a key given twice; one that is no text is refused here."""
        self.take("{")
        if self.char() == "}":
            self.at += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str) or _lone_surrogate(key) is not None:
                raise NotSure
            self.take(":")
            yield key
            if self.take(",", "}") == "}":
                return

    def items(self) -> Iterator[None]:
        """Once per item of the array that starts here, the text then at the item, which the
        caller reads before the next."""
        self.take("[")
        if self.char() == "]":
            self.at += 1
            return
        while True:
            yield None
            if self.take(",", "]") == "]":
                return

    def values(self) -> Iterator[Any]:
        """The items of the array that starts here, parsed as :meth:`value` parses them; an
        integer and the comma after it are read in one step (a plan's 100,000 seeds)."""
        self.take("[")
        if self.char() == "]":
            self.at += 1
            return
        while True:
            if found := _INT_ITEM.match(self.text, self.at):  # ends before the text does: not cut by a chunk
                self.at = found.end()
                yield _bounded_int(found[1])
                if found[2] == "]":
                    return
                continue
            yield self.value()
            if self.take(",", "]") == "]":
                return

    def end(self) -> None:
        """Nothing but white space follows the document."""
        if self.char() != "":
            raise NotSure


def text_of(fh: BinaryIO) -> _Text:
    """The JSON text of an open file from its start, read a value at a time."""
    fh.seek(0)
    return _Text(fh)


def _folded(src: _Text, fold: tuple[str, ...]) -> Any:
    """The value that starts here, as :meth:`_Text.value` parses it, but for the array at the keys
    ``fold`` (from here) of the objects it is in: folded as it is read (:func:`fold_seeds`)."""
    if not fold:
        return fold_seeds(src.values()) if src.char() == "[" else src.value()
    if src.char() != "{":
        return src.value()
    doc: dict[str, Any] = {}
    for key in src.members():
        if key in doc:
            raise NotSure
        doc[key] = _folded(src, fold[1:]) if key == fold[0] else src.value()
    return doc


def _stand_in(doc: Any, fold: tuple[str, ...]) -> Any:
    """``doc`` with the range at ``fold`` (if it is one) replaced by its first and last items: valid
    under a schema exactly when the range is, for a schema that asks of the array only what its
    ends decide (integers within bounds, at least one or two of them, each once: SEED_SCHEMA's
    array). The containers on the way are copied, nothing else."""
    if not fold or not isinstance(doc, dict) or fold[0] not in doc:
        return doc
    inner = doc[fold[0]]
    if len(fold) > 1:
        return {**doc, fold[0]: _stand_in(inner, fold[1:])}
    return {**doc, fold[0]: sorted({inner[0], inner[-1]})} if isinstance(inner, range) and inner else doc


def _checked(doc: Any, fold: tuple[str, ...], at: str, schema: dict[str, Any] | None) -> None:
    """What ``parse_json`` and ``read_json`` check of ``doc`` but its unique keys (the parse's),
    the range at ``fold`` checked by its :func:`_stand_in`."""
    probe = _stand_in(doc, fold)
    _check_tree(probe, at)
    if _lone_surrogate(probe) is not None:
        raise NotSure
    if schema is not None:
        check(probe, schema, at)


def read_folded(path: Path, *, what: str, schema: dict[str, Any] | None = None,
                fold: tuple[str, ...] = ("seeds",)) -> Any:
    """``read_json(path, what=what, schema=schema)`` with the array at the keys ``fold`` (run.json's
    seeds) read an item at a time and held as the range it is when it is one (:func:`fold_seeds`):
    the readers of a run of 100,000 episodes never parse its seeds into a list. On any doubt,
    ``read_json``'s own reading and messages (folded after)."""
    try:
        with open_regular(path, what=what) as fh:
            if os.fstat(fh.fileno()).st_size > MAX_JSON_BYTES:
                raise NotSure
            src = text_of(fh)
            doc = _folded(src, fold)
            src.end()
        _checked(doc, fold, str(path), schema)
    except (NotSure, InputError, ValueError, RecursionError, OSError):
        doc = read_json(path, what=what, schema=schema)
        _fold_parsed(doc, fold)
    return doc


def _fold_parsed(doc: Any, fold: tuple[str, ...]) -> None:
    """Fold the list at the keys ``fold`` of a document parsed whole, as :func:`_folded` reads it."""
    for key in fold[:-1]:
        doc = doc.get(key) if isinstance(doc, dict) else None
    if fold and isinstance(doc, dict) and isinstance(items := doc.get(fold[-1]), list):
        if isinstance(folded := fold_seeds(items), range):
            doc[fold[-1]] = folded


def _walk(fh: BinaryIO, member: str, rest: dict[str, Any], fold: tuple[str, ...] = ()) -> Iterator[Any]:
    """The items of the top-level array ``member`` of the JSON object in ``fh``, as ``parse_json``
    parses them; the other members go into ``rest`` (the array at the keys ``fold`` folded)."""
    src = text_of(fh)
    for key in src.members():
        if key in rest:
            raise NotSure
        if key == member:
            rest[key] = None
            for _ in src.items():
                yield src.value()
        else:
            rest[key] = _folded(src, fold[1:]) if fold[:1] == (key,) else src.value()
    src.end()


class StreamedItems:
    """A top-level array of a file, read again from the file (kept open) each time it is iterated."""

    def __init__(self, fh: BinaryIO, member: str, count: int, fold: tuple[str, ...] = ()) -> None:
        self.fh, self.member, self.count, self.fold = fh, member, count, fold

    def __iter__(self) -> Iterator[Any]:
        return _walk(self.fh, self.member, {}, self.fold)

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        self.fh.close()


def read_streamed(path: Path, member: str, *, what: str, schema: dict[str, Any],
                  item_ok: Callable[[Any], bool], fold: tuple[str, ...] = ()) -> dict[str, Any]:
    """``read_json(path, what=what, schema=schema)`` with the top-level array ``member`` a
    :class:`StreamedItems` (close it when done), when every item passes ``item_ok`` (which must
    hold exactly when ``schema`` holds for the item), and the array at the keys ``fold`` (the
    manifest's plan's seeds) folded as :func:`read_folded` folds it; otherwise, or on any doubt,
    ``read_json``'s own reading, list and messages."""
    fh = None
    try:
        fh = open_regular(path, what=what)
        if os.fstat(fh.fileno()).st_size > MAX_JSON_BYTES:
            raise NotSure
        rest: dict[str, Any] = {}
        count = 0
        for item in _walk(fh, member, rest, fold):
            if not item_ok(item) or _lone_surrogate(item) is not None:
                raise NotSure
            _check_tree({member: [item]}, str(path))  # at its depth in the document
            count += 1
        if member not in rest:
            raise NotSure
        doc = {**rest, member: []}
        _checked(doc, fold, str(path), schema)
    except (NotSure, InputError, ValueError, RecursionError, OSError):
        if fh is not None:
            fh.close()
        whole = read_json(path, what=what, schema=schema)
        _fold_parsed(whole, fold)
        return whole
    doc[member] = StreamedItems(fh, member, count, fold)
    return doc
