"""Extraction cost: CPU milliseconds per paragraph of the rule-based extractor, the spaCy rule stage
alone (``spacy-rules``) and the spaCy extractor with its learned pair stage (``spacy``) on
the development foreign-prose set (190 user paragraphs), and the clean index build time of one
generated world with each (extraction + graph + communities + summaries).

    .venv/bin/python bench/graphrag_extract.py

Times are CPU seconds of this process (time.process_time), after one warm-up paragraph (the
spaCy pipeline's ~1 s load is reported apart).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from environments.graphrag.extractors import make_extractor  # noqa: E402
from environments.graphrag.nlp_extract import load_pipeline  # noqa: E402
from environments.graphrag.pipeline import build_index  # noqa: E402
from suites.graphrag.foreign import _document, load_paragraphs  # noqa: E402
from suites.graphrag.scenarios import load_dataset  # noqa: E402


def main() -> None:
    t = time.process_time()
    load_pipeline()
    print(f"spaCy pipeline load: {time.process_time() - t:.2f} s CPU")
    paragraphs = load_paragraphs()
    data = load_dataset("world", 1000)
    relations = sorted(data.table.phrases)
    for name in ("rules", "spacy-rules", "spacy"):
        extract = make_extractor(name, relations)
        docs = [_document(p, lines=name != "rules") for p in paragraphs]
        extract(docs[:1])
        t = time.process_time()
        for d in docs:
            extract([d])
        per = (time.process_time() - t) / len(docs) * 1000
        t = time.process_time()
        index = build_index(data.documents, data.table, extractor=None if name == "rules" else extract)
        build = time.process_time() - t
        print(f"{name}: {per:.1f} ms CPU per paragraph ({len(docs)} paragraphs); world 1000 index "
              f"({len(data.documents)} documents, {len(index.kg.statements)} statements): {build:.1f} s CPU")


if __name__ == "__main__":
    main()
