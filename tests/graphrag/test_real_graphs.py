"""Real knowledge graphs from the pykeen 1.11.1 wheel (fetched by scripts/fetch-pykeen)."""

import pytest

from agentbed.errors import UsageError
from environments.graphrag.dataset import follow
from environments.graphrag.real import load_real, read_triples
from suites.graphrag.report import run_cell

SIZES = {"nations": (14, 55, 1992), "kinships": (104, 25, 10686), "umls": (135, 46, 6529)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_sizes_match_the_published_datasets(nations_available, name):
    facts = read_triples(name)
    entities = {f.head for f in facts} | {f.tail for f in facts}
    assert (len(entities), len({f.relation for f in facts}), len(facts)) == SIZES[name]


def test_questions_follow_unique_chains(nations_available):
    data = load_real("nations", seed=0)
    assert len(data.questions) >= 20
    for q in data.questions:
        assert follow(data.index, q.topic, q.plan) == q.path


def test_unknown_dataset_is_a_usage_error():
    with pytest.raises(UsageError, match="--dataset"):
        read_triples("fb15k")


def test_missing_files_name_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTBED_PYKEEN_DIR", str(tmp_path))
    with pytest.raises(UsageError, match="fetch-pykeen"):
        read_triples("umls")


@pytest.mark.parametrize("name", sorted(SIZES))
def test_real_graphs_are_prose_and_extraction_is_measured(nations_available, name):
    from environments.graphrag.corpus import gold_statements
    from environments.graphrag.extract import extraction_quality
    from environments.graphrag.lexicon import LexiconExtractor

    data = load_real(name, seed=0)
    assert data.documents == load_real(name, seed=0).documents or \
        [d.sentences for d in data.documents] == [d.sentences for d in load_real(name, seed=0).documents]
    gold = gold_statements(data.documents)
    assert {s.fact() for s in gold} == set(data.facts)  # every triple is stated somewhere
    assert any(len(getattr(x, "claims", ())) >= 2 for d in data.documents for x in d.sentences)  # lists
    assert any(x.startswith("It ") for d in data.documents for x in d.sentences)  # pronouns
    q = extraction_quality(LexiconExtractor(sorted(data.table.phrases))(data.documents), gold)
    assert 0.8 < q.precision < 1.0 and 0.7 < q.recall < 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nations", "umls"])
def test_tdp_transfers_to_real_graphs_without_retraining(nations_available, name):
    """The round-0 ranker (no adaptive attack in training) cuts GragPoison's success on real
    graphs it never saw, at a small cost in clean accuracy. The measured values (prose corpora,
    extracted graphs) are in docs/graphrag.md; the 0.15 goal is not met on Nations there."""
    undefended = run_cell(name, "gragpoison", "none")
    defended = run_cell(name, "gragpoison", "tdp-static")
    clean = run_cell(name, "none", "none")
    clean_tdp = run_cell(name, "none", "tdp")
    assert undefended.interval("attack_success").estimate >= 0.5
    assert defended.interval("attack_success").estimate <= undefended.interval("attack_success").estimate - 0.4
    assert clean_tdp.interval("accuracy").estimate >= clean.interval("accuracy").estimate - 0.15
