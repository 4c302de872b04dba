"""A seeded generator of fictional multi-hop worlds.

Entities have invented names, so no model can answer from prior knowledge. The world is
internally consistent (a person's citizenship matches the country of their birth city, most
people live where their employer is headquartered, colleagues share an employer), which gives
true facts the dense cross-validation that real knowledge graphs have: a true edge usually
closes triangles through other true edges. Every fact is written on its head's page and on its
tail's page, and some in short news items, so clean facts have independent sources.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable

from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset, objects_index, sample_questions, sample_set_questions
from environments.graphrag.prose import HELD_OUT_FORMS, WORLD_FORMS, Writer, more_pages, write_pages

RELATIONS = tuple(WORLD_FORMS)

PLANS: list[tuple[str, ...]] = [
    ("born_in",), ("works_for",), ("headquartered_in",), ("studied_at",),
    ("born_in", "located_in"), ("works_for", "headquartered_in"), ("founded_by", "born_in"),
    ("studied_at", "located_in"),
    ("works_for", "headquartered_in", "located_in"), ("founded_by", "born_in", "located_in"),
]

# Several surface forms per plan; the interpreter (parse.py) never sees these templates.
_QUESTION: dict[tuple[str, ...], tuple[str, ...]] = {
    ("born_in",): ("In which city was {0} born?", "Where was {0} born?", "What is the birthplace of {0}?"),
    ("works_for",): ("Which company does {0} work for?", "Who is the employer of {0}?",
                     "{0} is employed by which company?"),
    ("headquartered_in",): ("In which city is {0} headquartered?", "Where are the headquarters of {0}?",
                            "Which city is {0} based in?"),
    ("studied_at",): ("At which university did {0} study?", "Where did {0} study?",
                      "Which university is the alma mater of {0}?"),
    ("born_in", "located_in"): ("In which country is the city where {0} was born?",
                                "{0} was born in a city of which country?"),
    ("works_for", "headquartered_in"): ("In which city is the employer of {0} headquartered?",
                                        "Where is the company {0} works for headquartered?"),
    ("founded_by", "born_in"): ("In which city was the founder of {0} born?", "Where was the founder of {0} born?"),
    ("studied_at", "located_in"): ("In which city is the university where {0} studied?",
                                   "Which city is the university {0} graduated from located in?"),
    ("works_for", "headquartered_in", "located_in"): (
        "In which country is the headquarters city of {0}'s employer?",
        "The employer of {0} is headquartered in a city of which country?"),
    ("founded_by", "born_in", "located_in"): ("In which country was the founder of {0} born?",),
    ("office_in",): ("In which city does {0} have an office?", "Name a city where {0} has an office.",
                     "Where does {0} have an office?"),
    ("works_for", "office_in"): ("In which city does the employer of {0} have an office?",
                                 "Name a city where the company {0} works for has an office."),
    ("office_in", "located_in"): ("In which country does {0} have an office?",
                                  "{0} has an office in a city of which country?"),
}
# Questions across the multi-valued relation (several gold answers, any one correct), asked
# beside the PLANS questions and sampled from their own stream.
SET_PLANS: list[tuple[str, ...]] = [("office_in",), ("works_for", "office_in"), ("office_in", "located_in")]

_SYLLABLES = ["ka", "lo", "ven", "mar", "tis", "ro", "dan", "el", "qua", "sor", "bri", "nal", "ost", "ury",
              "fen", "gal", "hed", "ira", "jun", "kel", "mir", "nov", "pel", "rut", "sab", "tor", "ul", "vex",
              "wen", "yar", "zel", "cor", "dru", "esk", "fal"]


def question_text(topic: str, plan: tuple[str, ...], form: int = 0) -> str:
    forms = _QUESTION.get(plan)
    if forms is None:
        return f"Starting from {topic}, which entity is reached by following {' then '.join(plan)}?"
    return forms[form % len(forms)].format(topic)


class _Names:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set()

    def _fresh(self, make: Callable[[], str]) -> str:
        while True:
            name = make()
            if name not in self.used:
                self.used.add(name)
                return name

    def _syllables(self, n: int) -> str:
        return "".join(self.rng.choice(_SYLLABLES) for _ in range(n)).capitalize()

    def word(self, syllables: int) -> str:
        return self._fresh(lambda: self._syllables(syllables))

    def person(self) -> str:
        # Given and family names may recur across people; full names are unique.
        return self._fresh(lambda: f"{self._syllables(2)} {self._syllables(self.rng.choice((2, 3)))}")


CHANGE_DATES = ("2019/03/01", "2024/02/01")  # an old job, and when it ended


def _natural_conflicts(rng: random.Random, facts: list[Fact], docs: list[Document], writer: Writer,
                       firms: list[str], changes: float, disputes: int) -> set[Fact]:
    """Conflicts clean data has: people who changed employer (the old job dated, then retracted
    with a date on the person's page; the old employer's page still lists them) and sources
    that disagree (a news item naming a wrong birth city)."""
    page = {d.title: d for d in docs}
    natural: set[Fact] = set()
    old_date, new_date = CHANGE_DATES
    for f in [f for f in facts if f.relation == "works_for"]:
        if rng.random() >= changes:
            continue
        old = Fact(f.head, "works_for", rng.choice([x for x in firms if x != f.tail]))
        natural.add(old)
        page[f.head].sentences += writer.job_change(f.head, old.tail, f.tail, CHANGE_DATES)
        page[old.tail].sentences.append(writer.sentence(old, dated=old_date, variant=1))
    cities = sorted({f.tail for f in facts if f.relation == "born_in"})
    births = [f for f in facts if f.relation == "born_in"]
    for i, f in enumerate(rng.sample(births, min(disputes, len(births)))):
        wrong = Fact(f.head, "born_in", rng.choice([c for c in cities if c != f.tail]))
        natural.add(wrong)
        docs.append(Document(f"dispute{i:04d}", f"Letters {i}", [writer.sentence(wrong, variant=i)]))
    return natural


def _offices(rng: random.Random, firm_city: dict[str, str], cities: list[str], docs: list[Document],
             writer: Writer, directories: int) -> list[Fact]:
    """A multi-valued relation: every company has offices in its headquarters city and one to
    three others. All are listed on the company's page (in one sentence or two), 40% also on
    the city's page, and some in office directories (news items naming several companies)."""
    page = {d.title: d for d in docs}
    facts: list[Fact] = []
    for firm, hq in firm_city.items():
        cities_of = [hq, *rng.sample([c for c in cities if c != hq], rng.randint(1, 3))]
        rng.shuffle(cities_of)
        own = [Fact(firm, "office_in", c) for c in cities_of]
        facts += own
        page[firm].sentences += writer.several(firm, "office_in", cities_of, rng)
        for f in own:
            if rng.random() < 0.4:
                page[f.tail].sentences.append(writer.sentence(f, variant=rng.randrange(1 << 30)))
    for i in range(directories):
        docs.append(writer.news(rng.sample(facts, 3), rng, f"Office directory {i}"))
    return facts


