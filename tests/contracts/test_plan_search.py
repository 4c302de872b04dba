"""No instruction a grader does not enforce, found by search (issue 53).

For every task, a bounded, seeded search over its reference plan (attacks/contracts/plans.py:
skip one or two calls, move chores and waits to every gap, vary every instructed argument over
boundary values, duplicate or swap calls, mix the artifacts of two parallel flows), each plan
played once on seed 0. Every plan the graders pass must satisfy every instruction of the task,
as the instruction audit reads it from the calls alone (environments/contracts/audit.py), or
produce only findings the task declares as accepted alternatives. A plan that passes without
renewing any artifact must not exist on a task that claims renewal is forced, and on a task
that declares renewal-free orders it must be one of them.
"""

from __future__ import annotations

from collections import Counter

import pytest

from attacks.contracts.plans import MAX_PLANS, Call, Pick, ScriptAgent, play, reference_scripts, search_plans
from environments.contracts.agents import CHORE_TOOLS
from environments.contracts.audit import Event, audit, unaccepted
from environments.contracts.catalog import describe
from environments.contracts.env import ContractEnv
from environments.contracts.family import FAMILIES

SEED = 0
TASKS = {t.id: t for t in ContractEnv.task_list()}


def renews(task_id: str, events: list[Event]) -> bool:
    """Whether a plan re-issued an artifact: more successful calls of a tool that hands one out
    than the reference plan makes (a second flow counts too)."""
    plan = [s for s in FAMILIES[TASKS[task_id].params["family"]].plan(TASKS[task_id].params)]
    need = Counter(s.tool for s in plan if s.produces)
    done = Counter(e.tool for e in events if e.ok and e.tool in need)
    return any(done[t] > n for t, n in need.items())


def order(events: list[Event]) -> str:
    return " -> ".join(f"{e.tool}:{e.args.get('job', e.args.get('page', ''))}" if e.tool in CHORE_TOOLS else e.tool
                       for e in events if e.ok and e.tool != "wait")


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_every_plan_that_passes_follows_the_instruction(task_id, record_property):
    task = TASKS[task_id]
    claim = describe(task_id)
    declared = {" -> ".join(part for part in o.split(" -> ") if not part.startswith("wait:"))
                for o in claim["renewal_free_orders"]}
    plans, _ = search_plans(task, SEED)
    broken, unforced, passed = [], [], 0
    for desc, script in plans:
        agent = ScriptAgent("search", script)
        record, events = play(task, agent, SEED)
        findings = audit(task, events, agent.start or 0.0)
        if desc == "reference":
            assert record.success and not findings, (task_id, record.labels, findings)
        if not record.success:
            continue
        passed += 1
        if unaccepted(task, findings):
            broken.append((desc, unaccepted(task, findings), record.labels))
        elif claim["renews_in_reference"] and not renews(task_id, events) and (
                claim["renewal_forced"] or order(events) not in declared):
            unforced.append((desc, order(events)))
    record_property("plans", len(plans))
    record_property("passing", passed)
    assert not broken, f"{task_id}: {len(broken)} of {len(plans)} plans pass while breaking the instruction: {broken[:5]}"
    assert not unforced, f"{task_id}: solved without renewing in an undeclared order: {unforced[:5]}"


@pytest.mark.parametrize("seed", [1, 2])
def test_the_audit_finds_nothing_in_the_reference_solution_on_other_seeds(seed):
    """The audit's false-positive check beyond the search's seed: every task's oracle script,
    recorded and replayed on another seed, passes with no finding."""
    for task_id, task in TASKS.items():
        agent = ScriptAgent("reference", reference_scripts(task, seed)["reference"])
        record, events = play(task, agent, seed)
        assert record.success and audit(task, events, agent.start or 0.0) == [], (task_id, seed, record.labels)


def test_the_search_size_is_reported(capsys):
    sizes = {t: search_plans(TASKS[t], SEED) for t in sorted(TASKS)}
    played, generated = sum(len(p) for p, _ in sizes.values()), sum(n for _, n in sizes.values())
    with capsys.disabled():
        print(f"\nplan search (seed {SEED}): {played} plans played over {len(sizes)} tasks, "
              f"{min(len(p) for p, _ in sizes.values())}-{max(len(p) for p, _ in sizes.values())} per task "
              f"({generated} generated, at most {MAX_PLANS} a task played)")
    assert played > 10 * len(sizes)


# -- the four families the first search found (issue 53), pinned by name -------------------------
def _play(task_id: str, script: list) -> tuple:
    agent = ScriptAgent("pinned", script)
    record, events = play(TASKS[task_id], agent, SEED)
    return record, audit(TASKS[task_id], events, agent.start or 0.0)


def _upload_with_pauses(pauses: list[float]) -> list:
    upload = Call("upload", {"url": Pick("url"), "content_type": Pick("content_type")})
    script = [Call("presign_put"), upload]
    for pause in pauses:
        script += [Call("wait", {"seconds": pause}), upload]
    return script


