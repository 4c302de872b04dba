"""GraphRAG benchmark: index build time at 10k and 100k triples, and time per query of every
defense beside the undefended pipeline, in one run.

    .venv/bin/python bench/graphrag.py            # add --quick for 10k triples only
    .venv/bin/python bench/graphrag.py --queries-only --defenses none,tdp   # TDP beside undefended

Build = template extraction + graph + communities + summaries. Per query = local search +
the defense + the reader's answer, with GragPoison applied: the median over the targeted
questions of ``--rounds`` freshly built indexes (cold memos each time, the defenses taking turns
to go first), since one pass over 20 questions moved the ratio by 0.5 between runs.
Times are CPU seconds of this process (time.process_time), so a machine shared with other
work does not inflate them the way wall-clock time would.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attacks.graphrag.scenario import poisoned_index  # noqa: E402
from environments.graphrag.agents import answer_chain  # noqa: E402
from environments.graphrag.env import statement_row  # noqa: E402
from environments.graphrag.globalsearch import interpret_global  # noqa: E402
from environments.graphrag.kg import (  # noqa: E402
    KnowledgeGraph,
    communities,
    community_summaries,
    local_search,
    search_entities,
)
from environments.graphrag.lexicon import LexiconExtractor  # noqa: E402
from environments.graphrag.parse import interpret_plan, link_entity  # noqa: E402
from environments.graphrag.pipeline import Query  # noqa: E402
from environments.graphrag.real import available, load_real  # noqa: E402
from environments.graphrag.world import generate_world  # noqa: E402
from suites.graphrag.defenses import DEFENSES, make_defense  # noqa: E402


def world_with_triples(target: int):
    persons = max(40, int(target / 6.4))
    return generate_world(7, persons=persons, companies=max(12, persons // 25), countries=max(5, persons // 300),
                          universities=max(5, persons // 200), news=persons // 10, questions=10)


def build_row(target: int, leiden: bool) -> list[str]:
    data = world_with_triples(target)
    t = time.process_time()
    statements = LexiconExtractor(data.table.relations)(data.documents)
    t_extract = time.process_time() - t
    t = time.process_time()
    kg = KnowledgeGraph(statements)
    _ = kg.simple
    t_graph = time.process_time() - t
    t = time.process_time()
    membership = communities(kg, "louvain", seed=0)
    t_louvain = time.process_time() - t
    t = time.process_time()
    community_summaries(kg, membership, phrase=data.table.phrases)
    t_summaries = time.process_time() - t
    t_leiden = float("nan")
    if leiden:
        t = time.process_time()
        communities(kg, "leiden", seed=0)
        t_leiden = time.process_time() - t
    total = t_extract + t_graph + t_louvain + t_summaries
    return [f"{len(data.facts):,}", f"{len(statements):,}", f"{t_extract:.2f}", f"{t_graph:.2f}", f"{t_louvain:.2f}",
            f"{t_leiden:.2f}", f"{t_summaries:.2f}", f"{total:.2f}"]


def reader_reading(kg: KnowledgeGraph, text: str) -> tuple[str, tuple[str, ...]]:
    """The topic and plan :class:`environments.graphrag.agents.ReaderAgent` reads from a question:
    the aggregation check, ``search_entities`` (the env's tool), entity linking, relation matching."""
    schema = kg.relations()
    interpret_global(text, schema)
    entities = search_entities(kg, text)
    topic = link_entity(text, entities) or next(iter(entities), "")
    return topic, interpret_plan(text, topic, schema)


def query_rows(dataset, label: str, defenses: tuple[str, ...] = DEFENSES, rounds: int = 5,
               reader_path: bool = False) -> list[list[str]]:
    """Median CPU time per query of each defense. Each round builds the poisoned index afresh, so
    every defense meets cold per-graph and per-query memos as a run's first question does, and
    the defenses take turns going first; the median is over every (round, question).
    ``reader_path``: the question is first read as the reader agent reads it (its topic and plan,
    not the gold ones, go to local search), the path an episode takes."""
    times: dict[str, list[float]] = {name: [] for name in defenses}
    n_questions = 0
    for r in range(rounds):
        built = poisoned_index(dataset, "gragpoison", targets=20, seed=0, community_method="none")
        kg = built.index.kg
        questions = [q for q in dataset.questions if q.id in built.attacker_answers]
        n_questions = len(questions)
        order = list(defenses[r % len(defenses):]) + list(defenses[:r % len(defenses)])
        for name in order:
            defense = make_defense(name)  # trained outside the timed loop
            for q in questions:
                kg.search_cache.clear()  # every defense pays for its own retrieval
                t = time.process_time()
                topic, plan = reader_reading(kg, q.text) if reader_path else (q.topic, q.plan)
                retrieved = local_search(kg, topic, plan)
                removed = defense(kg, Query(q.text), retrieved).removed if defense else set()
                answer_chain([statement_row(built.index, i) for i in retrieved if i not in removed], topic, plan)
                times[name].append(time.process_time() - t)
    medians = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    return [[label, name, str(n_questions), f"{medians[name]:.2f}", f"{medians[name] / medians[defenses[0]]:.2f}x"]
            for name in defenses]


def show(title: str, columns: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(columns, *rows, strict=True)]
    print(title)
    for row in [columns, *rows]:
        print("  " + "  ".join(str(x).rjust(w) for x, w in zip(row, widths, strict=True)))
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k triples only")
    parser.add_argument("--queries-only", action="store_true", help="skip the index-build table")
    parser.add_argument("--defenses", default=",".join(DEFENSES), help="defenses to time (default: all)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh indexes per dataset (default 5; the median is over all)")
    args = parser.parse_args()
    defenses = tuple(d for d in args.defenses.split(",") if d)
    if not defenses or defenses[0] != "none" or any(d not in DEFENSES for d in defenses):
        parser.error(f"--defenses: a comma-separated list of {', '.join(DEFENSES)} starting with none")
    try:
        import graspologic_native  # noqa: F401

        leiden = True
    except ImportError:
        leiden = False
    sizes = [10_000] if args.quick else [10_000, 100_000]
    if not args.queries_only:
        show("Index build (CPU seconds; Leiden is graspologic-native, nan if not installed)",
             ["facts", "statements", "extract", "graph", "louvain", "leiden", "summaries", "total"],
             [build_row(n, leiden) for n in sizes])
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    datasets = [(f"world-{w}", generate_world(w)) for w in (1000, 1001)]
    datasets += [(name, load_real(name, seed=0)) for name in ("nations", "umls", "kinships") if available(name)]
    for reader_path, what in ((False, "gold topic and plan -> local search + defense + answer"),
                              (True, "the reader's reading of the question -> local search + defense + answer")):
        rows = [r for label, data in datasets for r in query_rows(data, label, defenses, args.rounds, reader_path)]
        show(f"Time per query with GragPoison applied (median CPU ms over {args.rounds} fresh indexes x the "
             f"targeted questions; {what})", ["dataset", "defense", "queries", "median CPU ms", "vs undefended"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
