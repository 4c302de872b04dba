"""GraphRAG under poisoning as a branching benchmark: the real pipeline, attacks and TDP."""

from collections import defaultdict

from controllers.oversight.dataset import BuildConfig
from suites.oversight.build import build_dataset


def test_best_action_differs_by_attack_and_features_are_prefix_only():
    ds = build_dataset(BuildConfig("graphrag", rollouts=1, checkpoints=1, first=2,
                                   target_options={"worlds": 1, "attacks": ("none", "gragpoison", "tkpa")}))
    assert ds.provenance["counts"]["branch_errors"] == 0 and ds.provenance["counts"]["replay_mismatches"] == 0
    outcome: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    features: dict[str, list] = defaultdict(list)
    risk: dict[str, list[float]] = defaultdict(list)
    for r in ds.rows:
        attack = r["game"].split("/")[0]
        outcome[attack][r["action"]].append(r["success"])
        features[r["game"]].append(r["features"])
        risk[attack].append(r["risk"])
    def most(xs: list[bool]) -> bool:  # the graph is extracted from prose: the reader errs on a few questions
        return sum(xs) >= 0.75 * len(xs)

    assert most(outcome["none"]["continue"]) and most(outcome["none"]["tdp-reader"])  # clean: continuing is best
    # TDP repairs most of what the poison breaks: on world 1000 (multi-valued worlds, retrained weights)
    # the reader with TDP answers 8 of 12 poisoned questions, where it answers 10 of 12 clean ones
    repaired = outcome["gragpoison"]["tdp-reader"]
    # the poison breaks most questions: 11 of 12 on world 1000 since issue 38's camouflage (dates and
    # lengths of clean documents) took part of GragPoison's strength
    broken = outcome["gragpoison"]["continue"]
    assert sum(broken) <= len(broken) / 4 and sum(repaired) > len(repaired) / 2
    assert not any(outcome["tkpa"]["continue"]) and not any(outcome["tkpa"]["tdp-reader"])  # quitting is best
    assert all(f == fs[0] for fs in features.values() for f in fs)  # the same prefix for every action
    # the reader sees that its evidence is contested (clean worlds have natural conflicts too)
    assert sum(risk["none"]) / len(risk["none"]) < min(risk["gragpoison"])
    # a question is one unit under every attack: held out and resampled together
    assert all(r["group"] == r["game"].split("/", 1)[1] for r in ds.rows)
    assert len({r["group"] for r in ds.rows}) * 3 == len({r["game"] for r in ds.rows})


def test_the_dress_is_recorded_and_read_back_as_built(tmp_path, capsys):
    """The attack documents' dress shapes every row, so a dataset records it (the target's notes,
    and the build's options when ``oversight build`` made it) and ``recorded_config`` gives it back;
    a dataset that names none was built before it was recorded, under "titled"."""
    import pytest

    from agentbed.cli import main
    from suites.oversight.benchmarks import load_target
    from suites.oversight.build import recorded_config

    sample = {"worlds": 1, "attacks": ("gragpoison",)}
    built = {d: build_dataset(BuildConfig("graphrag", games=1, rollouts=1, checkpoints=1, first=2,
                                          target_options={**sample, **({"dress": d} if d else {})}))
             for d in ("", "titled")}
    assert built[""].provenance["target_notes"]["dress"] == "length"  # the suite's default, recorded
    assert recorded_config(built[""].provenance).target_options["dress"] == "length"
    assert recorded_config(built["titled"].provenance).target_options["dress"] == "titled"
    unrecorded = {"config": {"benchmark": "graphrag", "target_options": {"split": "held-out"}},
                  "target_notes": {"games": "..."}}
    assert recorded_config(unrecorded).target_options == {"dress": "titled", "split": "held-out"}
    assert load_target("graphrag", worlds=1, dress="shape").notes["dress"] == "shape"
    with pytest.raises(Exception, match="dress: one of"):
        load_target("graphrag", worlds=1, dress="plain")
    assert main(["oversight", "build", "alfworld", "--dress", "shape", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--dress: alfworld has no attack documents" in capsys.readouterr().err
