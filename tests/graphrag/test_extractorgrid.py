"""Grids on graphs built by two extractors, paired by question; whether a defense helps the attacker."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.cli import main
from agentbed.runner import EpisodeRecord
from suites.graphrag.extractorgrid import helps_attacker, paired_across
from suites.graphrag.report import Cell


def _cell(attack: str, defense: str, outcomes: dict[str, tuple[bool, bool]]) -> Cell:
    """A cell whose task ``t`` ended with (correct, attack_success) = ``outcomes[t]``."""
    records = [EpisodeRecord(f"e-{t}", "graphrag", t, "reader", 0, "ok", ok, float(ok), 1, 0.0, 0,
                             metrics={"correct": ok, "attack_success": hit}) for t, (ok, hit) in outcomes.items()]
    return Cell("world", attack, defense, records)


outcomes = st.dictionaries(st.sampled_from([f"world-{w}-q{i}" for w in (1000, 1001, 1002) for i in range(6)]),
                           st.tuples(st.booleans(), st.booleans()), min_size=1)


@settings(max_examples=30, deadline=None)
@given(outcomes, st.data())
def test_paired_difference_across_grids_is_the_difference_of_the_cells_means(a, data):
    b = {t: data.draw(st.tuples(st.booleans(), st.booleans())) for t in reversed(list(a))}  # other order
    x, y = _cell("frame", "tdp", a), _cell("frame", "tdp", b)
    for metric in ("attack_success", "accuracy"):
        diff = paired_across(x, y, metric)
        assert diff.estimate == pytest.approx(x.interval(metric).estimate - y.interval(metric).estimate)
        assert diff.low <= diff.estimate <= diff.high and diff.n == len(a)


def test_cells_that_ran_other_questions_do_not_pair():
    with pytest.raises(ValueError, match="different questions"):
        paired_across(_cell("frame", "tdp", {"world-1000-q1": (True, False)}),
                      _cell("frame", "tdp", {"world-1000-q2": (True, False)}), "accuracy")


def test_a_defense_that_raises_success_on_every_question_helps_the_attacker():
    tasks = [f"world-{w}-q{i}" for w in (1000, 1001) for i in range(4)]
    cells = [_cell("frame", "none", {t: (True, False) for t in tasks}),
             _cell("frame", "tdp", {t: (False, True) for t in tasks}),
             _cell("copy", "none", {t: (False, True) for t in tasks}),
             _cell("copy", "tdp", {t: (True, i == 0) for i, t in enumerate(tasks)}),
             _cell("none", "tdp", {t: (True, False) for t in tasks})]
    rows = {(r[0], r[1]): r for r in helps_attacker(cells)}
    assert set(rows) == {("frame", "tdp"), ("copy", "tdp")}  # no row for the clean cell or for none itself
    assert rows[("frame", "tdp")][-1] == "yes" and rows[("frame", "tdp")][4].startswith("1.00")
    assert rows[("copy", "tdp")][-1] == "no"


def test_grid_versus_extractor_pairs_spacy_built_graphs_with_rules_built_ones(tmp_path, capsys, spacy_extract):
    out = tmp_path / "cells.json"
    assert main(["graphrag", "grid", "--attacks", "none,frame", "--defenses", "none,tdp", "--worlds", "1",
                 "--extractor", "spacy", "--versus-extractor", "rules", "--versus", "none", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "success, spacy - rules" in printed and "--versus-extractor rules" in printed
    doc = json.loads(out.read_text())
    other = doc["versus_extractor"]
    assert [(c["attack"], c["defense"]) for c in other["cells"]] == [(c["attack"], c["defense"]) for c in doc["cells"]]
    rows = {(r[0], r[1]): r for r in other["paired"]["rows"]}
    assert set(rows) == {("none", "none"), ("none", "tdp"), ("frame", "none"), ("frame", "tdp")}
    spacy = {(c["attack"], c["defense"]): c for c in doc["cells"]}
    rules = {(c["attack"], c["defense"]): c for c in other["cells"]}
    diff = float(rows[("frame", "tdp")][5].split()[0])
    assert diff == pytest.approx(spacy[("frame", "tdp")]["attack_success"]["estimate"]
                                 - rules[("frame", "tdp")]["attack_success"]["estimate"], abs=0.006)
    reading = {r[0]: r for r in other["reading"]["rows"]}
    assert set(reading) == {"spacy", "rules"} and reading["spacy"][1:] != reading["rules"][1:]  # two real builds
    assert all(0 < float(x) <= 1 for r in reading.values() for x in r[2:])
    pages = {r[0]: r for r in other["attack_pages_read"]["rows"]}
    assert set(pages) == {"frame"} and all(0 < float(x) <= 1 for x in pages["frame"][1:5])  # what each reads of it
    assert [h["title"].split("(")[1].split("-")[0] for h in other["helps"]] == ["spacy", "rules"]
    assert all(len(h["rows"]) == 1 and h["rows"][0][:2] == ["frame", "tdp"] for h in other["helps"])


def test_versus_extractor_must_differ_from_the_grids_own():
    assert main(["graphrag", "grid", "--attacks", "none", "--defenses", "none", "--extractor", "rules",
                 "--versus-extractor", "rules"]) == 2
