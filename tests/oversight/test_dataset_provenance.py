"""Issue 54 item 2: every committed dataset rebuilds from the record alone. Its provenance holds
the one command that built it from a clean clone (a build, not a merge of temporary part files)
with every setting that shaped it, zero values included; re-running that command on a sample (one
game, one base agent, one checkpoint) gives the committed rows byte for byte. Every committed
dataset is named by sha256 in a headline record or in a benchmark's held-out record (item 5). An ALFWorld
dataset whose provenance records no ``base_seeding`` (every one committed before the base agents'
streams were seeded by the game) is rebuilt with ``--base-seeding legacy``, and a GraphRAG dataset
that records no ``dress`` with ``--dress titled``, as ``recorded_config`` reads them."""

import functools
import json
import shlex
from pathlib import Path

import pytest

from agentbed.cli import main
from controllers.oversight.dataset import Dataset
from suites.oversight.build import recorded_config
from suites.oversight.suite import DATA, load_headline

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(DATA.glob("*.jsonl.gz"))
# slip-noise*.json: claim 3's development-only slip-rate builds (cross-validated, no held-out side);
# slip-heldout-noise*.json: the same rates fitted on them and scored on held-out games 0-7 of seed 4
# (-held24: on all 24 held-out games; -held32: on all 32)
# headline-legacy-seeding.json: the headline as measured before the base agents' streams were seeded by
# the game (its parts stay committed and named by it; headline.json is the same commands rebuilt after)
# slip-parts-noiseR-gameseed.json: claim 3's slip-rate parts rebuilt with the base agents seeded per game,
# a list of the parts built so far (no measurement; session 20's pre-registration in docs/oversight.md)
RECORDS = sorted([*DATA.glob("headline*.json"), *DATA.glob("heldout-*.json"), *DATA.glob("slip-*.json")])
# learning curves that name their datasets (development parts built with --skip-games among them)
CURVES = sorted(p for p in DATA.glob("curve-*.json") if "datasets" in json.loads(p.read_text(encoding="utf-8")))
SAMPLED = ("--games", "--flaws", "--checkpoints", "--workers", "--out")  # what the sample changes


@functools.cache
def committed_dataset(path: Path) -> Dataset:
    """A committed dataset, loaded (every row read and checked) once for the module: the records
    and the curves name the same 44 files over and over (about 900 loads before, 20 ms of CPU
    each). The tests only read what it returns."""
    return Dataset.load(path)


def _argv(data: Dataset) -> list[str]:
    return shlex.split(data.provenance["command"])


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_the_recorded_command_is_one_build_from_a_clean_clone_with_every_setting(path):
    data = committed_dataset(path)
    argv = _argv(data)
    assert argv[:3] == ["agentbed", "oversight", "build"], "a merge of parts cannot be rerun from the record"
    assert (ROOT / argv[argv.index("--out") + 1]).resolve() == path.resolve()  # writes this very file
    config = data.provenance["config"]
    assert config["seeding"] and "parts" not in data.provenance
    if config["benchmark"] == "alfworld":  # zero values recorded, not left to a default that may change
        options = config["target_options"]
        assert {"expert_noise", "expert_budget", "expert_step_cost", "reflect", "regime"} <= set(options)
    assert data.provenance["generator_seeds"]


def test_the_records_name_the_committed_datasets_by_sha256():
    named = set()
    for path in [*RECORDS, *CURVES]:
        record = load_headline(path)  # raises unless each file matches its recorded sha256
        for d in record["datasets"].values():
            assert d["command"] == committed_dataset(DATA / d["file"]).provenance["command"]
            named.add(d["file"])
    assert named == {p.name for p in COMMITTED}


# ScienceWorld's simulator is not deterministic between loads (allenai/ScienceWorld#33: its replays
# diverge and are discarded, so a rebuild keeps other branches); its records (the current one, on sets built
# with the base agents seeded per task, and the legacy-seeding one) are checked by sha256 only.
# A slip-noise0.0 build is the slip-noise0.25 command with --expert-noise 0, so one of each pair is rebuilt
# (ALFWorld is slow); slip-heldout-noise0.06's held-out file is the headline's first part, rebuilt by the demo.
# The slip-rate records fitted on more development games (slip-heldout-noiseR-devN.json) score the same
# held-out files as the 8-game ones; the last new development part at 0.25 is rebuilt below. Those scored on
# all 24 or 32 held-out games (-held24, -held32) hold the 8-game file as their first part and games 8-31
# built the same way (--skip-games): one record's last part at 0.25 (games 24-31) is rebuilt, standing for
# the others at 0.25 too (games 8-23's parts are those commands but for --skip-games, tested below).
# Of the game-seeded slip-rate parts' lists, 0.25's last held-out part is rebuilt, standing for 0.0's and 0.06's
# (the same command but for --expert-noise).
HELD_REBUILT = "slip-heldout-noise0.25-dev32-held32.json"
NOT_REBUILT = ("heldout-scienceworld.json", "heldout-scienceworld-legacy-seeding.json", "slip-noise0.0.json",
               "slip-parts-noise0.0-gameseed.json", "slip-parts-noise0.06-gameseed.json",
               "slip-heldout-noise0.0.json", "slip-heldout-noise0.06.json",
               "slip-heldout-noise0.25.json",
               *(p.name for p in DATA.glob("slip-heldout-noise*-held32.json") if p.name != HELD_REBUILT),
               *(p.name for p in DATA.glob("slip-heldout-noise*-dev*.json") if p.name != HELD_REBUILT))
