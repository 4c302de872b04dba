"""What binds an episode's log to the run that wrote it.

Each log an ``agentbed run`` writes carries, in its header, a ``run`` member: the run's id (the
random one in run.json and the manifest) and every setting of run.json that changes what an
episode does beyond its id (the share of actions damaged on purpose, a chat model's generation
settings and call timeout, the human approver's policy, any controller chain or prompt profile a run records).
The header is the first record of the hash chain, and a keyed log's footer HMAC covers the whole
chain, so a log cannot be moved into another run, nor a run's settings changed under its logs,
without breaking the chain or, under a key, the HMAC. ``verify`` (and so gate, report and
``--resume``) compares every log's binding with run.json and names a log that differs.
"""

from __future__ import annotations

from typing import Any

# run.json fields that change outcomes and are not in the episode id (the id holds suite, task,
# agent, seed and suite options); a field absent from run.json is absent from the binding
SETTINGS = ("degrade", "generation", "timeout", "approver", "controllers", "controller", "prompt_profile", "protocol")
_NOT_OUTCOME = {"approver": ("folder",)}  # where questions are put, not how they are decided


def settings_of(meta: dict[str, Any]) -> dict[str, Any]:
    """The outcome-changing settings a run.json records (``degrade`` always, 0.0 by default)."""
    out: dict[str, Any] = {"degrade": meta.get("degrade", 0.0)}
    for name in SETTINGS[1:]:
        value = meta.get(name)
        if value in (None, {}, []):
            continue
        if isinstance(value, dict) and name in _NOT_OUTCOME:
            value = {k: v for k, v in value.items() if k not in _NOT_OUTCOME[name]}
        out[name] = value
    return out


def binding(meta: dict[str, Any]) -> dict[str, Any]:
    """The header's ``run`` member for episodes of the run ``meta`` (run.json) describes."""
    return {"id": meta["run_id"], "settings": settings_of(meta)}


def mismatch(header: dict[str, Any], meta: dict[str, Any]) -> str:
    """Why a log's header does not belong to the run ``meta`` describes ("" when it does)."""
    bound = header.get("run")
    if not isinstance(bound, dict):
        return "its header names no run (a log from outside `agentbed run`, or written before logs were bound)"
    if bound.get("id") != meta.get("run_id"):
        return f"a log of another run: its header names run {str(bound.get('id'))[:40]}, not {meta.get('run_id')}"
    mine = settings_of(meta)
    theirs: dict[str, Any] = bound["settings"] if isinstance(bound.get("settings"), dict) else {}
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            return (f"its header's setting {name!r} is {theirs.get(name)!r}, run.json's is {mine.get(name)!r} "
                    "(written under other settings)")
    return ""
