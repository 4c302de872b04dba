"""Issue 54 item 6, "gains shrink when interventions are weak": the interval of the difference of the
AC's gains at two settings, paired on the shared held-out checkpoints and on the training draws
(controllers/oversight/contrast.py, ``agentbed oversight contrast``), and its committed records."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from agentbed.cli import main
from agentbed.errors import UsageError
from controllers.oversight.budget import parse_assignments
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.contrast import GROWS, SHRINKS, UNCLEAR, gain_contrast, shared_checkpoints, verdict
from controllers.oversight.curve import AC, SELECTED
from suites.oversight.suite import DATA, load_headline

BS = {"controller": AC, "baseline": SELECTED, "resamples": 300, "seed": 4}
GROUPS = np.repeat(np.arange(12), 6).astype(str).astype(object)  # 12 held-out games of 6 checkpoints


def _regrets(ac: np.ndarray, selected: np.ndarray) -> dict[str, np.ndarray]:
    return {AC: ac, SELECTED: selected}


def test_identical_settings_contrast_to_exactly_zero_and_a_uniform_shrink_is_found():
    rng = np.random.default_rng(0)
    ac, sel = rng.uniform(0, 1, (5, GROUPS.size)), rng.uniform(0, 1, (5, GROUPS.size))
    same = gain_contrast(_regrets(ac, sel), _regrets(ac, sel), GROUPS, **BS)
    assert (same["contrast"]["estimate"], same["contrast"]["low"], same["contrast"]["high"]) == (0, 0, 0)
    assert same["verdict"] == UNCLEAR and same["first"] == same["second"]
    weaker = gain_contrast(_regrets(ac, sel), _regrets(ac + 0.1, sel), GROUPS, **BS)  # AC worse at the second
    assert weaker["contrast"]["estimate"] == pytest.approx(0.1) and weaker["contrast"]["low"] == pytest.approx(0.1)
    assert weaker["verdict"] == SHRINKS
    gain = float(sel.mean() - ac.mean())
    assert weaker["first"]["estimate"] == pytest.approx(gain) and weaker["second"]["estimate"] == pytest.approx(gain - 0.1)
    assert gain_contrast(_regrets(ac + 0.1, sel), _regrets(ac, sel), GROUPS, **BS)["verdict"] == GROWS


def test_pairing_on_checkpoints_and_draws_sees_a_small_shrink_the_two_gains_intervals_cannot():
    """Checkpoints differ widely in how much the AC gains, and whole training draws fit better or
    worse, the same way at both settings; the gain is 0.04 smaller at the second. Each setting's own
    interval contains the other's estimate, yet the contrast's lies above 0, because it is paired:
    the same held-out games and the same draws in every resample."""
    rng = np.random.default_rng(1)
    per_checkpoint = rng.normal(0.1, 0.3, GROUPS.size)
    per_draw = rng.normal(0, 0.1, (5, 1))
    sel = np.full((5, GROUPS.size), 0.5)
    first = _regrets(sel - per_checkpoint - per_draw, sel)
    second = _regrets(sel - per_checkpoint - per_draw + 0.04 + rng.normal(0, 0.01, (5, GROUPS.size)), sel)
    out = gain_contrast(first, second, GROUPS, **BS)
    assert out["first"]["low"] < out["second"]["estimate"] < out["first"]["estimate"] < out["second"]["high"]
    assert out["contrast"]["low"] > 0 and out["verdict"] == SHRINKS
    assert out["contrast"]["high"] - out["contrast"]["low"] < 0.02


def test_the_rule_reads_the_interval_not_the_estimate():
    assert verdict({"estimate": 0.06, "low": -0.01, "high": 0.14}) == UNCLEAR
    assert verdict({"estimate": 0.06, "low": 0.001, "high": 0.14}) == SHRINKS
    assert verdict({"estimate": -0.06, "low": -0.14, "high": -0.001}) == GROWS


def test_unequal_shapes_are_refused():
    a = np.zeros((5, GROUPS.size))
    with pytest.raises(ValueError, match="same draws"):
        gain_contrast(_regrets(a, a), _regrets(a[:4], a[:4]), GROUPS, **BS)


def _checkpoints(keys: list[tuple[str, int]], games: list[str]) -> Checkpoints:
    n = len(keys)
    return Checkpoints(keys, np.asarray(games, dtype=object), np.zeros((n, 1)), np.zeros(n), ["continue"],
                       {"continue": [[(True, 1)]] * n}, "continue", ("x",))


def test_checkpoints_pair_by_trajectory_and_step_whatever_their_order():
    first = _checkpoints([("t1", 4), ("t1", 12), ("t2", 4), ("t3", 4)], ["g1", "g1", "g2", "g3"])
    second = _checkpoints([("t2", 4), ("t1", 12), ("t1", 4)], ["g2", "g1", "g1"])  # t3 lost on this side
    a, b = shared_checkpoints(first, second)
    assert a.tolist() == [0, 1, 2] and b.tolist() == [2, 1, 0]
    with pytest.raises(UsageError, match="different games"):
        shared_checkpoints(first, _checkpoints([("t1", 4)], ["g9"]))
    with pytest.raises(UsageError, match="share no checkpoint"):
        shared_checkpoints(first, _checkpoints([("t9", 4)], ["g1"]))


def test_the_command_contrasts_two_settings_and_each_gain_is_the_curves(tmp_path, capsys):
    """The same dataset on both sides contrasts to 0, and each side's gain over the draws and in the
    one fit is minus the learning curve's difference at the full size (the same fits and seed)."""
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    flags = ["--draws", "2", "--trees", "5", "--resamples", "50"]
    out = tmp_path / "contrast.json"
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", dev,
                 "--labels", "a,b", *flags, "--json", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert "Gain of action-conditioned over scalar-selected: a against b" in capsys.readouterr().out
    assert record["shared_checkpoints"] == record["held_out_checkpoints"][0] and record["development_units"] == 65
    assert set(record["datasets"]) == {"heldout", "dev", "versus-heldout", "versus-dev"}
    assert main(["oversight", "curve", held, "--train", dev, "--sizes", "65", *flags,
                 "--json", str(tmp_path / "curve.json")]) == 0
    point = json.loads((tmp_path / "curve.json").read_text(encoding="utf-8"))["points"][-1]
    for fits, curve in (("over_draws", point), ("one_fit", point["all_once"])):
        r = record[fits]
        assert r["contrast"]["estimate"] == 0 and r["verdict"] == UNCLEAR
        assert r["first"]["estimate"] == pytest.approx(-curve["difference"][SELECTED]["estimate"])
        assert (r["first"]["low"], r["first"]["high"]) == pytest.approx(
            (-curve["difference"][SELECTED]["high"], -curve["difference"][SELECTED]["low"]))


