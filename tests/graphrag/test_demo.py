import json

import pytest

from agentbed.results import load_results


@pytest.mark.slow
def test_demo_writes_summary_results_and_figure(tmp_path, nations_available, spacy_extract):
    from suites.graphrag.demo import demo

    summary = demo(tmp_path, worlds=2)
    written = json.loads((tmp_path / "graphrag" / "summary.json").read_text())
    assert written["headline"] == json.loads(json.dumps(summary["headline"]))
    assert summary["figures"][0]["svg"].startswith("<svg")
    assert {c["dataset"] for c in summary["cells"]} == {"world", "nations"}
    assert all(c["errors"] == 0 for c in summary["cells"])
    results = load_results(tmp_path / "graphrag")
    assert any(m["metric"] == "attack_success" for m in results["metrics"])
    extraction = next(t for t in summary["tables"] if t["title"].startswith("Triple extraction"))
    by_extractor = {(row[0], row[1]) for row in extraction["rows"]}
    # the demo shows the user's-text extractor (issue 50) beside the rules, on the worlds and on
    # prose by a writer who saw no project code
    assert {("generated worlds (2), clean", "spacy"), ("generated worlds (2), clean", "rules")} <= by_extractor
    assert sum(extractor == "spacy" and corpus.startswith("foreign prose") for corpus, extractor in by_extractor) == 1
