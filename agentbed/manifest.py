"""The run manifest: what a run directory must hold, sealed by a Merkle root (and an HMAC).

``RUN_DIR/manifest.json`` (format ``agentbed.manifest/2``)::

    {"format": "agentbed.manifest/2",
     "run_id": "<32 hex digits, also in run.json>",
     "key_id": "<16 hex digits naming the key>" or null,
     "plan": {"suite": ..., "tasks": [...], "agents": [...], "seeds": [...], "options": {...}, "degrade": 0.0},
     "expected": 860,                      # episodes the plan asks for
     "episodes": [["<episode id>", "<log digest>"], ...],   # sorted by id
     "root": "<Merkle root over the episodes>",
     "files": {"run.json": "<sha256>", "index.jsonl": ..., "results.json": ..., "vault/summary.json": ...},
     "final": true,                        # written by the run's end, not while it went on
     "complete": true,
     "mac": "<HMAC-SHA256 of the rest, with AGENTBED_LOG_KEY>"}

The run store rewrites it atomically (temporary file, fsync, rename) as episodes finish, at
most about once a second (``final`` false, only run.json's digest in ``files``), and once
more at the end (``final`` true) with ``complete`` and the digests of the index and the files
written from the episodes: so a manifest binds one run (its id, its run.json) and, once final,
its whole final state, and an earlier manifest of the same run no longer verifies. The Merkle tree is RFC 6962's (leaves and nodes hashed with
distinct prefixes, so a leaf cannot pose as a node); its root changes if any episode is
added, dropped or given another log. ``agentbed verify RUN_DIR`` (:func:`check_run`) checks
the manifest against the plan in run.json, the index, every log and the files.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring as _text
from json.encoder import encode_basestring_ascii as _ascii
from pathlib import Path
from typing import Any

from agentbed.diskmap import DiskMap, sorted_difference
from agentbed.files import write_atomic_chunks
from agentbed.jsonstream import Streamed, StreamedItems, dump_streamed, iter_streamed, read_streamed
from agentbed.schemas import RUN_ID_SCHEMA, RUN_META_SCHEMA
from agentbed.seal import key_id, mac, mac_ok
from agentbed.validate import read_json

FORMAT = "agentbed.manifest/2"
MANIFEST = "manifest.json"
PLAN_FIELDS = ("suite", "tasks", "agents", "seeds", "options", "degrade")
WRITE_INTERVAL = 1.0  # seconds between rewrites while a run goes on
HEX64 = "^[0-9a-f]{64}$"
PLAN_SEEDS = ("plan", "seeds")  # where the plan's seeds are: read as the range they are

PLAN_SCHEMA: dict[str, Any] = {**RUN_META_SCHEMA, "required": list(PLAN_FIELDS),
                               "properties": {k: RUN_META_SCHEMA["properties"][k] for k in PLAN_FIELDS}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "run_id", "key_id", "plan", "expected", "episodes", "root", "files", "final", "complete"],
    "properties": {
        "format": {"const": FORMAT},
        "run_id": RUN_ID_SCHEMA,
        "key_id": {"type": ["string", "null"], "pattern": "^[0-9a-f]{16}$"},
        "plan": PLAN_SCHEMA,
        "expected": {"type": "integer", "minimum": 0},
        "episodes": {"type": "array", "items": {"type": "array", "prefixItems": [
            {"type": "string"}, {"type": "string", "pattern": "^[0-9a-f]{64}$"}], "minItems": 2, "maxItems": 2}},
        "root": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "files": {"type": "object", "additionalProperties": {"type": "string", "pattern": HEX64}},
        "final": {"type": "boolean"},
        "complete": {"type": "boolean"},
        "mac": {"type": "string"},
    },
}


def merkle_root(pairs: list[tuple[str, str]]) -> str:
    """RFC 6962 Merkle tree hash over (episode id, log digest) leaves, in the given order."""
    leaves = [_leaf(eid, digest) for eid, digest in pairs]
    return _tree(leaves).hex()


def _leaf(eid: str, digest: str) -> bytes:
    return hashlib.sha256(b"\x00" + eid.encode("utf-8") + b"\x00" + digest.encode("ascii")).digest()


class MerkleFold:
    """:func:`merkle_root` one leaf at a time, holding one hash per level (log2 of the leaves).
    RFC 6962 splits n leaves at the largest power of two below n, so its tree is the perfect
    subtrees of n's binary digits, largest first, joined from the right: a stack that merges two
    subtrees of equal size as leaves arrive, then folds what is left right to left."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, bytes]] = []  # (leaves under it, hash), sizes strictly falling

    def add(self, eid: str, digest: str) -> None:
        size, node = 1, _leaf(eid, digest)
        while self._stack and self._stack[-1][0] == size:
            size, node = 2 * size, hashlib.sha256(b"\x01" + self._stack.pop()[1] + node).digest()
        self._stack.append((size, node))

    def root(self) -> str:
        if not self._stack:
            return hashlib.sha256(b"").digest().hex()
        node = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            node = hashlib.sha256(b"\x01" + left + node).digest()
        return node.hex()


