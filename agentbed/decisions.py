"""The oversight decisions a log records, as every surface shows them (replay, report, export).

A decision is a step whose proposed action an overseer blocked (``stop``: a ``control`` record,
the action never ran), replaced (``replace``: another action ran), handed to another agent
(``handover``), or approved with a record of its own (a ``continue`` a person or a monitor
signed). Each names who decided (the verdict's ``by``, else the ``by`` inside its record, else
"unnamed controller" for logs written before verdicts named their author) and why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agentbed.log import decode_action

KINDS = {"stop": "blocked", "replace": "replaced", "handover": "handed over", "continue": "approved"}


@dataclass(frozen=True)
class Decision:
    step: int
    kind: str  # stop | replace | handover | continue
    by: str
    reason: str
    proposed: str  # the action the agent proposed (as text; bytes that are not UTF-8 are shown replaced)
    executed: str | None  # what ran instead (None when nothing ran)
    agent: str | None  # whom the episode or step was handed to
    record: dict[str, Any] | None  # the decision's own record (a person's author and latency, a score)

    @property
    def verb(self) -> str:
        return KINDS.get(self.kind, self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verb": self.verb}


def _text(action: Any) -> str:
    if not isinstance(action, str | dict):
        return ""
    try:
        decoded = decode_action(action)
    except Exception:  # noqa: BLE001 - a malformed action field is shown as it is, never raised
        return str(action)
    return decoded if isinstance(decoded, str) else decoded.decode("utf-8", "replace")


def _by(verdict: dict[str, Any]) -> str:
    record = verdict.get("decision")
    inner = record.get("by") if isinstance(record, dict) else None
    return str(verdict.get("by") or inner or "unnamed controller")


def decisions(records: list[dict[str, Any]]) -> list[Decision]:
    """Every decision in a log's records, in step order."""
    out = []
    for r in records:
        if not isinstance(r, dict):
            continue
        if r.get("type") == "control" and isinstance(r.get("verdict"), dict):
            v = r["verdict"]
            out.append(Decision(int(r.get("i") or 0), str(v.get("kind", "stop")), _by(v), str(v.get("reason") or ""),
                                _text(r.get("proposed")), None, v.get("agent"), v.get("decision")))
        elif r.get("type") == "step" and isinstance(r.get("control"), dict):
            v = r["control"]
            kind = str(v.get("kind", "continue"))
            if kind == "continue" and not v.get("decision"):
                continue  # a defense that only set the episode up or changed what was shown
            proposed = _text(v["proposed"]) if "proposed" in v else _text(r.get("action"))
            out.append(Decision(int(r.get("i") or 0), kind, _by(v), str(v.get("reason") or ""), proposed,
                                _text(r.get("action")), v.get("agent"), v.get("decision")))
    return out


def summary_line(found: list[Decision]) -> str:
    """"2 decisions: blocked by guard at step 6 (why) ..." in one line."""
    parts = [f"{d.verb} by {d.by} at step {d.step}" + (f" ({d.reason})" if d.reason else "") for d in found]
    return "; ".join(parts)
