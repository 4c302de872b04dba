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
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentbed.files import write_atomic
from agentbed.seal import key_id, mac, mac_ok
from agentbed.validate import RUN_ID_SCHEMA, RUN_META_SCHEMA, read_json

FORMAT = "agentbed.manifest/2"
MANIFEST = "manifest.json"
PLAN_FIELDS = ("suite", "tasks", "agents", "seeds", "options", "degrade")
WRITE_INTERVAL = 1.0  # seconds between rewrites while a run goes on
HEX64 = "^[0-9a-f]{64}$"

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
    leaves = [hashlib.sha256(b"\x00" + eid.encode("utf-8") + b"\x00" + digest.encode("ascii")).digest()
              for eid, digest in pairs]
    return _tree(leaves).hex()


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
    from agentbed.runner import EpisodeSpec

    return sorted(EpisodeSpec(plan["suite"], t, a, s, plan["options"]).episode_id
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


def file_digest(path: Path) -> str:
    from agentbed.validate import open_regular

    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class ManifestWriter:
    """Keeps a run's manifest current: ``add`` per finished episode, ``finish`` at the end."""

    def __init__(self, root: Path, plan: dict[str, Any], run_id: str, episodes: dict[str, str],
                 key: bytes | None) -> None:
        self.root, self.plan, self.run_id, self.key = root, plan, run_id, key
        self.episodes = dict(episodes)
        self._written = 0.0
        self._expected: frozenset[str] | None = None

    @property
    def expected(self) -> frozenset[str]:
        """The plan's episode ids, worked out once (every rewrite and the seal need them)."""
        if self._expected is None:
            self._expected = frozenset(expected_ids(self.plan))
        return self._expected

    def add(self, episode_id: str, digest: str) -> None:
        self.episodes.setdefault(episode_id, digest)
        if time.monotonic() - self._written >= WRITE_INTERVAL:
            self.write(complete=False)

    def write(self, *, complete: bool, final: bool = False, files: Sequence[str] = ()) -> None:
        """While the run goes on only run.json is sealed beside the episodes; at the end
        (``final``) also the index and ``files``."""
        names = ["run.json", *(["index.jsonl", "events.jsonl"] if final else []), *files]
        digests = {f: file_digest(self.root / f) for f in names if (self.root / f).is_file()}
        doc = build(self.plan, self.episodes, run_id=self.run_id, complete=complete, final=final, files=digests,
                    key=self.key, expected=len(self.expected))
        write_atomic(self.root / MANIFEST, json.dumps(doc, sort_keys=True).encode("utf-8"))
        self._written = time.monotonic()

    def finish(self, files: list[str]) -> bool:
        """Seal the run's final state: complete when every expected episode has finished."""
        complete = self.episodes.keys() >= self.expected
        self.write(complete=complete, final=True, files=files)
        return complete


def load(root: Path) -> dict[str, Any]:
    return read_json(root / MANIFEST, what="run manifest", schema=SCHEMA)


def authentic(doc: dict[str, Any], key: bytes | None) -> str:
    """"" when the manifest's HMAC holds under ``key`` (or there is no key), else why not."""
    if key is None:
        return ""
    if "mac" not in doc:
        return "carries no HMAC, and a key is set (sealed without a key, or its HMAC was stripped)"
    if doc.get("key_id") not in (None, key_id(key)):
        return f"was signed under another key (key id {doc['key_id']}; the key set has id {key_id(key)})"
    return "" if mac_ok(key, canonical(doc), doc["mac"]) else "its HMAC does not match the key (forged, or another key)"
