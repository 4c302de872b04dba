"""What other verbs make of ``agentbed verify``'s check (:func:`agentbed.verify_run.check_run`):
the seal verdict the report and the viewer open with, whether the gate may trust a results
file, and whether ``agentbed run --resume`` may go on with a recorded run. Each runs the very
same check, never a second reading of the seal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed import manifest as mf
from agentbed.errors import UsageError
from agentbed.seal import KEY_VAR, key_id, log_key
from agentbed.store import RunStore
from agentbed.validate import InputError, read_json
from agentbed.verify_run import check_run, is_run_dir


@dataclass
class ResultsSeal:
    """Whether a results file can be trusted, for the gate: ``problems`` empty when it can."""
    results: Path
    sealed: bool  # part of a run directory, checked as ``verify`` checks it
    problems: list[str]
    summary: str


def results_seal(path: Path, key: bytes | None) -> ResultsSeal:
    """The results file behind ``gate PATH`` and whether to trust it. A run directory (or its
    results.json) is checked whole, as ``verify`` does: any problem, incompleteness included,
    and it is not judged. A results file outside any run is unsealed: refused under a key
    (nothing signed vouches for it), taken as it is without one."""
    results = path / "results.json" if path.is_dir() else path
    root = results.parent
    if results.name == "results.json" and is_run_dir(root):
        check = check_run(root, key)
        return ResultsSeal(results, True, check.problems, check.summary)
    claimed = read_json(results, what="results file") if results.is_file() else None
    if isinstance(claimed, dict) and claimed.get("seal") == mf.MANIFEST:
        return ResultsSeal(results, True, [f"{results}: written by `agentbed run` and sealed by its manifest, but "
                                           "its directory holds neither run.json, a manifest nor an index "
                                           "(deleted?)"], "unsealed")
    if key is not None:
        return ResultsSeal(results, False, [f"{results}: not part of a sealed run directory, and a key is set "
                                            f"({KEY_VAR}): nothing signed vouches for it"], "unsealed")
    return ResultsSeal(results, False, [], "unsealed results (no run directory, no key): their origin is unchecked")


@dataclass
class SealStatus:
    """What the report shows at its top: ``state`` is verified, incomplete, failed, malformed
    or unsealed; ``trusted`` is whether the report may call the run verified."""
    state: str
    headline: str
    problems: list[str] = field(default_factory=list)
    signature: str = ""  # RunCheck.signature: "not checked" when the run is signed and no key was given

    @property
    def trusted(self) -> bool:
        return self.state == "verified"


def seal_status(root: Path, key: bytes | None) -> SealStatus:
    """The same verification as ``agentbed verify RUN_DIR`` (with the key when set), for the report."""
    try:
        if not is_run_dir(root):
            if key is not None:
                return SealStatus("unsealed", f"not a sealed run (no manifest), and a key is set ({KEY_VAR}): its "
                                              "summaries are signed by nothing; logs' HMACs are checked one by one")
            return SealStatus("unsealed", "not a sealed run (no manifest, e.g. `agentbed demo`): only each log's "
                                          "hash chain is checked", [])
        check = check_run(root, key)
    except InputError as exc:
        return SealStatus("malformed", f"not verified: {exc}", [str(exc)])
    if check.damage:
        return SealStatus("failed", f"seal FAILED: {len(check.damage)} problem(s); {check.summary}", check.problems)
    if check.problems:
        return SealStatus("incomplete", f"seal holds, run incomplete: {check.summary}", check.problems)
    if check.signature == "not checked":  # said first: the hash chains hold, the signature was not looked at
        return SealStatus("verified", f"seal verified except its signature, which was NOT checked: no key was given "
                                      f"({KEY_VAR} unset); {check.summary}", signature=check.signature)
    return SealStatus("verified", f"seal verified: {check.summary}" + ("" if key else
                      f" ({KEY_VAR} unset: a forger who re-hashes every file is not caught)"), signature=check.signature)


def open_for_resume(store: RunStore) -> dict[str, Any]:
    """Take a recorded run's writer lock to finish it, once it verifies as ``agentbed verify``
    verifies it (with the key when set): a signed run without the key or under another key, and
    a run with any damage (named), are refused, so a resume never weakens a seal, never seals a
    forgery and never overwrites a sealed log. Only what an interrupted run leaves (episodes
    still owed, a manifest not yet final) is fine. Returns run.json."""
    store.lock()
    meta = store.meta()
    if mf.plan_of(meta) is None:
        return store.open_existing()
    key = log_key()
    where = store.root / mf.MANIFEST
    if where.is_file():
        doc = mf.load(store.root, streamed=True)
        mf.close(doc)  # only its key fields are read here
        if doc.get("mac") and key is None:
            raise UsageError(f"{where}: the run is signed (key id {doc['key_id']}); set {KEY_VAR} to the key that "
                             "signed it to resume (without it the seal would be lost)")
        if key is not None and doc.get("key_id") not in (None, key_id(key)):
            raise UsageError(f"{where}: the run is signed under another key (key id {doc['key_id']}; the key set "
                             f"has id {key_id(key)}); not resuming")
    check = check_run(store.root, key)
    if check.damage:
        more = f" (and {len(check.damage) - 1} more)" if len(check.damage) > 1 else ""
        raise UsageError(f"{check.damage[0]}{more}; not resuming (see agentbed verify {store.root})")
    return store.open_existing(check.sealable())
