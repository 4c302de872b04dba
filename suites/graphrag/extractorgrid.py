"""One attack x defense grid on indexes built by two extractors, paired by question (issue #50 item 4).

The attack plan, and so every targeted question, depends only on the dataset and its seed, never
on the index (:func:`attacks.graphrag.scenario.attack_plan`): a task id names the same question
whichever extractor built the graph, so a cell of one grid pairs with the same cell of the other.
The attacks write the same documents for both (the white-box attacks model the pipeline with the
rule extractor, as :mod:`suites.graphrag.whitebox` says); only what the index reads in them differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbed.stats import Interval
from agentbed.summary import fmt, table
from environments.graphrag.corpus import Fact
from environments.graphrag.env import normalise
from suites.graphrag.report import Cell, paired_cells, paired_difference, run_grid


def paired_across(a: Cell, b: Cell, metric: str) -> Interval:
    """``metric`` in cell ``a`` minus in cell ``b`` (the same attack and defense on two grids),
    paired by task (:func:`suites.graphrag.report.paired_cells`); two grids that ran different
    questions are refused."""
    if {r.task for r in a.records} != {r.task for r in b.records}:
        raise ValueError(f"{a.attack}/{a.defense}: the two grids ran different questions")
    return paired_cells(a, b, metric)


def extractor_table(cells: list[Cell], other: list[Cell], names: tuple[str, str], command: str) -> dict[str, Any]:
    """Per attack and defense: attack success and accuracy on graphs built by ``names[0]`` and by
    ``names[1]``, and the paired difference (first minus second)."""
    mine, theirs = names
    by = {(c.attack, c.defense): c for c in other}
    rows = []
    for c in cells:
        o = by.get((c.attack, c.defense))
        if o is None:
            continue
        row: list[Any] = [c.attack, c.defense, len(c.records)]
        for metric in ("attack_success", "accuracy"):
            if metric == "attack_success" and c.attack == "none":
                row += ["-", "-", "-"]
                continue
            row += [fmt(c.interval(metric), 2), fmt(o.interval(metric), 2), fmt(paired_across(c, o, metric), 2)]
        rows.append(row)
    return table(f"{cells[0].dataset}: graphs built by {mine} against graphs built by {theirs}, paired by question",
                 ["attack", "defense", "n", f"success, {mine}", f"success, {theirs}", f"success, {mine} - {theirs}",
                  f"accuracy, {mine}", f"accuracy, {theirs}", f"accuracy, {mine} - {theirs}"], rows,
                 note=f"paired 95% cluster-bootstrap intervals over worlds (over questions on a real graph); "
                      f"regenerate: {command}")


def helps_attacker(cells: list[Cell], versus: str = "none") -> list[list[Any]]:
    """Per attack and defense (other than ``versus``): does the defense raise attack success over
    ``versus``, paired by question? ``yes`` when the whole interval of the difference is above 0,
    ``not excluded`` when only its estimate or upper end is, ``no`` when it lies at or below 0."""
    rows = []
    for c in cells:
        if c.attack == "none" or c.defense == versus:
            continue
        diff = paired_difference(cells, "attack_success", c.attack, c.defense, versus)
        if diff is None:
            continue
        verdict = "yes" if diff.low > 0 else "not excluded" if diff.high > 0 else "no"
        base = next(x for x in cells if (x.attack, x.defense) == (c.attack, versus))
        rows.append([c.attack, c.defense, fmt(base.interval("attack_success"), 2),
                     fmt(c.interval("attack_success"), 2), fmt(diff, 2), verdict])
    return rows


def helps_table(cells: list[Cell], versus: str, extractor: str, command: str) -> dict[str, Any]:
    return table(f"{cells[0].dataset} ({extractor}-built graphs): does a defense raise attack success over {versus}?",
                 ["attack", "defense", f"success, {versus}", "success, defense", f"defense - {versus} (paired)",
                  "helps the attacker"], helps_attacker(cells, versus),
                 note="yes: the paired 95% interval lies above 0; not excluded: its upper end does; "
                      f"regenerate: {command}")


def clean_reading(dataset: str, world: int, extractor: str, options: dict[str, Any]) -> dict[str, float]:
    """What the clean index built by ``extractor`` holds (measurement only, against the writer's
    facts, names compared as the reader compares them): its asserted statements, the share of
    them that are true or natural conflicts (precision), the share of the dataset's facts read
    (recall), and the share of the contested facts (the attack plan's targets) read. The index is
    the grid's own clean one (cached)."""
    from attacks.graphrag.scenario import attack_plan
    from suites.graphrag.scenarios import load_dataset, poisoned, targets_for

    pages = str(options.get("pages", "one"))
    data = load_dataset(dataset, world, pages)
    index = poisoned(dataset, world, "none", int(options["budget"]), targets_for(options), options["communities"],
                     "tdp", "targeted", extractor, str(options.get("dress", "length")), pages).index  # build_scenario's
    read = {_named(s.fact()) for s in index.kg.statements if not s.negated}
    clean, true = {_named(f) for f in set(data.facts) | data.natural}, {_named(f) for f in data.facts}
    contested = {_named(t.fact) for t in attack_plan(data, targets_for(options), world).targets}
    return {"statements": float(len(read)), "precision": len(read & clean) / max(len(read), 1),
            "recall": len(read & true) / max(len(true), 1), "contested": len(read & contested) / max(len(contested), 1)}


def reading_table(dataset: str, worlds: list[int], extractors: tuple[str, ...], options: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for extractor in extractors:
        per = [clean_reading(dataset, w, extractor, options) for w in worlds]
        rows.append([extractor, *(f"{sum(p[k] for p in per) / len(per):.2f}" if k != "statements"
                                  else f"{sum(p[k] for p in per) / len(per):.0f}"
                                  for k in ("statements", "precision", "recall", "contested"))])
    return table(f"{dataset}: what the clean graph holds, per extractor (mean over {len(worlds)} corpora)",
                 ["extractor", "distinct asserted triples", "precision", "recall of the facts",
                  "contested facts read"], rows,
                 note="against the writer's facts (measurement only; no defense or reader sees them)")


def attack_read(dataset: str, world: int, attack: str, extractor: str, options: dict[str, Any]) -> tuple[float, float]:
    """What the index built by ``extractor`` reads of ``attack``'s pages (measurement only, from
    the attack's own record): the share of the attack's claims (:func:`suites.graphrag.tells.attack_claims`:
    the fake, the truth denied, fabricated links) that a statement of an attacker page states as
    written, and the share of the plan's targets whose fake claim (s, r, fake) the index holds,
    not negated. An attack whose pages the extractor does not read cannot win by them."""
    from suites.graphrag.scenarios import load_dataset, poisoned, targets_for
    from suites.graphrag.tells import attack_claims

    pages = str(options.get("pages", "one"))
    data = load_dataset(dataset, world, pages)
    built = poisoned(dataset, world, attack, int(options["budget"]), targets_for(options), options["communities"],
                     "tdp", "targeted", extractor, str(options.get("dress", "length")), pages,
                     str(options.get("wording", "writer")))  # the none/tdp column's
    docs = built.index.documents
    stated = {(_named(s.fact()), s.negated) for s in built.index.kg.statements if docs[s.doc].origin != "clean"}
    claims = {(_named(f), negated) for f, negated in attack_claims(data, built.plan, built.index, restated=False)}
    asserted = {f for f, negated in stated if not negated}
    fakes = [_named(Fact(t.fact.head, t.fact.relation, t.fake)) in asserted for t in built.plan.targets]
    return len(claims & stated) / max(len(claims), 1), sum(fakes) / max(len(fakes), 1)


def _named(fact: Fact) -> Fact:
    """``fact`` with its names as the reader compares them (a page title's "Uk" is "uk")."""
    return Fact(normalise(fact.head), fact.relation, normalise(fact.tail))


def grid_with_reading(dataset: str, attacks: Sequence[str], defenses: Sequence[str], extractor: str,
                      **grid: Any) -> tuple[list[Cell], dict[str, tuple[float, float]]]:
    """:func:`suites.graphrag.report.run_grid`, and per attack :func:`attack_read` averaged over
    the grid's corpora, read while the attack's indexes are still cached."""
    from suites.graphrag.scenarios import world_seeds

    options = {"dataset": dataset, **grid}
    cells, read = [], {}
    for attack in attacks:
        cells += run_grid(dataset, [attack], defenses, extractor=extractor, **grid)
        if attack != "none":
            per = [attack_read(dataset, w, attack, extractor, options) for w in world_seeds(options)]
            read[attack] = (sum(p[0] for p in per) / len(per), sum(p[1] for p in per) / len(per))
    return cells, read


def read_table(dataset: str, read: dict[str, tuple[float, float]], other: dict[str, tuple[float, float]],
               names: tuple[str, str], cells: list[Cell], theirs: list[Cell]) -> dict[str, Any]:
    """Per attack: how much of its pages each extractor reads, beside its undefended success on
    each graph (does an attack fail on one graph because its pages are not read?)."""
    mine, them = names
    undefended = {c.attack: c for c in cells if c.defense == "none"}
    other_undefended = {c.attack: c for c in theirs if c.defense == "none"}
    rows = []
    for attack, (claims, fakes) in read.items():
        o = other.get(attack)
        if o is None:
            continue
        success = [fmt(u.interval("attack_success"), 2) if u else "-"
                   for u in (undefended.get(attack), other_undefended.get(attack))]
        rows.append([attack, f"{claims:.2f}", f"{o[0]:.2f}", f"{fakes:.2f}", f"{o[1]:.2f}", *success])
    return table(f"{dataset}: what each extractor reads of the attacks' pages (mean over the grid's corpora)",
                 ["attack", f"attack claims read, {mine}", f"attack claims read, {them}", f"fakes read, {mine}",
                  f"fakes read, {them}", f"success undefended, {mine}", f"success undefended, {them}"], rows,
                 note="attack claims: what its pages state that no clean page says (the fake, the truth denied, "
                      "fabricated links), read as written from an attacker page; fakes: targets whose fake claim "
                      "(s, r, fake) the index holds, not negated (measurement only, from the attack's own record)")
