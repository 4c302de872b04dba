"""``agentbed graphrag build FILE... --out GRAPH.json``: a user's own documents indexed as the
environment indexes its corpora.

Each FILE is read as ``graphrag extract FILE`` reads it (paragraphs separated by blank lines, a
heading line as the paragraph's title), and the paragraphs of every file go through the one
pipeline (:func:`environments.graphrag.pipeline.build_index`: publish, extract with
``--extractor``, graph, communities, summaries) over the generated worlds' relation names. The
graph is written as JSON: each document's published id with the file and paragraph it came from,
each statement with its document and chunk, each entity's community and each community's
summary. An existing GRAPH is kept unless ``--force``; the file is replaced whole or not at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError

SCHEMA = "agentbed.graphrag.graph/1"
SCHEMA_WORLD = 1000


def graph_document(index: Any, sources: dict[str, tuple[str, int]], extractor: str) -> dict[str, Any]:
    """The index as JSON-ready data; ``sources`` maps a published id to (file, paragraph)."""
    return {
        "schema": SCHEMA,
        "extractor": extractor,
        "relations": sorted(index.table.phrases),
        "documents": [{"id": d.id, "file": sources[d.id][0], "paragraph": sources[d.id][1], "title": d.title}
                      for d in index.documents.values()],
        "statements": [{"head": s.head, "relation": s.relation, "tail": s.tail, "negated": s.negated,
                        "dated": s.dated, "document": s.doc, "chunk": s.chunk} for s in index.kg.statements],
        "communities": dict(sorted(index.membership.items())),
        "summaries": {str(c): text for c, text in sorted(index.summaries.items())},
    }


def _output(path: Path, force: bool) -> Path:
    """Checked before anything is read or extracted: a bad ``--out`` costs nothing."""
    if path.is_dir():
        raise UsageError(f"--out {path}: is a directory; name a file such as {path / 'graph.json'}")
    if not path.parent.is_dir():
        raise UsageError(f"--out {path}: directory {path.parent} does not exist")
    if path.exists() and not force:
        raise UsageError(f"--out {path}: exists; pass --force to replace it")
    return path


def cmd_build(args: argparse.Namespace) -> int:
    from agentbed.files import write_atomic
    from environments.graphrag.corpus import published_ids
    from environments.graphrag.extractors import make_extractor
    from environments.graphrag.pipeline import build_index
    from suites.graphrag.scenarios import load_dataset
    from suites.graphrag.userdocs import own_text_extractor, read_user_documents

    out = _output(Path(args.out), args.force)
    args.extractor, note = own_text_extractor(args.extractor)
    docs, where = [], []
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"{path}: " + ("not a file" if path.exists() else "no such file"))
        for k, d in enumerate(read_user_documents(path, lines_kept=args.extractor != "rules")):
            docs.append(d)
            where.append((str(path), k))
    table = load_dataset("world", SCHEMA_WORLD).table  # every generated world has the same relations
    try:
        extract = make_extractor(args.extractor, sorted(table.phrases), model=args.model,
                                 timeout=args.timeout, max_tokens=args.max_tokens)
    except (ValueError, RuntimeError) as exc:
        raise UsageError(str(exc)) from None
    sources = dict(zip(published_ids(docs, args.seed), where, strict=True))
    if args.extractor == "llm":
        import tempfile

        from agentbed.agents.local.server import serving

        with tempfile.TemporaryDirectory() as run_dir, serving([f"model:{args.model}"], Path(run_dir)):
            index = build_index(docs, table, extractor=extract, community_method=args.communities, seed=args.seed)
    else:
        index = build_index(docs, table, extractor=extract, community_method=args.communities, seed=args.seed)
    graph = graph_document(index, sources, args.extractor)
    try:
        write_atomic(out, (json.dumps(graph, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write ({exc.strerror})") from None
    if note:
        print(note, file=sys.stderr)
    files = f"{len(args.files)} file" + ("s" if len(args.files) > 1 else "")
    print(f"{len(graph['statements'])} statements on {len(index.kg.entities())} entities in "
          f"{len(graph['summaries'])} communities from {len(docs)} paragraphs of {files} -> {out}", file=sys.stderr)
    return 0


def add_build(sub: Any) -> None:
    b = sub.add_parser("build", help="index your own text files as a graph (statements, communities, summaries) "
                                     "and write it as JSON")
    b.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files (paragraphs separated by blank lines)")
    b.add_argument("--out", required=True, help="the graph's JSON file (an existing one is kept unless --force)")
    b.add_argument("--force", action="store_true", help="replace an existing --out")
    b.add_argument("--extractor", choices=("rules", "spacy", "llm", "spacy-rules"),
                   help="spacy (the pinned English pipeline; the default), rules (the baseline) or llm (with --model)")
    b.add_argument("--model", help="with --extractor llm: local:gemma-3-270m or any provider:model")
    b.add_argument("--communities", default="louvain", choices=("louvain", "leiden", "none"))
    b.add_argument("--seed", type=int, default=0, help="the seed of published document ids and communities")
    b.add_argument("--timeout", type=float, default=300.0, help="seconds per local-model call")
    b.add_argument("--max-tokens", type=int, default=160, help="reply tokens per local-model call")
    b.set_defaults(func=cmd_build)
