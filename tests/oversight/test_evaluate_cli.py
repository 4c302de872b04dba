"""Evaluation and the ``agentbed oversight`` verb on a vault dataset."""

import copy
import json

import numpy as np
import pytest

from agentbed.cli import main
from agentbed.errors import UsageError
from controllers.oversight.dataset import BuildConfig, Dataset
from controllers.oversight.evaluate import EvalConfig, evaluate, expected_calibration_error
from controllers.oversight.policies import ForestSettings
from suites.oversight.build import build_dataset


@pytest.fixture(scope="module")
def vault_dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("ov") / "vault.jsonl"
    build_dataset(BuildConfig("vault", games=15, seeds=2, rollouts=2, checkpoints=3, first=1, every=3)).save(path)
    return path


@pytest.fixture(scope="module")
def evaluation(vault_dataset):
    """The module's dataset evaluated with 200 resamples, the cost grid and the split by a prefix
    feature, once for every test that reads such a result (each reads it or takes a deep copy):
    evaluate is deterministic, and the split is its own part of the result, computed last from the
    same regrets (the tests that read it had their own evaluation, without the grid, until 2026-12-07)."""
    return evaluate(Dataset.load(vault_dataset), EVALUATION)


# 20 trees a forest (the CLI's default is 200), the dispersion penalty still chosen per fold by the inner
# cross-validation: no test here reads how well the forests predict, only what the evaluation reports and
# that it is consistent (fitting the forests was most of the evaluation's time in cProfile)
EVALUATION = EvalConfig(resamples=200, split_by="repeat_action_frac", forest=ForestSettings(n_estimators=20))


def test_evaluation_reports_every_controller_with_intervals(evaluation):
    result = evaluation
    names = set(result["controllers"])
    assert {"scalar", "scalar+platt", "scalar+isotonic", "action-conditioned", "oracle"} <= names
    assert result["controllers"]["oracle"]["regret"]["estimate"] == 0
    for c in result["controllers"].values():
        r = c["regret"]
        assert r["low"] <= r["estimate"] + 1e-9 and r["estimate"] <= r["high"] + 1e-9
        assert r["estimate"] >= 0
    assert len(result["cost_sweep"]) == 25
    assert {c["score"] for c in result["calibration"]["rows"]} == {"raw", "platt", "isotonic"}
    for c in result["calibration"]["rows"]:  # every estimate lies inside its own interval (ECE included)
        for metric in ("brier", "ece", "regret", "regret_cost_rule"):
            assert c[metric]["low"] - 1e-9 <= c[metric]["estimate"] <= c[metric]["high"] + 1e-9, metric
    assert {"scalar-oracle", "best-fixed", "scalar-bands", "cost-rule", "cost-rule+platt"} <= names
    best = result["best_scalar_only"]
    assert result["controllers"][best]["scalar_only"] and result["ratios"]["best_scalar_only"]["baseline"] == best
    assert all(result["controllers"][best]["regret"]["estimate"] <= c["regret"]["estimate"] + 1e-12
               for c in result["controllers"].values() if c["scalar_only"])
    acc = result["accounting"]
    assert acc["checkpoints_built"] == (acc["checkpoints_evaluated"] + acc["dropped_missing_an_action"]
                                        + acc["dropped_without_any_branch"])
    assert acc["missing_confidence_checkpoints"] == 0
    assert set(result["advantage"]) == {"expert", "reflect"}
    assert result["regime"] in {"gain", "no significant gain"}


def test_ece_of_a_perfectly_calibrated_score_is_zero():
    p = np.asarray([0.0, 0.0, 1.0, 1.0])
    assert expected_calibration_error(p, np.asarray([0.0, 0.0, 1.0, 1.0])) == 0.0
    assert expected_calibration_error(np.full(4, 0.5), np.asarray([0.0, 0.0, 1.0, 1.0])) == 0.0
    assert expected_calibration_error(np.full(4, 0.9), np.zeros(4)) == pytest.approx(0.9)


def test_the_brier_score_is_scikit_learns_to_the_bit():
    from sklearn.metrics import brier_score_loss

    from controllers.oversight.calibration import brier

    for q in np.linspace(0, 1, 101):  # one checkpoint: (0 - 0.1)^2 is not (1 - 0.9)^2 in the last bit
        for y in (0.0, 1.0):
            assert brier(np.asarray([q]), np.asarray([y])) == brier_score_loss([y], [q]), (q, y)
    rng = np.random.default_rng(0)
    for n in rng.integers(2, 200, 300):
        p = [rng.random(n), np.round(rng.random(n), 1), rng.choice([0.0, 0.5, 1.0], n)][n % 3]
        y = (rng.random(n) < rng.random()).astype(float)
        assert brier(p, y) == brier_score_loss(y, p)


