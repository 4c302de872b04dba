"""Issue 54 items 3-5: one held-out table over the committed benchmark records, builds that make a
development or a held-out dataset from the registry, `oversight all` fitting on development games
only, and the learning curve's draws."""

from __future__ import annotations

import contextlib
import functools
import io
import json
from pathlib import Path

import numpy as np
import pytest

from agentbed.cli import main
from agentbed.errors import UsageError
from controllers.oversight.curve import draw_units, nested, two_level
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import EvalConfig
from controllers.oversight.policies import ForestSettings
from suites.oversight.benchmarks import load_target
from suites.oversight.heldout_table import ROWS, heldout_table, read_records
from suites.oversight.seeds import split_of
from suites.oversight.suite import DATA

RECORDS = sorted(DATA.glob("heldout-*.json"))


def test_the_table_has_a_column_per_benchmark_and_every_descriptor(capsys):
    paths = [DATA / "headline.json", *RECORDS]
    assert main(["oversight", "table", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    records = read_records(paths)
    assert {name for name, _ in records} >= {"alfworld", "graphrag", "suite-contracts"}
    tab = heldout_table(records, "cmd")
    assert [r[0] for r in tab["rows"]] == list(ROWS)
    for name, record in records:  # fitted on development units, scored on held-out ones only
        assert "(held out)" not in record["seeds"].split("; evaluated on ")[0], name
        assert "(development)" not in record["seeds"].split("; evaluated on ")[1].replace("0 development", ""), name
        d = record["result"]["descriptors"]
        assert 0.0 <= d["share_defer_not_best"]["estimate"] <= 1.0 and d["advantage_spread"]["estimate"] >= 0
        assert name in out


def test_a_cross_validated_record_is_refused(tmp_path):
    record = json.loads((DATA / "headline.json").read_text(encoding="utf-8"))
    record["datasets"].pop("dev")
    path = tmp_path / "cv.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(UsageError, match="not a held-out record"):
        read_records([path])


@pytest.mark.parametrize("benchmark,options", [("graphrag", {}), ("scienceworld", {}),
                                               ("suite:contracts", {"base": "naive", "interventions": "oracle"})])
def test_a_split_build_takes_only_that_side_of_the_registry(benchmark, options):
    split = split_of(benchmark)
    dev = load_target(benchmark, split="development", **options).games
    held = load_target(benchmark, split="held-out", **options).games
    assert dev and held and not set(dev) & set(held)
    assert {split.unit(g) for g in dev} <= set(split.development)
    assert {split.unit(g) for g in held} <= set(split.heldout)


def test_a_split_alfworld_build_is_refused(tmp_path, capsys):
    assert main(["oversight", "build", "alfworld", "--split", "held-out", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--games-seed" in capsys.readouterr().err


def test_oversight_all_fits_on_development_tasks_only(tmp_path, monkeypatch):
    import suites.oversight.everything as everything

    fitted: list[Dataset] = []
    real = everything.evaluate

    def spy(dataset, config=None, train=None):
        fitted.append(dataset)
        return real(dataset, config, train)

    monkeypatch.setattr(everything, "evaluate", spy)
    small = ForestSettings(n_estimators=5, dispersion_penalty=0.0)  # what is fitted on matters here, not how well
    monkeypatch.setattr(everything, "EvalConfig", lambda **kw: EvalConfig(forest=small, **kw))
    out = everything.run_all(tmp_path, workers=1, resamples=20, only=["suite:contracts"], log=lambda m: None)
    built = Dataset.load(tmp_path / "oversight" / "suite-contracts.jsonl")
    split = split_of("suite:contracts")
    held = [g for g in built.provenance["games"] if split.unit(g) in split.heldout]
    assert held  # the build holds held-out tasks ...
    games = {r["game"] for r in fitted[0].rows}
    assert games and not games & set(held)  # ... and the cross-validation never saw them
    assert out["results"]["suite:contracts"]["games"] == len(games)


def test_draws_are_without_replacement_below_the_full_size_and_resamples_at_it():
    units = [f"g{i}" for i in range(8)]
    small = [draw_units(units, 4, d, 0) for d in range(5)]
    assert all(len(set(s)) == 4 for s in small) and len({tuple(s) for s in small}) > 1
    assert draw_units(units, 4, 1, 0) == draw_units(units, 4, 1, 0)  # seeded
    full = [draw_units(units, 8, d, 0) for d in range(5)]
    assert any(len(set(f)) < 8 for f in full)  # bootstrap resamples: some units repeat


def test_the_two_level_interval_widens_with_training_draw_variation():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), 3).astype(str)
    base = rng.normal(0.3, 0.1, groups.size)
    steady = np.stack([base] * 6)
    varying = np.stack([base + shift for shift in (-0.2, -0.1, 0.0, 0.05, 0.1, 0.2)])

    def width(R):
        out = two_level(lambda d, i: float(R[np.ix_(d, i)].mean()), len(R), groups, resamples=300, seed=1)
        return out["high"] - out["low"]

    assert width(varying) > 1.5 * width(steady)


HELD_FLAGS = ["--no-grid", "--trees", "5", "--resamples", "30"]


@pytest.fixture(scope="module")
def held_out_evaluation(tmp_path_factory) -> dict:
    """``evaluate`` of the committed contracts files, held out against development, once for the module
    (it is deterministic): the curve's one fit on every development unit is its fit, and the tests of
    parts compare it with the same evaluation given either side in parts."""
    out = tmp_path_factory.mktemp("held-out-evaluation") / "one.json"
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    assert main(["oversight", "evaluate", held, "--train", dev, *HELD_FLAGS, "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


CURVE_FLAGS = ["--sizes", "4,65", "--draws", "2", "--trees", "5", "--resamples", "50"]


@pytest.fixture(scope="module")
def held_out_curve(tmp_path_factory) -> tuple[dict, str]:
    """``curve`` of the committed contracts files (held out against development) once for the module,
    and what it printed: the tests below read it, and compare it with the curve on development parts."""
    out = tmp_path_factory.mktemp("held-out-curve") / "curve.json"
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["oversight", "curve", held, "--train", dev, *CURVE_FLAGS, "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8")), printed.getvalue()


def test_the_curve_command_fits_on_development_draws_and_refuses_held_out(held_out_curve, held_out_evaluation,
                                                                          capsys):
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    curve, out_text = held_out_curve
    assert [p["size"] for p in curve["points"]] == [4, 65] and curve["units"] == 65
    for p in curve["points"]:
        assert p["regret"]["action-conditioned"]["draws"] == 2 and "scalar-selected" in p["ratio"]
    assert "Learning curve" in out_text and "claims over the training draws" in out_text
    for p in curve["points"]:  # the paper's claims ride on the same fits
        assert {"cost-rule+platt - cost-rule", "scalar+platt - scalar"} == set(p["claims"])
    change, last = curve["changes"]
    assert (change["from"], change["to"]) == (4, 65) and change["regret"]["action-conditioned"]["draws"] == [2, 2]
    assert (last["from"], last["to"]) == (4, "65 (all, once)") and last["regret"]["action-conditioned"]["draws"] == [2, 1]
    once = curve["points"][-1]["all_once"]  # the whole development set fitted once is evaluate's held-out fit
    evaluated = held_out_evaluation["controllers"]  # `evaluate HELD --train DEV --trees 5`: the same forests
    for name in ("action-conditioned", "scalar-selected", "scalar-bands-any", "cost-rule+platt"):
        assert once["regret"][name]["estimate"] == pytest.approx(evaluated[name]["regret"]["estimate"]), name
    assert set(curve["datasets"]) == {"heldout", "dev"}
    assert main(["oversight", "curve", dev, "--train", held, "--sizes", "4"]) == 2  # never fitted on held-out tasks
    assert "refusing to fit" in capsys.readouterr().err
    assert main(["oversight", "curve", held, "--train", dev, "--sizes", "8,4"]) == 2
    assert "--sizes" in capsys.readouterr().err


def _parts(dev: str, folder, at: int = 30, name: str = "p") -> list[str]:
    """The file split into two parts as ``build --skip-games`` would have written them."""
    whole = Dataset.load(dev)
    games = whole.provenance["games"]
    parts = []
    for n, chosen in enumerate((games[:at], games[at:])):
        keep = set(chosen)
        prov = {**whole.provenance, "games": chosen, "config": {**whole.provenance["config"], "games": len(chosen),
                                                                "skip_games": at * n}}
        parts.append(str(Dataset(prov, [r for r in whole.rows if r["game"] in keep]).save(folder / f"{name}{n}.jsonl")))
    return parts


def test_a_development_set_given_in_parts_is_the_whole_of_it(held_out_curve, tmp_path):
    """Development games built in parts (``build --skip-games``) are drawn from as one set: a curve on
    the parts is the curve on the one file they split, number for number."""
    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    parts = _parts(dev, tmp_path)
    assert main(["oversight", "curve", held, "--train", *parts, *CURVE_FLAGS, "--json", str(tmp_path / "parts")]) == 0
    one, split = held_out_curve[0], json.loads((tmp_path / "parts").read_text(encoding="utf-8"))
    assert split["units"] == one["units"] == 65 and set(split["datasets"]) == {"heldout", "dev", "dev-2"}
    assert split["points"] == one["points"] and split["changes"] == one["changes"]


def test_the_change_between_sizes_is_zero_for_the_same_fits_and_sees_a_drop():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(15), 4).astype(str)
    base = np.stack([rng.normal(0.3, 0.1, groups.size) for _ in range(4)])

    def change(before, after):
        return nested(lambda k1, k2, i: float(after[np.ix_(k2, i)].mean() - before[np.ix_(k1, i)].mean()),
                      [len(before), len(after)], groups, resamples=200, seed=2)

    same = change(base, base)
    assert same["estimate"] == 0 and same["low"] < 0 < same["high"]  # draws resampled per size: not degenerate
    drop = change(base, base - 0.1)
    assert drop["high"] < 0 and abs(drop["estimate"] + 0.1) < 1e-9


@functools.cache
def committed_dataset(path: str) -> Dataset:
    """A committed dataset, loaded (every row read and checked) once for the module: the committed
    curves name 69 files 312 times (about 13 s of CPU before). The tests only read what it returns."""
    return Dataset.load(path)


@pytest.mark.parametrize("path", sorted(DATA.glob("curve-*.json")), ids=lambda p: p.name)
def test_each_committed_curve_names_committed_datasets_and_counts_their_checkpoints(path):
    import shlex

    from controllers.oversight.evaluate import load_checkpoints

    curve = json.loads(path.read_text(encoding="utf-8"))
    from controllers.oversight.merge import load_parts

    argv = shlex.split(curve["command"])
    assert argv[:3] == ["agentbed", "oversight", "curve"]
    held = load_parts([str(DATA.parents[2] / p) for p in argv[3:argv.index("--train")]], committed_dataset)
    after = argv[argv.index("--train") + 1:]
    parts = after[:next((n for n, a in enumerate(after) if a.startswith("--")), len(after))]
    dev = load_parts([str(DATA.parents[2] / p) for p in parts], committed_dataset)
    assert curve["held_out_checkpoints"] == len(load_checkpoints(held)[0])
    # units with a complete checkpoint (a ScienceWorld game whose every checkpoint lost an action to replay
    # mismatches has rows but is no unit); where nothing was lost, every game (GraphRAG: question) with rows
    units = set(load_checkpoints(dev)[0].games.tolist())
    assert curve["units"] == len(units) <= len({r.get("group", r["game"]) for r in dev.rows})
    assert [p["size"] for p in curve["points"]] == curve["sizes"] and max(curve["sizes"]) <= curve["units"]
    full = [p for p in curve["points"] if p["size"] == curve["units"]]
    assert all(p["draws"] >= 5 for p in curve["points"]) and full  # the full size's bootstrap draws are there


def test_evaluate_fits_on_parts_and_its_record_names_each(held_out_evaluation, tmp_path):
    import shutil

    from suites.oversight.record import training_files
    from suites.oversight.suite import load_headline

    held = str(shutil.copy(DATA / "contracts-heldout.jsonl.gz", tmp_path / "held.jsonl.gz"))
    parts = _parts(str(DATA / "contracts-dev.jsonl.gz"), tmp_path)
    record = tmp_path / "record.json"  # the parts' result and their record from one evaluation
    assert main(["oversight", "evaluate", held, "--train", *parts, *HELD_FLAGS, "--json", str(tmp_path / "parts.json"),
                 "--record", str(record)]) == 0
    out = json.loads((tmp_path / "parts.json").read_text(encoding="utf-8"))
    one = held_out_evaluation
    assert (out["controllers"], out["ratios"], out["regret_per_checkpoint"]) == \
        (one["controllers"], one["ratios"], one["regret_per_checkpoint"])
    assert training_files(load_headline(record)) == ["p0.jsonl", "p1.jsonl"]  # sha256 of each checked on load


def test_a_held_out_set_given_in_parts_is_the_whole_of_it(held_out_evaluation, tmp_path):
    """Held-out games built in parts (``build --skip-games`` on the held-out seed) are scored as one
    set by evaluate and curve, number for number, and the record names each part by sha256."""
    from suites.oversight.record import heldout_files
    from suites.oversight.suite import load_headline

    held, dev = (str(DATA / f"contracts-{s}.jsonl.gz") for s in ("heldout", "dev"))
    parts = _parts(held, tmp_path, at=10, name="h")
    record = tmp_path / "record.json"  # the parts' result and their record from one evaluation
    dev_copy = tmp_path / "dev.jsonl.gz"  # the record names its datasets relative to itself
    dev_copy.write_bytes(Path(dev).read_bytes())
    assert main(["oversight", "evaluate", *parts, "--train", str(dev_copy), *HELD_FLAGS,
                 "--json", str(tmp_path / "parts.json"), "--record", str(record)]) == 0
    out = json.loads((tmp_path / "parts.json").read_text(encoding="utf-8"))
    one = held_out_evaluation
    assert (out["controllers"], out["ratios"], out["regret_per_checkpoint"], out["checkpoints"]) == \
        (one["controllers"], one["ratios"], one["regret_per_checkpoint"], one["checkpoints"])
    curves = []
    for test, name in (([held], "c1.json"), (parts, "c2.json")):
        assert main(["oversight", "curve", *test, "--train", dev, "--sizes", "10", "--draws", "2", "--trees", "5",
                     "--resamples", "30", "--json", str(tmp_path / name)]) == 0
        curves.append(json.loads((tmp_path / name).read_text(encoding="utf-8")))
    assert curves[0]["points"] == curves[1]["points"] and set(curves[1]["datasets"]) == {"heldout", "heldout-2", "dev"}
    assert heldout_files(load_headline(record)) == ["h0.jsonl", "h1.jsonl"]
