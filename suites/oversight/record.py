"""The committed held-out measurement the demo shows: a compact record of one evaluation.

``agentbed oversight evaluate HELD --train DEV --record suites/oversight/data/headline.json``
writes it: the configuration, the evaluate command, each dataset's file (relative to the
record), sha256 and build command, and the numbers the one-screen summary and docs quote.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.dataset import Dataset

KEY_CONTROLLERS = ("scalar", "best-fixed", "scalar-bands", "scalar-bands-k3", "scalar-bands-any", "cost-rule",
                   "scalar-selected", "scalar-oracle", "action-conditioned", "always-continue", "always-intervene")


def _saturation(result: dict[str, Any]) -> str:
    fits = result.get("scalar_fits_per_fold") or []
    segments = [f.get("cost_rule_raw") or [] for f in fits]
    if segments and all(len(s) == 1 for s in segments):
        return f"saturated: the rule picks {segments[0][0]['action']} for every p in [0, 1]"
    parts = ", ".join(f"{s['action']} for p in [{s['from']:.2f}, {s['to']:.2f}]" for s in (segments[0] if segments else []))
    return f"not saturated: {parts}"


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the demo and the docs quote, from an evaluation result."""
    ratios = {k: v for k, v in result["ratios"].items()}
    ratios["scalar"] = {"baseline": "scalar", **result["ratio_action_conditioned_to_scalar"]}
    return {
        "benchmark": result["benchmark"], "checkpoints": result["checkpoints"], "games": result["games"], "protocol": result["protocol"],
        "regret": {n: result["controllers"][n]["regret"] for n in KEY_CONTROLLERS if n in result["controllers"]},
        "actions": {n: result["controllers"][n]["actions"] for n in ("action-conditioned", "scalar-selected", "oracle")},
        "ratios": ratios, "regime": result["regime"],
        "differences": {k: v for k, v in result["differences"].items() if k.startswith("action-conditioned")},
        "spread": result["spread"], "descriptors": result["descriptors"],
        "calibration": {"cost-rule+platt - cost-rule": result["calibration"]["differences"]["cost-rule+platt - cost-rule"],
                        "cost-rule+isotonic - cost-rule":
                            result["calibration"]["differences"]["cost-rule+isotonic - cost-rule"],
                        "saturation": _saturation(result)},
        "per_agent": {f: {"checkpoints": r["checkpoints"], "selected": r["ratios"].get("selected_scalar_only"),
                          "scalar": r["ratios"]["scalar"]} for f, r in result["per_flaw"].items()},
        "accounting": result["accounting"],
    }


def _roles(side: str, paths: list[str]) -> dict[str, str]:
    return {(side if n == 1 else f"{side}-{n}"): p for n, p in enumerate(paths, 1)}


def _files(side: str, record: dict[str, Any]) -> list[str]:
    roles = [r for r in record["datasets"] if r == side or r.startswith(f"{side}-")]
    return [record["datasets"][r]["file"] for r in sorted(roles, key=lambda r: int(r[len(side) + 1:] or 1))]


def training_roles(paths: list[str]) -> dict[str, str]:
    """The record's roles of the development files: ``dev``, then ``dev-2``, ... for further parts."""
    return _roles("dev", paths)


def heldout_roles(paths: list[str]) -> dict[str, str]:
    """The record's roles of the held-out files: ``heldout``, then ``heldout-2``, ... for further parts."""
    return _roles("heldout", paths)


def training_files(record: dict[str, Any]) -> list[str]:
    """A record's development files (relative to it), in the order they were given."""
    return _files("dev", record)


def heldout_files(record: dict[str, Any]) -> list[str]:
    """A record's held-out files (relative to it), in the order they were given."""
    return _files("heldout", record)


def name_datasets(record: Path, datasets: dict[str, str], flag: str, *,
                  anywhere: bool = False) -> dict[str, dict[str, str]]:
    """Each dataset's file relative to the record's folder, its sha256 and its build command;
    ``anywhere``: a file outside that folder is named as given instead of refused."""
    folder = record.parent.resolve()
    files = {}
    for role, name in datasets.items():
        file = Path(name).resolve()
        try:
            relative = file.relative_to(folder)
        except ValueError:
            if anywhere:
                relative = Path(name)
            else:
                raise UsageError(f"{flag}: {name} is not in {folder} or below (the record names its datasets "
                                 "relative to itself)") from None
        files[role] = {"file": str(relative), "sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
                       "command": Dataset.load(file).provenance.get("command", "")}
    return files


def write_record(path: str | Path, result: dict[str, Any], command: str, datasets: dict[str, str],
                 configuration: str, config: Any, budgets: dict[str, int], seeds: str = "") -> Path:
    path = Path(path)
    files = name_datasets(path, datasets, "--record")
    name, _, description = configuration.partition(":")
    record = {"configuration": {"name": name.strip() or "unnamed", "description": description.strip()},
              "command": command, "datasets": files, "seeds": seeds,
              "eval_config": {"costs": config.costs.to_dict(), "forest": asdict(config.forest),
                              "budgets": budgets, "folds": config.folds},
              "result": summarize(result)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path
