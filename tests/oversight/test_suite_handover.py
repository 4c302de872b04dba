"""Handing a contracts episode to the oracle agent midway: no branch may error."""

from controllers.oversight.dataset import BuildConfig
from suites.oversight.build import build_dataset


def test_every_contracts_handover_runs_to_an_outcome():
    ds = build_dataset(BuildConfig("suite:contracts", rollouts=1, checkpoints=3, first=1, every=2,
                                   target_options={"base": "naive", "interventions": "oracle"}))
    counts = ds.provenance["counts"]
    assert counts["branch_errors"] == 0, counts["error_examples"]
    assert counts["checkpoints"] > 80
