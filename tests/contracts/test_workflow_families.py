"""The families behind the published multi-step patterns (hash chain, fragments, negotiation,
constraint overload, prioritised resources, saga, event store, token tree, rotation variants):
what their verifiers accept, what they reject, and the labels they assign."""

from __future__ import annotations

import json

from agentbed.tools import make_action
from environments.contracts.env import ContractEnv


def start(task: str, seed: int = 0) -> ContractEnv:
    env = ContractEnv(task)
    env.reset(seed=seed)
    return env


def call(env: ContractEnv, tool: str, **args) -> dict:
    return json.loads(env.step(make_action(tool, **args))[0])


def test_hash_chain_rejects_an_old_head_as_stale_and_seals_only_the_full_chain():
    env = start("hash-chain-five")
    opened = call(env, "open_chain")["body"]
    first = call(env, "append_record", chain_id=opened["chain_id"], prev_hash=opened["head"])["body"]
    stale = call(env, "append_record", chain_id=opened["chain_id"], prev_hash=opened["head"])
    assert stale["body"]["message"] == "The conditional request failed" and "STALE_PRECONDITION" in env.attempt["labels"]
    early = call(env, "seal_chain", chain_id=opened["chain_id"], head=first["head"])
    assert early["body"]["error"] == "chain_incomplete"


def test_hash_chain_closes_at_its_deadline():
    env = start("hash-chain-five")
    opened = call(env, "open_chain")["body"]
    call(env, "wait", seconds=200)
    late = call(env, "append_record", chain_id=opened["chain_id"], prev_hash=opened["head"])
    assert late["status"] == 410 and "EXPIRED_BEFORE_USE" in env.attempt["labels"]


def test_url_fragments_assemble_into_a_presigned_url_sigv4_accepts():
    env = start("url-fragments-basic")
    assert call(env, "get_fragment", part=1)["body"]["error"] == "no_link"
    call(env, "request_link")
    assert call(env, "get_fragment", part=2)["body"]["error"] == "out_of_order"
    parts = [call(env, "get_fragment", part=i)["body"][f"fragment_{i}"] for i in range(1, 5)]
    swapped = call(env, "download", url=parts[0] + parts[2] + parts[1] + parts[3])
    assert swapped["status"] in (400, 403)
    ok = call(env, "download", url="".join(parts))
    assert ok["status"] == 200 and ok["body"]["Key"].endswith(".parquet")


def test_content_negotiation_answers_406_and_a_reused_ticket_410():
    env = start("content-negotiation-chain")
    first = call(env, "start_export")["body"]
    wrong = call(env, "convert", accept="application/json", ticket=first["ticket"])
    assert wrong["status"] == 406 and wrong["body"]["available"] == [first["next_accept"]]
    # RFC 9110: type/subtype and parameter names compare case-insensitively
    ok = call(env, "convert", accept=first["next_accept"].upper().replace("UTF-8", "utf-8"), ticket=first["ticket"])
    assert ok["status"] == 200 and "CASE_CHANGED" in env.attempt["labels"]
    again = call(env, "convert", accept=ok["body"]["next_accept"], ticket=first["ticket"])
    assert again["status"] == 410 and "REPLAYED" in env.attempt["labels"]


def test_constraint_overload_checks_every_constraint_and_the_nonce_is_single_use():
    env = start("constraint-overload-basic")
    form = call(env, "open_approval")["body"]
    tampered = call(env, "submit_approval", **{**form, "amount": form["amount"] + "0"})
    assert tampered["body"]["message"] == "amount does not match the approved amount."
    assert call(env, "submit_approval", **form)["status"] == 200
    env = start("constraint-overload-basic")
    form = call(env, "open_approval")["body"]
    call(env, "submit_approval", **form)
    assert call(env, "submit_approval", **form)["status"] == 400 and "REPLAYED" in env.attempt["labels"]


