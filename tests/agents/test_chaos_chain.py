"""The whole chain a researcher relies on, against a provider on a bad day (:mod:`chaos`): two
models and a scripted agent are run, resumed with --retry-errors, verified, gated with
--allow-errors, reported, viewed (the viewer's API) and exported to Inspect; each step succeeds or
fails by its documented rule, at several seeds of the mix, and every surface counts the same
errored episodes as the index, before and after the resume. Through the real OpenAI client (LangChain's ChatOpenAI) and a
process pool."""

from __future__ import annotations

import json
import re

import pytest
from chaos import ChaosProvider, Mix, describe, tag_episodes
from openai_stub import OpenAIStub
from scripted_models import vault_three_calls

from agentbed.agents.retry import Backoff
from agentbed.cli import main
from agentbed.problems import is_errored

MODELS = ["openai:chaos-a", "openai:chaos-b"]
PLAN = ["vault", "--task", "open-fast", "--agent", "oracle", "--model", ",".join(MODELS), "--seeds", "4",
        "--no-cache", "--timeout", "1", "--max-connections", "4", "-j", "2"]
MODEL_AGENTS = {f"model:{m}" for m in MODELS}
DOWN = 0.2  # how long a scripted death keeps the provider's port closed
OUTLAST = 0.6  # a retry's wait without a Retry-After: past DOWN, so no call is refused twice


@pytest.fixture
def quick_retries(monkeypatch):
    """Retries wait what the server asked (a Retry-After of 0.05 s), else OUTLAST: the chain's
    seconds go to the faults, not to backoff, and a call refused while the provider is down
    (:mod:`chaos`: which calls follows timing) is retried once it listens again, never until its
    retries are spent, so what errors is a function of the seed. (Inherited by the forked workers.)"""
    monkeypatch.setattr(Backoff, "delay",
                        lambda self, attempt, rng, retry_after=None: OUTLAST if retry_after is None else min(retry_after, 0.2))


@pytest.fixture
def provider(monkeypatch):
    started: list[ChaosProvider] = []

    tag_episodes(monkeypatch)  # each call's fault is a function of its episode, not of arrival order

    def start(seed: int, **kwargs) -> ChaosProvider:
        chaos = ChaosProvider(vault_three_calls, seed=seed, mix=Mix(), **kwargs)
        started.append(chaos)
        monkeypatch.setenv("OPENAI_BASE_URL", chaos.start())
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        return chaos

    yield start
    for chaos in started:
        chaos.stop()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The same plan against a provider with no fault: the gate's baseline."""
    out = tmp_path_factory.mktemp("baseline") / "run"
    stub = OpenAIStub(vault_three_calls)
    stub.start()
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_BASE_URL", stub.base_url)
    mp.setenv("OPENAI_API_KEY", "test")
    try:
        assert main(["run", *PLAN, "--out", str(out), "--quiet"]) == 0
    finally:
        mp.undo()
        stub.stop()
    return out / "results.json"


def index(out) -> list[dict]:
    return [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]


def per_agent(records: list[dict]) -> dict[str, tuple[int, int, int]]:
    """Per agent (every task of the plan is one): (succeeded, scored, errored) by the index."""
    counts = {}
    for r in records:
        ok, scored, errored = counts.get(r["agent"], (0, 0, 0))
        if is_errored(r):
            counts[r["agent"]] = (ok, scored, errored + 1)
        else:
            counts[r["agent"]] = (ok + bool(r["success"]), scored + 1, errored)
    return counts


CELL = re.compile(r"<title>([^<]*) x open-fast: (?:not scored: )?(?:(\d+)/(\d+) scored succeeded)?(?:, )?(?:(\d+) errored)?")


def heatmap_cells(svg: str) -> dict[str, tuple[int, int, int]]:
    """The success heat-map's cells as the tooltips count them: (succeeded, scored, errored)."""
    return {m[0]: (int(m[1] or 0), int(m[2] or 0), int(m[3] or 0)) for m in CELL.findall(svg)}


