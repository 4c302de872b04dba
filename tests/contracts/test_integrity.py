"""Byte-strict classification: one change, one label, in the documented order."""

from __future__ import annotations

import json

import pytest

from environments.contracts.integrity import classify, classify_against
from environments.contracts.labels import HEADLINE_ORDER, LABELS, headline

URL = "https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F2026&X-Amz-Signature=ab12"
PAYLOAD = json.dumps({"id": "evt_1", "object": "event", "name": "\u212bngstr\u00f6m R&D"}, ensure_ascii=False,
                     separators=(",", ":"))


@pytest.mark.parametrize(("sent", "issued", "display", "label"), [
    (URL, URL, None, None),
    ("", URL, None, "MISSING_TOKEN"),
    (URL[:40] + "\u2026", URL, URL[:40] + "\u2026", "VISIBLE_TEXT_MISMATCH"),
    (URL[:30], URL, None, "TRUNCATED"),
    (URL + ")", URL, None, "AUTOLINK_TRAILING"),
    (URL.replace("%2F", "/"), URL, None, "URL_DECODED"),
    (URL.replace("&", "&amp;"), URL, None, "HTML_ESCAPED"),
    (URL[:20] + "\n" + URL[20:], URL, None, "WHITESPACE"),
    (URL.upper(), URL, None, "CASE_CHANGED"),
    (URL.replace("ab12", "AB12"), URL, None, "CASE_CHANGED"),
    ("aGVsbG8", "aGVsbG8=", None, "PADDING_LOST"),
    (PAYLOAD.replace("\u212b", "\u00c5"), PAYLOAD, None, "UNICODE_NORMALISED"),
    (json.dumps(json.loads(PAYLOAD), sort_keys=True, ensure_ascii=False), PAYLOAD, None, "RESERIALISED"),
    (URL + "&utm_source=chat", URL, None, "PARAMETER_APPENDED"),
    (URL + "&X-Amz-Signature=ab12", URL, None, "PARAMETER_DUPLICATED"),
    (URL.replace("X-Amz-Credential=AK%2F2026&", ""), URL, None, "PARAMETER_DROPPED"),
    (URL + "#download", URL, None, "EXTENDED"),
    ("see " + URL, URL, None, "EXTENDED"),
    (URL.replace("%2F", "%252F"), URL, None, "ENCODING_CHANGED"),
    ("a+b/c==", "a-b_c==", None, "ENCODING_CHANGED"),
    (URL[:20] + "\u200b" + URL[20:], URL, None, "INVISIBLE_CHARACTER"),
    (URL.replace("amazonaws", "\u0430mazonaws"), URL, None, "HOMOGLYPH"),
    (PAYLOAD.replace('"', "\u201c"), PAYLOAD, None, "SMART_QUOTES"),
    (URL.replace("ab12", "ab13"), URL, None, "MUTATED_TOKEN"),
    (URL[:10] + URL[12:], URL, None, "MUTATED_TOKEN"),
    ("something else", URL, None, "WRONG_VALUE"),
])
def test_each_change_gets_its_label(sent, issued, display, label):
    assert classify(sent, issued, display) == label


def test_a_corrupted_old_version_is_named_by_its_corruption_not_wrong_value():
    versions = [("nonce-one-abcdef", None), ("nonce-two-ghijkl", None)]
    assert classify_against("nonce-one-abc", versions) == "TRUNCATED"
    assert classify_against("nonce-one-abcdef", versions) is None
    assert classify_against("zzz", versions) == "WRONG_VALUE"


def test_labels_are_documented_and_headline_follows_the_fixed_order():
    assert len([n for n in LABELS if n != "SUCCESS"]) >= 15
    assert all(label.source and label.explanation for label in LABELS.values())
    assert headline(["GOAL_NOT_MET", "EXPIRED_BEFORE_USE", "TRUNCATED"]) == "TRUNCATED"
    assert headline([]) == "SUCCESS"
    assert HEADLINE_ORDER.index("MISSING_TOKEN") < HEADLINE_ORDER.index("TRUNCATED") \
        < HEADLINE_ORDER.index("EXPIRED_BEFORE_USE") < HEADLINE_ORDER.index("GOAL_NOT_MET")


ARTIFACTS = [URL, PAYLOAD, "012345", "aGVsbG8gd29ybGQ=", "idem_" + "Zm9vYmFy" * 4,
             "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
             "token=ab12&team_id=T0001&text=deploy+prod"]


@pytest.mark.parametrize("issued", ARTIFACTS)
def test_wrong_value_is_reached_only_by_values_with_no_structural_relation(issued):
    from attacks.contracts.corruptions import CORRUPTIONS, made_up

    related = 0
    for name, corruption in CORRUPTIONS.items():
        sent = corruption.apply(issued, issued[:8] + "\u2026")
        if sent is None or name == "made-up":
            continue
        related += 1
        assert classify(sent, issued, issued[:8] + "\u2026") not in (None, "WRONG_VALUE"), (name, sent)
    assert related >= 6
    for sent in (made_up(issued), "x" * len(issued), "".join(reversed(issued))):
        if sent != issued:
            assert classify(sent, issued) == "WRONG_VALUE", sent
