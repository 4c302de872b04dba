"""The viewer's side of the human-approval rendezvous (:mod:`agentbed.approval`): it lists the
questions a run is waiting on and writes a person's decision beside them. The folder is the
run's ``--approvals DIR``, outside every run directory, so the viewer still writes nothing into
a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agentbed.approval import check_decision, decision_path, pending_requests, request_path
from agentbed.errors import UsageError
from agentbed.rendezvous import write_once
from agentbed.validate import InputError


class ApprovalBoard:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def pending(self) -> list[dict[str, Any]]:
        now = time.time()
        out = []
        for request in pending_requests(self.folder):
            if "problem" not in request:
                request = {**request, "seconds_left": max(0.0, round(request["deadline"] - now, 1))}
            out.append(request)
        return out

    def decide(self, doc: Any) -> dict[str, Any]:
        """Write a decision for a waiting question; a second decision on the same one is refused."""
        if not isinstance(doc, dict):
            raise UsageError("a decision is a JSON object")
        doc = {k: v for k, v in doc.items() if k in ("key", "decision", "author", "action", "agent", "reason")}
        doc.setdefault("author", "viewer")
        key = doc.get("key")
        if not isinstance(key, str) or "/" in key or key.startswith("."):
            raise UsageError("field 'key' names no question")
        request = request_path(self.folder, key)
        if not request.is_file() or request.is_symlink():
            raise UsageError(f"no question {key!r} is waiting (answered, timed out, or never asked)")
        agents = next((r.get("agents") for r in pending_requests(self.folder) if r.get("key") == key), None)
        try:
            check_decision(doc, "decision", agents, key)
        except InputError as exc:
            raise UsageError(str(exc)) from None
        if not write_once(decision_path(self.folder, key), doc):  # the run records it as come by file
            raise UsageError(f"question {key!r} was already answered")
        return {"ok": True, "key": key, "decision": doc["decision"]}