def agree(out, capsys, baseline) -> int:
    """Every surface counts the errored episodes the index shows (verify, results.json, summary.json,
    the gate, the viewer's API, the report and the Inspect export); returns that count."""
    records = index(out)
    errored = [r for r in records if is_errored(r)]
    by_agent = {}
    for r in errored:
        by_agent[r["agent"]] = by_agent.get(r["agent"], 0) + 1
    assert not [r for r in records if r["status"] == "error" and not is_errored(r)], "an error counted as a score"
    assert {r["agent"] for r in errored} <= MODEL_AGENTS  # the scripted agent never meets the provider
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paths"][0]["logs_ok"] == len(records)
    summary = json.loads((out / "vault" / "summary.json").read_text())
    results = json.loads((out / "results.json").read_text())
    assert summary["errors"]["episodes"] == results["errored_episodes"] == len(errored)
    assert summary["errors"]["by_agent"] == by_agent
    assert sum(p["count"] for p in summary["errors"]["problems"]) == len(errored)
    units: dict[str, list[str]] = {}
    for r in errored:
        units.setdefault(f"vault/{r['agent']}", []).append(f"{r['task']}/{r['seed']}")
    assert results["errored_units"] == {k: sorted(v) for k, v in sorted(units.items())}
    for metric in results["metrics"]:
        if metric["metric"] == "success":
            scored = [r for r in records if r["agent"] == metric["agent"] and not is_errored(r)]
            assert len(metric["values"]) == len(scored)
    rates = {h["agent"]: h for h in summary["headline"] if h["metric"] == "pass_rate"}
    for agent, h in rates.items():
        assert h["n"] == sum(1 for r in records if r["agent"] == agent and not is_errored(r))
        assert h["errors_excluded"] == by_agent.get(agent, 0)

    # the gate: errored episodes fail it, unless allowed; then only episodes scored on both sides count
    capsys.readouterr()
    plain = main(["gate", str(out), "--baseline", str(baseline)])
    capsys.readouterr()
    verdict = main(["gate", str(out), "--baseline", str(baseline), "--allow-errors", "100%", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert plain == (1 if errored else verdict)  # with nothing errored, allowing errors changes nothing
    assert doc["left_out"] == len(errored) and doc["ok"] == (verdict == 0)
    for row in doc["rows"]:
        if row["metric"] == "success":
            assert row["units"] == sum(1 for r in records if r["agent"] == row["agent"] and not is_errored(r))

    # the viewer's API: the run's counts, every row's errored flag, the heat-map's cells
    from agentbed.view.api import episodes_document, run_document
    from agentbed.view.catalog import Catalog

    view = next(iter(Catalog(out.parent).runs().values()))
    doc = run_document(view)
    assert doc["run"]["errors"] == len(errored) and doc["run"]["finished"] == len(records)
    assert "sealed" in doc["run"]["seal"] and "in progress" not in doc["run"]["seal"]
    rows = episodes_document(view, {})
    assert rows["total"] == len(records) and sum(r["errored"] for r in rows["rows"]) == len(errored)
    assert heatmap_cells(doc["heatmap"]) == per_agent(records)

    # the report: its seal, its problems block and its heat-map
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seal"]["state"] == "verified" and report["logs"] == len(records)
    assert heatmap_cells((out / "report.html").read_text()) == per_agent(records)
    from agentbed.report.rundir import load_run

    counted = [p.message for p in load_run(out).problems if "episodes errored" in p.message]
    assert sum(int(m.split(" episodes errored")[0].split()[-1]) for m in counted) == len(errored)

    # the Inspect export: errored samples are errors, not scores, per model; a log all errored is an error
    from inspect_ai.log import read_eval_log

    exported = out.parent / f"inspect-{len(list(out.parent.glob('inspect-*')))}"
    assert main(["export", str(out), "--format", "inspect", "--out", str(exported)]) == 0
    logs = [read_eval_log(str(path)) for path in sorted(exported.glob("*.eval"))]
    assert sum(len(log.samples) for log in logs) == len(records)
    samples = {}
    for log in logs:
        errors = sum(s.error is not None for s in log.samples)
        assert (log.status == "error") == (errors == len(log.samples)), log.status
        samples[log.eval.model] = samples.get(log.eval.model, 0) + errors
    exported_as = {a: "agentbed/" + a if not a.startswith("model:") else a[len("model:"):].replace(":", "/", 1)
                   for a in {r["agent"] for r in records}}
    assert samples == {exported_as[a]: by_agent.get(a, 0) for a in exported_as}
    return len(errored)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("seed", "recovered"), [(1, True), (2, True), (3, False)])
def test_the_chain_holds_against_a_chaos_provider(seed, recovered, baseline, provider, quick_retries, tmp_path,
                                                  capsys):
    chaos = provider(seed, die_at=f"model:{MODELS[seed % 2]}/{seed}", down=DOWN)  # it dies mid-run, comes back
    out = tmp_path / "run"
    status = main(["run", *PLAN, "--out", str(out), "--quiet"])
    errored = agree(out, capsys, baseline)
    drawn = chaos.drawn()
    assert drawn.get("death") == 1, describe(drawn)
    assert status == (4 if errored else 0), describe(drawn)
    assert errored > 0 and len(set(drawn) - {"none"}) >= 5, describe(drawn)  # the realistic middle, not a clean end

    # --retry-errors re-runs exactly the errored episodes, with the provider back or (seed 3) its doomed
    # conversations still failing; every surface counts what is left as it counted before
    if recovered:
        chaos.recover()
    capsys.readouterr()
    status = main(["run", "vault", "--resume", "--retry-errors", "--out", str(out), "--quiet"])
    assert f"{errored} errored episodes set aside" in capsys.readouterr().err
    left = agree(out, capsys, baseline)
    assert status == (4 if left else 0) and left <= errored, describe(chaos.drawn())
    assert recovered or left > 0, describe(chaos.drawn())
    assert len(list((out / "retried").glob("*.retried"))) == errored


def _one_and_two_workers(provider, tmp_path, monkeypatch, **death) -> tuple[dict, dict, dict, dict]:
    """The chain's plan run with ``-j 1`` and with ``-j 2``, each against a fresh provider of seed 5
    (the run id fixed): per run, results.json's and each log's bytes, and the faults served."""
    import types
    import uuid

    import agentbed.store

    monkeypatch.setattr(agentbed.store, "uuid", types.SimpleNamespace(uuid4=lambda: uuid.UUID(int=19)))
    runs, served = {}, {}
    for jobs in ("1", "2"):
        chaos = provider(5, **death)
        out = tmp_path / f"j{jobs}"
        plan = [*PLAN[: PLAN.index("-j")], "-j", jobs]
        assert main(["run", *plan, "--out", str(out), "--quiet"]) in (0, 4)
        runs[jobs] = {p.relative_to(out).as_posix(): p.read_bytes()
                      for p in [out / "results.json", *sorted((out / "episodes").glob("*.jsonl"))]}
        served[jobs] = chaos.drawn()
        chaos.stop()
    assert len(set(served["1"]) - {"none"}) >= 5, describe(served["1"])
    assert runs["1"].keys() == runs["2"].keys()
    return runs["1"], runs["2"], served["1"], served["2"]


@pytest.mark.timeout(300)
def test_one_and_two_workers_meet_the_same_faults_and_write_the_same_bytes(provider, quick_retries, tmp_path,
                                                                           monkeypatch):
    """Session 18's probe: the chaos provider served its rotation and its per-conversation attempts in
    arrival order, and the first requests of every episode of a task are the same conversation, so
    under ``-j 2`` which episode met which fault followed scheduling. Each fault is now a function of
    the call's identity (seed, episode, call, attempt): ``-j 1`` and ``-j 2`` against fresh providers
    of one seed write the same logs and results, byte for byte (no provider death: which calls it
    refuses follows timing, and their logs record those attempts; the hangs, 3 s against a 1 s
    timeout, are what the seed chose)."""
    one, two, served, served_too = _one_and_two_workers(provider, tmp_path, monkeypatch)
    assert served == served_too, (describe(served), describe(served_too))
    differ = sorted(name for name in one if one[name] != two[name])
    assert not differ, differ


def _outcome(log: bytes) -> tuple[list, dict]:
    """A log's steps (action, observation) and its footer, its error by kind (the text is the last
    attempt's traceback, a refused connection's when the port was closed)."""
    from agentbed.problems import classify

    records = [json.loads(line) for line in log.splitlines()]
    steps = [(r["action"], r["observation"]) for r in records if r["type"] == "step"]
    footer = {k: v for k, v in records[-1].items() if k not in ("prev", "hash", "metrics", "error")}
    return steps, {**footer, "error": classify(records[-1]["error"]).name if records[-1].get("error") else None}


@pytest.mark.timeout(300)
def test_a_scripted_death_errors_the_same_episodes_under_one_and_two_workers(provider, quick_retries, tmp_path,
                                                                             monkeypatch):
    """Session 19: the provider died after its Nth request, so which episodes were in flight, and
    (retries never waiting) which errored, followed arrival order and load. It now dies at a call
    (:mod:`chaos`, ``die_at``), answers it had decided are written, and a refused call is retried
    after the port opens again: ``-j 1`` and ``-j 2`` write the same results.json, every log the
    same steps and footer (its error by kind), and meet the same kinds of fault. Which calls were
    refused while the port was closed follows timing: the steps' recorded retries differ, and a
    call failing on every attempt (doomed) makes one attempt fewer at the provider for each refusal,
    so the counts of faults served may differ (seen: 19 resets against 18)."""
    one, two, served, served_too = _one_and_two_workers(provider, tmp_path, monkeypatch,
                                                        die_at=f"model:{MODELS[1]}/1", down=DOWN)
    assert served["death"] == served_too["death"] == 1 and set(served) == set(served_too), \
        (describe(served), describe(served_too))
    assert one["results.json"] == two["results.json"]
    differ = sorted(name for name in one if name.endswith(".jsonl") and _outcome(one[name]) != _outcome(two[name]))
    assert not differ, differ
