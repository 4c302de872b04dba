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


class ApprovalBoards:
    """The approvals of every run under a folder of runs: each run R's questions wait in its
    ``R.approvals`` beside it (``agentbed run --approver human --out runs/h`` asks in
    ``runs/h.approvals``), found afresh on every call, so a run started after the viewer is
    answered too. A question is named by its run's folder and its key."""

    def __init__(self, root: Path) -> None:
        self.folder = Path(root)

    def boards(self) -> list[ApprovalBoard]:
        found = sorted(self.folder.glob("*.approvals")) if self.folder.is_dir() else []
        return [ApprovalBoard(f) for f in found if f.is_dir() and not f.is_symlink()]

    def pending(self) -> list[dict[str, Any]]:
        return [{**request, "approvals": board.folder.name} for board in self.boards() for request in board.pending()]

    def decide(self, doc: Any) -> dict[str, Any]:
        """The decision goes to the one run waiting on its key; a key two runs wait on is refused."""
        key = doc.get("key") if isinstance(doc, dict) else None
        waiting = [b for b in self.boards() if isinstance(key, str) and "/" not in key
                   and any(r.get("key") == key for r in b.pending())]
        if len(waiting) > 1:
            raise UsageError(f"question {key!r} is waiting in {len(waiting)} runs ("
                             + ", ".join(b.folder.name for b in waiting) + "): answer with `agentbed view --approvals DIR`")
        if not waiting:
            raise UsageError(f"no question {key!r} is waiting (answered, timed out, or never asked)")
        return waiting[0].decide(doc)
