"""The extractor on prose it was never written against: the frozen foreign-prose sets.

Three sets, each by a writer who saw only the schema and the facts, each frozen by its sha256
before it was measured: ``set-1`` (worlds 770001-770003 and real entities,
``data/foreign_prose.md``), measured once and then used to tune the rules; ``set-2`` (worlds
880001-880003, ``data/foreign_prose_2.md``), measured once as held-out data on 2026-12-02 and then
used to tune the rules too; ``set-3`` (worlds 990001-990003, ``data/foreign_prose_3.md``), the
held-out set now, kept from the engineer changing the rules and measured once after that work.
``development`` names set 1 and ``held-out`` set 3. Each paragraph is read as a user's file is
by ``agentbed graphrag extract FILE --world N``: world paragraphs link the entities of their own world,
real paragraphs those of the default world (no page of theirs exists, as for a user's own text).
Precision and recall are pooled over paragraphs with 95% cluster-bootstrap intervals
(:func:`environments.graphrag.extract.extraction_intervals`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.stats import Interval
from agentbed.validate import parse_json, read_bytes
from environments.graphrag.corpus import Document, Statement
from environments.graphrag.extract import extraction_intervals
from environments.graphrag.extractors import make_extractor
from environments.graphrag.lexicon import normalise
from suites.graphrag.scenarios import load_dataset
from suites.graphrag.userdocs import DEFAULT_WORLD, paragraph_document

DATA = Path(__file__).with_name("data") / "foreign_prose.jsonl"
SHA256 = "0d40ba68da4b715c5fb0b9b317a443888f17e805e08af67af6f491690a518672"
SET_2 = DATA.with_name("foreign_prose_2.jsonl")
SET_2_SHA256 = "3810af3ffb0f5d8718b4d5fdaeb4e3effea43f05e590fd5274cf977f49ba0239"
HELD_OUT = DATA.with_name("foreign_prose_3.jsonl")
HELD_OUT_SHA256 = "492c30b84edc8c1992489a3852ada3d672ed90c0f46afdc0b99c0af712286b3d"
SET_4 = DATA.with_name("foreign_prose_4.jsonl")  # real entities, the writer's styles and titles
SET_4_SHA256 = "9612ee12cb58f6e334244e850f26c1b43bb7b7a0826130136d3aee4a317927b1"
SET_5 = DATA.with_name("foreign_prose_5.jsonl")  # a new writer, set 4's format; held out (see its .md)
SET_5_SHA256 = "1acec3c3cda93a588731cb8ed6597e9f7b21bf717085182723342981f3e84f54"
SET_6 = DATA.with_name("foreign_prose_6.jsonl")  # a third new writer, set 4's format; held out (see its .md)
SET_6_SHA256 = "38757c3050d1bb350fae2d37eedd5ccf8e58d8e7f9b2ed60aba3d60b77d99040"
SET_7 = DATA.with_name("foreign_prose_7.jsonl")  # a fourth new writer, set 4's format; held out (see its .md)
SET_7_SHA256 = "28a25e482df6197bbcec5821d35429d19f80da6d9a34b1dce6f862752294ba9f"
SET_8 = DATA.with_name("foreign_prose_8.jsonl")  # a fifth new writer, set 4's format; held out (see its .md)
SET_8_SHA256 = "ab8db59e7699f4a5b36d9fec507aff252d72e3ec81d11e527677cf36414193ed"
SET_9 = DATA.with_name("foreign_prose_9.jsonl")  # a sixth new writer, five styles new; held out (see its .md)
SET_9_SHA256 = "ddb197bc191805601a8fe826404b86ab18fa564386e3925dc6bb19b5975b4f3f"
SET_10 = DATA.with_name("foreign_prose_10.jsonl")  # a seventh new writer, issue 50's eight styles; held out
SET_10_SHA256 = "0515ae6d2765754de3ad45246eaa99caf15318760a422f301e7ea5b415a871eb"
SET_11 = DATA.with_name("foreign_prose_11.jsonl")  # an eighth new writer, issue 50's eight styles; held out
SET_11_SHA256 = "c54acaa05c53ca0ee5fc6e28fdd437a828579c12e1356c504799c25b4391355a"
SET_12 = DATA.with_name("foreign_prose_12.jsonl")  # a ninth new writer, issue 50's eight styles; held out
SET_12_SHA256 = "83b7c9e823f697deea6c518823d8aa291839f846d86bec939d7c51e024eceffc"
SET_13 = DATA.with_name("foreign_prose_13.jsonl")  # a tenth new writer, issue 50's eight styles; held out
SET_13_SHA256 = "b248acc0f6860d696522bf7e46e9f40f53f1cb38b1a3a0e91fd5371f0d35dea2"
SET_14 = DATA.with_name("foreign_prose_14.jsonl")  # an eleventh new writer, issue 50's eight styles; held out
SET_14_SHA256 = "686970b7aa31aa57ecc37dd0179d4c62f6944b7b611c865c552014a079d3943e"
SET_15 = DATA.with_name("foreign_prose_15.jsonl")  # a twelfth new writer, issue 50's eight styles; held out
SET_15_SHA256 = "e0da2d0380011a023f6b5504e0bdd18eb3cb4b3004c1fdd90fdf0b8d2067a4a8"
SET_16 = DATA.with_name("foreign_prose_16.jsonl")  # a thirteenth new writer, issue 50's eight styles; held out
SET_16_SHA256 = "e5dd03de6333759170b455b7680af8f4aa987ccea3f63d199dc4aeb04ba1d6a2"
SET_17 = DATA.with_name("foreign_prose_17.jsonl")  # a fourteenth new writer, issue 50's eight styles; held out
SET_17_SHA256 = "76920dfa1b326a99f913db7379f824ec5e07fd37cdea2ed03b4eb19f390d984b"
SET_18 = DATA.with_name("foreign_prose_18.jsonl")  # a fifteenth new writer, issue 50's eight styles; held out
SET_18_SHA256 = "d3e27451a4b381295e1a130e5572b46d9b248fce768807f0cac483d5b56f87d3"
SET_19 = DATA.with_name("foreign_prose_19.jsonl")  # a sixteenth new writer, issue 50's eight styles; held out
SET_19_SHA256 = "03e0c29849095a7c48a651b2fb86753c0a1d051f5b197ff2295bb80c213bcbe0"
SETS = {"set-1": (DATA, SHA256), "set-2": (SET_2, SET_2_SHA256), "set-3": (HELD_OUT, HELD_OUT_SHA256),
        "set-4": (SET_4, SET_4_SHA256), "set-5": (SET_5, SET_5_SHA256), "set-6": (SET_6, SET_6_SHA256),
        "set-7": (SET_7, SET_7_SHA256), "set-8": (SET_8, SET_8_SHA256),
        "set-9": (SET_9, SET_9_SHA256), "set-10": (SET_10, SET_10_SHA256),
        "set-11": (SET_11, SET_11_SHA256), "set-12": (SET_12, SET_12_SHA256),
        "set-13": (SET_13, SET_13_SHA256), "set-14": (SET_14, SET_14_SHA256),
        "set-15": (SET_15, SET_15_SHA256), "set-16": (SET_16, SET_16_SHA256),
        "set-17": (SET_17, SET_17_SHA256), "set-18": (SET_18, SET_18_SHA256),
        "set-19": (SET_19, SET_19_SHA256)}
SET_NAMES = {"development": "set-1", "held-out": "set-3"}
SYMMETRIC = frozenset({"colleague_of"})


@dataclass(frozen=True)
class Paragraph:
    id: str
    kind: str  # "world" or "real"
    text: str
    facts: tuple[tuple[str, str, str], ...]
    style: str = ""  # the writer's own label (set 4), "" where the writer gave none
    title: str = ""  # the writer's title (set 4): the paragraph is read as a titled document

    @property
    def world(self) -> int:
        return int(self.id[1:].split("-")[0]) if self.kind == "world" else DEFAULT_WORLD


def load_paragraphs(path: Path = DATA) -> list[Paragraph]:
    """A set's paragraphs; a frozen set's file whose bytes are not the frozen ones is refused."""
    raw = read_bytes(path)
    frozen = {p: sha for p, sha in SETS.values()}.get(path)
    if frozen is not None and hashlib.sha256(raw).hexdigest() != frozen:
        raise ValueError(f"{path}: sha256 differs from the frozen set's ({frozen})")
    rows = [parse_json(line, f"{path}:{k}") for k, line in enumerate(raw.splitlines(), 1) if line.strip()]
    return [Paragraph(r["id"], r["kind"], r["text"], tuple(tuple(f) for f in r["facts"]), r.get("style") or "",
                      r.get("title") or "") for r in rows]


def _document(p: Paragraph, lines: bool = False, titled: bool = False) -> Document:
    """A paragraph as a user's paragraph under its writer's title ("" for none), built as
    ``graphrag extract FILE`` builds one under its heading line: sentences end at ., ! or ?
    before a space; with ``lines`` (the spaCy extractor, and ``read_user_documents``), also at
    each line's end. The rule-based rows keep the joined reading they were frozen with.
    ``titled``: an untitled paragraph under its subject's name, the first fact's head
    (:mod:`suites.graphrag.styles`)."""
    title = p.title or (p.facts[0][0] if titled and p.facts else "")
    text = p.text.splitlines() if lines else [" ".join(p.text.split())]
    return paragraph_document(p.id, title, text, lines)


def _key(head: str, relation: str, tail: str) -> tuple[str, str, str]:
    h, t = normalise(head), normalise(tail)
    if relation in SYMMETRIC and t < h:
        h, t = t, h
    return h, relation, t


Reader = Callable[[Sequence[Document]], list[Statement]]


def sample(paragraphs: Sequence[Paragraph], every: int) -> list[Paragraph]:
    """The pre-declared stratified sample for a costly extractor: within each kind, in the
    file's order, the first paragraph and then every ``every``-th (declared before any model
    run in docs/graphrag.md; the set itself stays frozen)."""
    out = []
    for kind in ("world", "real"):
        out += [p for p in paragraphs if p.kind == kind][::every]
    return out


def extract_paragraphs(paragraphs: Sequence[Paragraph], reader: Reader | None = None,
                       extractor: str = "rules", titled: bool = False,
                       stage: Any = None) -> tuple[list[Statement], list[Statement]]:
    """(extracted, gold) statements, names normalised as the extractor's linker normalises them;
    negated extractions are left out (every gold fact is asserted as true). ``reader``: another
    extractor (the LLM extractor), which reads each paragraph alone, in place of the rule-based
    one. ``stage``: the spaCy extractor's learned stage in place of its default
    (:class:`environments.graphrag.nlp_pairs.PairStage`)."""
    got: list[Statement] = []
    gold: list[Statement] = []
    by_world: dict[int, list[Paragraph]] = {}
    for p in paragraphs:
        by_world.setdefault(p.world, []).append(p)
    for world, group in sorted(by_world.items()):
        data = load_dataset("world", world)
        extract = make_extractor(extractor, sorted(data.table.phrases))
        if stage is not None:
            extract.stage = stage  # type: ignore[attr-defined]
        docs = [_document(p, lines=extractor != "rules", titled=titled) for p in group]
        ahead = getattr(extract, "parse_ahead", None)  # the spaCy extractor's: every paragraph's lines in one batch
        if reader is None and ahead is not None:
            ahead(docs)
        for p, doc in zip(group, docs, strict=True):
            for s in (reader([doc]) if reader else extract([doc], context=[*data.documents, doc])):
                if not s.negated:
                    got.append(Statement(*_key(s.head, s.relation, s.tail), p.id, ""))
            gold += [Statement(*_key(*f), p.id, "") for f in dict.fromkeys(p.facts)]
    return sorted(set(got), key=_order), sorted(set(gold), key=_order)


def _order(s: Statement) -> tuple[str, str, str, str]:
    return s.doc, s.head, s.relation, s.tail


def foreign_prose_scores(paragraphs: Sequence[Paragraph] | None = None, reader: Reader | None = None,
                         extractor: str = "rules") -> dict[str, dict[str, Any]]:
    """Precision and recall by kind and over all paragraphs."""
    paragraphs = load_paragraphs() if paragraphs is None else paragraphs
    out: dict[str, dict[str, Any]] = {}
    for kind in ("world", "real", "all"):
        chosen = [p for p in paragraphs if kind in ("all", p.kind)]
        got, gold = extract_paragraphs(chosen, reader, extractor)
        scores: dict[str, Interval] = extraction_intervals(got, gold)
        out[kind] = {"paragraphs": len(chosen), "gold": len(gold), "extracted": len(got), **scores}
    return out


def paired_difference(paragraphs: Sequence[Paragraph], a: str, b: str, *, seed: int = 0,
                      resamples: int = 2000) -> dict[str, Interval]:
    """Precision and recall of extractor ``a`` minus ``b`` on the same paragraphs, with a 95%
    bootstrap interval over paragraphs (both resampled together: a paired difference)."""
    got_a, gold = extract_paragraphs(paragraphs, extractor=a)
    got_b, _ = extract_paragraphs(paragraphs, extractor=b)
    return paired_statements(got_a, got_b, gold, [p.id for p in paragraphs], seed=seed, resamples=resamples)


def paired_statements(got_a: Sequence[Statement], got_b: Sequence[Statement], gold: Sequence[Statement],
                      ids: Sequence[str], *, seed: int = 0, resamples: int = 2000) -> dict[str, Interval]:
    """Precision and recall of reading ``got_a`` minus ``got_b`` against ``gold`` over the
    documents ``ids``, with a 95% cluster-bootstrap interval (documents resampled, both readings
    together)."""
    import numpy as np

    where = {pid: k for k, pid in enumerate(ids)}
    want = set(gold)
    counts = np.zeros((len(ids), 5))  # hits a, got a, hits b, got b, gold
    for col, got in ((0, got_a), (2, got_b)):
        for st in got:
            counts[where[st.doc], col] += st in want
            counts[where[st.doc], col + 1] += 1
    for st in gold:
        counts[where[st.doc], 4] += 1
    draws = np.random.default_rng(seed).integers(0, len(ids), size=(resamples, len(ids)))
    sums, full = counts[draws].sum(axis=1), counts.sum(axis=0)

    def diff(x: np.ndarray, kind: str) -> np.ndarray:
        if kind == "precision":
            return x[..., 0] / x[..., 1] - x[..., 2] / x[..., 3]
        return (x[..., 0] - x[..., 2]) / x[..., 4]

    out = {}
    for kind in ("precision", "recall"):
        lo, hi = np.quantile(diff(sums, kind), [0.025, 0.975])
        out[kind] = Interval(float(diff(full, kind)), float(lo), float(hi), len(ids))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m suites.graphrag.foreign``: the rule-based extractor on the whole set; with
    ``--model local:NAME`` (run it under the llama.cpp flock), the LLM extractor and the rule-based
    one on the ``--every`` sample."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m suites.graphrag.foreign")
    parser.add_argument("--model", help="the LLM extractor's model (local:NAME or provider:model)")
    parser.add_argument("--every", type=int, default=10, help="the sample: every N-th paragraph of each kind")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--set", choices=sorted([*SETS, *SET_NAMES]), default="development",
                        help="which frozen set: development is set-1, held-out is set-3 (data/foreign_prose_3.jsonl)")
    parser.add_argument("--extractor", choices=("rules", "spacy", "spacy-rules"), default="rules",
                        help="the extractor scored on the whole set (--model: the LLM one on the sample)")
    parser.add_argument("--versus", choices=("rules", "spacy", "spacy-rules"),
                        help="also the paired difference, --extractor minus this one, per kind")
    args = parser.parse_args(argv)
    path, sha = SETS[SET_NAMES.get(args.set, args.set)]
    if args.versus:
        for kind in ("world", "real", "all"):
            chosen = [p for p in load_paragraphs(path) if kind in ("all", p.kind)]
            if not chosen:  # a set of real entities only has no world row (it would print NaN)
                continue
            d = paired_difference(chosen, args.extractor, args.versus)
            print(f"{kind}: {args.extractor} - {args.versus}: " + ", ".join(
                f"{k} {v.estimate:+.3f} [{v.low:+.3f}, {v.high:+.3f}]" for k, v in d.items()))
    if not args.model:
        _print(f"{args.extractor} extractor, {args.set} set",
               foreign_prose_scores(load_paragraphs(path), extractor=args.extractor), sha)
        return
    import tempfile

    from agentbed.agents.local.server import serving
    from environments.graphrag.extract import LLMExtractor

    chosen = sample(load_paragraphs(path), args.every)
    relations = sorted(load_dataset("world", DEFAULT_WORLD).table.phrases)
    _print(f"rule-based extractor, {args.set} set, sample every {args.every}", foreign_prose_scores(chosen), sha)
    with tempfile.TemporaryDirectory() as run_dir, serving([f"model:{args.model}"], Path(run_dir)):
        llm = LLMExtractor.from_model_string(args.model, relations, timeout=args.timeout)
        _print(f"LLM extractor {args.model}, {args.set} set, sample every {args.every}",
               foreign_prose_scores(chosen, llm), sha)
    print(f"{llm.calls} calls, {llm.failed} failed, {llm.skipped} malformed replies or entries; "
          f"tokens in {llm.usage['input_tokens']}, out {llm.usage['output_tokens']}")


def _print(title: str, scores: dict[str, dict[str, Any]], sha: str) -> None:
    scores = {kind: row for kind, row in scores.items() if row["paragraphs"]}  # no empty kind: its rates are NaN
    print(f"foreign prose (frozen set, sha256 {sha[:12]}...): {title}")
    print(f"{'kind':6} {'paras':>5} {'gold':>5} {'got':>5}  precision [95% CI]    recall [95% CI]")
    for kind, row in scores.items():
        p, r = row["precision"], row["recall"]
        print(f"{kind:6} {row['paragraphs']:5d} {row['gold']:5d} {row['extracted']:5d}  "
              f"{p.estimate:.3f} [{p.low:.3f}, {p.high:.3f}]  {r.estimate:.3f} [{r.low:.3f}, {r.high:.3f}]")
    print(json.dumps({k: {x: (v.estimate if isinstance(v, Interval) else v) for x, v in row.items()}
                      for k, row in scores.items()}))


if __name__ == "__main__":
    main()
