"""``agentbed graphrag``: run an attack x defense grid on one dataset and print or save it.

    agentbed graphrag grid --dataset world --attacks gragpoison,kepo --defenses none,tdp --worlds 4
    agentbed graphrag grid --dataset nations --out nations.json
    agentbed graphrag ranker                      # the trained TDP weights
    agentbed graphrag extract notes.txt --json    # the triples the pipeline would index from your text
    agentbed graphrag build notes.txt --out graph.json   # your text indexed: statements, communities
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from suites.graphrag.userdocs import DEFAULT_WORLD


def _names(value: str, allowed: tuple[str, ...], flag: str) -> list[str]:
    names = [v for v in value.split(",") if v]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UsageError(f"{flag}: {bad[0] if bad else value!r} is not one of {', '.join(allowed)}")
    return names


def cmd_grid(args: argparse.Namespace) -> int:
    from environments.graphrag.real import GRAPHS, available, real_datasets
    from suites.graphrag.defenses import DEFENSES
    from suites.graphrag.report import ALL_ATTACKS, grid_table, paired_table, run_grid

    if args.dataset not in ("world", *real_datasets()):
        raise UsageError(f"--dataset: {args.dataset!r} is not one of world, {', '.join(real_datasets())}")
    if args.dataset != "world" and not available(args.dataset):
        raise UsageError(f"--dataset {args.dataset}: its files are missing; run {GRAPHS[args.dataset].missing}")
    if args.worlds < 1:
        raise UsageError(f"--worlds: must be at least 1, got {args.worlds}")
    if args.first_world < 0:
        raise UsageError(f"--first-world: must be at least 0, got {args.first_world}")
    if args.versus_extractor == args.extractor:
        raise UsageError(f"--versus-extractor: {args.versus_extractor!r} is the grid's own --extractor")
    if {"spacy", "spacy-rules"} & {args.extractor, args.versus_extractor}:
        from environments.graphrag.nlp_extract import INSTALL, pipeline_available

        if not pipeline_available():
            raise UsageError(f"--extractor spacy: the English pipeline is not installed; run {INSTALL}")
    attacks = _names(args.attacks, ALL_ATTACKS, "--attacks")
    defenses = _names(args.defenses, DEFENSES, "--defenses")
    versus = args.versus.split(",") if args.versus else []
    for name in versus:
        if name not in defenses:
            raise UsageError(f"--versus: {name!r} is not one of --defenses ({args.defenses})")
    if args.extractor == "llm" and not args.model:
        raise UsageError("--extractor llm needs --model (local:gemma-3-270m or provider:model)")
    extractor = f"llm:{args.model}" if args.extractor == "llm" else args.extractor
    with contextlib.ExitStack() as stack:
        if args.extractor == "llm":  # a local model is served for the grid's index builds (llama.cpp)
            from agentbed.agents.local.server import serving

            stack.enter_context(serving([f"model:{args.model}"], Path(stack.enter_context(tempfile.TemporaryDirectory()))))
        grid = dict(worlds=args.worlds, first_world=args.first_world, budget=args.budget, communities=args.communities, questions=args.questions,
                    dress=args.dress, pages=args.pages, wording=args.wording)
        if args.versus_extractor:  # both grids, and what each extractor reads of the attacks' pages
            from suites.graphrag.extractorgrid import grid_with_reading

            cells, read = grid_with_reading(args.dataset, attacks, defenses, extractor, **grid)
            other, other_read = grid_with_reading(args.dataset, attacks, defenses, args.versus_extractor, **grid)
        else:
            cells, other = run_grid(args.dataset, attacks, defenses, extractor=extractor, **grid), None
    command = (f"agentbed graphrag grid --dataset {args.dataset} --attacks {args.attacks} --defenses {args.defenses}"
               f" --worlds {args.worlds}" + (f" --first-world {args.first_world}" if args.first_world != 1000 else "")
               + f" --budget {args.budget} --questions {args.questions}"
               f" --communities {args.communities}" + (f" --versus {args.versus}" if args.versus else "")
               + (f" --extractor {args.extractor}" if args.extractor != "rules" else "")
               + (f" --model {args.model}" if args.extractor == "llm" else "")
               + (f" --dress {args.dress}" if args.dress != "length" else "")
               + (f" --pages {args.pages}" if args.pages != "one" else "")
               + (f" --wording {args.wording}" if args.wording != "writer" else "")
               + (f" --versus-extractor {args.versus_extractor}" if args.versus_extractor else ""))
    _print(grid_table(cells, args.dataset, command))
    tables = [paired_table(cells, name, command) for name in versus]
    for tab in tables:
        _print(tab)
    doc: dict[str, Any] = {"command": command, "cells": [c.to_dict() for c in cells],
                           "paired": tables[0] if tables else None}
    if len(tables) > 1:  # --versus none,tdp: every defense against each, in that order
        doc["paired_more"] = tables[1:]
    if other is not None:
        doc.update(_versus_extractor(cells, other, args, command, (read, other_read)))
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return 0


def _versus_extractor(cells: list[Any], other: list[Any], args: argparse.Namespace, command: str,
                      read: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    """The grid again on graphs built by ``--versus-extractor``, paired with the first by question,
    and what each extractor reads of the attacks' pages; with ``--versus``, per extractor whether a
    defense ever raises attack success over it."""
    from suites.graphrag.extractorgrid import extractor_table, helps_table, read_table, reading_table
    from suites.graphrag.report import grid_table
    from suites.graphrag.scenarios import world_seeds

    _print(grid_table(other, f"{args.dataset} ({args.versus_extractor}-built)", command))
    options = {"dataset": args.dataset, "worlds": args.worlds, "budget": args.budget, "communities": args.communities,
               "dress": args.dress, "pages": args.pages}
    reading = reading_table(args.dataset, world_seeds(options), (args.extractor, args.versus_extractor), options)
    _print(reading)
    pages = read_table(args.dataset, *read, (args.extractor, args.versus_extractor), cells, other)
    _print(pages)
    across = extractor_table(cells, other, (args.extractor, args.versus_extractor), command)
    _print(across)
    helps = [helps_table(c, args.versus.split(",")[0], e, command) for c, e in ((cells, args.extractor), (other, args.versus_extractor))
             ] if args.versus else []
    for tab in helps:
        _print(tab)
    return {"versus_extractor": {"extractor": args.versus_extractor, "cells": [c.to_dict() for c in other],
                                 "reading": reading, "attack_pages_read": pages, "paired": across,
                                 "helps": helps}}


def cmd_curve(args: argparse.Namespace) -> int:
    from suites.graphrag.curves import budget_curve, curve_table
    from suites.graphrag.defenses import DEFENSES
    from suites.graphrag.report import ALL_ATTACKS

    attacks = _names(args.attacks, ALL_ATTACKS[1:], "--attacks")
    defenses = _names(args.defenses, DEFENSES, "--defenses")
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b]
    except ValueError:
        raise UsageError(f"--budgets: {args.budgets!r} is not a comma-separated list of integers") from None
    if not budgets or min(budgets) < 1:
        raise UsageError(f"--budgets: every budget must be at least 1, got {args.budgets!r}")
    cells = budget_curve(args.dataset, attacks, defenses, budgets, worlds=args.worlds)
    command = (f"agentbed graphrag curve --dataset {args.dataset} --attacks {args.attacks} --defenses {args.defenses}"
               f" --budgets {args.budgets} --worlds {args.worlds}")
    _print(curve_table(cells, command))
    return 0


def _print(tab: dict[str, Any]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(tab["columns"], *tab["rows"], strict=True)]
    for row in [tab["columns"], *tab["rows"]]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)))
    print(tab["note"])


def cmd_extract_file(args: argparse.Namespace) -> int:
    """The triples the pipeline would index from a user's own text: the ``--extractor`` (rules,
    the default; spacy; llm with ``--model``) over the generated worlds' relations, linking the
    entities of world ``--world`` and the headings of the file."""
    from environments.graphrag.extractors import make_extractor
    from suites.graphrag.scenarios import load_dataset
    from suites.graphrag.userdocs import own_text_extractor, read_user_documents

    args.extractor, note = own_text_extractor(args.extractor, about_world=args.world is not None)
    args.world = DEFAULT_WORLD if args.world is None else args.world
    docs = read_user_documents(Path(args.file), lines_kept=args.extractor != "rules")
    data = load_dataset("world", args.world)
    try:
        extract = make_extractor(args.extractor, sorted(data.table.phrases), model=args.model,
                                 timeout=args.timeout, max_tokens=args.max_tokens)
    except (ValueError, RuntimeError) as exc:
        raise UsageError(str(exc)) from None
    if args.extractor == "llm":
        import tempfile

        from agentbed.agents.local.server import serving

        with tempfile.TemporaryDirectory() as run_dir, serving([f"model:{args.model}"], Path(run_dir)):
            statements = extract(docs, context=[*data.documents, *docs])
    else:
        statements = extract(docs, context=[*data.documents, *docs])
    if args.json:
        print(json.dumps([{"head": s.head, "relation": s.relation, "tail": s.tail, "negated": s.negated,
                           "dated": s.dated, "paragraph": int(s.doc[1:])} for s in statements],
                         ensure_ascii=False, indent=1))
        if note:
            print(note, file=sys.stderr)
        return 0
    for s in statements:
        marks = "".join([" (negated)" if s.negated else "", f" (as of {s.dated})" if s.dated else ""])
        print(f"{int(s.doc[1:]) + 1}\t{s.head}\t{s.relation}\t{s.tail}{marks}")
    print("\n".join(x for x in (note, f"{len(statements)} triples from {len(docs)} paragraphs") if x), file=sys.stderr)
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    """With FILE: :func:`cmd_extract_file`. Otherwise extractors on a small corpus (the first ``--docs`` documents of a dataset), scored against
    the claims the writer's sentences make: the rule-based extractor always, the LLM extractor
    with ``--model``."""
    import tempfile

    if args.file:
        return cmd_extract_file(args)
    args.extractor = args.extractor or "rules"
    args.world = DEFAULT_WORLD if args.world is None else args.world
    from environments.graphrag.corpus import gold_statements
    from environments.graphrag.extract import LLMExtractor, extraction_intervals, extraction_quality
    from environments.graphrag.extractors import make_extractor
    from suites.graphrag.scenarios import load_dataset

    if args.docs < 1:
        raise UsageError(f"--docs: must be at least 1, got {args.docs}")
    if args.timeout <= 0 or args.max_tokens < 1:
        raise UsageError(f"--timeout and --max-tokens: must be positive, got {args.timeout} and {args.max_tokens}")
    data = load_dataset(args.dataset, args.world)
    docs = data.documents[:args.docs]
    gold = gold_statements(docs)
    relations = sorted(data.table.phrases)
    base = args.extractor if args.extractor != "llm" else "rules"  # llm: beside the rules, with --model
    try:
        runs = [(base, make_extractor(base, relations)(docs, context=data.documents), None)]
    except RuntimeError as exc:
        raise UsageError(str(exc)) from None
    if args.model:
        from agentbed.agents.local.server import serving

        with tempfile.TemporaryDirectory() as run_dir, serving([f"model:{args.model}"], Path(run_dir)):
            extractor = LLMExtractor.from_model_string(args.model, relations, timeout=args.timeout,
                                                       max_tokens=args.max_tokens)
            runs.append((args.model, extractor(docs), extractor))
    print(f"{len(docs)} documents of {args.dataset} {args.world}")
    for name, got, llm in runs:
        q, iv = extraction_quality(got, gold), extraction_intervals(got, gold)
        print(f"{name}: precision {q.precision:.3f} {iv['precision'].low:.2f}-{iv['precision'].high:.2f} "
              f"({q.correct}/{q.extracted}), recall {q.recall:.3f} {iv['recall'].low:.2f}-{iv['recall'].high:.2f} "
              f"({q.found}/{q.gold}); 95% bootstrap over documents")
        if llm is not None:
            print(f"  {llm.calls} calls, {llm.failed} failed, {llm.skipped} malformed replies or entries; "
                  f"tokens in {llm.usage['input_tokens']}, out {llm.usage['output_tokens']}")
            for error in llm.errors:
                print(f"  failed call: {error}")
    return 0


def cmd_readers(args: argparse.Namespace) -> int:
    """The chat-model reader beside the deterministic reader on the same cells."""
    from agentbed.agents.chat import ChatAgent
    from agentbed.agents.local.server import serving
    from suites.graphrag.defenses import DEFENSES
    from suites.graphrag.modelreader import compare_readers, readers_table
    from suites.graphrag.report import ALL_ATTACKS

    cells = []
    for cell in [c for c in args.cells.split(",") if c]:
        attack, _, defense = cell.partition("/")
        if attack not in ALL_ATTACKS or defense not in DEFENSES:
            raise UsageError(f"--cells: {cell!r} is not ATTACK/DEFENSE (attacks: {', '.join(ALL_ATTACKS)}; "
                             f"defenses: {', '.join(DEFENSES)})")
        cells.append((attack, defense))
    if not cells or args.max_steps < 1 or args.worlds < 1:
        raise UsageError("--cells, --max-steps and --worlds: at least one cell, step and world")
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out}: exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    command = (f"agentbed graphrag readers --model {args.model} --cells {args.cells} --worlds {args.worlds} "
               f"--targets {args.targets} --questions {args.questions} --max-steps {args.max_steps}")

    def save(rows: list) -> None:
        tab = readers_table(rows, command)
        doc = {"command": command, "table": tab, "cells": [{"reader": r, **c.to_dict()} for r, c in rows]}
        (out / "readers.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")

    with serving([f"model:{args.model}"], out):
        rows = compare_readers(lambda: ChatAgent.from_model_string(args.model, seed=0, timeout=args.timeout,
                                                                   max_retries=args.retries), args.model, cells,
                               max_steps=args.max_steps, out_dir=out / "episodes", each=save, worlds=args.worlds,
                               targets=args.targets, questions=args.questions)
    _print(readers_table(rows, command))
    return 0


def cmd_ranker(args: argparse.Namespace) -> int:
    from suites.graphrag.training import VARIANTS, WEIGHTS_FILE, trained_ranker, write_weights

    if args.retrain:
        write_weights()
        print(f"wrote {WEIGHTS_FILE}")
    for variant in VARIANTS:
        print(variant, json.dumps(trained_ranker(variant).to_dict(), indent=1))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("graphrag", help="GraphRAG poisoning: attack x defense grids, TDP ranker")
    sub = p.add_subparsers(dest="graphrag_command", required=True)
    g = sub.add_parser("grid", help="run attacks x defenses on one dataset with the reader agent")
    g.add_argument("--dataset", default="world", help="world, or a real graph: nations, kinships, umls, geonames, gazetteer, periodic")
    g.add_argument("--attacks", default="none,poisonedrag,gragpoison,community,kepo,tkpa")
    g.add_argument("--defenses", default="none,ngram,cluster,paraphrase,provenance,tdp,tdp-raw")
    g.add_argument("--worlds", type=int, default=4, help="generated evaluation worlds")
    g.add_argument("--first-world", type=int, default=1000, help="the first generated world's seed (default 1000; "
                   "development worlds: 4)")
    g.add_argument("--budget", type=int, default=5, help="poison documents per contested fact (and 4 statements each)")
    g.add_argument("--communities", default="louvain", choices=("louvain", "leiden"))
    g.add_argument("--questions", default="targeted", choices=("targeted", "conflict", "all", "global"),
                   help="targeted by the attack plan, crossing a natural conflict of the clean data, all, or global "
                        "(answered from community reports)")
    g.add_argument("--versus", help="also print every other defense against this one, paired by question "
                                    "(accuracy drop, attack success difference; split by multi-valued questions); "
                                    "several, comma-separated (none,tdp): a table against each")
    g.add_argument("--out", help="write the cells (intervals per metric) to this JSON file")
    g.add_argument("--dress", default="length", choices=("length", "shape", "entity"),
                   help="attack documents' camouflage (attacks/graphrag/camouflage.py): length (default), shape, "
                        "or entity (claims placed on pages titled after the entities they name, then shaped)")
    g.add_argument("--pages", default="one", choices=("one", "several"),
                   help="clean pages per entity: one (default) or several (half the entities get a second page)")
    g.add_argument("--wording", default="writer", choices=("writer", "read"),
                   help="the attack's sentences as its writer words them (default), or re-worded until the index's "
                        "extractor reads each claim (an attacker who knows the extractor; attacks/graphrag/readable.py)")
    g.add_argument("--extractor", default="rules", choices=("rules", "spacy", "llm", "spacy-rules"),
                   help="the extractor every index is built with: rules (the baseline), spacy, or llm (--model)")
    g.add_argument("--model", help="with --extractor llm: local:gemma-3-270m or any provider:model")
    g.add_argument("--versus-extractor", choices=("rules", "spacy", "spacy-rules"),
                   help="also run the grid on graphs built by this extractor and pair every cell with it by "
                        "question; with --versus, say per extractor whether a defense raises attack success")
    g.set_defaults(func=cmd_grid)
    c = sub.add_parser("curve", help="attack success against budget (documents per target)")
    c.add_argument("--dataset", default="world", choices=("world", "nations", "kinships", "umls"))
    c.add_argument("--attacks", default="copy,support,frame,adaptive")
    c.add_argument("--defenses", default="none,tdp")
    c.add_argument("--budgets", default="1,2,3,5,8", help="comma-separated documents per target")
    c.add_argument("--worlds", type=int, default=4)
    c.set_defaults(func=cmd_curve)
    e = sub.add_parser("extract", help="the triples extracted from FILE; without FILE, the extractors' precision "
                                       "and recall on a small corpus")
    e.add_argument("file", nargs="?", help="a UTF-8 text file of your own (paragraphs separated by blank lines)")
    e.add_argument("--json", action="store_true", help="with FILE: print the triples as JSON")
    e.add_argument("--model", help="also the LLM extractor: local:gemma-3-270m or any provider:model")
    e.add_argument("--extractor", choices=("rules", "spacy", "llm", "spacy-rules"),
                   help="rules (the baseline), spacy (the pinned English pipeline) or llm (with --model); "
                        "default: spacy for FILE, rules for FILE with --world and without FILE (without "
                        "FILE, llm is scored beside the rules)")
    e.add_argument("--docs", type=int, default=8, help="documents of the dataset to extract from")
    e.add_argument("--dataset", default="world", choices=("world", "nations", "kinships", "umls"))
    e.add_argument("--world", type=int, help="generated world seed (or a real graph's question seed), default "
                                             f"{DEFAULT_WORLD}; with FILE, the world whose entities are linked")
    e.add_argument("--timeout", type=float, default=300.0, help="seconds per local-model call")
    e.add_argument("--max-tokens", type=int, default=160, help="reply tokens per local-model call")
    e.set_defaults(func=cmd_extract)
    m = sub.add_parser("readers", help="the chat-model reader beside the deterministic reader, same tasks")
    m.add_argument("--model", required=True, help="local:gemma-3-270m or any provider:model")
    m.add_argument("--cells", default="none/none,gragpoison/none,gragpoison/tdp", help="ATTACK/DEFENSE,...")
    m.add_argument("--worlds", type=int, default=1, help="generated evaluation worlds")
    m.add_argument("--targets", type=int, default=4, help="questions targeted per world")
    m.add_argument("--questions", default="targeted", choices=("targeted", "conflict", "all", "global"))
    m.add_argument("--max-steps", type=int, default=6, help="steps per model episode")
    m.add_argument("--timeout", type=float, default=None, help="seconds per model call (default: the provider's)")
    m.add_argument("--retries", type=int, default=4, help="retries of a failed or timed-out model call")
    m.add_argument("--out", required=True, help="directory for the model's episode logs and readers.json")
    m.set_defaults(func=cmd_readers)
    from suites.graphrag.build import add_build

    add_build(sub)
    r = sub.add_parser("ranker", help="print the TDP rankers' weights (trained with fixed seeds)")
    r.add_argument("--retrain", action="store_true", help="train again and rewrite the shipped weights")
    r.set_defaults(func=cmd_ranker)
