"""Issue 54 item 3: one registry of development and held-out generator seeds; fitting on any
seed but a development one is refused (one line, exit 2), and commands say which seeds were used."""

import pytest

from agentbed.cli import main
from controllers.oversight.dataset import Dataset
from suites.oversight.seeds import SEEDS, check_fit, describe_seeds, seeds_of
from suites.oversight.suite import DATA, load_headline


def test_the_registry_names_every_seed_the_committed_data_used():
    record = load_headline()
    held = Dataset.load(DATA / record["datasets"]["heldout"]["file"])
    dev = Dataset.load(DATA / record["datasets"]["dev"]["file"])
    assert seeds_of(held.provenance) == [4] and 4 in SEEDS["alfworld"].heldout  # the headline's held-out seed
    assert seeds_of(dev.provenance) == [0] and SEEDS["alfworld"].development == (0,)
    assert seeds_of(Dataset.load(DATA / "heldout-s3-8games.jsonl.gz").provenance) == [3]
    assert not set(SEEDS["alfworld"].development) & set(SEEDS["alfworld"].heldout)
    assert describe_seeds(held.provenance) == "alfworld generator seed(s) 4 (held out)"
    check_fit(dev.provenance, "dev")  # fitting on development games is what the registry is for
    with pytest.raises(Exception, match="refusing to fit on alfworld generator seed 5 \\(unregistered"):
        check_fit({"benchmark": "alfworld", "games": ["000-simple", "s5-001-light"]}, "mixed")


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


def test_regimes_and_the_slip_rate_refuse_held_out_seeds(capsys):
    from suites.oversight.expert_error import measure

    assert main(["oversight", "regimes", str(DATA / "heldout-s3-8games.jsonl.gz")]) == 2
    assert "refusing to fit on alfworld generator seed 3" in capsys.readouterr().err
    with pytest.raises(ValueError, match="generator seed 4 is held out"):
        measure(games_seed=4)
