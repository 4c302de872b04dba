"""The environment: registration, gymnasium's checker, raw-call grading, determinism, bad input."""

from __future__ import annotations

import json

import gymnasium
from gymnasium.utils.env_checker import check_env

import environments.contracts  # noqa: F401 - registers agentbed/contracts-v0
from agentbed.log import TrajectoryWriter, read_log
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.tools import make_action
from environments.contracts.agents import oracle
from environments.contracts.env import ContractEnv
from environments.contracts.family import FAMILIES


def body(observation: str) -> dict:
    return json.loads(observation)["body"]


def test_registered_and_passes_the_gymnasium_checker():
    env = gymnasium.make("agentbed/contracts-v0", task="oauth-basic")
    check_env(env.unwrapped, skip_render_check=True)
    assert {t.name for t in env.unwrapped.tools} >= {"start_authorization", "exchange_code", "wait", "run_job"}


def test_suite_is_large_enough_and_every_task_is_dual_axis_data_over_a_family():
    tasks = ContractEnv.task_list()
    assert len(tasks) >= 48
    assert len({t.params["family"] for t in tasks}) >= 20
    assert len(FAMILIES) >= 20
    assert all(t.params["family"] in FAMILIES for t in tasks)


def test_grading_reads_the_raw_call_an_escaped_newline_is_a_whitespace_failure_curl_refuses():
    env = ContractEnv("s3-get-basic")
    env.reset(seed=3)
    url = body(env.step(make_action("presign_get"))[0])["url"]
    raw = '{"tool": "download", "arguments": {"url": "' + url[:60] + "\\n" + url[60:] + '"}}'
    obs, reward, terminated, _, _ = env.step(raw)
    assert json.loads(obs)["body"]["message"].startswith("curl: (3)")  # urlsplit would drop it; curl refuses
    assert not terminated
    assert env.attempt["uses"][-1]["strict"] == "WHITESPACE" and not env.attempt["uses"][-1]["issuer_ok"]


def test_a_lower_case_escape_fails_byte_strict_and_the_issuer_accepts_it():
    env = ContractEnv("s3-get-basic")
    env.reset(seed=3)
    url = body(env.step(make_action("presign_get"))[0])["url"]
    lowered = url.replace("%2F", "%2f", 1)
    assert lowered != url
    obs, reward, terminated, _, _ = env.step(make_action("download", url=lowered))
    assert json.loads(obs)["status"] == 200  # SigV4 canonicalises the decoded parameters
    outcome = env.outcome(terminated, reward)
    assert terminated and not outcome.success and reward == 0.0
    assert outcome.metrics["integrity_issuer"] and not outcome.metrics["integrity_strict"]
    assert outcome.labels == ["ENCODING_CHANGED"]  # the same bytes, percent-encoded differently


def test_json_escapes_that_decode_to_the_same_string_are_not_corruption():
    env = ContractEnv("s3-get-basic")
    env.reset(seed=1)
    url = body(env.step(make_action("presign_get"))[0])["url"]
    raw = '{"tool":"download","arguments":{"url":"' + url.replace("/", "\\/") + '"}}'
    _, reward, terminated, _, _ = env.step(raw)
    assert terminated and reward == 1.0


def test_time_is_virtual_and_an_expired_url_gets_the_real_s3_error_body():
    env = ContractEnv("s3-get-after-scan")
    env.reset(seed=0)
    url = body(env.step(make_action("presign_get"))[0])["url"]
    env.step(make_action("run_job", job="virus-scan"))
    assert env.clock.elapsed() == 1 + 1 + 420
    obs = json.loads(env.step(make_action("download", url=url))[0])
    assert obs["status"] == 403 and obs["body"]["Error"]["Message"] == "Request has expired"
    assert env.outcome(False, 0.0).labels == ["EXPIRED_BEFORE_USE", "GOAL_NOT_MET"]


def test_same_seed_same_episode_bytes(tmp_path):
    digests = []
    for name in ("a", "b"):
        writer = TrajectoryWriter(tmp_path / f"{name}.jsonl")
        agent = oracle()
        run_episode(ContractEnv("oauth-short-code"), agent, EpisodeSpec("contracts", "oauth-short-code", "oracle", 7),
                    writer=writer)
        digests.append(writer.last_hash)
    assert digests[0] == digests[1]
    steps = [r for r in read_log(tmp_path / "a.jsonl") if r["type"] == "step"]
    assert steps and all("now" in json.loads(s["observation"]) for s in steps)


def test_bad_agent_input_is_an_observation_never_a_crash():
    env = ContractEnv("stripe-webhook-basic")
    env.reset(seed=0)
    env.step(make_action("receive_event"))
    for action in ["{not json", make_action("forward_event", payload=1, stripe_signature="x"),
                   make_action("forward_event", payload="\udcff" * 3, stripe_signature="t=1"),
                   make_action("forward_event", payload="x" * 500_000, stripe_signature="t=abc,v1=zz"),
                   b"\xff\xfe binary", make_action("no_such_tool")]:
        obs, _, terminated, _, _ = env.step(action)
        assert isinstance(obs, str) and obs and not terminated


def test_snapshot_and_restore_reproduce_the_continuation():
    env = ContractEnv("refresh-two-rotations")
    env.reset(seed=2)
    env.step(make_action("login"))
    snap = env.snapshot()
    first = env.step(make_action("get_report", access_token="at_wrong"))[0]
    env.restore(snap)
    assert env.step(make_action("get_report", access_token="at_wrong"))[0] == first


def test_feedback_mode_restarts_the_task_with_the_label_and_explanation():
    env = ContractEnv("turnstile-preview-then-submit", feedback=True)
    env.reset(seed=0)
    token = body(env.step(make_action("solve_challenge"))[0])["token"]
    env.step(make_action("submit_signup", token=token, preview=True))
    obs = json.loads(env.step(make_action("submit_signup", token=token, preview=False))[0])
    assert obs["body"] == {"success": False, "error-codes": ["timeout-or-duplicate"]}
    assert obs["feedback"]["label"] == "REPLAYED" and obs["attempt"] == 2 and "instruction" in obs["restart"]


def test_same_bytes_whatever_the_executor(tmp_path):
    from agentbed.executors import execute

    specs = [EpisodeSpec("contracts", t, a, s, {"feedback": "off"})
             for t in ("gcs-after-scan", "device-flow-basic", "stripe-webhook-basic") for a in ("oracle", "naive")
             for s in (0, 1)]
    serial = {r.episode_id: r.digest for r in execute(specs, tmp_path / "serial", executor="serial")}
    process = {r.episode_id: r.digest for r in execute(specs, tmp_path / "process", executor="process", jobs=2)}
    assert serial == process and len(serial) == len(specs)


def test_skipping_a_required_chore_is_a_goal_failure_and_gets_feedback():
    env = ContractEnv("gcs-after-scan")
    env.reset(seed=0)
    url = body(env.step(make_action("sign_gcs_url"))[0])["url"]
    obs = json.loads(env.step(make_action("download", url=url))[0])
    assert obs["status"] == 409 and "run_job:virus-scan" in obs["body"]["message"]
    outcome = env.outcome(False, 0.0)
    assert outcome.labels == ["GOAL_NOT_MET", "SHORTCUT_TAKEN"] and not outcome.metrics["goal"]
    env = ContractEnv("gcs-after-scan", feedback=True)
    env.reset(seed=0)
    url = body(env.step(make_action("sign_gcs_url"))[0])["url"]
    obs = json.loads(env.step(make_action("download", url=url))[0])
    assert obs["feedback"]["label"] == "SHORTCUT_TAKEN" and obs["attempt"] == 2
