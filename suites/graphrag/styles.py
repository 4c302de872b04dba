"""Per-style and titled rows of the foreign-prose evaluation (issue 50 item 2).

The frozen sets carry no style labels (their writers were asked for varied genres, not to name
them), so a paragraph's styles come from its surface alone, by the fixed rules of
:func:`styles_of`, written before any per-style figure was seen and never changed after looking
at one. A paragraph may carry several styles or none ("other prose": encyclopedic, news wire
and travel writing, which no surface rule here tells apart). Rows are therefore overlapping
subsets, each with its own 95% cluster-bootstrap interval over paragraphs.

The titled reading gives each paragraph the title a wiki page about it would have: the name of
its subject, taken as the head of the first fact of its answer key (the one use of the key on
the input side, labelled as such beside every titled figure). The rule-based extractor switches
its untitled-paragraph rules off for a titled document; the spaCy one takes the title as the
paragraph's topic.

    python -m suites.graphrag.styles --set set-1 --extractor spacy [--titled]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentbed.stats import Interval
from environments.graphrag.extract import extraction_intervals

STYLES = ("question-and-answer", "fact sheet", "passive", "long subordinate clauses", "non-ASCII-heavy",
          "other prose")
_QUESTION = re.compile(r"^\s*(?:Q|Question|Interviewer)\s*[:.]|\?\s*$", re.M)
_ITEM = re.compile(r"^\s*(?:[*\-\u2022]\s+\S|.*\|.*\|)")
_LABEL = re.compile(r"^\s*([^:|\n]{1,40}):\s+(.+)$")
_PASSIVE = re.compile(r"\b(?:was|were|is|are|been|being)\s+(?:\w+ly\s+)?\w+(?:ed|en|wn|ght|lt)\b"
                      r"(?:\s+\w+){0,4}?\s+by\b", re.I)
_RELATIVE = re.compile(r",\s*(?:which|who|whose|whom|where)\b", re.I)


def styles_of(text: str) -> tuple[str, ...]:
    """The surface styles of a paragraph (see the module docstring); "other prose" when none."""
    lines = [line for line in text.splitlines() if line.strip()]
    words = text.split()
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(words)) if s]
    found = []
    if len(lines) > 1 and _QUESTION.search(text):
        found.append("question-and-answer")
    if sum(_is_field(line) for line in lines) >= 2:
        found.append("fact sheet")
    if _PASSIVE.search(text):
        found.append("passive")
    if any(len(s.split()) >= 30 and _RELATIVE.search(s) for s in sentences):
        found.append("long subordinate clauses")
    if sum(any(ord(c) > 127 and c.isalpha() for c in w) for w in words) >= 3:
        found.append("non-ASCII-heavy")
    return tuple(found) or ("other prose",)


def _is_field(line: str) -> bool:
    """A bullet, a table row, or "Label: short value" (not an interview's "Q:"/"A:" or a
    speaker's sentence-long answer)."""
    label = _LABEL.match(line)
    if label:
        return label.group(1).strip().lower() not in ("q", "a", "question", "answer") and \
            len(label.group(2).split()) <= 8
    return bool(_ITEM.match(line))


def grouped_intervals(got: Sequence[Any], gold: Sequence[Any], groups: dict[str, set[str]]) -> dict[str, dict]:
    """Precision and recall per group of paragraph ids, from one extraction's statements."""
    out: dict[str, dict] = {}
    for name, ids in groups.items():
        g = [s for s in got if s.doc in ids]
        k = [s for s in gold if s.doc in ids]
        if not ids or not k:
            continue
        scores: dict[str, Interval] = extraction_intervals(g, k)
        out[name] = {"paragraphs": len(ids), "gold": len(k), "extracted": len(g), **scores}
    return out


def style_scores(paragraphs: Sequence[Any], extractor: str = "rules", titled: bool = False,
                 read: tuple[list[Any], list[Any]] | None = None) -> dict[str, dict]:
    """Rows per kind (world, real, all) and per style (over all paragraphs and over real ones);
    for a set whose writer labelled every paragraph's style (set 4), per the writer's style and
    per titled and untitled paragraph (titled by the writer) instead. ``read``: the (extracted,
    gold) statements of :func:`~suites.graphrag.foreign.extract_paragraphs` when already read."""
    from suites.graphrag.foreign import extract_paragraphs

    got, gold = read or extract_paragraphs(paragraphs, extractor=extractor, titled=titled)
    groups: dict[str, set[str]] = {kind: {p.id for p in paragraphs if kind in ("all", p.kind)}
                                   for kind in ("world", "real", "all")}
    if paragraphs and all(p.style for p in paragraphs):
        for style in dict.fromkeys(p.style for p in paragraphs):
            groups[style] = {p.id for p in paragraphs if p.style == style}
        groups["titled by the writer"] = {p.id for p in paragraphs if p.title}
        groups["untitled"] = {p.id for p in paragraphs if not p.title}
        return grouped_intervals(got, gold, groups)
    for style in STYLES:
        for kind in ("all", "real"):
            groups[f"{style} ({kind})"] = {p.id for p in paragraphs if style in styles_of(p.text)
                                           and kind in ("all", p.kind)}
    return grouped_intervals(got, gold, groups)


def markdown_rows(name: str, rows: dict[str, dict]) -> list[str]:
    """docs/graphrag-extraction.md's rows of one set ("| set-4 passive (12, 79) | 0.76 [0.67, 0.87] |
    0.48 [...] |"): per kind, and per the writer's style and title where the writer labelled them."""
    def cell(iv: Interval) -> str:
        return f"{iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"

    labelled = any(k not in ("world", "real", "all") and "(" not in k for k in rows)
    return [f"| {name} {k} ({row['paragraphs']}, {row['gold']}) | {cell(row['precision'])} | {cell(row['recall'])} |"
            for k, row in rows.items() if (k not in ("world", "real", "all") and "(" not in k)
            or (k in ("world", "real", "all") and not labelled) or (k == "all" and labelled)]


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from suites.graphrag.foreign import SET_NAMES, SETS, load_paragraphs

    parser = argparse.ArgumentParser(prog="python -m suites.graphrag.styles")
    parser.add_argument("--set", choices=sorted([*SETS, *SET_NAMES]), default="development")
    parser.add_argument("--extractor", choices=("rules", "spacy", "spacy-rules"), default="rules")
    parser.add_argument("--titled", action="store_true", help="each paragraph titled by its subject's name")
    parser.add_argument("--markdown", action="store_true", help="the rows as docs/graphrag-extraction.md shows them")
    args = parser.parse_args(argv)
    path, sha = SETS[SET_NAMES.get(args.set, args.set)]
    rows = style_scores(load_paragraphs(path), args.extractor, args.titled)
    if args.markdown:
        print("\n".join(markdown_rows(SET_NAMES.get(args.set, args.set), rows)))
        return
    print(f"foreign prose {args.set} (sha256 {sha[:12]}...), {args.extractor} extractor, "
          f"{'titled by subject' if args.titled else 'untitled'}")
    print(f"{'rows':36} {'paras':>5} {'gold':>5} {'got':>5}  precision [95% CI]    recall [95% CI]")
    for name, row in rows.items():
        p, r = row["precision"], row["recall"]
        print(f"{name:36} {row['paragraphs']:5d} {row['gold']:5d} {row['extracted']:5d}  "
              f"{p.estimate:.2f} [{p.low:.2f}, {p.high:.2f}]  {r.estimate:.2f} [{r.low:.2f}, {r.high:.2f}]")


if __name__ == "__main__":
    main()
