"""Extraction on the project's own corpora is frozen: every graph and table in docs/graphrag.md
was built from what the rule-based extractor read, so a change to the extractor (issue 38.3:
forms of other writers' prose) must leave these statements byte-identical.

Covered: the clean corpora of generated worlds 0-3 and 1000-1003, the real graphs (Nations,
Kinships, UMLS) at their default seed, and the poisoned corpora of every attack (targeted and
global) on worlds 0 and 1000 and on Nations (but `tkpa-rules`, too slow there), as an index receives them (published, then
extracted). Each corpus is stored as the sha256 of its sorted statements; the hashes were taken
on main before the extractor was first changed (commit c6c1076). The `adaptive` corpora are written
against TDP's ranker (a white-box attack), so they change with its features and weights: their
hashes were re-taken at c51ab67 (anchored corroboration), whose parent gives the old ones, and
again with anchored corroborated *ends* (issue #51), whose commit also added the anchored pages to
``adaptive``'s search and the ``anchored`` attack (its corpora hashed then); the extractor did not change.
``fabricated`` (session 18) was hashed when it was added. Every attack corpus that adds pages was
re-taken in session 18 (issue #50 item 3): the default dress titles attacker pages as clean pages
are titled, and a page's id hashes its title; the extractor did not change (``tkpa`` and
``tkpa-rules``, which add no page, and the clean corpora kept their hashes). Session 20 changed the
extractor: no statement without a head (a retraction opening a page titled "News i" was read with
the head ``''``), and an entity's name from every title naming it; 16 attack corpora on worlds 0 and
1000 were re-taken (``adaptive``, ``anchored``, ``coassert``, ``copy``, ``frame``, ``gragpoison``, ``kepo``,
``support``; ``adaptive`` also aims at the weights retrained on them); every clean corpus, every real graph's
and every Nations corpus kept its hash.
"""

from __future__ import annotations

import hashlib

import pytest

from agentbed.testing import require
from attacks.graphrag import ATTACKS
from attacks.graphrag.globalpoison import GLOBAL_ATTACKS
from environments.graphrag.corpus import Statement
from environments.graphrag.real import FETCH_COMMAND, available
from suites.graphrag.scenarios import DEFAULT_TARGETS, poisoned, poisoned_global

WORLDS = (0, 1, 2, 3, 1000, 1001, 1002, 1003)
REAL = ("nations", "kinships", "umls")
ATTACKED = (("world", 0), ("world", 1000), ("nations", 0))


def digest(statements: list[Statement]) -> str:
    rows = sorted((s.head, s.relation, s.tail, s.doc, s.chunk, str(s.negated), s.dated) for s in statements)
    return hashlib.sha256("\n".join("\t".join(r) for r in rows).encode()).hexdigest()


def corpora() -> list[tuple[str, str, int, str]]:
    """(key, dataset, seed, attack) of every covered corpus; global attacks are ``global-NAME``."""
    out = [(f"{'world' if n == 'world' else n}-{w}-none", n, w, "none")
           for n, w in [*(("world", w) for w in WORLDS), *((r, 0) for r in REAL)]]
    for name, w in ATTACKED:
        # tkpa-rules on Nations mines its rules over the whole graph (683 s when measured), past the
        # suite's 600 s timeout; its prose is covered on worlds 0 and 1000
        # bridged on Nations scores 29 variants per target three times each (over 270 s loaded): its
        # prose is covered on worlds 0 and 1000 too, and so is diluted's (bridged's variants after its pages)
        out += [(f"{name}-{w}-{a}", name, w, a) for a in sorted(ATTACKS)
                if (name, a) not in (("nations", "tkpa-rules"), ("nations", "bridged"), ("nations", "diluted"))]
        out += [(f"{name}-{w}-global-{a}", name, w, f"global-{a}") for a in sorted(GLOBAL_ATTACKS)]
    return out


def snapshot_of(name: str, world: int, attack: str) -> str:
    if attack.startswith("global-"):
        built = poisoned_global(name, world, attack.removeprefix("global-"), 5, "louvain")
    else:
        built = poisoned(name, world, attack, 5, DEFAULT_TARGETS.get(name, 20), "louvain")
    return digest(built.index.kg.statements)