def generate_world(seed: int, *, countries: int = 5, cities_per_country: int = 3, persons: int = 40,
                   companies: int = 12, universities: int = 5, news: int = 15, questions: int = 40,
                   changes: float = 0.2, disputes: int = 6, set_questions: int = 9, pages: str = "one") -> Dataset:
    """A fictional world and its questions, fully determined by ``seed``; with ``pages="several"``
    some entities have a second page (:func:`environments.graphrag.prose.more_pages`), the facts,
    questions and every other page the same."""
    rng = random.Random(seed)
    names = _Names(rng)
    facts: list[Fact] = []
    country_list = [names.word(3) for _ in range(countries)]
    city_country: dict[str, str] = {}
    for country in country_list:
        for _ in range(cities_per_country):
            city_country[names.word(2)] = country
    cities = list(city_country)
    facts += [Fact(city, "located_in", country) for city, country in city_country.items()]
    unis = [f"University of {names.word(3)}" for _ in range(universities)]
    facts += [Fact(u, "located_in", rng.choice(cities)) for u in unis]
    people = [names.person() for _ in range(persons)]
    firms = [f"{names.word(3)} {rng.choice(['Labs', 'Works', 'Group', 'Systems'])}" for _ in range(companies)]
    firm_city = {firm: rng.choice(cities) for firm in firms}
    facts += [Fact(firm, "headquartered_in", city) for firm, city in firm_city.items()]
    facts += [Fact(firm, "founded_by", rng.choice(people)) for firm in firms]
    employer: dict[str, str] = {}
    for person in people:
        born = rng.choice(cities)
        employer[person] = rng.choice(firms)
        facts.append(Fact(person, "born_in", born))
        if rng.random() < 0.9:
            facts.append(Fact(person, "citizen_of", city_country[born]))
        facts.append(Fact(person, "works_for", employer[person]))
        facts.append(Fact(person, "lives_in", firm_city[employer[person]] if rng.random() < 0.7 else rng.choice(cities)))
        facts.append(Fact(person, "studied_at", rng.choice(unis)))
    staff_of: dict[str, list[str]] = {}
    for person in people:
        staff_of.setdefault(employer[person], []).append(person)
    for firm in firms:
        staff = staff_of.get(firm, [])
        for a, b in zip(staff, staff[1:], strict=False):
            facts.append(Fact(a, "colleague_of", b))
        if rng.random() < 0.5:
            facts.append(Fact(firm, "partners_with", rng.choice([f for f in firms if f != firm])))
    writer = world_writer(set(people), set(firms), set(unis))
    located = {f.head: f for f in facts if f.relation == "located_in"}
    prose = random.Random(seed + 31337)  # its own stream: the wording leaves the world unchanged
    docs = write_pages(facts, writer, prose, follow_up=located.get)
    for i in range(news):
        docs.append(writer.news(rng.sample(facts, 3), prose, f"News {i}"))
    natural = _natural_conflicts(random.Random(seed + 104729), facts, docs, writer, firms, changes, disputes)
    phrasing = random.Random(seed + 7919)  # its own stream: the surface form leaves the world unchanged
    qs = sample_questions(objects_index(facts), PLANS, questions, rng,
                          lambda topic, plan: question_text(topic, plan, phrasing.randrange(3)))
    offices = random.Random(seed + 65537)  # its own stream: the other facts and questions stay as they were
    facts += _offices(offices, firm_city, cities, docs, writer, directories=3)
    index = objects_index(facts)
    qs += sample_set_questions(index, SET_PLANS, set_questions, offices,
                               lambda topic, plan: question_text(topic, plan, phrasing.randrange(3)), len(qs))
    if pages == "several":  # its own stream, after every other page is written
        docs += more_pages(facts, writer, random.Random(seed + 15485863))
    return Dataset(f"world{seed}", facts, writer, docs, qs, index, natural)


def world_writer(people: set[str], firms: set[str], unis: set[str]) -> Writer:
    """Pronouns and aliases: people are "he" or "she" and go by their family name, companies
    by their first word, universities as "X University"."""
    def pronoun(e: str) -> str:
        return ("he", "she")[zlib.crc32(e.encode()) % 2] if e in people else "it"

    def alias(e: str) -> str | None:
        if e in people or e in firms:
            return e.split()[-1] if e in people else e.split()[0]
        if e in unis:
            return f"{e.removeprefix('University of ')} University"
        return None

    return Writer(dict(WORLD_FORMS), dict(HELD_OUT_FORMS), pronoun=pronoun, alias=alias)
