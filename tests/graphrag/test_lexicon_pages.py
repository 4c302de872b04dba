"""The rule extractor's gazetteer kept for a fixed corpus and extended per call
(:class:`environments.graphrag.lexicon_pages.Pages`) is the one built from scratch over the corpus
and the pages beside it: the same names in the same order, the same words, the same longest title;
and the extractor reads the same statements through it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from environments.graphrag.corpus import Document, canonical_names
from environments.graphrag.lexicon import LexiconExtractor, normalise
from environments.graphrag.lexicon_forms import GENERIC_NAME_WORDS
from environments.graphrag.lexicon_pages import Gazetteer, Pages, gazetteer

# spellings of a few entities (case, hyphens, underscores, generic words, an empty title), so keys
# share spellings, words and tie-breaks
TITLES = ["Cuba", "cuba", "CUBA", "Aldovia", "aldovia", "University of Vienna", "university of vienna",
          "Vienna", "vienna", "Marven Labs", "Marven-Labs", "marven_labs", "Kalo Venmar", "kalo venmar",
          "Paris, Texas", "paris, texas", "News 3", "The Group", ""]


def reference(pages: list[Document]) -> Gazetteer:
    """The gazetteer as ``LexiconExtractor.__call__`` built it until session 22, from scratch."""
    names = canonical_names((normalise(d.title), d.title) for d in pages if normalise(d.title) in normalise(d.text()))
    by_word: dict[str, set[str]] = {}
    for name, entity in names.items():
        for w in set(name.split()) - GENERIC_NAME_WORDS:
            by_word.setdefault(w, set()).add(entity)
    return Gazetteer(names, by_word, max((len(n.split()) for n in names), default=1),
                     frozenset(n.split(" ")[0] for n in names))


def same(got: Gazetteer, want: Gazetteer) -> None:
    assert list(got.names.items()) == list(want.names.items())  # order too: the dict a reader iterates
    assert got.by_word == want.by_word
    assert got.longest == want.longest
    assert got.firsts == want.firsts


@st.composite
def pages(draw: st.DrawFn, prefix: str) -> list[Document]:
    out = []
    for k in range(draw(st.integers(0, 12))):
        title = draw(st.sampled_from(TITLES))
        named = draw(st.sampled_from(TITLES))  # the text names its own title (a page) or another
        out.append(Document(f"{prefix}{k}", title, [f"{named} is a place.", "It is known."]))
    return out


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(pages("b"), st.lists(pages("x"), max_size=3))
def test_the_extended_gazetteer_is_the_one_built_from_scratch(base, extras):
    kept = Pages(base)
    same(kept.base, reference(base))
    same(gazetteer(base), reference(base))
    for extra in extras:  # several extensions of one base: none changes it
        same(kept.extended(extra), reference([*base, *extra]))
    same(kept.base, reference(base))


def test_the_extractor_reads_the_same_through_the_kept_gazetteer(world):
    """Pages beside a generated world's corpus, some titled after its entities in other spellings."""
    extract = LexiconExtractor(sorted(world.table.phrases))
    kept = Pages(world.documents)
    clean = world.documents[:40]
    for k, doc in enumerate(clean):
        title = [doc.title, doc.title.lower(), doc.title.upper(), f"Notes on {doc.title}", ""][k % 5]
        extra = [Document(f"p{k}", title, [*doc.sentences[1:], doc.sentences[0]], "poison"),
                 Document(f"q{k}", clean[k - 1].title.lower(), [clean[k - 1].title.lower(), *doc.sentences[:2]])]
        assert extract.read(extra, kept.extended(extra)) == extract(extra, context=[*world.documents, *extra])


class _Every(frozenset):
    """Holds every word: a reader given it tries every token as a name's or a cue's start."""

    def __contains__(self, item: object) -> bool:
        return True


def test_the_start_words_skip_only_tokens_that_start_nothing(world):
    """The reader tries a gazetteer name only at a token whose first word starts a title, and a cue
    or field only at a word that starts one: the same statements as trying every token, on a
    generated corpus (titled pages) and on other writers' untitled and titled paragraphs."""
    from dataclasses import replace

    from suites.graphrag.foreign import SETS, _document, load_paragraphs

    fast = LexiconExtractor(sorted(world.table.phrases))
    slow = LexiconExtractor(sorted(world.table.phrases))
    slow._starts = slow._more_starts = _Every()
    pages = gazetteer(world.documents)
    every = replace(pages, firsts=_Every())
    docs = [*world.documents[:30], *(_document(p, titled=titled) for p in load_paragraphs(SETS["set-1"][0])[:40]
                                      for titled in (False, True))]
    for doc in docs:
        assert fast.read([doc], pages) == slow.read([doc], every), doc.id
