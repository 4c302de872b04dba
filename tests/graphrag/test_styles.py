"""The surface style tagger of the per-style rows, on invented paragraphs, and the grouping of
one extraction's statements into rows."""

from __future__ import annotations

from environments.graphrag.corpus import Statement
from suites.graphrag.styles import grouped_intervals, styles_of


def test_each_style_from_its_surface():
    assert styles_of("Q: Where were you born?\nA: In Tiszel, a town in Pelnovnov.") == ("question-and-answer",)
    assert styles_of("Mirka Iraira\nBorn: Tiszel\n* Education: University of Danpelul") == ("fact sheet",)
    assert styles_of("Veneskost Labs was founded in 1976 by Ann Lee.") == ("passive",)
    long = ("Ann Lee, who grew up in Tiszel and later moved to the coast with her two brothers and a dog, "
            "works for Veneskost Labs, which makes pumps for the small farms of the northern valleys.")
    assert styles_of(long) == ("long subordinate clauses",)
    assert styles_of("Zoë Åberg lives in Malmö and works for Škoda.") == ("non-ASCII-heavy",)
    assert styles_of("Tiszel is a town in Pelnovnov.") == ("other prose",)
    assert set(styles_of("Q: Who founded it?\nA: It was founded by Zoë Åberg in Malmö.")) == \
        {"question-and-answer", "passive", "non-ASCII-heavy"}


def test_rows_count_only_their_paragraphs():
    gold = [Statement("A", "born_in", "B", "p1", ""), Statement("C", "born_in", "D", "p2", "")]
    got = [Statement("A", "born_in", "B", "p1", ""), Statement("C", "born_in", "X", "p2", "")]
    rows = grouped_intervals(got, gold, {"one": {"p1"}, "two": {"p2"}, "both": {"p1", "p2"}, "none": set()})
    assert rows["one"]["precision"].estimate == 1.0 and rows["two"]["recall"].estimate == 0.0
    assert rows["both"]["gold"] == 2 and rows["both"]["precision"].estimate == 0.5 and "none" not in rows


def test_the_documented_set_3_style_rows_are_what_the_scorer_gives():
    """docs/graphrag-extraction.md's per-style table on set 3's real entities, the rules' two
    columns (untitled and titled), as ``python -m suites.graphrag.styles`` measures them."""
    import re
    from pathlib import Path

    from suites.graphrag.foreign import HELD_OUT, load_paragraphs
    from suites.graphrag.styles import style_scores

    docs = (Path(__file__).resolve().parents[2] / "docs" / "graphrag-extraction.md").read_text(encoding="utf-8")
    table = docs[docs.index("| style (paragraphs, gold) |"):].split("\n\n")[0].splitlines()[2:]
    paragraphs = load_paragraphs(HELD_OUT)
    for column, titled in ((1, False), (3, True)):
        rows = style_scores(paragraphs, "rules", titled)
        for line in table:
            cells = [c.strip() for c in line.strip("|").split("|")]
            style = re.sub(r" \(.*", "", cells[0])
            row = rows["real" if style == "all real" else f"{style} (real)"]
            shown = re.match(r"([\d.]+) / ([\d.]+)", cells[column]).groups()
            assert shown == (f"{row['precision'].estimate:.2f}", f"{row['recall'].estimate:.2f}"), (style, titled)
