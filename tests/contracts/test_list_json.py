"""`agentbed list contracts --json`: suites, tasks with family, axes and labels, and agents."""

from __future__ import annotations

import json

from agentbed.cli import main
from environments.contracts.labels import LABELS


def test_list_json_describes_every_task_and_agent(capsys):
    assert main(["list", "contracts", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (suite,) = doc["suites"]
    assert suite["name"] == "contracts" and suite["default_agent"] == "oracle"
    assert {"oracle", "naive", "work-first", "param-drift", "corrupt-truncate"} <= set(suite["agents"])
    assert len(suite["tasks"]) == 86
    for task in suite["tasks"]:
        assert task["family"] and task["issuer"] and "goal" in task["axes"]
        assert set(task["labels"]) <= set(LABELS) and "WRONG_VALUE" in task["labels"]
    by_id = {t["id"]: t for t in suite["tasks"]}
    assert "PARAMETER_MISMATCH" in by_id["idempotency-retry"]["labels"]
    assert "SCHEDULED_UNAVAILABLE" in by_id["cloudfront-maintenance-window"]["labels"]
    assert by_id["s3-get-after-scan"]["renewal_forced"] and not by_id["s3-get-basic"]["renewal_forced"]
    assert suite["options"]["feedback"]["choices"] == ["off", "on"]
