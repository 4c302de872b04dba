"""A map from text keys to small values kept on disk, not in memory, read back in key order.

A 100,000-episode run holds a value per episode in several places (the seal's id and digest, the
byte range of each id's index line): as Python dicts that is some hundreds of bytes an episode.
:class:`DiskMap` keeps them in a private temporary SQLite database (deleted when closed; its page
cache is bounded, so memory stays flat), keeps the first value given for a key, as
``dict.setdefault`` does, and gives the items back sorted as Python sorts ``str`` keys: keys are
stored as UTF-8 (with ``surrogatepass``), whose byte order is code point order, and SQLite
compares blobs bytewise. It is an external sort with duplicate removal, by the B-tree SQLite
keeps the keys in.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from typing import Any

# SQLite's page cache: what the map may hold in memory, whatever its size. Small enough that a
# driver's maps (the seal's ids and digests, the plan's ids, the index's byte ranges) fill it by
# 10,000 episodes, so 100,000 hold no more (2 MiB each held 4 MiB more there); the pages beyond it
# are read from the map's temporary file, through the OS's cache (tests/engine/test_flat_driver.py).
CACHE_KIB = 256
BATCH = 4096  # rows fetched per step of an ordered read


def _key(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class DiskMap:
    """``key -> tuple of ``arity`` SQLite scalars (int, float, str, bytes, None)``, first value kept
    (``keep="last"``: the last, as ``dict(pairs)`` keeps)."""

    def __init__(self, arity: int = 1, keep: str = "first") -> None:
        self.arity = arity
        # "": a temporary database of this connection only, on disk once it outgrows the cache
        self._db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}", "temp_store=FILE"):
            self._db.execute(f"PRAGMA {pragma}")
        columns = "".join(f", v{i}" for i in range(arity))
        self._db.execute(f"CREATE TABLE m (k BLOB PRIMARY KEY{columns}) WITHOUT ROWID")
        self._db.execute("BEGIN")  # one transaction for the map's life: nothing here needs to be durable
        marks = ", ".join("?" * (arity + 1))
        self._insert = f"INSERT OR {'IGNORE' if keep == 'first' else 'REPLACE'} INTO m VALUES ({marks})"
        self._values = ", ".join(f"v{i}" for i in range(arity)) or "NULL"
        self._lock = threading.Lock()  # a run store's callbacks come from its committer thread

    def add(self, key: str, *value: Any) -> None:
        """Keep ``value`` for ``key`` (unless it has one and the first is kept)."""
        with self._lock:
            self._db.execute(self._insert, (_key(key), *value))

    def update(self, items: Iterable[tuple[Any, ...]]) -> None:
        """:meth:`add` for each ``(key, *value)``."""
        with self._lock:
            self._db.executemany(self._insert, ((_key(k), *v) for k, *v in items))

    def discard(self, keys: Iterable[str]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM m WHERE k = ?", ((_key(k),) for k in keys))

    def get(self, key: str) -> tuple[Any, ...] | None:
        with self._lock:
            row = self._db.execute(f"SELECT {self._values} FROM m WHERE k = ?", (_key(key),)).fetchone()
        return None if row is None else tuple(row[:self.arity])

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM m").fetchone()[0])

    def items(self, start: str | None = None, stop: str | None = None) -> Iterator[tuple[Any, ...]]:
        """``(key, *value)`` in key order, a batch of rows at a time (the map must not change meanwhile);
        only keys from ``start`` (included) to ``stop`` (excluded), when given."""
        last: bytes | None = None
        while True:  # keyset pagination: no cursor stays open between batches, so a batch is one lock
            where, args = [], []
            for clause, bound in (("k > ?", last), ("k >= ?", None if last is not None or start is None
                                                    else _key(start)), ("k < ?", None if stop is None else _key(stop))):
                if bound is not None:
                    where.append(clause)
                    args.append(bound)
            with self._lock:
                rows = self._db.execute(
                    f"SELECT k, {self._values} FROM m {'WHERE ' + ' AND '.join(where) if where else ''} "
                    "ORDER BY k LIMIT ?", (*args, BATCH)).fetchall()
            for row in rows:
                yield (row[0].decode("utf-8", "surrogatepass"), *row[1:self.arity + 1])
            if len(rows) < BATCH:
                return
            last = rows[-1][0]

    def keys(self) -> Iterator[str]:
        return (item[0] for item in self.items())

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> DiskMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._db.close()
        except Exception:  # noqa: BLE001 - a half-built map, or the interpreter shutting down
            pass


def sorted_difference(have: Iterator[str], other: Iterator[str]) -> Iterator[str]:
    """The keys of sorted ``have`` that sorted ``other`` lacks, as ``sorted(set(have) - set(other))``
    would give them, in one merge of the two streams (a DiskMap's keys come sorted)."""
    current = next(other, None)
    for key in have:
        while current is not None and current < key:
            current = next(other, None)
        if current != key:
            yield key
