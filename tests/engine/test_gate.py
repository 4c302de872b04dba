"""The gate refuses what it cannot judge: non-finite numbers, nothing compared, a subset."""

import json

from agentbed.cli import main


def results(values: dict[str, float], agent: str = "oracle", **metric) -> dict:
    return {"format": "agentbed.results/1",
            "metrics": [{"suite": "vault", "agent": agent, "metric": "success", "higher_is_better": True,
                         "tolerance": 0.05, "values": values, **metric}]}


def gate(tmp_path, current: dict, baseline: dict, *flags: str, capsys=None) -> tuple[int, str]:
    """Exit status and stdout+stderr of ``agentbed gate``."""
    (tmp_path / "cur.json").write_text(json.dumps(current))
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    status = main(["gate", str(tmp_path / "cur.json"), "--baseline", str(tmp_path / "base.json"), *flags])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


FULL = {f"task{t}/{s}": 1.0 for t in range(86) for s in range(2)}


def test_a_total_regression_fails_whatever_the_tolerance_says(tmp_path, capsys):
    zeros = {u: 0.0 for u in FULL}
    assert gate(tmp_path, results(zeros), results(FULL), capsys=capsys)[0] == 1
    for bad in ("nan", "inf"):
        status, out = gate(tmp_path, results(zeros), results(FULL), "--tolerance", bad, capsys=capsys)
        assert status == 2 and "--tolerance must be a finite number" in out


def test_nothing_compared_is_a_failure_even_with_allow_missing(tmp_path, capsys):
    other = results({"x/0": 1.0}, agent="naive")
    status, out = gate(tmp_path, other, results({"task0/0": 1.0}), "--allow-missing", capsys=capsys)
    assert status == 1 and "nothing was compared" in out
    status, out = gate(tmp_path, results({"elsewhere/0": 1.0}), results({"task0/0": 1.0}), "--allow-missing",
                       "--allow-subset", capsys=capsys)
    assert status == 2 and "another task set" in out  # refused before anything is compared


def test_a_subset_fails_unless_allowed_and_names_what_is_missing(tmp_path, capsys):
    two_tasks = {u: v for u, v in FULL.items() if u.split("/")[0] in ("task0", "task1")}
    status, out = gate(tmp_path, results(two_tasks), results(FULL), capsys=capsys)
    assert status == 1 and "subset" in out and "84 of 86 tasks absent" in out and "--allow-subset" in out
    status, out = gate(tmp_path, results(two_tasks), results(FULL), "--allow-subset", capsys=capsys)
    assert status == 5 and "gate: UNDERPOWERED" in out  # 2 tasks in common see no loss of 0.05
    status, out = gate(tmp_path, results(two_tasks), results(FULL), "--allow-subset", "--allow-underpowered",
                       capsys=capsys)
    assert status == 0 and "gate: pass" in out
    one_seed = {u: v for u, v in FULL.items() if u.endswith("/0")}
    status, out = gate(tmp_path, results(one_seed), results(FULL), capsys=capsys)
    assert status == 1 and "seeds absent in covered tasks: 1" in out


def test_a_missing_agent_fails_unless_subsets_are_allowed(tmp_path, capsys):
    base = results(FULL)
    base["metrics"].append({**base["metrics"][0], "agent": "naive"})
    status, out = gate(tmp_path, results(FULL), base, capsys=capsys)
    assert status == 1 and "vault/naive/success: missing" in out
    assert gate(tmp_path, results(FULL), base, "--allow-subset", "--allow-underpowered", capsys=capsys)[0] == 0


def test_an_agent_or_unit_the_baseline_lacks_is_named_and_not_judged(tmp_path, capsys):
    """Session 16's probe: an agent the baseline lacks passed without a word. It is named (and
    results units the baseline lacks too), reported rather than failed: docs/cli.md says why."""
    current = results({**FULL, "task0/2": 0.0})
    current["metrics"].append({**current["metrics"][0], "agent": "naive", "values": {"task0/0": 0.0}})
    status, out = gate(tmp_path, current, results(FULL), "--allow-underpowered", capsys=capsys)
    assert status == 0 and "gate: pass" in out, out
    assert "the baseline has no entry for 1 results metric: vault/naive/success" in out, out
    assert "1 results units not in the baseline, not compared (task0/2)" in out, out
    status, out = gate(tmp_path, current, results(FULL), "--allow-underpowered", "--json", capsys=capsys)
    doc = json.loads(out)
    assert doc["not_in_baseline"] == ["vault/naive/success"] and doc["rows"][0]["extra_units"] == ["task0/2"]

def test_the_gate_refuses_values_it_cannot_judge(tmp_path, capsys):
    """Issue 31: on unsealed results a value of 1e308, 50 for a 0/1 metric (even with a widened
    range of its own), a metric twice, or a baseline of another suite passed a regression."""
    zeros = {u: 0.0 for u in FULL}
    for bad, words in (({**zeros, "task0/0": 1e308}, "outside the range"), ({**zeros, "task0/0": 50.0}, "outside")):
        status, out = gate(tmp_path, results(bad), results(FULL), capsys=capsys)
        assert status == 2 and words in out and "cur.json" in out, out
    status, out = gate(tmp_path, results({**zeros, "task0/0": 50.0}, range=[0, 100]), results(FULL), capsys=capsys)
    assert status == 2 and "range" in out, out
    twice = results(zeros)
    twice["metrics"].append({**twice["metrics"][0], "values": FULL})
    status, out = gate(tmp_path, twice, results(FULL), capsys=capsys)
    assert status == 2 and "listed twice" in out, out
    other = results(FULL)
    other["metrics"][0]["suite"] = "contracts"
    status, out = gate(tmp_path, other, results(FULL), capsys=capsys)
    assert status == 2 and "another suite" in out, out
    big = {**FULL, "task0/0": 1e12}
    status, out = gate(tmp_path, results(zeros, metric="cost_usd", higher_is_better=False),
                       results(big, metric="cost_usd", higher_is_better=False), capsys=capsys)
    assert status in (0, 1), out  # at the documented bound: judged, not refused
