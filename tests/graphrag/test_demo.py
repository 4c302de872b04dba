import json

import pytest

from agentbed.results import load_results


@pytest.mark.slow
def test_demo_writes_summary_results_and_figure(tmp_path, nations_available):
    from suites.graphrag.demo import demo

    summary = demo(tmp_path, worlds=2)
    written = json.loads((tmp_path / "graphrag" / "summary.json").read_text())
    assert written["headline"] == json.loads(json.dumps(summary["headline"]))
    assert summary["figures"][0]["svg"].startswith("<svg")
    assert {c["dataset"] for c in summary["cells"]} == {"world", "nations"}
    assert all(c["errors"] == 0 for c in summary["cells"])
    results = load_results(tmp_path / "graphrag")
    assert any(m["metric"] == "attack_success" for m in results["metrics"])
