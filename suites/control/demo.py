"""The control slice of ``agentbed demo``: scripted policies on contracts and AgentDojo under four
micro-protocols (about 130 episodes, serial: each worker of a process pool would load AgentDojo's suites
again, which cost the slice 3 minutes instead of 40 s), with counterfactual branches of intervened attacks."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentbed.progress import steps
from suites.control.cli import main_json, run_grid

DEMO = {"settings": "contracts,agentdojo", "protocols": "tm,dtt,dtr,te", "defer": "0.3", "tasks": 4, "seeds": 1,
        "monitor": "scripted", "monitor_model": "", "untrusted": "", "trusted": "trusted",
        "strategies": "blatant,disguised,subtle", "k": 3, "attack_rate": 1.0, "jobs": 2, "executor": "serial", "resamples": 100,
        "counterfactual": 6, "editor": "scripted", "ac_train_tasks": 3, "cache": True, "cache_dir": None}


def run_demo(out_dir: Path, **overrides: Any) -> dict[str, Any]:
    args = argparse.Namespace(**{**DEMO, **overrides, "out": str(Path(out_dir) / "control-run")})
    with steps("control episodes", 1) as done:
        root = run_grid(args)
        done("grid")
    return main_json(root)
