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
    ("aGVsbG8", "aGVsbG8=", None, "PADDING_LOST"),
    (PAYLOAD.replace("\u212b", "\u00c5"), PAYLOAD, None, "UNICODE_NORMALISED"),
    (json.dumps(json.loads(PAYLOAD), sort_keys=True, ensure_ascii=False), PAYLOAD, None, "RESERIALISED"),
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
