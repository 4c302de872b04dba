import pytest

from agentbed.results import load_results
from controllers.cocoder.strategies import SEQUENTIAL_MARGIN
from suites.cocoder.demo import (
    GATED,
    SMALL_LABELS,
    dominates,
    dominates_by_intervals,
    pareto_front,
    run_demo,
)


def test_pareto_front_uses_every_objective():
    # (makespan, cost, -pass rate): the fast cheap but failing point does not dominate the others
    points = [(100.0, 1.0, -0.5), (300.0, 2.0, -1.0), (400.0, 3.0, -1.0), (100.0, 1.0, -0.4)]
    assert pareto_front(points) == [0, 1]


def test_domination_needs_every_mean_at_least_as_good_and_one_better():
    def runs(makespan, cost, pass_rate):
        return [{"makespan": makespan, "cost_usd": cost, "pass_rate": pass_rate}]

    assert dominates(runs(100, 1.0, 1.0), runs(200, 1.0, 1.0))
    assert not dominates(runs(100, 1.0, 1.0), runs(100, 1.0, 1.0))  # equal is not better
    assert not dominates(runs(100, 0.5, 0.9), runs(200, 1.0, 1.0))  # faster and cheaper, lower pass rate


def test_domination_by_intervals_ignores_differences_inside_the_noise():
    def runs(makespans, pass_rates):
        return [{"makespan": m, "cost_usd": 1.0, "pass_rate": p} for m, p in zip(makespans, pass_rates, strict=True)]

    slow = runs([200.0 + i for i in range(20)], [1.0] * 20)
    fast = [150.0 + i for i in range(20)]
    assert dominates_by_intervals(runs(fast, [1.0] * 20), slow)
    one_unlucky_seed = [1.0] * 19 + [0.9]  # a mean 0.005 lower: the means no longer dominate, the intervals do
    assert not dominates(runs(fast, one_unlucky_seed), slow)
    assert dominates_by_intervals(runs(fast, one_unlucky_seed), slow)
    assert not dominates_by_intervals(runs(fast, [0.9] * 20), slow)  # significantly lower pass rate
    assert not dominates_by_intervals(slow, slow)  # no better in anything


def test_demo_writes_a_summary_and_gate_results(sandbox, tmp_path):
    summary = run_demo(tmp_path, tasks=["synth-12"], seeds=(0,), sweep=False)
    assert summary["suite"] == "cocoder" and summary["episodes"] == len(SMALL_LABELS)
    goal = summary["tables"][1]
    assert [row[:2] for row in goal["rows"]] == [["synth-12", "cocoder"]]
    assert all(row[-1] in ("met", "NOT met") and row[-2] in ("yes", "no") for row in goal["rows"])
    planned, failing = summary["tables"][0]["rows"][0][-2].split(" / ", 1)  # sequential's planned risk, outcome
    assert 0.0 <= float(planned) < 1.0 and failing in ("0/1", "1/1")
    # the metric is named exactly, and the figures say where they come from
    assert {h["metric"] for h in summary["headline"]} == {"mean_pass_rate", "share_of_runs_passing_every_test"}
    assert "mean pass rate" in summary["tables"][0]["columns"] and "runs passing every test" in summary["tables"][0]["columns"]
    assert all("cost model" in t["note"] for t in summary["tables"][:3])
    assert 2 <= len(summary["findings"]) <= 5 and all(f["note"] for f in summary["findings"])
    assert "dominate" in summary["tables"][2]["note"] and summary["figures"]
    results = load_results(tmp_path / "cocoder")
    assert {(m["agent"], m["metric"]) for m in results["metrics"]} == {
        (s, metric) for s in SMALL_LABELS for metric in GATED}
    assert all(set(m["values"]) == {"synth-12/0"} for m in results["metrics"])
    assert (tmp_path / "cocoder" / "summary.json").is_file()


@pytest.mark.slow
def test_demo_sweep_draws_the_pareto_figure(sandbox, tmp_path, monkeypatch):
    import suites.cocoder.demo as demo

    monkeypatch.setattr(demo, "LATENCIES", (60.0,))
    monkeypatch.setattr(demo, "CROSS_ERRORS", (0.1,))
    monkeypatch.setattr(demo, "AGENT_COUNTS", (2,))
    monkeypatch.setattr(demo, "RISK_LEVELS", ("sequential+0", "sequential", "0.5", "any"))
    summary = run_demo(tmp_path, tasks=["synth-12"], seeds=(0,), sweep=True, sweep_tasks=["synth-12", "synth-8"])
    assert [f["svg"][:4] for f in summary["figures"]] == ["<svg"] * 3  # the sensitivity, then one per sweep
    sweeps = [t for t in summary["tables"] if t["title"].startswith("Sweeps on ")]
    ladders = [t for t in summary["tables"] if t["title"].startswith("Risk levels on ")]
    for task, sweep, ladder in zip(("synth-12", "synth-8"), sweeps, ladders, strict=True):
        assert sweep["title"].startswith(f"Sweeps on {task} ") and ladder["title"].startswith(f"Risk levels on {task} ")
        assert {row[1] for row in sweep["rows"]} == {"lambda=60", "p_x=0.1", "k=2", "free lossless transfer"}
        assert any(row[2].endswith(" *") for row in sweep["rows"])
        # the note says where CoCoder does not dominate both baselines, naming sweep settings only
        listed = sweep["note"].split("file-parallel (means): ", 1)[1].split(". agentbed demo", 1)[0]
        where = dict(clause.split(": ", 1) for clause in listed.split("; "))
        assert set(where) == {"cocoder", "every cocoder variant"}
        for settings in where.values():
            assert settings == "nowhere" or set(settings.split(", ")) <= {row[1] for row in sweep["rows"]}
        assert [row[1].removesuffix(" *") for row in ladder["rows"]] == [
            "sequential", "cocoder --risk sequential+0", "cocoder --risk sequential", "cocoder --risk 0.5",
            "cocoder --risk any"]
        assert any(row[1].endswith(" *") for row in ladder["rows"])
        assert ladder["rows"][0][2] == "sequential" and all(row[2] for row in ladder["rows"])  # the plan run
        planned = [float(row[-1].split(" / ")[0]) for row in ladder["rows"]]
        # within each bound (rounded to 3 places): sequential's risk, the same plus the margin, 0.5
        assert planned[1] <= planned[0] + 1e-3 and planned[2] <= planned[0] + SEQUENTIAL_MARGIN + 1e-3
        assert planned[3] <= 0.5
