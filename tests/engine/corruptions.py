"""Corrupted copies of a finished run, as a set every surface can be tried on (issue 46).

:func:`forgeries` is every forgery a writer without the key can make of every file of a run
(delete, garble, a consistent-looking replacement, a replay from another run of the same plan,
a duplicate), used by ``test_forgery`` against verify, gate, report and resume. :func:`named`
adds the hand-made corruptions of ``test_seal``, ``test_splice`` and the viewer's seal test
(a log edited by hand, an episode listed twice, a re-chained log with the index patched, a
resealed manifest, a log of another run or of the same plan under other settings, a stray
log, a trimmed index). ``tests/view/test_view_seal.py`` gives every one to both verify and
the viewer, which must agree.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from bad_input_corpus import rechain

from agentbed import manifest

Corrupt = Callable[[Path], object]


def files_of(run: Path) -> list[str]:
    return sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file() and p.name != ".lock")


def _replace(path: Path) -> bytes:
    """A consistent-looking edit of the file, as a keyless forger would write it."""
    data = path.read_bytes()
    if path.suffix == ".jsonl" and path.parent.name == "episodes":  # a log: flip success, re-chain, drop the mac
        records = [json.loads(line) for line in data.splitlines()]
        records[-1]["success"] = not records[-1].get("success")
        records[-1].pop("mac", None)
        return rechain(records)
    if path.name == "index.jsonl":
        lines = [json.loads(line) for line in data.splitlines()]
        lines[0]["success"] = not lines[0]["success"]
        return b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in lines)
    doc = json.loads(data)
    if path.name == "results.json":
        for metric in doc["metrics"]:
            metric["values"] = {u: 1.0 - v for u, v in metric["values"].items()}
    elif path.name == "manifest.json":
        doc["complete"], doc["forged"] = True, True
    else:
        doc["forged"] = True
    return json.dumps(doc, indent=1, sort_keys=True).encode()


def _garble(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]


def forgeries(run: Path, twin: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    """(description, how to apply it to a copy of ``run``) for every file and every forgery."""
    for rel in files_of(run):
        yield f"delete {rel}", lambda d, rel=rel: (d / rel).unlink()
        yield f"garble {rel}", lambda d, rel=rel: (d / rel).write_bytes(_garble((d / rel).read_bytes()))
        yield f"replace {rel}", lambda d, rel=rel: (d / rel).write_bytes(_replace(d / rel))
        if (twin / rel).is_file() and (twin / rel).read_bytes() != (run / rel).read_bytes():
            yield f"replay {rel} from another run", lambda d, rel=rel: shutil.copy(twin / rel, d / rel)
        if rel == "index.jsonl":
            yield "duplicate an index line (forged, first)", _forged_first_line
        else:
            copy = Path(rel).with_name(Path(rel).stem + "-copy" + Path(rel).suffix).as_posix()
            yield f"duplicate {rel} as {copy}", lambda d, rel=rel, copy=copy: shutil.copy(d / rel, d / copy)
    yield "drop an episode everywhere (log, index line, manifest entry)", _drop_episode
    yield "swap in the other run's manifest and run.json", lambda d: [shutil.copy(twin / f, d / f) for f in
                                                                       ("manifest.json", "run.json")]


def _forged_first_line(run: Path) -> None:
    lines = (run / "index.jsonl").read_text().splitlines()
    forged = {**json.loads(lines[0]), "success": False}
    (run / "index.jsonl").write_text("\n".join([json.dumps(forged, sort_keys=True), *lines]) + "\n")


def _drop_episode(run: Path) -> None:
    lines = [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]
    gone = lines.pop()
    (run / gone["log"]).unlink()
    (run / "index.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in lines))
    doc = manifest.load(run)
    episodes = {e: d for e, d in doc["episodes"] if e != gone["episode_id"]}
    files = {rel: manifest.file_digest(run / rel) for rel in doc["files"]}
    resealed = manifest.build(doc["plan"], episodes, run_id=doc["run_id"], complete=True, final=True, files=files)
    (run / "manifest.json").write_text(json.dumps(resealed))  # no key to sign it with


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines() if line]


def _write_index(run: Path, records: list[dict]) -> None:
    (run / "index.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def _rechained(run: Path, rel: str) -> str:
    """Flip a log's success and re-chain it without the key; return its new digest."""
    records = [json.loads(line) for line in (run / rel).read_text().splitlines()]
    records[-1]["success"] = not records[-1].get("success")
    records[-1].pop("mac", None)
    (run / rel).write_bytes(rechain(records))
    return (run / rel).read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1][-66:-2].decode()


