"""``agentbed verify RUN_DIR`` for a run the run store wrote: is everything the plan owes here,
sealed, and saying the same thing everywhere?

Checked, in order: run.json (validated) against the manifest's plan; the manifest's HMAC
(with a key) and Merkle root; every index line (validated, no duplicates, in the plan, its
digest the sealed one); every sealed or indexed episode's log (chain, digest, HMAC with a key,
schema, its header's run binding against run.json (:mod:`agentbed.binding`), and its footer
agreeing with the index on status, success and steps); no stray log;
the sealed digests of results.json and the summaries, and results.json's success values
against the episodes; and completeness ("incomplete: N of M"). Each failure is one line.
"""

from __future__ import annotations

import heapq
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed import manifest as mf
from agentbed import rundir
from agentbed.binding import mismatch
from agentbed.code_versions import CodeTally, results_disagree, started_by, unit_header
from agentbed.diskmap import DiskMap, sorted_difference
from agentbed.jsonstream import read_folded
from agentbed.log import verify_and_read
from agentbed.rundir import INDEX, TEAM_SUFFIX, RunDirectory, log_path, member_logs, read_run
from agentbed.seal import KEY_VAR, signature_unchecked
from agentbed.store import RunStore, scan_index
from agentbed.verify_unit import another_episode, check_team, unit_in_progress

MAX_LISTED = 20  # problems of one kind printed before "... and N more"


@dataclass
class RunCheck:
    problems: list[str] = field(default_factory=list)  # every problem, in the order found
    damage: list[str] = field(default_factory=list)  # the problems an interrupted run does not explain
    logs: int = 0
    logs_ok: int = 0
    summary: str = ""
    run_id: str = ""
    signature: str = ""  # the manifest's HMAC: "checked", "not checked" (signed, no key given), "unsigned", "" (none)
    indexed: DiskMap | None = None  # the index's episodes (see _index), kept for sealable()

    def add(self, problem: str, *, damage: bool = True) -> None:
        self.problems.append(problem)
        if damage:
            self.damage.append(problem)

    def sealable(self) -> Iterator[tuple[str, str]]:
        """The indexed episodes and their digests, by id: what a resume goes on sealing."""
        return ((eid, str(record.get("digest", ""))) for eid, record in _records(self.indexed))


def is_run_dir(root: Path) -> bool:
    """A directory that `agentbed run` wrote, or what is left of one: a run.json with a plan, a
    manifest or a top-level index. Any of them means the whole seal is required."""
    if (root / mf.MANIFEST).exists() or (root / INDEX).exists():
        return True
    if not (root / "run.json").is_file():
        return False
    meta = read_folded(root / "run.json", what="run.json")
    return isinstance(meta, dict) and mf.plan_of(meta) is not None


def check_run(root: Path, key: bytes | None) -> RunCheck:
    """Everything ``agentbed verify RUN_DIR`` checks; malformed files raise InputError (bad
    input), everything else is a problem. Without run.json the sealed plan is checked."""
    out = RunCheck()
    meta = RunStore(root).meta() if (root / "run.json").is_file() else None  # malformed: InputError, exit 2
    if meta is None:
        out.add(f"{root / 'run.json'}: missing: the run's plan and identity are not here (deleted?)")
    doc = _manifest(root, meta, key, out)
    plan = mf.plan_of(meta) if meta is not None else (doc["plan"] if doc else None)
    if plan is None:
        out.summary = "not verified: neither run.json nor a manifest says what the run owes"
        return out
    # Per-episode state lives in DiskMaps (on disk, read back by id), so a run of 100,000
    # episodes is checked without holding its ids, digests or index fields in memory.
    expected = DiskMap(0)
    expected.update((eid,) for eid in mf.planned_ids(plan))
    planned = len(expected)
    sealed = DiskMap(keep="last")  # as dict(pairs) reads a manifest that lists an id twice
    if doc:
        _manifest_plan(root, doc, plan, expected, planned, out)
        sealed.update(tuple(pair) for pair in doc["episodes"])
        mf.close(doc)
        doc = {**doc, "episodes": None}  # the pairs are in ``sealed`` now
    out.signature = _signature(doc, key)
    final = bool(doc and doc["final"])
    indexed, finished = _index(root, expected, sealed, final, out)
    for eid in sorted_difference(sealed.keys(), indexed.keys()):
        out.add(f"{root / INDEX}: does not list {eid}, which the manifest seals (the index was trimmed or emptied)")
    out.indexed = indexed
    layout = read_run(root, manifest=doc)
    code = CodeTally(started_by(meta) if meta else None)  # the code versions the verified logs name
    _logs(root, sealed, indexed, key, out, meta, code)
    _strays(layout, expected, sealed, indexed, final, out, str(meta.get("run_id", "")) if meta else "")
    if doc:
        _files(root, doc, indexed, out, code)
    n_sealed = len(sealed)
    same = n_sealed == planned and not any(True for _ in sorted_difference(sealed.keys(), expected.keys()))
    complete = bool(doc and doc["complete"] and final) and finished == planned and same
    if doc and doc["complete"] and not same:
        out.add(f"{root / mf.MANIFEST}: says complete but seals {n_sealed} of {planned} planned episodes")
    if doc and not final:
        out.add(f"{root / mf.MANIFEST}: not final: the run was interrupted or is still running", damage=False)
    if not complete:
        out.add(f"incomplete: {finished} of {planned} episodes finished, {n_sealed} sealed", damage=False)
    out.summary = f"run {'complete' if complete else 'incomplete'} (id {out.run_id or '?'}), " \
                  f"{planned} episodes planned, {_seal_words(doc, key)}" + \
                  (f"; {code.words(plan['suite'])}" if code.mixed else "")
    return out


