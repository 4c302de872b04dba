"""Appends to an event stream with optimistic concurrency (the published event-sourced-consistency
pattern).

As in EventStoreDB, an append names the stream revision it expects; if another writer appended
meanwhile the append fails with WrongExpectedVersion and the client must re-read and retry.
Here a replica-sync job (a concurrent writer) runs before each of the agent's appends, so every
append conflicts unless the revision is read after it. The task requires job n between the
agent's (n-1)-th and n-th successful append (task params ``chores`` and ``chores_between``), so
skipping a writer or running them all first is SHORTCUT_TAKEN. The stream is closed with the ids
of the agent's events concatenated in order, the proof that exactly those events were written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import hex_token
from environments.contracts.family import (
    Family,
    Join,
    Ref,
    Step,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

WRITER_JOBS = ("replica-sync-1", "replica-sync-2", "replica-sync-3")  # one concurrent writer per append
EVENT_TYPES = ("ItemPicked", "ItemPacked", "ItemShipped")
STREAM = "order-7731"


def wrong_version(expected: Any, actual: int) -> dict[str, Any]:
    return {"error": "WrongExpectedVersion", "message": f"Append failed due to WrongExpectedVersion. Stream: {STREAM},"
            f" Expected version: {expected}, Actual version: {actual}"}


@register
class EventStore(Family["ContractEnv"]):
    name = "event-store"
    title = "Event stream appends with an expected revision (EventStoreDB WrongExpectedVersion)"
    catalogue = ()
    labels = {"STALE_PRECONDITION": None}
    final_tool = "close_stream"
    tools = (
        tool("read_stream", "Read the order stream: its current revision and events.", cost=1.0),
        tool("append_event", "Append an event, expecting the stream to be at expected_revision.", cost=1.0,
             expected_revision={"type": "integer"}, event_type={"type": "string", "maxLength": 100}),
        tool("close_stream", "Close the stream with the ids of your events concatenated in order (no separators).",
             cost=1.0, event_ids={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"events": [{"id": hex_token(rng, 16), "type": "OrderPlaced", "by": "shop"}], "mine": []}

    def instruction(self, p: Any) -> str:
        return ("Append ItemPicked, ItemPacked and ItemShipped to the order stream, each with the "
                "stream's current revision (a replica-sync job is another writer appending meanwhile). Then "
                "close_stream with your three event ids concatenated in order.")

    def plan(self, p: Any) -> list[Step]:
        steps: list[Step] = []
        for n, kind in enumerate(EVENT_TYPES, 1):  # the task's chores put writer n before append n
            steps += [Step("read_stream", produces=("revision",), ttl="volatile"),
                      Step("append_event", {"expected_revision": Ref("revision"), "event_type": kind},
                           produces=(f"event_id_{n}",))]
        return steps + [Step("close_stream", {"event_ids": Join(("event_id_1", "event_id_2", "event_id_3"))})]

    def on_job(self, env: ContractEnv, job: str) -> None:
        if job in WRITER_JOBS:
            env.fam["events"].append({"id": hex_token(env.np_random, 16), "type": "StockAdjusted", "by": "replica"})

    def tool_read_stream(self, env: ContractEnv) -> Any:
        revision = len(env.fam["events"]) - 1
        return env.ok({"stream": STREAM, "revision": revision, "events": env.fam["events"]})

    def tool_append_event(self, env: ContractEnv, expected_revision: int, event_type: str) -> Any:
        actual = len(env.fam["events"]) - 1
        if expected_revision == actual:
            event = {"id": hex_token(env.np_random, 16), "type": event_type, "by": "agent"}
            env.fam["events"].append(event)
            env.fam["mine"].append(event["id"])
            n = len(env.fam["mine"])
            env.issue(f"event_id_{n}", event["id"])
            env.issue("event_ids", "".join(env.fam["mine"]))
            verdict = accept({"revision": actual + 1, f"event_id_{n}": event["id"]})
        elif 0 <= expected_revision < actual:
            verdict = reject_validity("STALE_PRECONDITION", 400, wrong_version(expected_revision, actual))
        else:
            verdict = reject_integrity(400, wrong_version(expected_revision, actual))
        return env.present({}, verdict)

    def tool_close_stream(self, env: ContractEnv, event_ids: str) -> Any:
        expected = "".join(env.fam["mine"])
        if len(env.fam["mine"]) == 3 and event_ids == expected:
            verdict = accept({"stream": STREAM, "closed": True, "revision": len(env.fam["events"]) - 1})
        else:
            verdict = reject_integrity(400, {"error": "proof_mismatch", "message": "event_ids is not the "
                                             "concatenation of this writer's events in order."})
        # the goal is the instructed events in order; a stream closed with others is not it
        types = tuple(e["type"] for e in env.fam["events"] if e["id"] in env.fam["mine"])
        return env.present({"event_ids": "event_ids"}, verdict, final=types == EVENT_TYPES)
