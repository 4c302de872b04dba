import json

import pytest

from agentbed.cli import main


@pytest.mark.parametrize("argv, culprit", [
    (["graphrag", "grid", "--attacks", "bogus"], "--attacks"),
    (["graphrag", "grid", "--defenses", "tdp,nope"], "--defenses"),
    (["graphrag", "grid", "--dataset", "fb15k"], "--dataset"),
    (["graphrag", "grid", "--worlds", "0"], "--worlds"),
    (["graphrag", "grid", "--first-world", "-1"], "--first-world"),
    (["graphrag", "grid", "--defenses", "none,tdp", "--versus", "tdp-mix"], "--versus"),
    (["graphrag", "grid", "--defenses", "none,tdp", "--versus", "none,tdp-mix"], "--versus"),
    (["graphrag", "curve", "--budgets", "0,3"], "--budgets"),
    (["graphrag", "curve", "--budgets", "x"], "--budgets"),
    (["graphrag", "curve", "--attacks", "none"], "--attacks"),
    (["run", "graphrag", "--attack", "nope"], "--attack"),
    (["run", "graphrag", "--budget", "0"], "--budget"),
    (["run", "graphrag", "--worlds", "-1"], "--worlds"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, culprit):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert culprit in err and len(err.splitlines()) == 1


def test_grid_prints_and_saves_cells(tmp_path, capsys):
    out = tmp_path / "cells.json"
    assert main(["graphrag", "grid", "--attacks", "gragpoison", "--defenses", "none,tdp", "--worlds", "1",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "gragpoison" in printed and "regenerate" in printed
    cells = json.loads(out.read_text())["cells"]
    assert [(c["attack"], c["defense"]) for c in cells] == [("gragpoison", "none"), ("gragpoison", "tdp")]
    assert cells[0]["attack_success"]["estimate"] > cells[1]["attack_success"]["estimate"]


def test_grid_runs_the_worlds_it_is_given(tmp_path, capsys):
    """``--first-world``: a grid on development worlds (4-7) or on fresh held-out ones, named in the
    command it prints."""
    out = tmp_path / "cells.json"
    assert main(["graphrag", "grid", "--attacks", "none", "--defenses", "none", "--worlds", "1", "--first-world", "4",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert "--first-world 4" in doc["command"] and "--first-world 4" in capsys.readouterr().out
    from suites.graphrag.report import run_cell

    tasks = {r.task.rsplit("-q", 1)[0] for r in run_cell("world", "none", "none", worlds=2, first_world=4).records}
    assert tasks == {"world-4", "world-5"}


def test_grid_pairs_every_defense_against_each_versus(tmp_path):
    out = tmp_path / "cells.json"
    assert main(["graphrag", "grid", "--attacks", "none,gragpoison", "--defenses", "none,tdp,tdp-disputed", "--worlds", "1",
                 "--versus", "none,tdp", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    against_none, [against_tdp] = doc["paired"], doc["paired_more"]
    assert against_none["title"].endswith("against none, paired by question")
    assert against_tdp["title"].endswith("against tdp, paired by question")
    paired = {(r[0], r[1]): r[6] for r in against_tdp["rows"] if r[2] == "all"}
    assert paired[("none", "tdp")] == "-" and paired[("none", "tdp-disputed")] != "-"  # accuracy, tdp - tdp-disputed


def test_grid_pairs_defenses_against_one_and_splits_multi_valued_questions(tmp_path, capsys):
    out = tmp_path / "cells.json"
    assert main(["graphrag", "grid", "--attacks", "none,gragpoison", "--defenses", "none,tdp", "--worlds", "1",
                 "--questions", "conflict", "--versus", "none", "--out", str(out)]) == 0
    paired = json.loads(out.read_text())["paired"]
    rows = {(r[0], r[1], r[2]): r for r in paired["rows"]}
    assert {("none", "tdp", q) for q in ("all", "multi-valued", "not multi-valued")} <= set(rows)
    n = {q: rows[("none", "tdp", q)][3] for q in ("all", "multi-valued", "not multi-valued")}
    assert n["all"] == n["multi-valued"] + n["not multi-valued"] and n["multi-valued"] == 9
    assert rows[("gragpoison", "tdp", "all")][7] != "-"  # attack success, tdp minus none, paired
    assert "--versus none" in capsys.readouterr().out


def test_run_writes_summary_with_attack_success(tmp_path):
    run = tmp_path / "run"
    assert main(["run", "graphrag", "--attack", "gragpoison", "--defense", "tdp", "--worlds", "1",
                 "--out", str(run), "--quiet"]) == 0
    summary = json.loads((run / "graphrag" / "summary.json").read_text())
    metrics = {h["metric"] for h in summary["headline"]}
    assert metrics == {"accuracy", "attack_success"}


def test_extract_prints_the_triples_of_a_users_file(tmp_path, capsys):
    from environments.graphrag.world import generate_world

    person = next(f for f in generate_world(1000).facts if f.relation == "born_in")
    text = tmp_path / "notes.txt"
    text.write_text(f"{person.head} was born in {person.tail}.\n\nZürich\nZürich is located in Schweiz.\n",
                    encoding="utf-8")
    assert main(["graphrag", "extract", str(text), "--world", "1000", "--json"]) == 0
    printed = capsys.readouterr()
    got = json.loads(printed.out)
    assert "extractor: rules (the default for text about a generated world" in printed.err
    assert {"head": person.head, "relation": "born_in", "tail": person.tail, "negated": False, "dated": "",
            "paragraph": 0} in got
    assert any(t["head"] == "Zürich" and t["tail"] == "Schweiz" for t in got)
    assert main(["graphrag", "extract", str(text), "--extractor", "rules"]) == 0
    assert f"1\t{person.head}\tborn_in\t{person.tail}" in capsys.readouterr().out.splitlines()
    assert main(["graphrag", "extract", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err