@pytest.mark.parametrize("pauses", [[0, 0, 0, 0], [0, 3, 3, 4], [1, 1, 1, 1], [1, 2, 3, 4], [1, 2, 4, 7.9]],
                         ids=["none", "0-3-6-10", "constant", "linear", "short-last"])
def test_s3_backoff_is_the_pause_between_attempts_for_every_retry(pauses):
    record, findings = _play("s3-put-slowdown-backoff", _upload_with_pauses(pauses))
    assert not record.success and "BACKOFF_VIOLATION" in record.labels, (pauses, record.labels)
    assert any(f.startswith("wait:upload") for f in findings)


def test_s3_backoff_of_1_2_4_8_s_after_each_answer_passes():
    record, findings = _play("s3-put-slowdown-backoff", _upload_with_pauses([1, 2, 4, 8]))
    assert record.success and findings == [], (record.labels, findings)


def _two_flows(code_flow: int, state_flow: int, verifier_flow: int) -> list:
    pick = {1: -2, 2: -1}
    return [Call("start_authorization"), Call("start_authorization"),
            Call("approve_in_browser", {"authorization_url": Pick("authorization_url", pick[code_flow])}),
            Call("exchange_code", {"code": Pick("code"), "state": Pick("state", pick[state_flow]),
                                   "code_verifier": Pick("code_verifier", pick[verifier_flow])}),
            Call("get_userinfo", {"access_token": Pick("access_token")})]


@pytest.mark.parametrize("flows", [(1, 2, 1), (1, 2, 2), (1, 1, 2), (2, 1, 1), (2, 1, 2), (2, 2, 1)])
def test_oauth_binds_state_code_and_verifier_per_flow(flows):
    record, findings = _play("oauth-basic", _two_flows(*flows))
    assert not record.success, (flows, record.labels)
    assert "skipped:exchange_code" in findings, findings  # the mixed exchange was refused


@pytest.mark.parametrize("flow", [1, 2])
def test_oauth_either_flow_completes_while_the_other_is_in_flight(flow):
    record, findings = _play("oauth-basic", _two_flows(flow, flow, flow))
    assert record.success and findings == [], (flow, record.labels, findings)


@pytest.mark.parametrize("task_id", ["page-token-three-pages", "page-token-throttled", "page-token-expiring"])
def test_page_token_listing_cannot_skip_its_tokens(task_id):
    """One call with a page size that holds all 9 resources is refused; the listing needs tokens."""
    record, _ = _play(task_id, [Call("get_resources", {"resources_per_page": 9, "pagination_token": ""})])
    assert not record.success and record.labels == ["GOAL_NOT_MET"]


@pytest.mark.parametrize("task_id", ["vault-token-tree", "vault-token-tree-cascade"])
def test_vault_write_without_the_instructed_read_is_a_shortcut(task_id):
    script = [Call("login"), Call("create_child", {"parent_token": Pick("root_token"), "policy": "read-reports"}),
              Call("create_child", {"parent_token": Pick("root_token"), "policy": "write-reports"}),
              Call("run_job", {"job": "warm-cache"}), Call("login"),
              Call("create_child", {"parent_token": Pick("root_token"), "policy": "write-reports"}),
              Call("write_secret", {"token": Pick("write_token")})]
    record, findings = _play(task_id, script)
    assert not record.success and "SHORTCUT_TAKEN" in record.labels, record.labels
    assert "skipped:read_secret" in findings


def _fetch(resource: str, download: bool = True) -> list:
    flow = Pick("flow_token")
    link = [Call("get_link", {"flow_token": flow, "resource": resource})]
    return link + [Call("download", {"flow_token": flow, "resource": resource, "url": Pick("url")})] * download


def test_a_later_resources_link_asked_in_an_abandoned_session_is_the_declared_early_fetch():
    """Session 16's probe: the search at seeds 11, 23, 37, 101 and 4242 (never at seed 0, whose
    sample of skipped pairs misses it) played the reference with its first link and download left
    out: customer-impact's link asked in the first session, which the virus scan outlives, then
    every resource fetched in order in a second one. It passes; the audit named the order of the
    two links, which the declared early fetch (a link before an earlier download) did not cover."""
    task_id = "multi-resource-session-deadline"
    script = [Call("open_session"), *_fetch("customer-impact.csv", download=False),
              Call("run_job", {"job": "virus-scan"}), Call("open_session")]
    for resource in ("incident-timeline.json", "customer-impact.csv", "postmortem-draft.md"):
        script += _fetch(resource)
    record, findings = _play(task_id, script)
    assert record.success and any(f.startswith("order:get_link(") for f in findings), (record.labels, findings)
    assert unaccepted(TASKS[task_id], findings) == [], findings
