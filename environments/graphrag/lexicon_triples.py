"""From a sentence's items to triples: step 3 of :mod:`environments.graphrag.lexicon`'s pipeline
and the negation of step 4. A sentence splits into one segment per cue; each segment's subject
(its own, inherited, or the topic) and objects make (head, relation, tail, negated) tuples, by
the cue's kind (verb, inverse verb, relational noun, field label, apposition, ...). It knows the
items :mod:`~environments.graphrag.lexicon_items` defines and nothing of how a corpus was
written (``tests/graphrag/test_corpus_world.py`` checks its imports as the extractor's).
"""

from __future__ import annotations

from environments.graphrag import lexicon_items as parts
from environments.graphrag import lexicon_types
from environments.graphrag.lexicon_items import LOCATIVE, Context, Cue, Item, resolve

# Relations whose object list may name a place with its region after a comma ("Austin, Texas").
QUALIFIED = {"born_in", "lives_in", "headquartered_in", "office_in", "located_in"}


def triples(items: list[Item], context: Context, located: bool) -> list[tuple[str, str, str, bool]]:
    """(head, relation, tail, negated) of a sentence's ``items``, one segment per cue (a segment
    ends at the last boundary before the next cue), updating ``context`` (the topic, places,
    qualifiers, asides) as it reads; with ``located`` (the schema has ``located_in``), a listed
    place's qualifier ("Austin, Texas") states ``located_in`` too."""
    cue_at = [k for k, it in enumerate(items) if it.kind == "cue"]
    out: list[tuple[str, str, str, bool]] = []
    prev_subject, prev_object = "", ""
    start = 0
    for n, k in enumerate(cue_at):
        end = cue_at[n + 1] if n + 1 < len(cue_at) else len(items)
        if n + 1 < len(cue_at):  # the segment ends at the last boundary before the next cue
            bounds = [b for b in range(k + 1, end) if items[b].kind == "bound"]
            end = bounds[-1] if bounds else end
        before, after = items[start:k], items[k + 1:end]
        cue = items[k].cue
        assert cue is not None
        context.qualified.clear()
        found = _pairs(items, k, before, after, cue, context, n > 0, prev_subject, prev_object)
        if found is None:
            start = end
            continue
        pairs, prev_subject, prev_object = found
        negated = cue.kind == "negative" or any(it.kind == "neg" for it in before)
        if cue.kind == "appos":
            context.aside.update(pairs)
        for head, tail in pairs:
            if head != tail:
                out.append((head, cue.relation, tail, negated))
                context.place = parts.place(head, cue.relation, tail) or context.place
                if cue.relation in LOCATIVE:
                    context.places.add(tail)
        if located and pairs and cue.relation in QUALIFIED and not negated:
            out += [(place, "located_in", region, False) for place, region in context.qualified]
            context.aside.update(context.qualified)  # a qualifier moves no subject
        if context.follow and cue.kind != "appos" and pairs and prev_subject:
            context.fallback = context.topic = prev_subject
        start = end
    return out