def _patched(run: Path, rel: str, digest: str, **fields: object) -> None:
    _write_index(run, [{**r, "digest": digest, **fields} if r["log"] == rel else r for r in _records(run)])


def _reseal(run: Path) -> None:
    """Rewrite the manifest to match the directory as it is now, as a keyless forger can."""
    doc = manifest.load(run)
    episodes = {r["episode_id"]: r["digest"] for r in _records(run)}
    files = {rel: manifest.file_digest(run / rel) for rel in doc["files"]}
    resealed = manifest.build(doc["plan"], episodes, run_id=doc["run_id"], complete=True, final=True, files=files)
    (run / "manifest.json").write_text(json.dumps(resealed))


def _log_from(donor: Path) -> Corrupt:
    """A log of ``donor`` (another run of the plan) in place of this run's, the index fixed to it."""
    def corrupt(run: Path) -> None:
        record = _records(run)[0]
        shutil.copy(donor / record["log"], run / record["log"])
        digest = {r["episode_id"]: r["digest"] for r in _records(donor)}[record["episode_id"]]
        _patched(run, record["log"], digest)
    return corrupt


def log_from_resealed(donor: Path) -> Corrupt:
    """:func:`_log_from`, then the manifest resealed without the key: all a keyless forger can
    do, so only the log's own header (its run binding) still tells it apart."""
    def corrupt(run: Path) -> None:
        _log_from(donor)(run)
        _reseal(run)
    return corrupt


def _edit_by_hand(run: Path) -> None:
    log = run / _records(run)[0]["log"]
    data = log.read_bytes()
    was, now = (b'"success":true', b'"success":false') if b'"success":true' in data else \
        (b'"success":false', b'"success":true')
    log.write_bytes(data.replace(was, now, 1))


def _listed_twice(run: Path) -> None:
    first = (run / "index.jsonl").read_text().splitlines()[0]
    with open(run / "index.jsonl", "a") as fh:
        fh.write(first + "\n")


def _rechained_with_index(run: Path) -> None:
    rel = _records(run)[0]["log"]
    _patched(run, rel, _rechained(run, rel))


def _rechained_and_resealed(run: Path) -> None:
    _rechained_with_index(run)
    _reseal(run)


def _success_edited_in_the_index(run: Path) -> None:
    _write_index(run, [{**r, "success": not r["success"]} if i == 0 else r for i, r in enumerate(_records(run))])


def _index_trimmed(run: Path) -> None:
    _write_index(run, _records(run)[:-1])


def _index_emptied(run: Path) -> None:
    (run / "index.jsonl").write_text("")


def _manifest_trimmed(run: Path) -> None:
    doc = manifest.load(run)
    doc["episodes"] = doc["episodes"][:-1]
    (run / "manifest.json").write_text(json.dumps(doc))


def _stray_log(run: Path) -> None:
    first = run / _records(run)[0]["log"]
    shutil.copy(first, first.with_name("vault.open-fast.oracle.s10.jsonl"))


def named(twin: Path, other_settings: Path) -> Iterator[tuple[str, Corrupt]]:
    """The hand-made corruptions (see the module's docstring). ``twin``: another run of the same
    plan and key; ``other_settings``: a run of the same plan under other settings (``--degrade``)."""
    yield "a log edited by hand", _edit_by_hand
    yield "an episode listed twice in the index", _listed_twice
    yield "a log re-chained without the key, its index digest patched", _rechained_with_index
    yield "a log re-chained, the index patched and the manifest resealed without the key", _rechained_and_resealed
    yield "success edited in the index", _success_edited_in_the_index
    yield "the index trimmed", _index_trimmed
    yield "the index emptied", _index_emptied
    yield "the manifest's episodes trimmed", _manifest_trimmed
    yield "a stray log beside the run's", _stray_log
    yield "a log of another run of the same key, the index fixed", _log_from(twin)
    yield "a log of another run, the index fixed and the manifest resealed", log_from_resealed(twin)
    yield "a log of the same plan under other settings, the index fixed", _log_from(other_settings)
