"""Fair baselines and honest figures (issue 52, items 2 and 3): file-parallel capped at the team
size, failed runs' makespan and cost never averaged with the passing ones, intervals over seeds
with one repository, non-dominance said, and failing tests without a repair target said."""

import pytest

from controllers.cocoder.schedule import simulate
from controllers.cocoder.strategies import make_plan
from environments.cocoder import sandboxed
from environments.cocoder.costmodel import CostModel
from environments.cocoder.synth import SynthSpec, generate_repo
from suites.cocoder.repairs import no_target_reason
from suites.cocoder.summary import dominance, summarize_runs


def _graph(tmp_path):
    """22 modules, few imports between them: the shape where all-at-once wins by its agent count."""
    from environments.cocoder.depgraph import build_dependency_graph

    spec = SynthSpec(modules=22, imports_per_module=1, hubs=0, cycles=0, seed=3)
    return build_dependency_graph(generate_repo(spec, tmp_path).package_dir)


@pytest.mark.parametrize("agents", [1, 3, 5])
def test_file_parallel_works_with_the_team_size_and_uncapped_is_the_upper_bound(tmp_path, agents):
    graph = _graph(tmp_path)
    out = {m: max(1, graph.nodes[m]["tokens"]) for m in graph}
    spec = {m: graph.nodes[m]["api_tokens"] + 300 for m in graph}
    capped = make_plan(graph, "file-parallel", agents)
    uncapped = make_plan(graph, "file-parallel-uncapped", agents)
    assert capped.workers == agents and uncapped.workers == graph.number_of_nodes()
    fast = simulate(graph, uncapped, CostModel(), out, spec)
    fair = simulate(graph, capped, CostModel(), out, spec)
    assert len({t.worker for t in fair.turns}) == agents
    assert fair.makespan > fast.makespan  # 23 agents at once beat a team: the uncapped figure is not a team's
    assert sorted(t.module for t in fair.turns) == sorted(graph)  # every file written once, nothing waits


def _record(task, strategy, seed, pass_rate, makespan, cost, **extra):
    return {"agent": "simulated", "task": task, "seed": seed, "labels": [strategy],
            "metrics": {"pass_rate": pass_rate, "makespan": makespan, "cost_usd": cost, "tokens": 1000,
                        "wall_seconds": 1.0, "sequential_planned_makespan": 900.0, **extra}}


def _runs():
    """One repository, three seeds; CoCoder's failed seed stops early (a short makespan)."""
    return [_record("demo", "sequential", s, 1.0, 900.0, 0.30) for s in range(3)] + [
        _record("demo", "file-parallel", s, 1.0, 200.0, 0.10) for s in range(3)] + [
        _record("demo", "cocoder", 0, 0.288, 100.0, 0.05, test_status="timeout", tests_finished=40,
                tests_cut_off=["tests/test_q.py::test_slow"], unrepaired="3 failing tests crashed outside the code the team wrote"),
        _record("demo", "cocoder", 1, 1.0, 300.0, 0.12), _record("demo", "cocoder", 2, 1.0, 320.0, 0.12)]


def test_one_repositorys_intervals_are_over_seeds_not_zero_width():
    summary = summarize_runs(_runs(), {})
    head = next(h for h in summary["headline"] if h["metric"] == "mean_pass_rate" and h["strategy"] == "cocoder")
    assert head["over"] == "seeds of one repository (3)"
    assert head["low"] < head["estimate"] < head["high"] or head["low"] < head["high"]
    assert head["low"] == pytest.approx(0.288) and head["high"] == pytest.approx(1.0)


def test_failed_runs_makespan_and_cost_are_reported_apart():
    summary = summarize_runs(_runs(), {})
    row = next(r for r in summary["tables"][0]["rows"] if r[2] == "cocoder")
    assert row[5] == "310.0 / 100.0" and row[6] == "0.1200 / 0.0500"  # passing runs / failing runs
    speed = next(h for h in summary["headline"] if h["metric"].startswith("speedup") and h["strategy"] == "cocoder")
    assert speed["estimate"] == pytest.approx((900 / 300 + 900 / 320) / 2)  # the failed run is not in it
    assert "runs passing every test" in speed["over"]


def test_the_summary_says_where_cocoder_does_not_dominate_and_what_went_unrepaired():
    summary = summarize_runs(_runs(), {})
    lines = dominance(_runs())
    assert any(ln.startswith("demo: CoCoder does NOT dominate file-parallel: lower mean pass rate, slower (310.0 s")
               for ln in lines)
    assert any(ln.startswith("demo: CoCoder does NOT dominate sequential: lower mean pass rate;") for ln in lines)
    notes = summary["console_notes"]
    assert any("time limit after 40-40 tests, cut off while running tests/test_q.py::test_slow" in n for n in notes)
    assert any("seed 0: failing tests got no repair request: 3 failing tests crashed outside" in n for n in notes)
    assert any("does NOT dominate file-parallel" in n for n in notes)


def test_a_failing_run_without_a_target_says_why():
    report = sandboxed.TestReport(3, 2, 0, 0, "nonzero", "local")
    assert "2 failing tests crashed outside the code the team wrote" in no_target_reason(report)
    cut = sandboxed.TestReport(3, 0, 0, 0, "timeout", "local", finished=3)
    assert "timed out after 3 tests" in no_target_reason(cut)