def _union(a: Iterator[str], b: Iterator[str]) -> Iterator[str]:
    """``sorted(set(a) | set(b))`` of two sorted streams of distinct keys."""
    return (key for key, _ in itertools.groupby(heapq.merge(a, b)))


def _records(indexed: DiskMap | None) -> Iterator[tuple[str, dict[str, Any]]]:
    for eid, _, fields in indexed.items() if indexed is not None else ():
        yield eid, json.loads(fields)


def _signature(doc: dict[str, Any] | None, key: bytes | None) -> str:
    if not doc:
        return ""
    if key is not None:
        return "checked"
    return "not checked" if doc.get("mac") else "unsigned"


def _seal_words(doc: dict[str, Any] | None, key: bytes | None) -> str:
    if not doc:
        return "unsealed"
    signer = f"key id {doc['key_id']}" if doc.get("key_id") else "no key"
    if key is not None:
        return f"root {doc['root'][:16]}, HMAC checked (signed with {signer})"
    if doc.get("mac"):
        return f"root {doc['root'][:16]}, {signature_unchecked(doc.get('key_id'))}; set {KEY_VAR} to check it"
    return f"root {doc['root'][:16]}, no key: HMAC not checked (unsigned)"


def _manifest(root: Path, meta: dict[str, Any] | None, key: bytes | None, out: RunCheck) -> dict[str, Any] | None:
    where = root / mf.MANIFEST
    if not where.exists():
        out.add(f"{where}: missing: the run is not sealed (written before manifests, or deleted)")
        out.run_id = str(meta.get("run_id", "")) if meta else ""
        return None
    doc = mf.load(root, streamed=True)  # malformed: InputError, exit 2; its pairs read as they are used
    why = mf.authentic(doc, key)
    if why:
        out.add(f"{where}: {why}")
    out.run_id = doc["run_id"]
    if meta is not None and "run_id" not in meta:
        out.add(f"{root / 'run.json'}: field 'run_id' is missing (run.json edited, or written before runs carried one)")
    elif meta is not None and meta["run_id"] != doc["run_id"]:
        out.add(f"{where}: belongs to run {doc['run_id']}, not to run {meta['run_id']} of run.json "
                "(a manifest from another run)")
    if "run.json" not in doc["files"]:
        out.add(f"{where}: does not seal run.json")
    if doc["final"] and (root / INDEX).exists() and INDEX not in doc["files"]:
        out.add(f"{where}: is final but does not seal {INDEX}")
    return doc


def _manifest_plan(root: Path, doc: dict[str, Any], plan: dict[str, Any], expected: DiskMap, planned: int,
                   out: RunCheck) -> None:
    where = root / mf.MANIFEST
    for name in mf.PLAN_FIELDS:
        if not _same(doc["plan"].get(name), plan.get(name)):
            out.add(f"{root / 'run.json'}: field {name!r} differs from the plan the manifest sealed")
    if not _root_holds(doc["episodes"], doc["root"]):
        out.add(f"{where}: the Merkle root does not match its episodes")
    if doc["expected"] != planned:
        out.add(f"{where}: field 'expected' is {doc['expected']}, the plan has {planned} episodes")
    foreign = (eid for eid, _ in doc["episodes"] if eid not in expected)
    for eid in itertools.islice(foreign, MAX_LISTED):
        out.add(f"{where}: seals {eid}, which is not in the run's plan")


