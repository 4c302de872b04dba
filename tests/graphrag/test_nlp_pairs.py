"""The spaCy extractor's learned pair stage (environments/graphrag/nlp_pairs.py): a line's
candidates and their features, a model's reading by its weights, and the shipped weights file,
which its training command rebuilds byte for byte (suites/graphrag/pairmodel.py)."""

from __future__ import annotations

import hashlib
import json

import pytest

from environments.graphrag.nlp_pairs import WEIGHTS, Candidate, PairModel, PairStage, load_model

# foreign_harvests (spaCy's reading of every foreign-prose set, about 50 s) serves test_nlp_extract
# and test_nlp_pairs: both go to one xdist worker, one after the other, so it is built once
# (tests/conftest.py); on two workers each built it (51.9 s and 50.5 s of setup in one CI run)
pytestmark = pytest.mark.one_worker("foreign-harvests")


def test_a_line_s_candidates_carry_the_rule_stage_s_reading_and_the_words_between():
    from environments.graphrag.extractors import make_extractor
    from suites.graphrag.userdocs import user_document
    from tests.graphrag.spacy_reading import RELATIONS

    extract = make_extractor("spacy-rules", RELATIONS)
    stage = PairStage(rows=[])
    extract.stage = stage

    extract([user_document("p0", "", ["Marta Quell was born in Oporvik. She studied at Lindqvist College."])])
    assert stage.rows is not None and len(stage.rows) == 2
    first = {(c.head, c.tail): c.features for c in stage.rows[0][1]}
    assert "rule=born_in" in first[("Marta Quell", "Oporvik")]
    assert "bw=bear" in first[("Marta Quell", "Oporvik")]
    second = {(c.head, c.tail): c.features for c in stage.rows[1][1]}
    assert any(f.startswith("src=") and f != "src=inline" for f in second[("Marta Quell", "Lindqvist College")])


def test_a_model_keeps_what_reaches_its_threshold_and_passes_what_it_does_not_know():
    model = PairModel({"born_in": (-1.0, {"bw=bear": 3.0})}, threshold=0.5)
    found = [("A", "born_in", "B", False), ("A", "borders", "C", False), ("A", "born_in", "D", True)]
    cands = [Candidate("A", "B", ("bias", "bw=bear")), Candidate("A", "C", ("bias",)), Candidate("A", "D", ("bw=bear",))]
    out = model.read(cands, found, ["born_in", "borders"])
    assert ("A", "born_in", "B", False) in out and ("A", "born_in", "C", False) not in out
    assert ("A", "borders", "C", False) in out  # a relation the weights do not know keeps the rules' reading
    assert ("A", "born_in", "D", True) in out and ("A", "born_in", "D", False) not in out  # negated stays negated


def test_the_rule_stage_s_reading_is_dropped_only_below_the_lower_keep_bar():
    model = PairModel({"born_in": (0.0, {"x": -1.0})}, threshold=0.5, keep=0.2)  # p("x") = 0.27
    found = [("A", "born_in", "B", False)]
    cands = [Candidate("A", "B", ("x",)), Candidate("A", "C", ("x",))]
    out = model.read(cands, found, ["born_in"])
    assert ("A", "born_in", "B", False) in out  # read by the rules, 0.27 >= keep: kept
    assert ("A", "born_in", "C", False) not in out  # not read by the rules, 0.27 < threshold: not added
    assert PairModel(model.weights, 0.5, 0.3).read(cands, found, ["born_in"]) == []  # 0.27 < keep 0.3: dropped


def test_a_weights_file_that_does_not_parse_is_named(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text("{\"relations\": 3}", encoding="utf-8")
    with pytest.raises(RuntimeError, match="w.json: not a pair model"):
        load_model(bad)


def test_the_shipped_weights_are_the_ones_their_command_rebuilds(foreign_harvests):
    from suites.graphrag.pairmodel import COMMAND, WEIGHTS_SHA256, write

    data = WEIGHTS.read_bytes()
    assert hashlib.sha256(data).hexdigest() == WEIGHTS_SHA256
    assert json.loads(data)["command"] == COMMAND
    assert write(foreign_harvests) == data