DEV_REBUILT = [DATA / "headline.json", DATA / "headline-legacy-seeding.json",
               *sorted(p for p in DATA.glob("slip-heldout-noise0.25-dev*.json")
                       if not p.name.endswith(("-held24.json", "-held32.json")))]


@pytest.mark.parametrize("path", [p for p in RECORDS if p.name not in NOT_REBUILT],
                         ids=lambda p: p.name)
def test_rerunning_the_recorded_command_on_a_sample_gives_the_committed_bytes(path, tmp_path, monkeypatch):
    """A held-out set in parts: its last part (the demo rebuilds the first one's first game live)."""
    from suites.oversight.record import heldout_files

    record = load_headline(path)
    _rebuild_a_sample(committed_dataset(DATA / heldout_files(record)[-1]), tmp_path, monkeypatch)


@pytest.mark.parametrize("path", DEV_REBUILT, ids=lambda p: p.name)
def test_a_development_part_rebuilds_from_its_recorded_command(path, tmp_path, monkeypatch):
    """Item 2 on the development side: the record's last ALFWorld part (built with --skip-games,
    so the sample's one game is that part's first, not game 0) rebuilds byte for byte. Its cost is
    ALFWorld's start-up and one checkpoint's branches (a few seconds beside the held-out rebuild)."""
    from suites.oversight.record import training_files

    part = committed_dataset(DATA / training_files(load_headline(path))[-1])
    assert part.provenance["config"]["benchmark"] == "alfworld" and part.provenance["config"]["skip_games"] > 0
    _rebuild_a_sample(part, tmp_path, monkeypatch)


# the other benchmarks' records (GraphRAG, contracts, AgentDojo; ScienceWorld is not deterministic):
# their development datasets are one build each, with --split development where the held-out one
# has --split held-out
OTHER_RECORDS = [p for p in DATA.glob("heldout-*.json") if p.name not in NOT_REBUILT]


@pytest.mark.parametrize("path", OTHER_RECORDS, ids=lambda p: p.name)
def test_the_other_benchmarks_development_sets_rebuild_from_their_recorded_commands(path, tmp_path, monkeypatch):
    """Item 2 for every committed dataset, not only ALFWorld's: the development side of each other
    benchmark's held-out record rebuilds byte for byte on a sample (its first game, base agent and
    checkpoint), as its held-out side does above."""
    from suites.oversight.record import training_files

    files = training_files(load_headline(path))
    assert len(files) == 1 and "--split development" in committed_dataset(DATA / files[0]).provenance["command"]
    _rebuild_a_sample(committed_dataset(DATA / files[0]), tmp_path, monkeypatch)


