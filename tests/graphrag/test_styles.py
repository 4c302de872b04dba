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
