"""Names cut short at a hyphen, a particle or an elided article (:func:`environments.graphrag.nlp_names.link`),
session 26: on development sets 4-19 these cut 87 gold facts' ends short ("May-Britt Moser" read as
"Britt Moser"; docs/graphrag-extraction.md). Invented names throughout."""

from __future__ import annotations

from environments.graphrag.nlp_names import State, entities


def _names(spacy_extract, *lines: str) -> list[list[str]]:
    from environments.graphrag.nlp_extract import load_pipeline

    nlp = load_pipeline()
    return [[e.name for e in entities(nlp(line), State())] for line in lines]


def test_a_hyphen_inside_a_word_joins_a_name_and_one_before_a_lower_case_word_does_not(spacy_extract):
    got = _names(spacy_extract, "Lia-Maren Tovsk was born in Vellac-sur-Orbe.",
                 "May-Liss Tovsk was born in Ostrel.", "The Dralen-based group hired Ann Lee.")
    assert got == [["Lia-Maren Tovsk", "Vellac-sur-Orbe"], ["May-Liss Tovsk", "Ostrel"], ["Dralen", "Ann Lee"]]


def test_a_particle_of_another_language_stays_inside_the_name(spacy_extract):
    got = _names(spacy_extract, "Jorun Veldt i Castany founded Perolab in 2004.",
                 "The plant is in Haltorf vor der Brenn.",
                 "Perolab was founded by Kees te Wolde and Ann Lee.")
    assert got == [["Jorun Veldt i Castany", "Perolab"], ["Haltorf vor der Brenn"],
                   ["Perolab", "Kees te Wolde", "Ann Lee"]]


def test_an_elided_article_before_a_capital_is_part_of_the_name(spacy_extract):
    got = _names(spacy_extract, "Tarn d'Avel, whose shoes are famous, is based in Kell.", "The shop is in Sarn-l'Ebre.")
    assert got == [["Tarn d'Avel", "Kell"], ["Sarn-l'Ebre"]]


def test_a_hyphenated_title_is_no_part_of_the_name_and_a_schools_particle_does_not_end_it(spacy_extract):
    got = _names(spacy_extract, "Vice-Chancellor Ann Lee opened the campus.",
                 "He studied at the École nationale des arts et métiers in Varsel.")
    assert got == [["Ann Lee"], ["École nationale des arts et métiers", "Varsel"]]