def _tree(nodes: list[bytes]) -> bytes:
    if not nodes:
        return hashlib.sha256(b"").digest()
    if len(nodes) == 1:
        return nodes[0]
    split = 1 << ((len(nodes) - 1).bit_length() - 1)  # the largest power of two below n
    return hashlib.sha256(b"\x01" + _tree(nodes[:split]) + _tree(nodes[split:])).digest()


def plan_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The part of run.json that decides which episodes a run owes (None: not an agentbed run)."""
    if not all(k in meta for k in PLAN_FIELDS[:-1]):
        return None
    return {k: meta.get(k, 0.0) for k in PLAN_FIELDS}


def expected_ids(plan: dict[str, Any]) -> list[str]:
    return sorted(planned_ids(plan))


def planned_ids(plan: dict[str, Any]) -> Iterator[str]:
    """The plan's episode ids one at a time, in plan order."""
    from agentbed.runner import EpisodeSpec

    return (EpisodeSpec(plan["suite"], t, a, s, plan["options"]).episode_id
            for a in plan["agents"] for t in plan["tasks"] for s in plan["seeds"])


def canonical(doc: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in doc.items() if k != "mac"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def build(plan: dict[str, Any], episodes: dict[str, str], *, run_id: str, complete: bool, final: bool = False,
          files: dict[str, str] | None = None, key: bytes | None = None, expected: int | None = None) -> dict[str, Any]:
    """The manifest document; ``expected``: the plan's episode count, when the caller knows it."""
    pairs = sorted(episodes.items())
    doc = {"format": FORMAT, "run_id": run_id, "key_id": key_id(key) if key is not None else None, "plan": plan,
           "expected": len(expected_ids(plan)) if expected is None else expected, "episodes": [list(p) for p in pairs], "root": merkle_root(pairs),
           "files": dict(sorted((files or {}).items())), "final": final, "complete": complete}
    if key is not None:
        doc["mac"] = mac(key, canonical(doc))
    return doc


def manifest_bytes(plan: dict[str, Any], pairs: Iterable[tuple[str, str]], *, run_id: str, complete: bool,
                   final: bool, files: dict[str, str], key: bytes | None, expected: int) -> Iterator[bytes]:
    """``json.dumps(build(...), sort_keys=True)`` encoded, byte for byte, in pieces, from ``pairs``
    (sorted by id, each id once) read once: the Merkle root and the HMAC are folded as they pass,
    so no list of the run's episodes is made. ``build`` is the definition; tests hold them equal."""
    def piece(compact: bool, doc: dict[str, Any]) -> Iterator[str]:  # a dict's members, without its braces
        return _unbraced(iter_streamed(doc, indent=None, separators=(",", ":") if compact else None,
                                       ensure_ascii=not compact))  # a plan's seeds (a range) as they come

    fold = MerkleFold()
    signer = hmac.new(key, digestmod=hashlib.sha256) if key is not None else None
    if signer is not None:
        signer.update(("{" + "".join(piece(True, {"complete": complete})) + ',"episodes":[').encode("utf-8"))
    yield ("{" + "".join(piece(False, {"complete": complete})) + ', "episodes": [').encode("utf-8")
    batch: list[str] = []
    signed: list[str] = []
    first = True
    for eid, digest in pairs:
        fold.add(eid, digest)
        sep = "" if first else ", "
        first = False
        batch.append(f"{sep}[{_ascii(eid)}, {_ascii(digest)}]")
        if signer is not None:
            signed.append(f"{sep[:1]}[{_text(eid)},{_text(digest)}]")
        if len(batch) >= 1024:
            yield "".join(batch).encode("utf-8")
            batch.clear()
            if signer is not None:
                signer.update("".join(signed).encode("utf-8"))
                signed.clear()
    if signer is not None:
        signer.update("".join(signed).encode("utf-8"))
    rest = {"expected": expected, "files": dict(sorted(files.items())), "final": final, "format": FORMAT,
            "key_id": key_id(key) if key is not None else None, "plan": plan, "root": fold.root(), "run_id": run_id}
    if signer is not None:
        signer.update(b"],")
        for text in piece(True, rest):
            signer.update(text.encode("utf-8"))
        signer.update(b"}")
        rest["mac"] = signer.hexdigest()
    yield ("".join(batch) + "], ").encode("utf-8")
    for text in piece(False, rest):
        yield text.encode("utf-8")
    yield b"}"


def _unbraced(pieces: Iterator[str]) -> Iterator[str]:
    """The pieces of an object's text without its opening and closing brace."""
    held = next(pieces)[1:]
    for text in pieces:
        yield held
        held = text
    yield held[:-1]


def file_digest(path: Path) -> str:
    from agentbed.validate import open_regular

    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class ManifestWriter:
    """Keeps a run's manifest current: ``add`` per finished episode, ``finish`` at the end.

    The sealed ids and digests, and the plan's ids, are kept in :class:`DiskMap` s, not dicts,
    and each manifest is written from them in id order (:func:`manifest_bytes`): a run's memory
    does not grow with its episodes. A rewrite reads every sealed episode, so rewrites are spaced
    at least ten times their own cost apart (and at least ``WRITE_INTERVAL``): a long run does
    not spend a growing share of its time rewriting its seal."""

    def __init__(self, root: Path, plan: dict[str, Any], run_id: str,
                 episodes: Mapping[str, str] | Iterable[tuple[str, str]], key: bytes | None) -> None:
        self.root, self.plan, self.run_id, self.key = root, plan, run_id, key
        self.episodes = DiskMap()
        self.episodes.update(episodes.items() if isinstance(episodes, Mapping) else episodes)
        self._written = 0.0
        self._cost = 0.0  # seconds the last rewrite took
        self._expected: DiskMap | None = None
        self._lock = threading.RLock()  # episodes are added from the run store's committer thread

    @property
    def expected(self) -> DiskMap:
        """The plan's episode ids, worked out once (every rewrite and the seal need them)."""
        if self._expected is None:
            self._expected = DiskMap(0)
            self._expected.update((eid,) for eid in planned_ids(self.plan))
        return self._expected

    def add(self, episode_id: str, digest: str) -> None:
        with self._lock:
            self.episodes.add(episode_id, digest)
            if time.monotonic() - self._written >= max(WRITE_INTERVAL, 10 * self._cost):
                self.write(complete=False)

    def drop(self, episode_ids: Iterable[str]) -> None:
        """Take episodes out of the seal (``--retry-errors`` runs them again)."""
        with self._lock:
            self.episodes.discard(episode_ids)

    def write(self, *, complete: bool, final: bool = False, files: Sequence[str] = ()) -> None:
        """While the run goes on only run.json is sealed beside the episodes; at the end
        (``final``) also the index and ``files``."""
        with self._lock:
            started = time.monotonic()
            names = ["run.json", *(["index.jsonl", "events.jsonl"] if final else []), *files]
            digests = {f: file_digest(self.root / f) for f in names if (self.root / f).is_file()}
            write_atomic_chunks(self.root / MANIFEST, manifest_bytes(
                self.plan, self.episodes.items(), run_id=self.run_id, complete=complete, final=final, files=digests,
                key=self.key, expected=len(self.expected)))
            self._written = time.monotonic()
            self._cost = self._written - started

    def finish(self, files: list[str]) -> bool:
        """Seal the run's final state: complete when every expected episode has finished."""
        with self._lock:
            complete = not any(True for _ in sorted_difference(self.expected.keys(), self.episodes.keys()))
            self.write(complete=complete, final=True, files=files)
            return complete


def load(root: Path, *, streamed: bool = False) -> dict[str, Any]:
    """The run's manifest, validated; ``streamed``: its sealed pairs a
    :class:`~agentbed.jsonstream.StreamedItems` read from the file as they are iterated (close it),
    and its plan's seeds a range when they are one, folded as they are read
    (:func:`agentbed.jsonstream.read_folded`): what the readers of a run hold of it, or parse, does
    not grow with its episodes. Without ``streamed``, the document as JSON has it, lists and all."""
    if streamed:
        return read_streamed(root / MANIFEST, "episodes", what="run manifest", schema=SCHEMA, item_ok=_pair_ok,
                             fold=PLAN_SEEDS)
    return read_json(root / MANIFEST, what="run manifest", schema=SCHEMA)


def _pair_ok(item: Any) -> bool:
    """What SCHEMA asks of one sealed pair (jsonschema's "pattern" is ``re.search``)."""
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str)
            and re.search(HEX64, item[1]) is not None)