def _same(a: Any, b: Any) -> bool:
    """``a == b``, where seeds read as a range equal the list of the same integers (as the lists
    they were read from compared)."""
    if isinstance(a, range) or isinstance(b, range):
        return (isinstance(a, range | list) and isinstance(b, range | list) and len(a) == len(b)
                and all(x == y for x, y in zip(a, b, strict=True)))
    return bool(a == b)


def _root_holds(pairs: Iterable[list[str]], root: str) -> bool:
    """The manifest's pairs are sorted, each id once, and their Merkle root is ``root``; one pass,
    no copy (sorted pairs of distinct ids: each pair's id above the one before)."""
    fold = mf.MerkleFold()
    last: str | None = None
    for eid, digest in pairs:
        if last is not None and eid <= last:
            return False
        fold.add(eid, digest)
        last = eid
    return fold.root() == root


def _index(root: Path, expected: DiskMap, sealed: DiskMap, final: bool, out: RunCheck) -> tuple[DiskMap, int]:
    """The index's episodes, first line per id (``id -> (line number, checked fields as JSON)``),
    and how many of them the plan owes."""
    indexed = DiskMap(2)
    finished = 0
    for number, _, _, full in scan_index(root / INDEX, None):  # malformed: InputError, exit 2
        record = _checked_fields(full)
        eid = record["episode_id"]
        at = f"{root / INDEX}: line {number}"
        first = indexed.get(eid)
        if first is not None:
            out.add(f"{at}: lists {eid} again (first on line {first[0]}): two writers, or an edit")
            continue
        indexed.add(eid, number, json.dumps(record))
        seal = sealed.get(eid)
        if eid not in expected:
            out.add(f"{at}: {eid} is not in the run's plan (a log from another run?)")
            continue
        finished += 1
        if seal is not None and record.get("digest") != seal[0]:
            out.add(f"{at}: the digest of {eid} differs from the one the manifest sealed")
        elif seal is None and final:
            out.add(f"{at}: {eid} is not in the manifest, which is final (added after the run?)")
    return indexed, finished


# what verify reads of an index line (the log's place, digest and footer fields, results.json's unit
# and whether it errored): a 100,000-episode run is checked without holding its whole index
_CHECKED = ("episode_id", "log", "digest", "status", "success", "steps", "suite", "agent", "options", "task", "seed")


def _checked_fields(record: dict[str, Any]) -> dict[str, Any]:
    kept = {k: record[k] for k in _CHECKED if k in record}
    if record.get("status") == "error" and "error" in record:
        kept["error"] = record["error"]
    return kept


def _logs(root: Path, sealed: DiskMap, indexed: DiskMap, key: bytes | None, out: RunCheck,
          meta: dict[str, Any] | None, code: CodeTally) -> None:
    records = _records(indexed)
    at = next(records, None)
    for eid in _union(sealed.keys(), indexed.keys()):
        while at is not None and at[0] < eid:
            at = next(records, None)
        record = at[1] if at is not None and at[0] == eid else {}
        seal = sealed.get(eid)
        sealed_digest = seal[0] if seal is not None else None
        path = log_path(root, root, record) if record else RunStore(root).log_path(eid)
        out.logs += 1
        if rundir.leads_out(path, root):
            out.add(f"{path}: a link out of the run directory; not followed (the log of {eid})")
            continue
        if not path.is_file():
            out.add(f"{path}: missing (the log of {eid})")
            continue
        if path.name.endswith(TEAM_SUFFIX):  # a multi-agent unit: its manifest ties its members' logs
            problems = check_team(path, sealed_digest or record.get("digest") or "", key, meta)
            for problem in problems:
                out.add(problem)
            out.logs_ok += not problems
            if not problems:
                code.add((unit_header(path) or {}).get("provenance"))
            continue
        result, log = verify_and_read(path, sealed_digest or record.get("digest") or None, key)
        if not result.ok:
            out.add(result.message(str(path)))
            continue
        foreign = mismatch(log[0], meta) if meta is not None and "run_id" in meta else ""
        if foreign:  # a log of another run, or of this plan under other settings (agentbed.binding)
            out.add(f"{path}: {foreign}")
            continue
        copied = another_episode(log[0], eid, record)
        if copied:
            out.add(f"{path}: {copied}")
            continue
        footer = log[-1]
        differs = [k for k in ("status", "success", "steps") if k in record and record[k] != footer.get(k)]
        if differs:
            out.add(f"{root / INDEX}: {eid}: {differs[0]} is {record[differs[0]]!r}, its log's footer says "
                    f"{footer.get(differs[0])!r}")
            continue
        out.logs_ok += 1
        code.add(log[0].get("provenance"))