SNAPSHOT: dict[str, str] = {
    "world-0-none": "ee0716392284d6edec5d424d7637d010b12c92056265d272b714b8da4dc68200",
    "world-1-none": "7112c4e00458b1b69527aeffb064e551e452098004616ae48a761021c5ce4089",
    "world-2-none": "0a5e026eda1b32f925e4a7aa1d2982c2d391245700ba81ac6980240f49cb613f",
    "world-3-none": "f88797a2948499b8ccac5d2f813f2dd8a3a86fe17888bfdfb5ad6811d816544d",
    "world-1000-none": "81ec30ddeac6dc8bdc713c08caffa4ccc537c8b6ae4cf88e7b9acc11ae0ae6b9",
    "world-1001-none": "37f320196993d08628718a87a0bb18e114bea42aa67108f24712b1625d535d36",
    "world-1002-none": "e1195594703ab156d0fd3a5ed5c8f9fdd3df29d3bb5869351baf9f44f1ba8783",
    "world-1003-none": "d3040b780c7be3533f1f62cf5f155c23ff4d1142108ee5dceb605cbb0bf7e90a",
    "nations-0-none": "34ed456ffdaadd7f56a1158a17d21cc386a230d63616446a01a6ea44d013e131",
    "kinships-0-none": "406c004ce9f2e3aa75e839eaadfde01430c84d187623f169679371efaa1fbc6d",
    "umls-0-none": "5afbd5febbb66ff642d2d098642a9a420bcf7cb995e9b9b8c0032cde79878ca1",
    "world-0-adaptive": "3b66b09515d2862a9c50b9162f726522f8c279accf83ddfd3bf9df267e9224f1",
    "world-0-anchored": "e0867bccfbf6300573ef9baf69321953d7594dfd8d218c06ed147171e0d764d9",
    "world-0-bridged": "2062694e5243351334c96a379d1f062f02a432a241ea5a43857c96e89e613713",
    "world-0-diluted": "c8ea55cfaaeef4b211d13275a458177c48f3822466204a444ff215566639e001",
    "world-0-fabricated": "4ffe847c350a84e775a80c28956085d56f54d2087cc03d3db287ff609f5f8ffe",
    "world-0-coassert": "974c49f50ab1727c79f10e8910d6c880e610001b9e81858d59f244314bd7b4e6",
    "world-0-community": "8e551e70a867071f978f40cfd110bbce6b137edfe9272101b5ae7c1a7cc9ab51",
    "world-0-copy": "cf97ebbbee2da296e439339689b368618be558f592d018b6c78661bde1672d8b",
    "world-0-frame": "05411edf8f9e260531579bc843daefb386687d611e8d296f5a54e08ce04982ad",
    "world-0-gragpoison": "82ed94092ee1e6836dc0473ee978bcf1f6d871812c8511a462f3eee3e7030585",
    "world-0-kepo": "d3c648261c601b0fbaf5ad7cdefcd5c3680313225e13b10d355bac8341ca629a",
    "world-0-poisonedrag": "00acb07deef2a24e33ce3e1ec6dc01ff1e4079a70043d71492e63706c5a24e61",
    "world-0-restate": "6d9e74c5e88a0bfad19295497ab00a73a5687cf7d5ecb97f8e6c079fda4cfd25",
    "world-0-support": "17db1c40e30e2f491c79c4f137c80ec82a1df7912e7be5b37da3b3779c13fdad",
    "world-0-tkpa": "388e09c075621fbbb574b9f707cc2022576bac2f836322b47481e8b47b30fbc7",
    "world-0-tkpa-rules": "2ade6f06005df8e96bfe589b44350186c9a28f027f1c9dd7338e6873bb4267eb",
    "world-0-tkpa-sourced": "4fff2f5388cd4044f6d376cd69aecd919ea382b8c491e14ea26ed2ae86a45213",
    "world-0-global-community": "74b6f61c2adbdbea2e01922dae069f3857cfab65cd782b428b3f476daf57e5d4",
    "world-1000-adaptive": "b68a431d9b7905690edcf851137115ceb89a1b49cb0a483d267c6abe9e7a5ce9",
    "world-1000-anchored": "287bd6dc5d12e7eb6d198c7bc1228c6d7699c09552998453b55c5e321523e84e",
    "world-1000-bridged": "deacb30b74003c864252bca06c07e3d6f03b670664faaf0b4df8a181f78ea870",
    "world-1000-diluted": "8a70b1dfe56390606a7812493c208d66ec48fc382dbf802cad0030ccbcb3893b",
    "world-1000-fabricated": "d384c57e12a62d438b633c199d00e1763e02ba598b79cbbe796992a9a6e699db",
    "world-1000-coassert": "efcb73b64c956d9143b685dbb41fb33feb591001359a31ecdcdde894beb934b7",
    "world-1000-community": "3025f3aed3c86da8ff89a6406c73590ce07bf0ce76bf272d0af6ee7947f86b42",
    "world-1000-copy": "2b6f191fe3119d3d7f99459376ef24d1645cb56cfa6556ad0cd15f6a0e4cc59d",
    "world-1000-frame": "f74a3bc528aee6397201abe85117aaf9c8d528f052655e4583365ff856df8199",
    "world-1000-gragpoison": "e0ee2f25db52559eae3384a2eb3a6218d2eda340e70d79ba96dccc4e2b58fe8e",
    "world-1000-kepo": "59df6e26210d13a94ab48bc4ffedaca41ca8f6623f63e13e2a39ded76b30824d",
    "world-1000-poisonedrag": "1e9147c60dc7a527f0ef57ab45462ab9c5accca4e8a7da449386ab4621a2e189",
    "world-1000-restate": "0c60510faca6404ae16c0eec2f523c7cdc1b810d8f5cd858593b547d8c199204",
    "world-1000-support": "f22ce9165ad927da424ff5d2f0976bbb32706a80f1b23ed0321627c769513432",
    "world-1000-tkpa": "2958d99b3e3a0caf2a2a786716e60482e5333c05e827ec0c02c64266f54b866c",
    "world-1000-tkpa-rules": "986842023f11e875e5814b1244677bd0eb99d9529a8f3298206635d46857e337",
    "world-1000-tkpa-sourced": "9064571a1e11e7abdcbe840f002a8c20a661dd6c34eccd8af3af5240abdb0a2d",
    "world-1000-global-community": "ac052c7494130208632f97e65ca0183f98f7ba71be68a5bdc02bff94ac6e2066",
    "nations-0-adaptive": "a065ca16e29238305fdb959b87625e3c39cd09a2c4d9d1a792bbc9364f677548",
    "nations-0-anchored": "8644346595010f6390b418da5fbe44e1e2eb0441f29133de87d9b90f543da5e6",
    "nations-0-coassert": "e250ba3c65902224329200308b347ae423545e7c446924a7bd9b2320f8ddd46b",
    "nations-0-community": "ab9ed545a046c7f84e97b1f1217b7f43f77f5a27f6157c0a51bee205cf851efb",
    "nations-0-copy": "16c6a811239da4001791387fae0ad63d4b38961c744151d69e27f8f8f1bc3a6c",
    "nations-0-fabricated": "79cd745c1a7a5d8a063a0e6ce71b6196911819923adb18b9fcc9a6db88b2151c",
    "nations-0-frame": "5d9623999630d642be592d1447e00877081ee735cc7d27f645be2ca78fa5090b",
    "nations-0-gragpoison": "72bb6e232e5583d3bd74ccdcb0f8f276d6a7d0219413c0fff463dea547d72c1a",
    "nations-0-kepo": "093b0dd7336b38d410351e7f698531ef02c79a81f184012cc00d53ca1b9e8a90",
    "nations-0-poisonedrag": "886cfa49f00b5161833929cefb5680370ed7fce5b9439d0bdd762dd100af92de",
    "nations-0-restate": "b29655b70385a51419d1e37a4690c73b31e5282b9a3f3b678ee89a18886cdfb2",
    "nations-0-support": "d239f7d12d168c4903f22aa3ebf9554f5ac78579fbe90b853d9bdd37e78d5538",
    "nations-0-tkpa": "572a80cfd04911cb8a1df9f1755dd7f552d4d31b3c85eb1ac3e1158764cc106d",
    "nations-0-tkpa-sourced": "8ebce79be032dba0c38aeb1e379e0fd7a53bc093d6708392a8671d8be6a3e98e",
    "nations-0-global-community": "34ed456ffdaadd7f56a1158a17d21cc386a230d63616446a01a6ea44d013e131",
}


@pytest.mark.parametrize(("key", "name", "world", "attack"), corpora(), ids=[c[0] for c in corpora()])
def test_extraction_on_the_projects_corpora_is_unchanged(key: str, name: str, world: int, attack: str) -> None:
    if name != "world":
        require(available(name), "the pykeen Nations/Kinships/UMLS files", f"run {FETCH_COMMAND}")
    assert snapshot_of(name, world, attack) == SNAPSHOT[key], f"{key}: extraction changed"


def test_every_covered_corpus_has_a_stored_hash() -> None:
    assert {c[0] for c in corpora()} == set(SNAPSHOT)


if __name__ == "__main__":  # prints the table above, for a deliberate re-freeze
    for key, name, world, attack in corpora():
        print(f'    "{key}": "{snapshot_of(name, world, attack)}",')