def close(doc: dict[str, Any] | None) -> None:
    """Let go of a streamed manifest's file."""
    if doc is not None and isinstance(doc.get("episodes"), StreamedItems):
        doc["episodes"].close()


def authentic(doc: dict[str, Any], key: bytes | None) -> str:
    """"" when the manifest's HMAC holds under ``key`` (or there is no key), else why not."""
    if key is None:
        return ""
    if "mac" not in doc:
        return "carries no HMAC, and a key is set (sealed without a key, or its HMAC was stripped)"
    if doc.get("key_id") not in (None, key_id(key)):
        return f"was signed under another key (key id {doc['key_id']}; the key set has id {key_id(key)})"
    return "" if _signed_ok(key, doc) else "its HMAC does not match the key (forged, or another key)"


def _signed_ok(key: bytes, doc: dict[str, Any]) -> bool:
    """``mac_ok(key, canonical(doc), doc["mac"])``, with streamed pairs fed to the HMAC as they are read."""
    if not isinstance(doc.get("episodes"), StreamedItems):
        return mac_ok(key, canonical(doc), doc["mac"])
    signer = hmac.new(key, digestmod=hashlib.sha256)

    class Feed:
        def write(self, text: str) -> None:
            signer.update(text.encode("utf-8"))

    dump_streamed({k: Streamed(doc[k], pairs=False) if k == "episodes" else v for k, v in doc.items() if k != "mac"},
                  Feed(), indent=None, separators=(",", ":"), ensure_ascii=False)  # type: ignore[arg-type]
    return hmac.compare_digest(signer.hexdigest(), doc["mac"])
