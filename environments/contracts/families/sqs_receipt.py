"""SQS receipt handles and the visibility timeout (catalogue row 45).

Each ReceiveMessage returns a new ReceiptHandle; after VisibilityTimeout the message is visible
again and the old handle has expired: 400 InvalidParameterValue "... Reason: The receipt handle
has expired." A corrupted handle: ReceiptHandleIsInvalid "The input receipt handle is invalid."
(github.com/aws/aws-sdk-java/issues/1628). Handles are base64 with '=' padding, like real ones.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from agentbed.tools import tool
from environments.contracts.families.common import hex_token, random_bytes
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


@register
class SqsReceiptHandle(Family["ContractEnv"]):
    name = "sqs-receipt-handle"
    title = "SQS receipt handles and visibility timeout"
    catalogue = (45,)
    labels = {"EXPIRED_BEFORE_USE": None}
    final_tool = "delete_message"
    tools = (tool("receive_message", "ReceiveMessage from the jobs queue (one message).", cost=1.0),
             tool("delete_message", "DeleteMessage with the ReceiptHandle once the job is processed.", cost=1.0,
                  receipt_handle={"type": "string"}))

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"message_id": hex_token(rng, 16), "handles": {}, "invisible_until": 0.0, "deleted": False}

    def instruction(self, p: Any) -> str:
        return (f"receive_message, process it, then delete_message(receipt_handle). VisibilityTimeout is {p['ttl']} s; "
                "after it the message is visible again and the handle expires.")

    def plan(self, p: Any) -> list[Step]:
        return [Step("receive_message", produces=("ReceiptHandle",), ttl="ttl"),
                Step("delete_message", {"receipt_handle": Ref("ReceiptHandle")})]

    def tool_receive_message(self, env: ContractEnv) -> Any:
        now = env.clock.now()
        if now < env.fam["invisible_until"] or env.fam["deleted"]:
            return env.ok({"Messages": []})
        raw = random_bytes(env.np_random, 100)  # 100 bytes: base64 ends in '=' padding, as real handles do
        handle = env.issue("ReceiptHandle", base64.b64encode(raw).decode())
        env.fam["handles"][handle] = now + env.p["ttl"]
        env.fam["invisible_until"] = now + env.p["ttl"]
        return env.ok({"Messages": [{"MessageId": env.fam["message_id"], "ReceiptHandle": handle,
                                     "Body": '{"job": "resize", "image": "s3://uploads/cat.png"}'}],
                       "ReceiptHandle": handle})

    def tool_delete_message(self, env: ContractEnv, receipt_handle: str) -> Any:
        expires = env.fam["handles"].get(receipt_handle)
        if expires is None:
            verdict = reject_integrity(400, {"Error": {"Code": "ReceiptHandleIsInvalid",
                                                       "Message": "The input receipt handle is invalid."}})
        elif env.clock.now() >= expires:
            verdict = reject_validity("EXPIRED_BEFORE_USE", 400, {"Error": {
                "Code": "InvalidParameterValue", "Message": f"Value {receipt_handle} for parameter ReceiptHandle is "
                "invalid. Reason: The receipt handle has expired."}})
        else:
            env.fam["deleted"] = True
            verdict = accept({})
        return env.present({"ReceiptHandle": "receipt_handle"}, verdict, final=True)
