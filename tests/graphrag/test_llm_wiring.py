"""The LLM extractor (issue 50 item 1) where a user selects it: the suite (-O extractor=llm
-O extractor_model=M) and the grid (--extractor llm --model M), and its calls cached like every
model call. The model here is a fake behind LangChain's chat-model API (tests/graphrag/fake_models.py),
never reported as a result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentbed.agents.cache import ModelCallCache
from agentbed.cli import main
from environments.graphrag.extract import LLMExtractor

sys.path.insert(0, str(Path(__file__).parent))
from fake_models import LexiconExtractorModel  # noqa: E402


class Unreachable(LexiconExtractorModel):
    """A model that must not be called: every reply has to come from the cache."""

    def _generate(self, *args, **kwargs):
        raise AssertionError("called the model for a cached request")


def test_a_repeated_extraction_is_answered_by_the_model_call_cache(world, tmp_path):
    docs, relations = world.documents[:6], sorted(world.table.phrases)
    first = LLMExtractor(LexiconExtractorModel(relations=relations), relations, name="fake:m",
                         cache=ModelCallCache(tmp_path))
    got = first(docs)
    again = LLMExtractor(Unreachable(relations=relations), relations, name="fake:m", cache=ModelCallCache(tmp_path))
    assert got and again(docs) == got and again.cached == again.calls == first.calls > 0 and not again.failed
    other = LLMExtractor(Unreachable(relations=relations), relations, name="fake:other", cache=ModelCallCache(tmp_path))
    assert other(docs[:1]) == [] and other.failed == other.calls > 0  # another model's request is not the same


def test_the_suite_indexes_with_the_llm_extractor_it_is_given(monkeypatch, world):
    import suites.graphrag.scenarios as scenarios
    from agentbed.env import TaskSpec

    seen = []

    def fake(name, relations, *, model=None, **_):
        seen.append((name, model))
        return LLMExtractor(LexiconExtractorModel(relations=list(relations)), relations)

    monkeypatch.setattr(scenarios, "make_extractor", fake)
    assert scenarios.graphrag_suite().options["extractor"].choices == ("rules", "spacy", "llm", "spacy-rules")
    options = {"extractor": "llm", "extractor_model": "fake:extractor-model", "world": 1000, "attack": "none"}
    scenarios.check_options(options)
    scenarios._poisoned.cache_clear()
    scene = scenarios.build_scenario(TaskSpec("x", {**options, "question": "q0"}))
    scenarios._poisoned.cache_clear()
    assert seen == [("llm", "fake:extractor-model")]
    assert scene.index.kg.statements  # what the fake model replied is what the index holds


def test_llm_without_a_model_is_refused_before_anything_runs(capsys):
    import suites.graphrag.scenarios as scenarios
    from agentbed.errors import UsageError

    with pytest.raises(UsageError, match="extractor_model"):
        scenarios.check_options({"extractor": "llm"})
    assert main(["graphrag", "grid", "--extractor", "llm", "--worlds", "1"]) == 2
    assert "--model" in capsys.readouterr().err
