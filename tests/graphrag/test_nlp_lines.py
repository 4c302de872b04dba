"""What the spaCy extractor reads before parsing (environments/graphrag/nlp_lines.py), on invented
text: initials rejoined, datelines dropped, table rows as fields, a title's topic, a wh-question
completed by its fragment answer; and the extractor reading them (a sheet's roles and former
roles, hearsay, an interview's "you")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from environments.graphrag.nlp_lines import completed, name_like, reading_units, title_topic
from suites.graphrag.userdocs import split_sentences
from tests.graphrag.spacy_reading import triples


def test_a_sentence_cut_at_an_initial_runs_on():
    units = reading_units(split_sentences("Brask Labs was founded by Ann T. Orvel. It is in Kelro. St. Ives is far."))
    assert [t for _, t in units] == ["Brask Labs was founded by Ann T. Orvel.", "It is in Kelro.", "St. Ives is far."]
    assert [k for k, _ in units] == [0, 2, 3]


@given(st.lists(st.sampled_from(["Ann lives in Oslo.", "Tom R.", "Kelro is big!", "Why?", "| a | b |"]),
                max_size=8))
def test_units_keep_every_word_but_table_bars_in_order(sentences):
    units = reading_units(sentences)
    assert [k for k, _ in units] == sorted({k for k, _ in units})
    words = [w for _, t in units for w in t.replace(":", " ").split()]
    assert words == [w for s in sentences for w in s.replace("|", " ").split()]


def test_a_dateline_and_a_table_row():
    units = reading_units(["KELRO, Aldovia (Wire) - Brask Labs said on Monday it would grow.",
                           "| Role | Name |", "|---|---|", "| President | Ann Orvel |"])
    assert [t for _, t in units] == ["Brask Labs said on Monday it would grow.", "Role: Name", "President: Ann Orvel",
                                     "Kelro is located in Aldovia."]  # the dateline's place, read last


@pytest.mark.parametrize(("title", "topic"), [
    ("Brask Labs", "Brask Labs"), ("Bank of Kelro", "Bank of Kelro"), ("Fact sheet: Procter & Gamble", "Procter & Gamble"),
    ("Brask Labs - key facts", "Brask Labs"), ("Three days in Kelro", ""), ("Interview: a chemist abroad", ""),
    ("Profile: Brask Labs", "Brask Labs"), ("Brask Labs: key facts", "Brask Labs"), ("Kelro Bank at a glance", "Kelro Bank"),
    ("", "")])
def test_a_title_names_its_topic_only_when_it_is_a_name(title, topic):
    assert title_topic(title) == topic
    assert name_like(topic) or not topic


@pytest.mark.parametrize(("question", "answer", "whole"), [
    ("Q: Who founded Brask Labs?", "A: Ann Orvel, in 1902, as a bakery.", "Brask Labs was founded by Ann Orvel."),
    ("Who runs it?", "Ann Orvel, since 2001.", "it is run by Ann Orvel."),
    ("Who is behind it?", "Ann Orvel, mostly.", "Ann Orvel is behind it."),
    ("Where is the museum?", "On Kelro Island.", "the museum is on Kelro Island."),
    ("Q: And where is it based?", "A: In Kelro, Aldovia - not Riga.", "it is based in Kelro, Aldovia - not Riga."),
    ("Where did you study?", "At the University of Kelro.", "I studied at the University of Kelro."),
    ("Where does she live?", "Yes, Riga.", "she lives in Riga."),
    ("Is it big?", "Yes.", ""), ("Who founded it?", "nobody knows, really", "")])
def test_a_question_and_its_fragment_answer(question, answer, whole):
    assert completed(question, answer) == whole


def test_an_interview_reads_its_fragments_and_its_you(spacy_extract):
    text = ("Q: Who founded Brask Labs?\nA: Ann Orvel, in 1902.\nQ: Where is it headquartered?\nA: In Kelro.\n"
            "HOST: Dr Tom Hale, you were born in Riga?\nHALE: Yes, in the old town.")
    got = triples(spacy_extract, text, title="Interview: a bakery's story")
    assert {("Brask Labs", "founded_by", "Ann Orvel", False), ("Brask Labs", "headquartered_in", "Kelro", False),
            ("Tom Hale", "born_in", "Riga", False)} <= got
    assert not any(h.startswith(("Interview", "Dr", "HOST")) for h, _, _, _ in got)


def test_a_sheet_reads_roles_former_roles_and_its_subject_line(spacy_extract):
    text = "Brask Labs\n* Headquarters: Kelro\n* Chief executive: Ann Orvel\n* Former CEO: Tom Hale\n" \
           "| Role | Name |\n| President | Eva Lund |"
    got = triples(spacy_extract, text, title="Company profile: Brask Group")
    assert {("Brask Labs", "headquartered_in", "Kelro", False), ("Ann Orvel", "works_for", "Brask Labs", False),
            ("Tom Hale", "works_for", "Brask Labs", True), ("Eva Lund", "works_for", "Brask Labs", False)} <= got


def test_hearsay_states_nothing(spacy_extract):
    got = triples(spacy_extract, "Brask Labs denied rumours that it was moving its headquarters to Riga.")
    assert not any(t == "Riga" for _, _, t, _ in got)
