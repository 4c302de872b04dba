"""The demo behind ``agentbed demo``: oracle, naive (without and with feedback) and a few corruption
pipelines over every task, 3 seeds, through the engine's process executor; plus the corruption
check (every pipeline over every task it applies to) and a pass-rate figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentbed.executors import execute
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.summary import figure_from_matplotlib, write_summary
from attacks.contracts.agents import corrupting
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import oracle
from environments.contracts.env import ContractEnv
from environments.contracts.report import build_summary, by_agent, rate, who

DEMO_SEEDS = 3
DEMO_CORRUPTIONS = ("truncate", "url-decode", "newline", "visible-text")
COMMAND = ("agentbed run contracts --agent oracle,naive," + ",".join(f"corrupt-{c}" for c in DEMO_CORRUPTIONS)
           + f" --seeds {DEMO_SEEDS}  &&  agentbed run contracts --agent naive --seeds {DEMO_SEEDS} --feedback on")


def corruption_check(seed: int = 0) -> list[list[Any]]:
    """Every corruption over every task it applies to: (name, expected, applied, as expected, passes)."""
    rows = []
    for name, corruption in CORRUPTIONS.items():
        applied = expected = passes = 0
        for spec in ContractEnv.task_list():
            agent = corrupting(oracle(), name)
            record = run_episode(ContractEnv(spec.id), agent, EpisodeSpec("contracts", spec.id, agent.name, seed))
            if agent.applied:
                applied += 1
                expected += record.metrics.get("first_headline") == corruption.label
                passes += bool(record.success)
        rows.append([name, corruption.label, applied, expected, passes])
    return rows


def _figure(records: list[dict[str, Any]]) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = by_agent(records)
    rates = {a: rate(r, "pass") for a, r in groups.items()}
    fig, ax = plt.subplots(figsize=(7, 3))
    names = list(rates)
    est = [rates[a].estimate for a in names]
    err = [[rates[a].estimate - rates[a].low for a in names], [rates[a].high - rates[a].estimate for a in names]]
    ax.bar(names, est, yerr=err, capsize=4, color="#4a7ab5")
    ax.set_ylabel("pass rate")
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    out = figure_from_matplotlib("Pass rate per agent (95% CI over tasks)", fig)
    plt.close(fig)
    return out


def run_demo(out_dir: Path) -> dict[str, Any]:
    run_dir = Path(out_dir) / "contracts"
    tasks = [t.id for t in ContractEnv.task_list()]
    agents = ["oracle", "naive", *(f"corrupt-{c}" for c in DEMO_CORRUPTIONS)]
    specs = [EpisodeSpec("contracts", t, a, s, {"feedback": "off"}) for a in agents for t in tasks
             for s in range(DEMO_SEEDS)]
    specs += [EpisodeSpec("contracts", t, "naive", s, {"feedback": "on"}) for t in tasks for s in range(DEMO_SEEDS)]
    records = [r.to_dict() for r in execute(specs, run_dir, executor="process", jobs=2)]
    records.sort(key=lambda r: (who(r), r["task"], r["seed"]))
    summary = build_summary(records, COMMAND, corruption_checks=corruption_check(), figures=[_figure(records)])
    write_summary(summary, run_dir / "summary.json")
    return summary
