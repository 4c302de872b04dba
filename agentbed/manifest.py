"""The run manifest: what a run directory must hold, sealed by a Merkle root (and an HMAC).

``RUN_DIR/manifest.json`` (format ``agentbed.manifest/1``)::

    {"format": "agentbed.manifest/1",
     "plan": {"suite": ..., "tasks": [...], "agents": [...], "seeds": [...], "options": {...}, "degrade": 0.0},
     "expected": 860,                      # episodes the plan asks for
     "episodes": [["<episode id>", "<log digest>"], ...],   # sorted by id
     "root": "<Merkle root over the episodes>",
     "files": {"results.json": "<sha256>", "vault/summary.json": "<sha256>"},
     "complete": true,
     "mac": "<HMAC-SHA256 of the rest, with AGENTBED_LOG_KEY>"}

The run store rewrites it atomically (temporary file, fsync, rename) as episodes finish, at
most about once a second, and once more at the end with ``complete`` and the digests of the
files written from the episodes. The Merkle tree is RFC 6962's (leaves and nodes hashed with
distinct prefixes, so a leaf cannot pose as a node); its root changes if any episode is
added, dropped or given another log. ``agentbed verify RUN_DIR`` (:func:`check_run`) checks
the manifest against the plan in run.json, the index, every log and the files.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from agentbed.files import write_atomic
from agentbed.seal import mac, mac_ok
from agentbed.validate import read_json

FORMAT = "agentbed.manifest/1"
MANIFEST = "manifest.json"
PLAN_FIELDS = ("suite", "tasks", "agents", "seeds", "options", "degrade")
WRITE_INTERVAL = 1.0  # seconds between rewrites while a run goes on

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "plan", "expected", "episodes", "root", "files", "complete"],
    "properties": {
        "format": {"const": FORMAT},
        "plan": {"type": "object"},
        "expected": {"type": "integer", "minimum": 0},
        "episodes": {"type": "array", "items": {"type": "array", "prefixItems": [
            {"type": "string"}, {"type": "string", "pattern": "^[0-9a-f]{64}$"}], "minItems": 2, "maxItems": 2}},
        "root": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "files": {"type": "object", "additionalProperties": {"type": "string"}},
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


def build(plan: dict[str, Any], episodes: dict[str, str], *, complete: bool, files: dict[str, str] | None = None,
          key: bytes | None = None) -> dict[str, Any]:
    pairs = sorted(episodes.items())
    doc = {"format": FORMAT, "plan": plan, "expected": len(expected_ids(plan)), "episodes": [list(p) for p in pairs],
           "root": merkle_root(pairs), "files": dict(sorted((files or {}).items())), "complete": complete}
    if key is not None:
        doc["mac"] = mac(key, canonical(doc))
    return doc


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ManifestWriter:
    """Keeps a run's manifest current: ``add`` per finished episode, ``finish`` at the end."""

    def __init__(self, root: Path, plan: dict[str, Any], episodes: dict[str, str], key: bytes | None) -> None:
        self.root, self.plan, self.key = root, plan, key
        self.episodes = dict(episodes)
        self._written = 0.0

    def add(self, episode_id: str, digest: str) -> None:
        self.episodes.setdefault(episode_id, digest)
        if time.monotonic() - self._written >= WRITE_INTERVAL:
            self.write(complete=False)

    def write(self, *, complete: bool, files: dict[str, str] | None = None) -> None:
        doc = build(self.plan, self.episodes, complete=complete, files=files, key=self.key)
        write_atomic(self.root / MANIFEST, json.dumps(doc, sort_keys=True).encode("utf-8"))
        self._written = time.monotonic()

    def finish(self, files: list[str]) -> bool:
        """Seal the run: complete when every expected episode has finished."""
        complete = set(self.episodes) >= set(expected_ids(self.plan))
        self.write(complete=complete, files={f: file_digest(self.root / f) for f in files if (self.root / f).exists()})
        return complete


def load(root: Path) -> dict[str, Any]:
    return read_json(root / MANIFEST, what="run manifest", schema=SCHEMA)


def authentic(doc: dict[str, Any], key: bytes | None) -> str:
    """"" when the manifest's HMAC holds under ``key`` (or there is no key), else why not."""
    if key is None:
        return ""
    if "mac" not in doc:
        return "carries no HMAC, and a key is set"
    return "" if mac_ok(key, canonical(doc), doc["mac"]) else "its HMAC does not match the key (forged, or another key)"
