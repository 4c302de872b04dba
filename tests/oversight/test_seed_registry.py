"""Issue 54 item 3: one registry of development and held-out generator seeds; fitting on any
seed but a development one is refused (one line, exit 2), and commands say which seeds were used."""

import pytest

from agentbed.cli import main
from controllers.oversight.dataset import Dataset
from suites.oversight.seeds import (
    SEEDS,
    check_split,
    describe_seeds,
    development_games,
    only_development,
    seeds_of,
)
from suites.oversight.suite import DATA, load_headline


def test_the_registry_names_every_seed_the_committed_data_used():
    record = load_headline()
    held = Dataset.load(DATA / record["datasets"]["heldout"]["file"])
    dev = Dataset.load(DATA / record["datasets"]["dev"]["file"])
    assert seeds_of(held.provenance) == [4] and 4 in SEEDS["alfworld"].heldout  # the headline's held-out seed
    assert seeds_of(dev.provenance) == [0] and SEEDS["alfworld"].development == (0,)
    assert not set(SEEDS["alfworld"].development) & set(SEEDS["alfworld"].heldout)
    assert describe_seeds(held.provenance) == "alfworld generator seed(s) 4 (held out)"
    check_split(dev.provenance, "dev", "fit")  # fitting on development games is what the registry is for
    with pytest.raises(Exception, match="refusing to fit on alfworld generator seed 5 \\(unregistered"):
        check_split({"benchmark": "alfworld", "games": ["000-simple", "s5-001-light"]}, "mixed", "fit")


@pytest.mark.parametrize("argv", [
    ["{held}"],  # cross-validation fits on the held-out games themselves
    ["{dev}", "--train", "{held}"],  # fitting on held-out games, evaluating on development ones
])
def test_evaluate_refuses_to_fit_on_a_held_out_seed(argv, capsys):
    record = load_headline()
    files = {k: str(DATA / d["file"]) for k, d in record["datasets"].items()}
    args = [a.format(held=files["heldout"], dev=files["dev"]) for a in argv]
    assert main(["oversight", "evaluate", *args, "--no-grid", "--resamples", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refusing to fit on alfworld generator seed 4 (held out" in err


@pytest.mark.parametrize("verb", [["evaluate", "--no-grid", "--resamples", "10"], ["curve", "--sizes", "4"]])
def test_a_held_out_evaluation_refuses_games_of_a_development_seed(verb, capsys):
    """Issue 54's loose end: scoring as held out games of a seed used for development is refused,
    even when they are other games than the ones fitted on."""
    from suites.oversight.record import training_files

    first, last = (str(DATA / f) for f in training_files(load_headline())[::7])  # seed-0 games 0-7 and 56-63
    assert main(["oversight", verb[0], last, "--train", first, *verb[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refusing to score alfworld generator seed 0 (development) as held out" in err


def test_the_human_comparison_refuses_a_held_out_dataset_before_asking_anyone(tmp_path, capsys):
    """oversight-human cross-validates the controllers it compares the person with on the dataset
    itself, so a held-out dataset is refused (one line, exit 2) before a question is asked."""
    held = DATA / load_headline()["datasets"]["heldout"]["file"]
    decisions = tmp_path / "decisions.jsonl"
    assert main(["oversight-human", str(held), "--decisions", str(decisions), "--approvals", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refusing to fit on alfworld generator seed 4 (held out" in err
    assert not decisions.exists() and not list(tmp_path.iterdir())


def test_regimes_and_the_slip_rate_refuse_held_out_seeds(capsys):
    from suites.oversight.expert_error import measure

    record = load_headline()
    assert main(["oversight", "regimes", str(DATA / record["datasets"]["heldout"]["file"])]) == 2
    assert "refusing to fit on alfworld generator seed 4" in capsys.readouterr().err
    with pytest.raises(ValueError, match="generator seed 4 is held out"):
        measure(games_seed=4)


@pytest.mark.parametrize(("benchmark", "development", "heldout", "unit"), [
    ("scienceworld", "find-animal:4", "find-animal:7", "variation 7"),
    ("graphrag", "kepo/world-1001-q3", "kepo/world-1002-q3", "world 1002"),
    ("alfworld", "s0-001-light", "s8-001-light", "generator seed 8"),
])
def test_every_generated_benchmark_has_a_registered_split(benchmark, development, heldout, unit):
    check_split({"benchmark": benchmark, "games": [development]}, "dev", "fit")
    with pytest.raises(Exception, match=f"refusing to fit on {benchmark} {unit} \\(held out"):
        check_split({"benchmark": benchmark, "games": [development, heldout]}, "mixed", "fit")
    assert development_games(benchmark, [development, heldout]) == [development]


def test_a_suites_hand_written_tasks_hold_out_a_fixed_quarter(capsys):
    from suites.oversight.benchmarks import load_target

    games = load_target("suite:contracts", interventions="oracle", base="naive").games
    dev = development_games("suite:contracts", games)
    assert 0 < len(games) - len(dev) < len(games) / 2 < len(dev)  # both sides populated, most for development
    assert development_games("suite:contracts", games) == dev  # fixed by the task ids, not by order or time
    provenance = {"benchmark": "suite:contracts", "games": games}
    with pytest.raises(Exception, match="refusing to fit on suite:contracts task quarter 0 \\(held out"):
        check_split(provenance, "all tasks", "fit")
    assert describe_seeds(provenance) == (f"suite:contracts: {len(dev)} development task(s), "
                                          f"{len(games) - len(dev)} held-out task(s) (task quarters)")
    rows = [{"game": g, "flaw": "naive"} for g in games]
    kept = only_development(Dataset({"benchmark": "suite:contracts", "games": games, "counts": {"checkpoints": 1}},
                                    rows))
    assert [r["game"] for r in kept.rows] == dev and kept.provenance["held_out_games_left_out"] == len(games) - len(dev)
    check_split(kept.provenance, "development tasks", "fit")
