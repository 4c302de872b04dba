"""A log records every option of its suite, defaults included, and replay resolves them again: each
suite's resolved options must resolve to themselves (an option whose default is empty once made
every GraphRAG log unreplayable: ``--extractor_model: an empty value ('') names nothing``)."""

from __future__ import annotations

import pytest

from agentbed.suite import load_suites


@pytest.mark.parametrize("name", sorted(load_suites()))
def test_a_suites_resolved_options_resolve_again_unchanged(name):
    suite = load_suites()[name]
    resolved = suite.resolve_options({})
    assert suite.resolve_options(dict(resolved)) == resolved
