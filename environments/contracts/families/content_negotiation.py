"""An export converted through a chain of formats by content negotiation (the published
content-negotiation-chain pattern).

RFC 9110 12.5.1: the client names the representation it wants in Accept; a server that cannot
produce it answers 406 Not Acceptable (15.5.7) listing what it can. Each step of the chain
answers with a single-use conversion ticket and the media type the next request must accept;
a ticket used twice is answered 410 Gone (a replay).
Task params: ``formats`` (steps of the chain, at most 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    register,
    reject_integrity,
    reject_validity,
)
from environments.contracts.family import accept as accepted

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

CHAIN = ("application/vnd.agentbed.report+json; version=2; charset=utf-8",
         "text/csv; header=present; charset=utf-8",
         "application/vnd.apache.parquet; compression=zstd",
         "application/pdf; profile=\"urn:iso:std:iso:19005:-3\"")


def media_key(value: str) -> tuple[str, tuple[str, ...]]:
    """A media type as RFC 9110 8.3.1 compares it: type/subtype case-insensitive, parameters
    with case-insensitive names, order-insensitive."""
    parts = [p.strip() for p in value.split(";")]
    params = sorted(p.split("=", 1)[0].strip().lower() + "=" + p.split("=", 1)[1].strip()
                    for p in parts[1:] if "=" in p)
    return parts[0].lower(), tuple(params)


@register
class ContentNegotiation(Family["ContractEnv"]):
    name = "content-negotiation"
    title = "Format chain by content negotiation: Accept + single-use tickets (RFC 9110 12.5.1, 406)"
    catalogue = ()
    labels = {"REPLAYED": None}
    final_tool = "convert"
    tools = (
        tool("start_export", "Start a report export: a conversion ticket and the media type to request next.",
             cost=1.0),
        tool("convert", "GET the next representation: Accept header and the current conversion ticket.", cost=2.0,
             accept={"type": "string"}, ticket={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"live": {}, "spent": [], "done": 0}

    def instruction(self, p: Any) -> str:
        return ("start_export, then call convert repeatedly with accept = the next_accept media type exactly as given "
                "and the latest ticket, until the final format is delivered. Each ticket is single use.")

    def plan(self, p: Any) -> list[Step]:
        step = Step("convert", {"accept": Ref("next_accept"), "ticket": Ref("ticket")},
                    produces=("next_accept", "ticket"))
        return [Step("start_export", produces=("next_accept", "ticket"))] + [step] * p.get("formats", len(CHAIN))

    def _ticket(self, env: ContractEnv, step: int) -> dict[str, str]:
        ticket = env.issue("ticket", token(env.np_random, 20, "cvt_"))
        env.fam["live"][ticket] = step
        return {"ticket": ticket, "next_accept": env.issue("next_accept", CHAIN[step])}

    def tool_start_export(self, env: ContractEnv) -> Any:
        return env.ok({"export": "quarterly-report", **self._ticket(env, 0)})

    def tool_convert(self, env: ContractEnv, accept: str, ticket: str) -> Any:
        slots = {"ticket": "ticket", "next_accept": "accept"}
        step = env.fam["live"].get(ticket)
        if step is None:
            body = {"error": "gone", "message": "This conversion ticket was already used."}
            verdict = (reject_validity("REPLAYED", 410, body) if ticket in env.fam["spent"]
                       else reject_integrity(404, {"error": "not_found", "message": "Unknown conversion ticket."}))
            return env.present(slots, verdict)
        if media_key(accept) != media_key(CHAIN[step]):
            return env.present(slots, reject_integrity(406, {"error": "not_acceptable",
                                                             "message": "No representation matches Accept.",
                                                             "available": [CHAIN[step]]}))
        del env.fam["live"][ticket]
        env.fam["spent"].append(ticket)
        last = step + 1 >= env.p.get("formats", len(CHAIN))
        body = {"content_type": CHAIN[step], "bytes": 1024 * (step + 1)}
        if not last:
            body.update(self._ticket(env, step + 1))
        return env.present(slots, accepted(body), final=last)