def _pairs(items: list[Item], k: int, before: list[Item], after: list[Item], cue: Cue,
           context: Context, later: bool, prev_subject: str, prev_object: str
           ) -> tuple[list[tuple[str, str]], str, str] | None:
    """(head, tail) pairs of the cue at ``k`` with the segment's subject and last object, or
    None when the segment states nothing."""
    colons = [n for n, it in enumerate(before) if it.kind == "bound" and it.text == ":"]
    if colons and any(it.kind in ("ent", "pron") for it in before[colons[-1] + 1:]):
        before = before[colons[-1] + 1:]  # "Travel tip: X partners with Y"
    ents_before = [resolve(it, context) for it in before if it.kind in ("ent", "pron")]
    if cue.kind == "school":  # "went to X": only a school's name is its object
        after = [it for it in after if it.kind != "ent" or lexicon_types.kind(it.entity) == lexicon_types.SCHOOL]
        cue = Cue(cue.relation, "verb")
    ents_after = parts.objects(after, context)
    if cue.kind in ("appos", "post", "pre"):  # the object (or head) stands just before the cue
        near = items[k - 1] if k > 0 and items[k - 1].kind == "ent" else None
        if near is None:
            return None
        if cue.kind == "appos":
            return ([(near.entity, ents_after[0])], prev_subject, prev_object) if ents_after else None
        if cue.kind == "pre":
            heads = [resolve(it, context) for it in after if it.kind == "ent"][:1]
            return ([(heads[0], near.entity)], heads[0], near.entity) if heads else None
        others = [resolve(it, context) for it in before if it.kind in ("ent", "pron") and it is not near]
        subject = others[0] if others else prev_subject or context.topic
        return ([(subject, near.entity)], subject, subject) if subject else None
    if cue.kind == "field":
        subject = context.topic or (ents_before[:1] or [""])[0]
        ents_after = parts.listed(after, context)
        if context.untitled and cue.relation in QUALIFIED - {"office_in"} and len(ents_after) == 2:
            context.qualified.append((ents_after[0], ents_after[1]))  # "Born: Mobile, Alabama"
            ents_after = ents_after[:1]
        return ([(subject, o) for o in ents_after], subject, ents_after[-1]) if subject and ents_after else None
    if cue.kind == "mate" or (cue.relation == "colleague_of" and before and before[-1].kind == "ppos"):
        return _colleague(before, after, context, prev_subject)
    if cue.kind == "inverse" and parts.passive(after, context.untitled):
        cue = Cue(cue.relation, "verb")
    relative = any(it.kind == "bound" and it.text in ("which", "who", "where") for it in before)
    who = any(it.kind == "bound" and it.text == "who" for it in before)
    if relative and later and who and prev_object in context.places and prev_subject:
        head_side = [prev_subject]  # "X, a citizen of Y who was born in Z": who is X
    elif relative and later:
        head_side = [prev_object] if prev_object else ents_before[-1:]
    elif ents_before and cue.kind == "inverse" and before[-1].kind == "ent" and parts.subordinate(before):
        head_side = ents_before[-1:]  # "X began in 2003 when Y founded it"
    elif ents_before:
        head_side = ents_before[:1]
    elif later and prev_subject:
        head_side = [prev_subject]
    elif context.topic and parts.predicate(before, cue):
        head_side = [context.topic]  # "Born in X" after a name, "The company is based in Y"
    else:
        head_side, ents_after = ents_after[:1], ents_after[1:]
    if not ents_after and len(ents_before) >= 2:  # "X and Y are colleagues"
        head_side, ents_after = ents_before[:1], ents_before[1:2]
    if not head_side or not ents_after:
        return None
    subject = head_side[0]
    possessive = any(it.kind == "poss" for it in before)
    of_after = any(it.text == "of" for it in after[:3])
    inverted = cue.kind == "inverse" or (cue.kind == "noun" and of_after and not possessive
                                         and any(it.text == "the" for it in before[-3:]))
    pairs = [(obj, subject) if inverted else (subject, obj) for obj in ents_after]
    return pairs, subject, ents_after[-1]

def _colleague(before: list[Item], after: list[Item], context: Context,
               prev_subject: str) -> tuple[list[tuple[str, str]], str, str] | None:
    """"his colleague X", "X is her colleague", "Y's colleague X", "one of his colleagues is X"."""
    names = [it for it in before if it.kind in ("ent", "pron")]
    if before and before[-1].kind == "ppos":
        owner = context.topic
    elif len(before) >= 2 and before[-1].kind == "poss" and before[-2].kind == "ent":
        owner = before[-2].entity
    else:
        owner = resolve(names[0], context) if names else prev_subject or context.topic
    others = [resolve(it, context) for it in after if it.kind == "ent"][:1] or [
        resolve(it, context) for it in names if it.kind == "ent" and it.entity != owner][:1]
    if not owner or not others:
        return None
    return [(owner, others[0])], owner, others[0]