def test_cli_build_and_evaluate(tmp_path, capsys):
    out = tmp_path / "d.jsonl"
    assert main(["oversight", "build", "vault", "--games", "6", "--rollouts", "1", "--first", "1", "--every", "3",
                 "--out", str(out)]) == 0
    assert main(["oversight", "evaluate", str(out), "--no-grid", "--resamples", "100", "--folds", "3", "--trees", "20",
                 "--split-by", "repeat_action_frac", "--summary", str(tmp_path / "s.json"), "--json",
                 str(tmp_path / "r.json")]) == 0
    text = capsys.readouterr().out
    assert "Calibration decomposition" in text and "Regret per controller" in text
    assert "Regret where repeat_action_frac > 0" in text  # --split-by's table (5 of this set's 28 checkpoints)
    # the notes the JSON has are in the text too (the spread, the rule's verdict), and the seeds
    assert text.count("\nNote: ") >= 3 and "Share of checkpoints whose best action is not" in text
    assert "seeds: cross-validated on vault fixture(s) 0 (development)" in text
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["suite"] == "oversight" and summary["figures"][0]["svg"].startswith("<svg")
    flat = " ".join(text.split())  # every table's note, as the JSON has it, is printed in full (item 2)
    notes = [t["note"] for t in summary["tables"] if t.get("note")]
    assert len(notes) >= 3 and all(" ".join(f"Note: {n}".split()) in flat for n in notes)
    assert json.loads((tmp_path / "r.json").read_text())["benchmark"] == "vault"
    # recomputing the features replays the base trajectories: same rows, same features
    again = tmp_path / "again.jsonl"
    assert main(["oversight", "features", str(out), "--out", str(again)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [json.loads(line) for line in again.read_text().splitlines()[1:]] == rows


def test_skip_games_branches_the_games_after_the_first_ones():
    every = build_dataset(BuildConfig("vault", games=3, rollouts=1, checkpoints=1, first=1)).provenance["games"]
    later = build_dataset(BuildConfig("vault", games=2, skip_games=1, rollouts=1, checkpoints=1, first=1))
    assert later.provenance["games"] == every[1:3]
    assert {r["game"] for r in later.rows} <= set(every[1:3])


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    assert main(["oversight", "evaluate", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["oversight", "build", "nope", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--rollouts", "0", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert main(["oversight", "features", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "y.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--skip-games", "999", "--out", str(tmp_path / "z.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--games", "30", "--out", str(tmp_path / "z.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--games-seed", "1", "--out", str(tmp_path / "z.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--expert-budget", "5", "--out", str(tmp_path / "z.jsonl")]) == 2
    assert main(["oversight", "build", "vault", "--server-threads", "0", "--out", str(tmp_path / "z.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--skip-games 999" in err[-5] and "--games 30" in err[-4] and "only 25 games" in err[-4]
    assert "--games-seed" in err[-3] and "--expert-budget" in err[-2] and "--server-threads" in err[-1]
    assert len(err) == 9 and all(line.startswith("agentbed: error:") for line in err)
    assert not (tmp_path / "z.jsonl").exists()


def test_held_out_evaluation_fits_on_the_development_games_only(tmp_path, capsys):
    dev, test = tmp_path / "dev.jsonl", tmp_path / "test.jsonl"
    common = ["--rollouts", "1", "--first", "1", "--every", "3", "--seeds", "2"]
    assert main(["oversight", "build", "vault", "--games", "8", *common, "--out", str(dev)]) == 0
    assert main(["oversight", "build", "vault", "--games", "8", "--offset", "8", *common, "--out", str(test)]) == 0
    assert main(["oversight", "evaluate", str(test), "--train", str(dev), "--no-grid", "--resamples", "50",
                 "--trees", "20", "--json", str(tmp_path / "r.json")]) == 0
    text = capsys.readouterr().out
    assert "Regret ratio per base agent" in text
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["protocol"].startswith("held out: fitted on a development dataset of 8 games")
    assert result["folds"] == 1 and set(result["per_flaw"]) == {"noisy", "looping", "forgetful"}
    assert main(["oversight", "evaluate", str(test), "--train", str(test), "--no-grid"]) == 2  # same games
    assert "shares 8 game(s)" in capsys.readouterr().err


def test_the_table_of_every_benchmark_names_the_best_scalar_only_policy(evaluation):
    from suites.oversight.everything import regret_table

    result = copy.deepcopy(evaluation)
    t = regret_table({"vault": result, "again": result}, "cmd")
    rows = {r[0]: r[1:] for r in t["rows"]}
    assert rows["best scalar-only policy"] == [result["best_scalar_only"]] * 2
    assert "[" in rows["action-conditioned"][0] and "[" in rows["ratio action-conditioned / best scalar-only"][0]


def test_parts_merged_are_the_build_of_all_their_games(tmp_path, capsys):
    common = ["--rollouts", "1", "--first", "1", "--every", "3", "--checkpoints", "2"]
    whole, a, b, merged = (tmp_path / f"{n}.jsonl" for n in ("whole", "a", "b", "merged"))
    assert main(["oversight", "build", "vault", "--games", "4", *common, "--out", str(whole)]) == 0
    assert main(["oversight", "build", "vault", "--games", "2", *common, "--out", str(a)]) == 0
    assert main(["oversight", "build", "vault", "--games", "2", "--offset", "2", *common, "--out", str(b)]) == 0
    assert main(["oversight", "merge", str(a), str(b), "--out", str(merged)]) == 0
    one, parts = Dataset.load(whole), Dataset.load(merged)
    assert parts.rows == one.rows and parts.provenance["games"] == one.provenance["games"]
    assert parts.provenance["counts"] == one.provenance["counts"]
    assert parts.provenance["counts_per_flaw"] == one.provenance["counts_per_flaw"]
    assert [p["skip_games"] for p in parts.provenance["parts"]] == [0, 2]
    # overlapping games or another configuration are one-line errors
    assert main(["oversight", "merge", str(a), str(a), "--out", str(tmp_path / "x.jsonl")]) == 2
    other = tmp_path / "other.jsonl"
    assert main(["oversight", "build", "vault", "--games", "2", "--offset", "2", "--rollouts", "2", "--first", "1",
                 "--every", "3", "--checkpoints", "2", "--out", str(other)]) == 0
    assert main(["oversight", "merge", str(a), str(other), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("agentbed: error:")]
    assert len(err) == 2 and "is in another part too" in err[0] and "'rollouts' differs" in err[1]
    assert not (tmp_path / "x.jsonl").exists()


def test_max_steps_caps_every_episode_and_branch():
    ds = build_dataset(BuildConfig("vault", games=2, rollouts=1, checkpoints=2, first=1, every=2, max_steps=4))
    assert ds.provenance["max_steps"] == 4 and ds.rows
    assert max(r["checkpoint"] for r in ds.rows) < 4
    assert all(r["steps"] <= 4 for r in ds.rows)


def test_the_record_names_its_datasets_by_sha256_and_the_demo_reads_it(vault_dataset, evaluation, tmp_path):
    import hashlib
    import shutil

    from agentbed.summary import MAX_FINDINGS
    from suites.oversight.record import write_record
    from suites.oversight.suite import findings, load_headline

    data = tmp_path / "data"
    data.mkdir()
    held = data / "held.jsonl"
    shutil.copy(vault_dataset, held)
    config = EVALUATION  # evaluation's, on the same bytes
    result = copy.deepcopy(evaluation)
    path = write_record(data / "headline.json", result, "agentbed oversight evaluate held.jsonl", {"heldout": str(held)},
                        "vault-test: a test configuration", config, {})
    record = load_headline(path)
    assert record["datasets"]["heldout"]["sha256"] == hashlib.sha256(held.read_bytes()).hexdigest()
    assert record["configuration"] == {"name": "vault-test", "description": "a test configuration"}
    lines = findings(record, {"verified": True, "identical": 3, "expected": 3, "games": ["g"], "rows": 3})
    assert len(lines) <= MAX_FINDINGS and lines[0]["paper"].startswith("0.22")
    assert lines[0]["label"].endswith("two-action routing")  # the paper's comparison beside the paper's number
    assert lines[-1]["value"].startswith("verified: 3 of 3")
    held.write_bytes(held.read_bytes() + b"\n")  # a changed dataset is refused
    with pytest.raises(UsageError, match="not the heldout dataset"):
        load_headline(path)
    with pytest.raises(UsageError, match="--record"):
        write_record(tmp_path / "elsewhere" / "h.json", result, "x", {"heldout": str(held)}, "", config, {})


def test_split_by_a_feature_says_where_each_controllers_regret_sits(vault_dataset, evaluation, tmp_path,
                                                                     capsys):
    from controllers.oversight.checkpoints import group_checkpoints

    data = Dataset.load(vault_dataset)
    result = copy.deepcopy(evaluation)  # split by repeat_action_frac
    split = result["split"]
    cps, _ = group_checkpoints(data.rows, data.provenance["actions"], data.provenance["primary_intervention"],
                               data.provenance["feature_names"])
    flagged = cps.X[:, cps.feature_names.index("repeat_action_frac")] > 0
    assert split["checkpoints"] == int(flagged.sum()) and 0 < split["checkpoints"] < split["of"] == len(cps)
    for name, c in split["controllers"].items():
        r = np.asarray([result["regret_per_checkpoint"][name][k] for k in result["regret_per_checkpoint"][name]])
        if r.sum() > 0:  # the share is the flagged checkpoints' part of the controller's total regret
            assert abs(c["share"]["estimate"] - r[flagged].sum() / r.sum()) < 1e-9
            assert abs(c["flagged"]["estimate"] - r[flagged].mean()) < 1e-9
    # the command's --split-by printing this table: test_cli_build_and_evaluate (one evaluation fewer)
    assert main(["oversight", "evaluate", str(vault_dataset), "--split-by", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--split-by: no feature 'nope'" in err[0]