def test_the_command_contrasts_two_step_budgets_on_the_same_builds(tmp_path, capsys):
    """Claim 3 by the expert's step budget: one unbudgeted build serves every budget, so the two
    settings are the same files with another --budget on each side (--versus-budget); each side's
    gain is the curve's with that side's budget, and the record and the table say which was which."""
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    flags = ["--draws", "2", "--trees", "5", "--resamples", "50"]
    out = tmp_path / "contrast.json"
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", dev,
                 "--versus-budget", "oracle=3", "--labels", "none,3", *flags, "--json", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["budgets"] == [{}, {"oracle": 3}]
    text = " ".join(capsys.readouterr().out.split())
    assert "Budgets: none: no step budget; 3: oracle gives up after 3 steps." in text
    assert main(["oversight", "curve", held, "--train", dev, "--sizes", "65", "--budget", "oracle=3", *flags,
                 "--json", str(tmp_path / "curve.json")]) == 0
    point = json.loads((tmp_path / "curve.json").read_text(encoding="utf-8"))["points"][-1]
    for fits, curve in (("over_draws", point), ("one_fit", point["all_once"])):
        assert record[fits]["second"]["estimate"] == pytest.approx(-curve["difference"][SELECTED]["estimate"])
        assert record[fits]["first"]["estimate"] != record[fits]["second"]["estimate"]  # the budget bit one side
    mirrored = tmp_path / "mirrored.json"
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", dev,
                 "--budget", "oracle=3", "--versus-budget", "none", *flags, "--json", str(mirrored)]) == 0
    back = json.loads(mirrored.read_text(encoding="utf-8"))
    assert back["budgets"] == [{"oracle": 3}, {}]
    assert back["over_draws"]["contrast"]["estimate"] == pytest.approx(-record["over_draws"]["contrast"]["estimate"])
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", dev,
                 "--versus-budget", "oracle"]) == 2
    assert "--versus-budget: expected ACTION=NUMBER" in capsys.readouterr().err