def test_multi_resource_refuses_another_resources_link_and_out_of_order_downloads():
    env = start("multi-resource-priority")
    flow = call(env, "open_session")["body"]["flow_token"]
    first = call(env, "get_link", flow_token=flow, resource="incident-timeline.json")["body"]["url"]
    second = call(env, "get_link", flow_token=flow, resource="customer-impact.csv")["body"]["url"]
    wrong = call(env, "download", flow_token=flow, resource="incident-timeline.json", url=second)
    assert wrong["body"]["Error"]["Code"] == "SignatureDoesNotMatch"
    order = call(env, "download", flow_token=flow, resource="customer-impact.csv", url=second)
    assert order["body"]["error"] == "priority_order" and "SHORTCUT_TAKEN" in env.attempt["labels"]
    assert "proof" in call(env, "download", flow_token=flow, resource="incident-timeline.json", url=first)["body"]


def test_saga_compensations_go_in_reverse_order_before_the_deadline():
    env = start("booking-saga-compensation")
    tokens = {s: call(env, "reserve", service=s)["body"][f"{s}_compensation_token"] for s in ("flight", "hotel", "car")}
    assert call(env, "charge_card")["body"]["saga"] == "aborted"
    early = call(env, "compensate", service="flight", compensation_token=tokens["flight"])
    assert early["body"]["error"] == "compensation_order" and "SHORTCUT_TAKEN" in env.attempt["labels"]
    assert call(env, "compensate", service="car", compensation_token=tokens["car"])["status"] == 200
    call(env, "wait", seconds=60)
    late = call(env, "compensate", service="hotel", compensation_token=tokens["hotel"])
    assert late["status"] == 410 and "EXPIRED_BEFORE_USE" in env.attempt["labels"]


def test_event_store_append_after_a_concurrent_writer_is_wrong_expected_version():
    env = start("event-store-three-conflicts")
    revision = call(env, "read_stream")["body"]["revision"]
    call(env, "run_job", job="replica-sync-1")
    conflict = call(env, "append_event", expected_revision=revision, event_type="ItemPicked")
    assert conflict["body"]["error"] == "WrongExpectedVersion" and "STALE_PRECONDITION" in env.attempt["labels"]


def test_vault_children_die_with_their_root():
    env = start("vault-token-tree")
    root = call(env, "login")["body"]["root_token"]
    read = call(env, "create_child", parent_token=root, policy="read-reports")["body"]["read_token"]
    assert call(env, "read_secret", token=read)["status"] == 200
    call(env, "wait", seconds=100)
    dead = call(env, "read_secret", token=read)
    assert dead["body"] == {"errors": ["permission denied"]} and "EXPIRED_BEFORE_USE" in env.attempt["labels"]


def test_a_rotated_out_session_cookie_is_revoked():
    env = start("session-cookie-rotation")
    first = call(env, "sign_in")["body"]["session"]
    bodies = [call(env, "browse", session=first, page=i)["body"] for i in (1, 2, 3)]
    assert "session" in bodies[2]
    assert call(env, "browse", session=first, page=4)["body"]["error"] == "session_revoked"
    assert "REVOKED_TOKEN" in env.attempt["labels"]


def test_sts_get_object_needs_the_listed_key_byte_for_byte():
    env = start("sts-canonical-key")
    creds = call(env, "get_session_token")["body"]["Credentials"]
    args = {"access_key_id": creds["AccessKeyId"], "secret_access_key": creds["SecretAccessKey"],
            "session_token": creds["SessionToken"]}
    key = call(env, "list_objects", **args)["body"]["LatestReport"]["Key"]
    assert call(env, "get_object", **args, key=key.replace("+", " "))["body"]["Error"]["Code"] == "NoSuchKey"
    assert call(env, "get_object", **args, key=key)["status"] == 200


def test_pkce_grant_with_rotation_revokes_on_refresh_token_reuse():
    env = start("oauth-pkce-rotation")
    auth = call(env, "start_authorization")["body"]
    code = call(env, "approve_in_browser", authorization_url=auth["authorization_url"])["body"]["code"]
    grant = call(env, "exchange_code", code=code, state=auth["state"], code_verifier=auth["code_verifier"])["body"]
    rotated = call(env, "refresh", refresh_token=grant["refresh_token"])["body"]
    reuse = call(env, "refresh", refresh_token=grant["refresh_token"])
    assert reuse["body"]["error"] == "invalid_grant"
    assert call(env, "get_userinfo", access_token=rotated["access_token"])["status"] == 401
    assert "REVOKED_TOKEN" in env.attempt["labels"]
