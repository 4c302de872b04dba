"""``agentbed verify RUN_DIR`` for a run the run store wrote: is everything the plan owes here,
sealed, and saying the same thing everywhere?

Checked, in order: run.json (validated) against the manifest's plan; the manifest's HMAC
(with a key) and Merkle root; every index line (validated, no duplicates, in the plan, its
digest the sealed one); every sealed or indexed episode's log (chain, digest, HMAC with a key,
schema, and its footer agreeing with the index on status, success and steps); no stray log;
the sealed digests of results.json and the summaries, and results.json's success values
against the episodes; and completeness ("incomplete: N of M"). Each failure is one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed import manifest as mf
from agentbed.log import verify_and_read, verify_log_file
from agentbed.store import INDEX, RunStore, iter_index
from agentbed.validate import InputError, read_json

TEAM_SUFFIX = ".team.json"
TEAM_MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["agents"],
    "properties": {"agents": {"type": "array", "items": {
        "type": "object", "required": ["log"],
        "properties": {"log": {"type": "string", "minLength": 1}, "digest": {"type": ["string", "null"]}}}}},
}

MAX_LISTED = 20  # problems of one kind printed before "... and N more"


@dataclass
class RunCheck:
    problems: list[str] = field(default_factory=list)
    logs: int = 0
    logs_ok: int = 0
    summary: str = ""

    def add(self, problem: str) -> None:
        self.problems.append(problem)


def check_run(root: Path, key: bytes | None) -> RunCheck:
    out = RunCheck()
    meta = RunStore(root).meta()  # malformed run.json: InputError, exit 2
    plan = mf.plan_of(meta)
    assert plan is not None, "check_run needs an agentbed run directory"
    expected = set(mf.expected_ids(plan))
    doc = _manifest(root, plan, expected, key, out)
    sealed = {eid: digest for eid, digest in doc["episodes"]} if doc else {}
    indexed = _index(root, expected, sealed, bool(doc and doc["complete"]), out)
    for eid in sorted(set(sealed) - set(indexed)):
        out.add(f"{root / INDEX}: does not list {eid}, which the manifest seals (the index was trimmed or emptied)")
    _logs(root, sealed, indexed, key, out)
    _strays(root, expected, sealed, indexed, out)
    if doc:
        _files(root, doc, indexed, out)
    finished = len(set(indexed) & expected)
    complete = bool(doc and doc["complete"]) and finished == len(expected) and set(sealed) == expected
    if not complete:
        out.add(f"incomplete: {finished} of {len(expected)} episodes finished, {len(sealed)} sealed")
    seal = (f"root {doc['root'][:16]}, " + ("HMAC checked" if key else "no key: HMAC not checked")) if doc else "unsealed"
    out.summary = f"run {'complete' if complete else 'incomplete'}, {len(expected)} episodes planned, {seal}"
    return out


def _manifest(root: Path, plan: dict[str, Any], expected: set[str], key: bytes | None,
              out: RunCheck) -> dict[str, Any] | None:
    if not (root / mf.MANIFEST).exists():
        out.add(f"{root / mf.MANIFEST}: missing: the run is not sealed (written before manifests, or deleted)")
        return None
    doc = mf.load(root)  # malformed: InputError, exit 2
    where = root / mf.MANIFEST
    why = mf.authentic(doc, key)
    if why:
        out.add(f"{where}: {why}")
    for name in mf.PLAN_FIELDS:
        if doc["plan"].get(name) != plan.get(name):
            out.add(f"{root / 'run.json'}: field {name!r} differs from the plan the manifest sealed")
    pairs = [(eid, digest) for eid, digest in doc["episodes"]]
    if mf.merkle_root(sorted(pairs)) != doc["root"] or pairs != sorted(pairs):
        out.add(f"{where}: the Merkle root does not match its episodes")
    if doc["expected"] != len(expected):
        out.add(f"{where}: field 'expected' is {doc['expected']}, the plan has {len(expected)} episodes")
    for eid in [e for e, _ in pairs if e not in expected][:MAX_LISTED]:
        out.add(f"{where}: seals {eid}, which is not in the run's plan")
    return doc


def _index(root: Path, expected: set[str], sealed: dict[str, str], complete: bool,
           out: RunCheck) -> dict[str, dict[str, Any]]:
    indexed: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    for number, record in iter_index(root / INDEX):  # malformed: InputError, exit 2
        eid = record["episode_id"]
        at = f"{root / INDEX}: line {number}"
        if eid in indexed:
            out.add(f"{at}: lists {eid} again (first on line {lines[eid]}): two writers, or an edit")
            continue
        indexed[eid], lines[eid] = record, number
        if eid not in expected:
            out.add(f"{at}: {eid} is not in the run's plan (a log from another run?)")
        elif eid in sealed and record.get("digest") != sealed[eid]:
            out.add(f"{at}: the digest of {eid} differs from the one the manifest sealed")
        elif eid not in sealed and complete:
            out.add(f"{at}: {eid} is not in the manifest, which is complete (added after the run?)")
    return indexed


def _logs(root: Path, sealed: dict[str, str], indexed: dict[str, dict[str, Any]], key: bytes | None,
          out: RunCheck) -> None:
    for eid in sorted(set(sealed) | set(indexed)):
        record = indexed.get(eid, {})
        path = root / record["log"] if record.get("log") else RunStore(root).log_path(eid)
        out.logs += 1
        if not path.is_file():
            out.add(f"{path}: missing (the log of {eid})")
            continue
        if path.name.endswith(TEAM_SUFFIX):  # a multi-agent unit: its manifest ties its members' logs
            if _team(path, sealed.get(eid) or record.get("digest") or "", key, out):
                out.logs_ok += 1
            continue
        result, records = verify_and_read(path, sealed.get(eid) or record.get("digest") or None, key)
        if not result.ok:
            out.add(result.message(str(path)))
            continue
        footer = records[-1]
        differs = [k for k in ("status", "success", "steps") if k in record and record[k] != footer.get(k)]
        if differs:
            out.add(f"{root / INDEX}: {eid}: {differs[0]} is {record[differs[0]]!r}, its log's footer says "
                    f"{footer.get(differs[0])!r}")
            continue
        out.logs_ok += 1


def _team(path: Path, digest: str, key: bytes | None, out: RunCheck) -> bool:
    problems = check_team(path, digest, key)
    out.problems.extend(problems)
    return not problems


def check_team(path: Path, digest: str | None, key: bytes | None) -> list[str]:
    """A team manifest (CoCoder's unit): its own digest as recorded, then every member's log.
    A malformed manifest or member log raises (bad input)."""
    if digest and mf.file_digest(path) != digest:
        return [f"{path}: differs from the digest the index and manifest recorded for it"]
    problems = []
    for member in read_json(path, what="team manifest", schema=TEAM_MANIFEST_SCHEMA)["agents"]:
        log = path.parent / member["log"]
        if not log.is_file():
            problems.append(f"{path}: member log {member['log']} is missing")
            continue
        result = verify_log_file(log, member.get("digest"), key)
        if not result.ok:
            problems.append(result.message(str(log)))
    return problems


def _team_members(root: Path, indexed: dict[str, Any]) -> set[str]:
    names = set()
    for record in indexed.values():
        if str(record.get("log", "")).endswith(TEAM_SUFFIX) and (root / record["log"]).is_file():
            try:
                doc = read_json(root / record["log"], what="team manifest", schema=TEAM_MANIFEST_SCHEMA)
            except InputError:
                continue  # reported where the unit's log is checked
            names |= {Path(m["log"]).stem for m in doc["agents"]}
    return names


def _strays(root: Path, expected: set[str], sealed: dict[str, str], indexed: dict[str, Any], out: RunCheck) -> None:
    known = set(sealed) | set(indexed) | _team_members(root, indexed)
    strays = [p for p in sorted((root / "episodes").glob("*.jsonl"))
              if p.stem not in known and p.stem not in expected]
    for path in strays[:MAX_LISTED]:
        out.add(f"{path}: stray log: no episode of the run's plan")
    if len(strays) > MAX_LISTED:
        out.add(f"... and {len(strays) - MAX_LISTED} more stray logs")


def _files(root: Path, doc: dict[str, Any], indexed: dict[str, dict[str, Any]], out: RunCheck) -> None:
    for rel, digest in doc["files"].items():
        path = root / rel
        if not path.is_file():
            out.add(f"{path}: missing (the manifest sealed it)")
        elif mf.file_digest(path) != digest:
            out.add(f"{path}: differs from the digest the manifest sealed (edited after the run?)")
    if doc["complete"] and (root / "results.json").is_file():
        _results_agree(root, indexed, out)


def _results_agree(root: Path, indexed: dict[str, dict[str, Any]], out: RunCheck) -> None:
    """results.json's success values are what the (footer-checked) index records say."""
    from agentbed.results import episode_metrics, load_results

    doc = load_results(root / "results.json")  # malformed: exit 2
    mine = {(m["suite"], m["agent"], m["metric"]): m["values"] for m in episode_metrics(list(indexed.values()))}
    for metric in doc["metrics"]:
        key = (metric["suite"], metric["agent"], metric["metric"])
        if key in mine and metric["values"] != mine[key]:
            out.add(f"{root / 'results.json'}: {'/'.join(key)} differs from the episodes' footers")
