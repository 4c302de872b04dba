"""How questions about the real graphs are worded: a few English noun phrases per relation.

Written by hand from the relation names' meanings (Nations: Rummel's "Dimensionality of
Nations" variables; UMLS: the semantic network; mendeleev's periodic table: its fields; Kinships: the Alyawarra terms, which pykeen
names only by number, so a term is asked about by its number: "the kin of term six"). No
question contains a relation's identifier (``intergovorgs``, ``ngo``, ``term6``): a test checks it.

Each template is a noun phrase about ``{x}``. A template ending in ``{x}`` ("the treaty partner
of {x}") nests inside another ("the embassy partner of the treaty partner of Brazil"); the
others ("{x}'s treaty partner", "what {x} causes") are used only next to the entity itself, as
English puts them ("the embassy partner of Brazil's treaty partner"). The reader never sees these
templates; it reads the question with its own glosses (:mod:`environments.graphrag.glosses`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

_NATIONS_ASKED = {
    "accusation": ("the country accused by {x}", "the target of accusations from {x}"),
    "aidenemy": ("the country that {x} regards as an enemy it helped", "the foe that received help from {x}"),
    "attackembassy": ("the country whose embassy was attacked by {x}", "the embassy target of attacks by {x}"),
    "blockpositionindex": ("the country closest in bloc position to {x}", "the bloc-position neighbour of {x}"),
    "booktranslations": ("the country translating the most books from {x}", "the book-translation partner of {x}"),
    "boycottembargo": ("the country under a boycott or embargo by {x}", "the embargo target of {x}"),
    "commonbloc0": ("the country sharing a neutral bloc standing with {x}", "the fellow nonaligned nation of {x}"),
    "commonbloc1": ("the country in the same bloc as {x}", "the fellow bloc member of {x}"),
    "commonbloc2": ("the country in the bloc opposing {x}", "the rival bloc member facing {x}"),
    "conferences": ("the country attending the same conferences as {x}", "the summit partner of {x}"),
    "dependent": ("the country {x} depends on", "the country depended on by {x}"),
    "duration": ("the country with the longest-standing ties to {x}", "the lasting partner of {x}"),
    "economicaid": ("the country receiving economic aid from {x}", "the recipient of financial assistance from {x}"),
    "eemigrants": ("the destination of emigrants from {x}", "the country that emigrants from {x} go to"),
    "embassy": ("the country hosting an embassy of {x}", "the embassy partner of {x}"),
    "emigrants3": ("the alternative-measure emigration destination of {x}",
                   "the country receiving emigrants from {x}, on the second measure"),
    "expeldiplomats": ("the country whose diplomats were expelled by {x}", "the country facing diplomat expulsions by {x}"),
    "exportbooks": ("the country importing books exported by {x}", "the book-export market of {x}"),
    "exports3": ("the alternative-measure export market of {x}", "the trade partner of {x}, on the second measure"),
    "independence": ("the country granting independence to {x}", "the country {x} gained independence from"),
    "intergovorgs": ("the intergovernmental organisation partner of {x}",
                     "the country sharing intergovernmental bodies with {x}"),
    "intergovorgs3": ("the alternative-measure intergovernmental organisation partner of {x}",
                      "the country sharing intergovernmental bodies with {x}, on the second measure"),
    "lostterritory": ("the country that lost territory to {x}", "the country {x} took land from"),
    "militaryactions": ("the target of military action by {x}", "the country facing armed operations by {x}"),
    "militaryalliance": ("the military ally of {x}", "the country in an armed alliance with {x}"),
    "negativebehavior": ("the target of negative behaviour by {x}", "the country facing hostile conduct from {x}"),
    "negativecomm": ("the target of negative communication from {x}", "the recipient of hostile statements from {x}"),
    "ngo": ("the non-governmental organisation partner of {x}", "the country sharing non-governmental bodies with {x}"),
    "ngoorgs3": ("the alternative-measure non-governmental organisation partner of {x}",
                 "the country sharing non-governmental bodies with {x}, on the second measure"),
    "nonviolentbehavior": ("the target of nonviolent behaviour by {x}", "the country facing peaceful conduct from {x}"),
    "officialvisits": ("the country receiving official visits from {x}", "the official-visit host of {x}"),
    "pprotests": ("the country that {x} protested against", "the target of protests by {x}"),
    "relbooktranslations": ("the relative book-translation partner of {x}",
                            "the country translating books from {x}, relative to its total"),
    "reldiplomacy": ("the relative diplomatic partner of {x}", "the country in diplomacy with {x}, relative to its total"),
    "releconomicaid": ("the relative economic aid recipient of {x}",
                       "the country receiving financial aid from {x}, relative to its total"),
    "relemigrants": ("the relative emigration destination of {x}",
                     "the country receiving emigrants from {x}, relative to its total"),
    "relexportbooks": ("the relative book-export market of {x}", "the country importing books from {x}, relative to its total"),
    "relexports": ("the relative export market of {x}", "the country buying exports of {x}, relative to its total"),
    "relintergovorgs": ("the relative intergovernmental organisation partner of {x}",
                        "the country sharing intergovernmental bodies with {x}, relative to its total"),
    "relngo": ("the relative non-governmental organisation partner of {x}",
               "the country sharing non-governmental bodies with {x}, relative to its total"),
    "relstudents": ("the relative student destination of {x}", "the country hosting students from {x}, relative to its total"),
    "reltourism": ("the relative tourism partner of {x}", "the country visited by tourists from {x}, relative to its total"),
    "reltreaties": ("the relative treaty partner of {x}", "the country signing treaties with {x}, relative to its total"),
    "severdiplomatic": ("the country with which {x} severed diplomatic relations", "the diplomatic break-off partner of {x}"),
    "students": ("the country hosting students from {x}", "the student destination of {x}"),
    "timesinceally": ("the country {x} was last allied with", "the last ally of {x}"),
    "timesincewar": ("the country {x} last fought a war with", "the last war enemy of {x}"),
    "tourism": ("the tourism partner of {x}", "the country visited by tourists from {x}"),
    "tourism3": ("the alternative-measure tourism partner of {x}",
                 "the country visited by tourists from {x}, on the second measure"),
    "treaties": ("the treaty partner of {x}", "the country signing treaties with {x}"),
    "unoffialacts": ("the target of unofficial acts by {x}", "the country facing unofficial actions from {x}"),
    "unweightedunvote": ("the unweighted UN voting partner of {x}", "the country voting with {x} in the United Nations, unweighted"),
    "violentactions": ("the target of violent actions by {x}", "the country facing violent acts from {x}"),
    "warning": ("the country warned by {x}", "the recipient of warnings from {x}"),
    "weightedunvote": ("the weighted UN voting partner of {x}", "the country voting with {x} in the United Nations, weighted"),
}

_UMLS_ASKED = {
    "adjacent_to": ("the structure adjacent to {x}", "what lies next to {x}"),
    "affects": ("what is affected by {x}", "the thing {x} affects"),
    "analyzes": ("what is analysed by {x}", "the subject of analysis by {x}"),
    "assesses_effect_of": ("the thing whose effect is assessed by {x}", "what {x} assesses the effect of"),
    "associated_with": ("what is associated with {x}", "the associate of {x}"),
    "carries_out": ("what is carried out by {x}", "the activity {x} carries out"),
    "causes": ("what is caused by {x}", "the thing {x} causes"),
    "co-occurs_with": ("what co-occurs with {x}", "the thing occurring together with {x}"),
    "complicates": ("what is complicated by {x}", "the condition {x} complicates"),
    "conceptual_part_of": ("the whole that conceptually includes {x}", "what {x} is a conceptual part of"),
    "conceptually_related_to": ("what is conceptually related to {x}", "the conceptual relation of {x}"),
    "connected_to": ("what is connected to {x}", "the thing {x} connects to"),
    "consists_of": ("the constituent of {x}", "what {x} consists of"),
    "contains": ("the contents of {x}", "what is contained in {x}"),
    "degree_of": ("the thing whose degree is {x}", "what {x} is a degree of"),
    "derivative_of": ("the source derived into {x}", "what {x} is derived from"),
    "developmental_form_of": ("the thing with the developmental form {x}", "what {x} is a developmental form of"),
    "diagnoses": ("what is diagnosed by {x}", "the diagnosis made with {x}"),
    "disrupts": ("what is disrupted by {x}", "the thing {x} disrupts"),
    "evaluation_of": ("the thing evaluated by {x}", "what {x} is an evaluation of"),
    "exhibits": ("what is exhibited by {x}", "the display of {x}"),
    "indicates": ("what is indicated by {x}", "the thing {x} is a sign of"),
    "ingredient_of": ("the mixture with the ingredient {x}", "what {x} is an ingredient of"),
    "interacts_with": ("what interacts with {x}", "the interaction partner of {x}"),
    "interconnects": ("what is interconnected by {x}", "the thing {x} interconnects"),
    "isa": ("the broader kind of {x}", "the category {x} belongs to"),
    "issue_in": ("the field with the issue {x}", "what {x} is an issue in"),
    "location_of": ("what is located at {x}", "the thing {x} is the location of"),
    "manages": ("what is managed by {x}", "the thing {x} manages"),
    "manifestation_of": ("the thing manifested by {x}", "what {x} is a manifestation of"),
    "measurement_of": ("the quantity given by a measurement of {x}", "what {x} is a measurement of"),
    "measures": ("what is measured by {x}", "the thing {x} measures"),
    "method_of": ("the procedure using the method {x}", "what {x} is a method of"),
    "occurs_in": ("the setting of {x}", "where {x} occurs"),
    "part_of": ("the whole that includes {x}", "what {x} is a part of"),
    "performs": ("what is performed by {x}", "the activity {x} performs"),
    "practices": ("what is practised by {x}", "the discipline {x} practises"),
    "precedes": ("what is preceded by {x}", "the thing {x} comes before"),
    "prevents": ("what is prevented by {x}", "the thing {x} prevents"),
    "process_of": ("the system with the process {x}", "what {x} is a process of"),
    "produces": ("what is produced by {x}", "the product of {x}"),
    "property_of": ("the bearer of the property {x}", "what {x} is a property of"),
    "result_of": ("the origin of {x}", "what {x} is a result of"),
    "surrounds": ("what is surrounded by {x}", "the thing {x} encloses"),
    "treats": ("what is treated by {x}", "the condition {x} treats"),
    "uses": ("what is used by {x}", "the tool {x} uses"),
}

_COUNT = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five").split()
_NTH = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth twenty-first twenty-second "
        "twenty-third twenty-fourth twenty-fifth").split()
_KINSHIPS_ASKED = {f"term{n}": (f"the kin of term {_COUNT[n]} of {{x}}", f"the person {{x}} calls by the {_NTH[n]} kin term",
                          f"the {_NTH[n]}-term relative of {{x}}") for n in range(26)}

_GEONAMES_ASKED = {
    "located_in": ("the country {x} lies in", "the country where {x} is located", "the place {x} is situated in"),
    "has_capital": ("the capital of {x}", "the capital city of {x}"),
    "borders": ("a country bordering {x}", "a neighbour of {x}"),
    "uses_currency": ("the currency of {x}", "the money used in {x}"),
    "in_continent": ("the continent of {x}", "the continent {x} belongs to"),
}

# mendeleev's periodic table (held out, session 19): a schema no other graph here uses.
_PERIODIC_ASKED = {
    "block": ("the block of {x}", "the block of the periodic table {x} is in"),
    "period": ("the period of {x}", "the period {x} belongs to"),
    "group": ("the group of {x}", "the column of the periodic table holding {x}"),
    "series": ("the chemical series of {x}", "the family of elements {x} belongs to"),
    "goldschmidt_class": ("the Goldschmidt class of {x}", "the Goldschmidt classification of {x}"),
    "lattice_structure": ("the crystal lattice of {x}", "the crystal structure {x} forms"),
    "discoverers": ("the discoverer of {x}", "the person credited with discovering {x}"),
    "discovery_location": ("the country where {x} was discovered", "the place of discovery of {x}"),
}

# Per graph: the templates per relation, and the question frames around a noun phrase.
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "nations": _NATIONS_ASKED, "umls": _UMLS_ASKED, "kinships": _KINSHIPS_ASKED, "geonames": _GEONAMES_ASKED,
    "gazetteer": _GEONAMES_ASKED, "periodic": _PERIODIC_ASKED}
FRAMES = {"nations": ("What is {np}?", "Which country is {np}?", "Name {np}."),
          "umls": ("What is {np}?", "Which concept is {np}?", "Name {np}."),
          "kinships": ("Who is {np}?", "Which person is {np}?", "Name {np}."),
          "geonames": ("What is {np}?", "Which place is {np}?", "Name {np}."),
          "gazetteer": ("What is {np}?", "Which place is {np}?", "Name {np}."),
          "periodic": ("What is {np}?", "Which one is {np}?", "Name {np}.")}


def _possessive(template: str) -> str | None:
    """"the treaty partner of {x}" -> "{x}'s treaty partner" (a form used next to the entity only)."""
    m = re.fullmatch(r"the ([\w -]+?) of \{x\}", template)
    return f"{{x}}'s {m.group(1)}" if m and " of " not in m.group(1) else None


def forms(templates: tuple[str, ...], *, innermost: bool) -> list[str]:
    """A relation's ``templates``: all of them next to the entity, nesting ones further out."""
    own = list(templates)
    if innermost:
        return own + [p for t in own if (p := _possessive(t))]
    return [t for t in own if t.endswith("{x}")]


def question_text(templates: Mapping[str, tuple[str, ...]], frames: Sequence[str], topic: str,
                  plan: tuple[str, ...], rng: random.Random) -> str:
    """A question about ``topic`` along ``plan`` (``templates`` per relation, ``frames`` around the
    noun phrase), in one of several wordings drawn from ``rng``."""
    phrase = "{x}"
    for k, relation in enumerate(plan):
        options = forms(templates[relation], innermost=k == 0)
        if not options:  # no nesting form: say it next to the entity's phrase ("the X of <np>")
            options = [t for t in templates[relation] if t.endswith("{x}")] or list(templates[relation])
        phrase = rng.choice(options).format(x=phrase)
    return rng.choice(frames).format(np=phrase.replace("{x}", topic))