def _strays(layout: RunDirectory, expected: DiskMap, sealed: DiskMap, indexed: DiskMap,
            final: bool, out: RunCheck, run_id: str = "") -> None:
    """Logs of no planned episode; once the manifest is final, also logs it does not seal (a
    resume would not re-run them) and any other JSON or JSONL file it does not seal (outside the
    folders export and branch write later), since a reader might take it for the run's."""
    members = {p.stem for p in member_logs(layout.root, (r for _, r in _records(indexed)))}
    strays = sorted(p for p in layout.episode_logs(ordered=False)
                    if p.stem not in members and p.stem not in sealed and p.stem not in indexed
                    and (p.stem not in expected or final) and (final or not unit_in_progress(p, run_id)))
    for path in strays[:MAX_LISTED]:
        out.add(f"{path}: stray log: " + ("no episode of the run's plan" if path.stem not in expected
                                          else "not sealed by the final manifest (added after the run?)"))
    if len(strays) > MAX_LISTED:
        out.add(f"... and {len(strays) - MAX_LISTED} more stray logs")
    if final and layout.sealed is not None:
        for path in layout.unsealed_files()[:MAX_LISTED]:
            out.add(f"{path}: not sealed by the manifest, which is final (added after the run?)")


def _files(root: Path, doc: dict[str, Any], indexed: DiskMap, out: RunCheck, code: CodeTally) -> None:
    for rel, digest in [(mf.MANIFEST, None), *doc["files"].items()]:
        path = root / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            out.add(f"{root / mf.MANIFEST}: seals {rel!r}, a file outside the run directory")
        elif rundir.leads_out(path, root):  # the run does not hold it (as a log, see _logs)
            out.add(f"{path}: a link out of the run directory; not followed")
        elif digest is None:
            continue
        elif not path.is_file():
            out.add(f"{path}: missing (the manifest sealed it)")
        elif mf.file_digest(path) != digest:
            out.add(f"{path}: differs from the digest the manifest sealed (edited after the run?)")
    if doc["final"] and (root / "results.json").is_file():
        _results_agree(root, indexed, out, code)


def _results_agree(root: Path, indexed: DiskMap, out: RunCheck, code: CodeTally) -> None:
    """results.json's success values and errored count are what the (footer-checked) index
    records say, with the run's one definition of an errored episode
    (:func:`agentbed.problems.is_errored`): errored episodes are in no metric. Both sides are
    streamed: results.json's values as the file lists them, the index's recomputed on disk."""
    from agentbed.problems import errored, scored
    from agentbed.results import EpisodeMetrics, StreamedMetrics, load_results

    doc = load_results(root / "results.json", streamed=True)  # malformed: exit 2
    silent = results_disagree(doc, code, str(root / "results.json"))
    if silent:  # not damage: a resume rewrites results.json from the logs
        out.add(silent, damage=False)
    mine = EpisodeMetrics()  # on disk, compared unit by unit as it is read back
    for r in scored(r for _, r in _records(indexed)):
        mine.add(r)
    try:
        for metric in doc["metrics"]:
            key = (metric["suite"], metric["agent"], metric["metric"])
            values = metric["values"]
            if key[2] == "success" and mine.differs(key[0], key[1], values if not isinstance(values, dict)
                                                    else sorted(values.items())):
                out.add(f"{root / 'results.json'}: {'/'.join(key)} differs from the episodes' footers")
    finally:
        if isinstance(doc["metrics"], StreamedMetrics):
            doc["metrics"].close()
    claimed = doc.get("errored_episodes")
    shown = len(errored(r for _, r in _records(indexed))) if isinstance(claimed, int) else 0
    if isinstance(claimed, int) and claimed != shown:
        out.add(f"{root / 'results.json'}: field 'errored_episodes' is {claimed}, the episodes' footers show "
                f"{shown} errored")
