import sys
from pathlib import Path

from agentbed.agents.chat import ChatAgent
from agentbed.runner import EpisodeSpec, run_episode
from environments.graphrag.agents import ReaderAgent
from environments.graphrag.extract import LLMExtractor
from environments.graphrag.pipeline import build_index
from suites.graphrag.scenarios import make_env, task_ids
from suites.graphrag.suite import SUITE

sys.path.insert(0, str(Path(__file__).parent))
from fake_models import LexiconExtractorModel, ReaderToolModel, chunk_triples  # noqa: E402


def _expected(docs, relations):
    return [(s.head, s.relation, s.tail, s.negated, s.dated, d.id, chunk) for d in docs for chunk, sentences in d.chunks()
            for s in chunk_triples(" ".join(sentences), relations)]


def test_llm_extractor_through_langchain_returns_what_the_model_says(world):
    docs, relations = world.documents[:20], sorted(world.table.phrases)
    extractor = LLMExtractor(LexiconExtractorModel(relations=relations), relations)
    got = extractor(docs)
    assert got and [(s.head, s.relation, s.tail, s.negated, s.dated, s.doc, s.chunk) for s in got] == \
        _expected(docs, relations)
    assert extractor.calls == sum(len(d.chunks()) for d in docs) and extractor.usage["input_tokens"] > 0
    index = build_index(docs, world.table, extractor=extractor, community_method="none")
    published = list(index.documents.values())  # the index renames and reorders the documents
    assert [(s.head, s.relation, s.tail, s.negated, s.dated, s.doc, s.chunk) for s in index.kg.statements] == \
        _expected(published, relations)
    assert extractor.calls == 2 * sum(len(d.chunks()) for d in docs)


def test_llm_extractor_skips_malformed_replies(world):
    docs = world.documents[:12]
    relations = sorted(world.table.phrases)
    extractor = LLMExtractor(LexiconExtractorModel(relations=relations, garble_every=3), relations)
    got = extractor(docs)
    assert extractor.skipped > 0 and 0 < len(got) < len(_expected(docs, relations))
    bad = extractor.parse('{"triples": [{"head": "a", "relation": "not_a_relation", "tail": "b"}, 7,'
                          ' {"head": "a", "relation": "born_in", "tail": "b", "date": "yesterday"}]}', "d", "d#c0")
    assert bad == []


def test_chat_agent_runs_the_environment():
    opts = SUITE.resolve_options({"attack": "gragpoison", "defense": "tdp", "worlds": 1})
    # the first question the deterministic reader answers right under this attack and defense
    task = next(t for t in task_ids(opts)
                if run_episode(make_env(t, opts), ReaderAgent(), EpisodeSpec("graphrag", t, "reader", 0, opts)).success)
    agent = ChatAgent(ReaderToolModel(), name="fake-reader", model_id="fake:reader")
    rec = run_episode(make_env(task, opts), agent, EpisodeSpec("graphrag", task, "fake-reader", 0, opts))
    assert rec.status == "ok", rec.error
    assert rec.steps == 3 and rec.success and rec.tokens > 0


def test_chat_model_reader_is_tabulated_beside_the_deterministic_one(tmp_path):
    from agentbed.log import verify_log
    from suites.graphrag.modelreader import compare_readers, readers_table

    rows = compare_readers(lambda: ChatAgent(ReaderToolModel(), name="fake-reader", model_id="fake:reader"),
                           "fake:reader", [("none", "none"), ("gragpoison", "tdp")], max_steps=5,
                           out_dir=tmp_path, worlds=1, targets=2)
    assert [r for r, _ in rows] == ["reader", "fake:reader"] * 2
    by = {(r, c.attack): c for r, c in rows}
    for attack in ("none", "gragpoison"):  # the fake reads as the deterministic reader does
        assert [x.success for x in by[("reader", attack)].records] == [x.success for x in by[("fake:reader", attack)].records]
    logs = sorted(tmp_path.glob("*.jsonl"))
    assert len(logs) == sum(len(c.records) for r, c in rows if r != "reader") and all(verify_log(p).ok for p in logs)
    tab = readers_table(rows, "cmd")
    assert len(tab["rows"]) == 4 and tab["rows"][1][0] == "fake:reader"


def test_llm_extractor_counts_failed_calls_and_keeps_their_messages(world):
    class TimingOut(LexiconExtractorModel):
        def _generate(self, *args, **kwargs):
            raise TimeoutError("Request timed out.")

    relations = sorted(world.table.phrases)
    extractor = LLMExtractor(TimingOut(relations=relations), relations)
    assert extractor(world.documents[:5]) == []
    assert extractor.failed == extractor.calls > 3 and extractor.errors == ["TimeoutError: Request timed out."] * 3


def test_both_prompts_read_back_what_the_model_says(world):
    """The GraphRAG-shaped records (the default) and the JSON prompt give the same statements
    from a model that answers each in its format; a record's status and date are read."""
    docs, relations = world.documents[:6], sorted(world.table.phrases)
    records = LLMExtractor(LexiconExtractorModel(relations=relations), relations)
    json_reply = LLMExtractor(LexiconExtractorModel(relations=relations), relations, prompt="json")
    assert records(docs) == json_reply(docs) and records.skipped == json_reply.skipped == 0
    reply = ('("entity"<|>Ann Lee<|>person)##("relationship"<|>Ann Lee<|>works_for<|>Acme<|>no longer<|>2025/06/01)\n'
             '("relationship"<|>Ann Lee<|>likes<|>Tea<|>current<|>)##I found these.##'
             '("relationship"<|>Ann Lee<|>born_in<|>Tiszel<|>current<|>)<|COMPLETE|>(ignored)')
    got = records.parse(reply, "d", "d#c0")
    assert [(s.head, s.relation, s.tail, s.negated, s.dated) for s in got] == \
        [("Ann Lee", "works_for", "Acme", True, "2025/06/01"), ("Ann Lee", "born_in", "Tiszel", False, "")]
    assert records.skipped == 2 and records.parse("<|COMPLETE|>", "d", "d#c0") == [] and records.skipped == 2
