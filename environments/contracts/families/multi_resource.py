"""Several resources fetched by priority inside one session (the published multi-resource-priority
pattern).

A flow token (itsdangerous-signed, max_age = the session deadline) authorises the session; each
resource is then fetched through its own S3 SigV4 presigned link (s3_presign.py) whose expiry is
the link's. Resources must be fetched in the priority order the session lists, and each
download answers with a per-resource proof (the object's SHA-256). A link for one resource
used for another is the wrong artifact; an out-of-order download is refused with 409 and
graded SHORTCUT_TAKEN (a higher-priority resource was skipped).
Task params: ``session_ttl`` (flow token max_age), ``ttl`` (each link's X-Amz-Expires).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from agentbed.tools import tool
from environments.contracts.families.common import hex_token, token
from environments.contracts.families.s3_presign import credentials, presign, verify_presigned
from environments.contracts.family import (
    Family,
    Ref,
    Step,
    Verdict,
    accept,
    register,
    reject_integrity,
    reject_validity,
)

if TYPE_CHECKING:
    from environments.contracts.env import ContractEnv

RESOURCES = ("incident-timeline.json", "customer-impact.csv", "postmortem-draft.md")
WRONG_OBJECT = {"Error": {"Code": "SignatureDoesNotMatch", "Message": "The request signature we calculated does not "
                          "match the signature you provided. Check your key and signing method."}}


@register
class MultiResource(Family["ContractEnv"]):
    name = "multi-resource"
    title = "Prioritised downloads in one session: flow token + per-resource presigned links"
    catalogue = (1, 50)
    labels = {"EXPIRED_BEFORE_USE": None, "SHORTCUT_TAKEN": None}
    final_tool = "download"
    tools = (
        tool("open_session", "Open a retrieval session: the flow token and the resources in priority order.",
             cost=1.0),
        tool("get_link", "A presigned download link for one resource of the session.", cost=1.0,
             flow_token={"type": "string"}, resource={"type": "string", "maxLength": 200}),
        tool("download", "Download a resource through its link (fetch in priority order).", cost=2.0,
             flow_token={"type": "string"}, resource={"type": "string", "maxLength": 200}, url={"type": "string"}),
    )

    def setup(self, env: ContractEnv, rng: Any) -> dict[str, Any]:
        return {"secret": hex_token(rng, 24), "access_key": "AKIA" + hex_token(rng, 8).upper(),
                "s3_secret": token(rng, 30), "done": [], "proofs": {}}

    def instruction(self, p: Any) -> str:
        return (f"open_session, then for each resource in the listed priority order: get_link, then download it with "
                f"that resource's link and the flow token. The session ends {p['session_ttl']} s after it opens; "
                f"each link expires {p['ttl']} s after it is issued.")

    def plan(self, p: Any) -> list[Step]:
        steps = [Step("open_session", produces=("flow_token",), ttl="session_ttl")]
        for resource in RESOURCES:
            steps.append(Step("get_link", {"flow_token": Ref("flow_token"), "resource": resource},
                              produces=("url",), ttl="ttl"))
            steps.append(Step("download", {"flow_token": Ref("flow_token"), "resource": resource,
                                           "url": Ref("url")}))
        return steps

    def _session(self, env: ContractEnv, flow_token: str) -> Verdict | None:
        try:
            with env.clock.frozen():
                TimestampSigner(env.fam["secret"]).unsign(flow_token, max_age=env.p["session_ttl"])
        except SignatureExpired as exc:
            return reject_validity("EXPIRED_BEFORE_USE", 401, {"error": "session_expired", "message": str(exc)})
        except BadSignature as exc:
            return reject_integrity(401, {"error": "bad_flow_token", "message": str(exc)[:200]})
        return None

    alternatives = {"order:get_link(*) before download(*)": "a later resource's link fetched before an earlier "
                    "resource's download; the downloads themselves must follow the priority order",
                    "order:get_link(*) before get_link(*)": "a later resource's link fetched before an earlier "
                    "resource's link (the same early fetch); the downloads themselves must follow the priority order"}

    def tool_open_session(self, env: ContractEnv) -> Any:
        env.fam.update(done=[], proofs={})  # a new session starts the priority list again
        with env.clock.frozen():
            flow = TimestampSigner(env.fam["secret"]).sign("flow-" + hex_token(env.np_random, 6)).decode()
        return env.ok({"flow_token": env.issue("flow_token", flow), "resources": list(RESOURCES),
                       "session_ttl": env.p["session_ttl"]})

    def tool_get_link(self, env: ContractEnv, flow_token: str, resource: str) -> Any:
        verdict = self._session(env, flow_token)
        if verdict is None and resource not in RESOURCES:
            verdict = reject_integrity(404, {"Error": {"Code": "NoSuchKey", "Message": "The specified key does not "
                                                       "exist."}})
        if verdict is not None:
            return env.present({"flow_token": "flow_token"}, verdict)
        creds = credentials(env.fam["access_key"], env.fam["s3_secret"])
        url = env.issue("url", presign(env.clock, creds, "GET", "incident/" + resource, int(env.p["ttl"])))
        env.fam.setdefault("links", {})[url] = flow_token  # a link belongs to the session that asked for it
        return env.present({"flow_token": "flow_token"}, accept({"resource": resource, "url": url}))

    def tool_download(self, env: ContractEnv, flow_token: str, resource: str, url: str) -> Any:
        slots = {"flow_token": "flow_token", "url": "url"}
        verdict = self._session(env, flow_token)
        if verdict is None:
            verdict = verify_presigned(url, "GET", {}, {env.fam["access_key"]: env.fam["s3_secret"]}, env.clock.now())
        if verdict.accepted and f"/incident/{quote(resource)}?" not in url:
            verdict = reject_integrity(403, WRONG_OBJECT)  # a valid link, but for another resource
        if verdict.accepted and env.fam.get("links", {}).get(url, flow_token) != flow_token:
            verdict = reject_integrity(403, {"error": "flow_mismatch", "message": "This link was issued to "
                                             "another session."})
        if verdict.accepted:
            expected = RESOURCES[len(env.fam["done"])] if len(env.fam["done"]) < len(RESOURCES) else None
            if resource != expected:  # a higher-priority resource was skipped
                verdict = reject_validity("SHORTCUT_TAKEN", 409, {"error": "priority_order",
                                                                  "message": f"Fetch {expected} first."})
                return env.present(slots, verdict)
            env.fam["done"].append(resource)
            proof = hashlib.sha256((env.fam["secret"] + resource).encode()).hexdigest()
            verdict = accept({"resource": resource, "proof": proof, "remaining": len(RESOURCES) - len(env.fam["done"])})
        return env.present(slots, verdict, final=len(env.fam["done"]) == len(RESOURCES))