def _rebuild_a_sample(committed: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-run ``committed``'s recorded command for its first game, first base agent and first
    checkpoint only, and compare the rows and the configuration with what is committed."""
    game, flaw = committed.provenance["games"][0], committed.provenance["flaws"][0]
    monkeypatch.chdir(ROOT)  # the command is recorded relative to a clone's root
    out = tmp_path / "sample.jsonl"
    argv = _argv(committed)[1:] + ["--games", "1", "--flaws", flaw, "--checkpoints", "1", "--workers", "1",
                                   "--out", str(out)]
    recorded = recorded_config(committed.provenance)
    if recorded.target_options.get("base_seeding") == "legacy":  # built before the base agents' streams
        argv += ["--base-seeding", "legacy"]  # were seeded by the game; its provenance records no base_seeding
    if "dress" in recorded.target_options and "--dress" not in argv:  # GraphRAG built before the dress was
        argv += ["--dress", recorded.target_options["dress"]]  # recorded: under "titled", as recorded_config reads it
    assert main(argv) == 0
    rebuilt = Dataset.load(out)
    assert rebuilt.provenance["games"] == [game]
    first = min(r["checkpoint"] for r in rebuilt.rows)
    expected = [r for r in committed.rows if r["game"] == game and r["flaw"] == flaw and r["checkpoint"] == first]
    assert expected and [json.dumps(r, sort_keys=True) for r in rebuilt.rows] == \
        [json.dumps(r, sort_keys=True) for r in expected]
    mine, theirs = rebuilt.provenance["config"], committed.provenance["config"]
    changed = {"games", "flaws", "checkpoints", "workers"}
    assert {k: v for k, v in mine.items() if k not in changed | {"target_options"}} == \
        {k: v for k, v in theirs.items() if k not in changed | {"target_options"}}
    assert {k: v for k, v in mine["target_options"].items() if k != "games"} == \
        {k: v for k, v in recorded.target_options.items() if k != "games"}


@pytest.mark.parametrize("side", ["dev", "heldout"])
@pytest.mark.parametrize("path", [*RECORDS, *CURVES], ids=lambda p: p.name)
def test_a_dataset_in_parts_is_one_configuration_split_by_skip_games(path, side):
    """The parts a curve (or the headline) draws from, and the parts it is scored on, are each the
    same build command but for which games (``--skip-games``) and the file: together they are what
    one build over all their games writes."""
    from suites.oversight.record import heldout_files, training_files

    files = {"dev": training_files, "heldout": heldout_files}[side](json.loads(path.read_text(encoding="utf-8")))
    commands, games = [], []
    for name in files:
        data = committed_dataset(DATA / name)
        argv = _argv(data)
        skip = int(argv[argv.index("--skip-games") + 1]) if "--skip-games" in argv else 0
        assert skip == data.provenance["config"]["skip_games"] == len(games)  # contiguous, in order
        games += data.provenance["games"]
        commands.append([a for n, a in enumerate(argv) if a not in ("--skip-games", "--out")
                         and argv[n - 1] not in ("--skip-games", "--out")])
    assert all(c == commands[0] for c in commands) and len(set(games)) == len(games)


@pytest.mark.parametrize("rate", ["0.0", "0.25"])
@pytest.mark.parametrize(("side", "parts"), [("dev-s0", 8), ("heldout-s4", 4)])
def test_each_slip_rate_part_is_the_headline_part_but_for_the_experts_rows(side, parts, rate):
    """Claim 3's parts at slip rates 0 and 0.25 (development: games 0-63 of seed 0, eight builds of 8;
    held out: games 0-31 of seed 4, four builds of 8) are the headline's 0.06 parts' commands with only
    --expert-noise and --out changed: the same checkpoints and branches, every non-expert row
    identical, the rate recorded."""
    refs = sorted(DATA.glob(f"{side}-*-noisy-indep.jsonl.gz"))
    assert len(refs) == parts
    for ref in refs:
        _only_the_experts_rows_differ(ref, DATA / ref.name.replace("noisy-indep", f"noise{rate}"), float(rate))


# claim 3 by the slip rate rebuilt with the base agents seeded per game (session 20's pre-registration in
# docs/oversight.md): each part built so far at 0 or 0.25 against the headline's game-seeded part of its games
GAMESEED_SLIP_PARTS = sorted(DATA.glob("*-noise*-gameseed.jsonl.gz"))


@pytest.mark.parametrize("path", GAMESEED_SLIP_PARTS, ids=lambda p: p.name)
def test_each_game_seeded_slip_rate_part_is_the_headline_part_but_for_the_experts_rows(path):
    rate = path.name.split("-noise")[1].removesuffix("-gameseed.jsonl.gz")
    _only_the_experts_rows_differ(DATA / path.name.replace(f"noise{rate}-gameseed", "noisy-gameseed"), path,
                                  float(rate))
    assert recorded_config(committed_dataset(path).provenance).target_options["base_seeding"] == "game"


def _only_the_experts_rows_differ(ref: Path, other: Path, rate: float) -> None:
    """``other`` is ``ref``'s build command with only --expert-noise (recorded as ``rate``) and --out
    changed: the same checkpoints and branches, every non-expert row identical."""
    base, part = committed_dataset(ref), committed_dataset(other)
    assert part.provenance["config"]["target_options"]["expert_noise"] == rate
    assert part.provenance["counts"]["replay_mismatches"] == part.provenance["counts"]["branch_errors"] == 0
    mine, theirs = _argv(part), _argv(base)
    changed = {"--expert-noise", "--out"}
    assert [a for n, a in enumerate(mine) if a not in changed and mine[n - 1] not in changed] == \
        [a for n, a in enumerate(theirs) if a not in changed and theirs[n - 1] not in changed]

    def key(r):
        return r["trajectory"], r["checkpoint"], r["action"], r["rollout"]

    rows, ref_rows = {key(r): r for r in part.rows}, {key(r): r for r in base.rows}
    assert rows.keys() == ref_rows.keys()
    assert all(rows[k] == ref_rows[k] for k in rows if k[2] != "expert")
