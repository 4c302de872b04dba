"""The gate knows its power: every compared metric carries the smallest loss it detects (80% power
at the 95% interval), a pass that could not have seen a loss of its tolerance is "underpowered",
and the gate then exits with a status of its own (5) unless ``--allow-underpowered``. Checked against the gate's own bootstrap:
seeded losses at the stated size are caught, and the issue's case (attack success 0.3 -> 0.6 on 10
tasks) is flagged instead of passing silently."""

from __future__ import annotations

import json
import random

from agentbed.cli import main
from agentbed.gate import compare, minimum_detectable_effect


def doc(values, higher_is_better=True, tolerance=0.05):
    return {"format": "agentbed.results/1", "metrics": [{"suite": "s", "agent": "a", "metric": "m",
                                                        "higher_is_better": higher_is_better,
                         "tolerance": tolerance, "values": values}]}


def test_the_stated_effect_is_caught_by_the_gates_own_bootstrap():
    n = 60
    d = minimum_detectable_effect([0.0] * n, binary=True)
    assert 0.1 < d < 0.13 and minimum_detectable_effect([0.0] * 10, binary=True) > 0.4
    caught = 0
    for seed in range(20):
        rng = random.Random(seed)
        base = {f"t{i}/0": float(rng.random() < 0.7) for i in range(n)}
        passing = [u for u, v in base.items() if v == 1.0]
        lost = set(rng.sample(passing, round(d * n)))
        now = {u: 0.0 if u in lost else v for u, v in base.items()}
        row, = compare(doc(now), doc(base), seed=seed)
        caught += row.verdict == "regressed"
    assert caught >= 16  # 80% power, nominally


def test_a_doubling_of_attack_success_on_ten_tasks_is_underpowered_not_a_silent_pass(tmp_path, capsys):
    base = {f"t{i}/0": float(i < 3) for i in range(10)}
    doubled = {f"t{i}/0": float(i < 6) for i in range(10)}
    row, = compare(doc(doubled, higher_is_better=False), doc(base, higher_is_better=False))
    assert row.verdict == "underpowered" and row.mde > 0.4 and "detects a loss of" in row.detail
    for name, values in (("results", doubled), ("baseline", base)):
        (tmp_path / f"{name}.json").write_text(json.dumps(doc(values, higher_is_better=False)))
    args = [str(tmp_path / "results.json"), "--baseline", str(tmp_path / "baseline.json")]
    assert main(["gate", *args]) == 5
    assert "gate: UNDERPOWERED" in capsys.readouterr().out
    assert main(["gate", *args, "--json"]) == 5
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["verdict"] == "underpowered" and verdict["ok"] is False
    assert main(["gate", *args, "--require-power"]) == 5  # the old opt-in, now the default
    assert main(["gate", *args, "--allow-underpowered"]) == 0
    assert "1 of 1 metrics underpowered, accepted by --allow-underpowered" in capsys.readouterr().out
    many = {f"t{i}/0": float(i % 10 < 3) for i in range(80)}
    worse = {f"t{i}/0": float(i % 10 < 6) for i in range(80)}
    row, = compare(doc(worse, higher_is_better=False), doc(many, higher_is_better=False))
    assert row.verdict == "regressed" and row.mde < 0.1  # 80 tasks see it
