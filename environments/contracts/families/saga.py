"""A three-service booking saga whose compensations have a deadline (the published
multi-service-saga pattern).

Each forward step (flight, hotel, car) returns a compensation token; the payment step then
declines, the saga aborts, and every completed step must be undone with its own token, in
reverse order (out of order is 409, graded SHORTCUT_TAKEN), before the compensation deadline.
A token is single use; a compensation after the deadline is refused (the reservation already
converted into a no-show charge).
Task params: ``ttl`` (compensation deadline, seconds after the abort).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import token
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

SERVICES = ("flight", "hotel", "car")


@register
class BookingSaga(Family["ContractEnv"]):
    name = "booking-saga"
    title = "Booking saga: per-service compensation tokens undone in reverse order before a deadline"
    catalogue = ()
    labels = {"EXPIRED_BEFORE_USE": None, "SHORTCUT_TAKEN": None}
    final_tool = "compensate"
    tools = (
        tool("reserve", "Reserve one service of the trip (flight, hotel, car): a booking and its compensation token.",
             cost=1.0, service={"type": "string", "enum": list(SERVICES)}),
        tool("charge_card", "Charge the traveller for the whole trip.", cost=2.0),
        tool("compensate", "Cancel one reservation with its compensation token.", cost=1.0,
             service={"type": "string", "enum": list(SERVICES)}, compensation_token={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"tokens": {}, "spent": [], "undone": [], "deadline": None}

    def instruction(self, p: Any) -> str:
        return ("reserve flight, hotel and car, then charge_card. If the charge is declined the saga aborts: "
                "compensate every reservation with its own compensation token, in reverse order (car, hotel, "
                f"flight), within {p['ttl']} s of the abort.")

    def plan(self, p: Any) -> list[Step]:
        slot = "{}_compensation_token".format
        return ([Step("reserve", {"service": s}, produces=(slot(s),)) for s in SERVICES]
                + [Step("charge_card", produces=("compensate_by",))]
                + [Step("compensate", {"service": s, "compensation_token": Ref(slot(s))})
                   for s in reversed(SERVICES)])

    def tool_reserve(self, env: ContractEnv, service: str) -> Any:
        value = token(env.np_random, 72, f"cmp_{service}_")
        env.fam["tokens"][value] = service
        slot = f"{service}_compensation_token"
        return env.ok({"service": service, "booking": token(env.np_random, 6, "bk_"), slot: env.issue(slot, value)})

    alternatives = {"order:reserve(*) before reserve(*)": "the instruction lists the reservations, not an order "
                    "between them; the compensations' order is enforced"}

    def tool_charge_card(self, env: ContractEnv) -> Any:
        missing = [s for s in SERVICES if s not in env.fam["tokens"].values()]
        if missing:  # the saga charges once every leg is reserved
            return env.respond(409, {"error": "saga_incomplete", "message": "Reserve " + ", ".join(missing) + " first."})
        env.fam["deadline"] = env.clock.now() + env.p["ttl"]
        return env.ok({"charge": "declined", "decline_code": "insufficient_funds", "saga": "aborted",
                       "compensate": sorted(set(env.fam["tokens"].values()), key=SERVICES.index, reverse=True),
                       "compensate_by": env.fam["deadline"]})

    def tool_compensate(self, env: ContractEnv, service: str, compensation_token: str) -> Any:
        slots = {f"{service}_compensation_token": "compensation_token"}
        owner = env.fam["tokens"].get(compensation_token)
        deadline = env.fam["deadline"]
        if owner != service:
            verdict = reject_integrity(404, {"error": "invalid_compensation_token",
                                             "message": f"No {service} reservation has this compensation token."})
        elif compensation_token in env.fam["spent"]:
            verdict = reject_validity("REPLAYED", 409, {"error": "already_compensated",
                                                        "message": "This reservation was already cancelled."})
        elif deadline is None:
            return env.respond(409, {"error": "saga_active", "message": "The saga has not aborted; nothing to undo."})
        elif env.clock.now() > deadline:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 410, {
                "error": "compensation_window_closed",
                "message": "The cancellation deadline passed; the reservation was charged as a no-show."})
        else:
            pending = [s for s in reversed(SERVICES) if s in env.fam["tokens"].values() and s not in env.fam["undone"]]
            if pending and pending[0] != service:  # undoing out of order skips a later step's compensation
                return env.present(slots, reject_validity("SHORTCUT_TAKEN", 409, {
                    "error": "compensation_order", "message": f"Compensate {pending[0]} first."}))
            env.fam["spent"].append(compensation_token)
            env.fam["undone"].append(service)
            verdict = accept({"service": service, "status": "cancelled", "refund": "full"})
        done = sorted(env.fam["undone"]) == sorted(SERVICES)
        return env.present(slots, verdict, final=done)