def test_the_command_refuses_development_sets_of_other_games_and_held_out_fits(tmp_path, capsys):
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    from tests.oversight.test_heldout_table import _parts

    part = _parts(dev, tmp_path)[0]
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", part]) == 2
    assert "same games" in capsys.readouterr().err
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", dev, "--versus-train", held]) == 2
    assert "refusing to fit" in capsys.readouterr().err
    assert main(["oversight", "contrast", held, "--train", dev, "--versus", held, "--versus-train", dev,
                 "--labels", "only-one"]) == 2



CONTRASTS = sorted(DATA.glob("contrast-*.json"))


@pytest.mark.parametrize("path", CONTRASTS, ids=lambda p: p.name)
def test_each_committed_contrast_agrees_with_the_slip_rate_curves_it_contrasts(path):
    """A committed contrast names committed datasets by sha256, its verdict is the rule's, and each
    side's gain is minus the difference the committed curve on the same datasets records at the full
    size (over the draws and in the one fit): the contrast measures what the rows report."""
    record = load_headline(path)  # raises unless every dataset matches its sha256
    argv = shlex.split(record["command"])
    assert argv[:3] == ["agentbed", "oversight", "contrast"]
    for fits in ("over_draws", "one_fit"):
        assert record[fits]["verdict"] == verdict(record[fits]["contrast"])
    curves = {}
    for p in DATA.glob("curve-*.json"):
        c = json.loads(p.read_text(encoding="utf-8"))
        if "datasets" in c and c["units"] == record["development_units"] and c["sizes"][-1] == c["units"]:
            curves[frozenset(d["sha256"] for d in c["datasets"].values()), _budget_flag(c["command"])] = c
    # a contrast of two budgets on the same files (claim 3 by the step budget) records each side's
    # budgets; one of two builds applies its --budget to both sides
    budgets = record.get("budgets") or [parse_assignments(_budget_flag(record["command"]), "--budget", int)] * 2
    sides = {"first": {k: v for k, v in record["datasets"].items() if not k.startswith("versus-")},
             "second": {k: v for k, v in record["datasets"].items() if k.startswith("versus-")}}
    for (side, datasets), budget in zip(sides.items(), budgets, strict=True):
        flag = ",".join(f"{a}={n}" for a, n in budget.items())
        curve = curves[frozenset(d["sha256"] for d in datasets.values()), flag]
        assert record["held_out_checkpoints"][side == "second"] == record["shared_checkpoints"] == \
            curve["held_out_checkpoints"]
        point = curve["points"][-1]
        for fits, p in (("over_draws", point), ("one_fit", point["all_once"])):
            assert record[fits][side]["estimate"] == pytest.approx(-p["difference"][SELECTED]["estimate"], abs=1e-12)


def _budget_flag(command: str) -> str:
    """A recorded curve's or contrast's ``--budget`` value ("" when it gave none)."""
    argv = shlex.split(command)
    return argv[argv.index("--budget") + 1] if "--budget" in argv else ""
