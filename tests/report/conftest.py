"""Run directories for the report tests.

``run_dir`` is built the way ``agentbed run`` builds one (RunStore, run_episode, chained
logs, the generic vault summary) plus hand-written summaries for the four workloads, made
with the real summary helpers and matplotlib. Their numbers are fixture data: the renderer
is under test, not the workloads.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from agentbed.log import TrajectoryWriter  # noqa: E402
from agentbed.results import suite_summary  # noqa: E402
from agentbed.runner import EpisodeSpec, run_episode  # noqa: E402
from agentbed.stats import bootstrap_ci  # noqa: E402
from agentbed.store import RunStore  # noqa: E402
from agentbed.summary import figure_from_matplotlib, fmt, headline, table, write_summary  # noqa: E402

WORKLOADS = ("contracts", "oversight", "graphrag", "cocoder")


def _ci(rng: np.random.Generator, p: float, n: int = 40):
    return bootstrap_ci((rng.random(n) < p).astype(float))


def _figure(title: str, draw) -> dict[str, Any]:
    fig, ax = plt.subplots(figsize=(4, 3))
    draw(ax)
    ax.set_title(title)
    out = figure_from_matplotlib(title, fig)
    plt.close(fig)
    return out


def fixture_summaries(seed: int = 0) -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(seed)
    axes = {"validity": 0.7, "integrity": 0.8, "goal": 0.9}
    contracts = {
        "suite": "contracts", "title": "Observation contracts", "episodes": 80, "seeds": 2,
        "command": "agentbed run contracts --agent oracle,naive --seeds 2",
        "headline": [headline("pass_rate", _ci(rng, 0.6), agent="naive", seeds=2)],
        "tables": [table("Pass rate per axis", ["agent", "axis", "pass rate"],
                         [["naive", a, _ci(rng, p).to_dict()] for a, p in axes.items()]),
                   table("Labels", ["agent", "label", "episodes"], [["naive", "EXPIRED_BEFORE_USE", 11]])],
        "figures": [_figure("Pass rate per axis", lambda ax: ax.bar(list(axes), list(axes.values())))],
    }
    advantage = rng.normal(0.1, 0.3, 300)
    oversight = {
        "suite": "oversight", "title": "Counterfactual oversight", "episodes": 120, "seeds": 3,
        "command": "agentbed oversight --benchmark vault --seeds 3",
        "headline": [headline("regret", _ci(rng, 0.5), higher_is_better=False, controller="scalar"),
                     headline("regret", _ci(rng, 0.1), higher_is_better=False, controller="action-conditioned")],
        "tables": [table("Regret per controller", ["controller", "regret"],
                         [["scalar", fmt(_ci(rng, 0.5))], ["action-conditioned", fmt(_ci(rng, 0.1))]]),
                   table("Calibration decomposition", ["score", "ECE", "regret"],
                         [["raw", 0.46, 0.32], ["recalibrated", 0.01, 0.32]])],
        "figures": [_figure("Intervention advantage", lambda ax: ax.hist(advantage, bins=20)),
                    _figure("Reliability", lambda ax: ax.plot([0, 1], [0, 1], marker="o"))],
    }
    matrix = rng.random((3, 3))
    graphrag = {
        "suite": "graphrag", "title": "GraphRAG poisoning", "episodes": 90, "seeds": 3,
        "command": "agentbed run graphrag --seeds 3",
        "headline": [headline("attack_success", _ci(rng, 0.2), higher_is_better=False, defense="tdp")],
        "tables": [table("Attack success per attack x defense", ["attack", "none", "paraphrase", "tdp"],
                         [[a, *row] for a, row in zip(("poison-a", "poison-b", "poison-c"), matrix.tolist(),
                                                      strict=True)])],
        "figures": [_figure("Attack success", lambda ax: ax.imshow(matrix))],
    }
    points = rng.random((6, 2))
    cocoder = {
        "suite": "cocoder", "title": "CoCoder", "episodes": 60, "seeds": 3,
        "command": "agentbed run cocoder --seeds 3",
        "headline": [headline("speedup", _ci(rng, 0.7), strategy="cohesion")],
        "tables": [table("Strategies", ["strategy", "makespan s", "cost $", "pass"],
                         [["sequential", 989.0, 0.377, 0.934], ["cohesion", 614.0, 0.267, 0.882]])],
        "figures": [_figure("Pareto front", lambda ax: ax.scatter(points[:, 0], points[:, 1]))],
    }
    return {"contracts": contracts, "oversight": oversight, "graphrag": graphrag, "cocoder": cocoder}


def write_vault_run(root: Path, agents: tuple[str, ...] = ("oracle", "naive"), seeds: tuple[int, ...] = (0, 1)) -> Path:
    """A vault run laid out by the run store, with the generic suite summary."""
    from suites.vault.suite import SUITE

    store = RunStore(root)
    tasks = SUITE.tasks({})
    command = f"agentbed run vault --agent {','.join(agents)} --seeds {len(seeds)}"
    store.create({"suite": "vault", "tasks": tasks, "agents": list(agents), "seeds": list(seeds), "options": {},
                  "command": command, "executor": "serial"})
    records = []
    for agent in agents:
        for task in tasks:
            for seed in seeds:
                spec = EpisodeSpec("vault", task, agent, seed)
                record = run_episode(SUITE.make_env(task, {}), SUITE.make_agent(spec), spec, budget=SUITE.budget,
                                     writer=TrajectoryWriter(store.log_path(spec.episode_id)))
                record.log = str(store.log_path(spec.episode_id).relative_to(root))
                store.append(record)
                records.append(record.to_dict())
    write_summary(suite_summary("vault", records, command), root / "vault" / "summary.json")
    store.finish(["vault/summary.json"])  # as `agentbed run` ends: the seal covers the summary
    store.unlock()
    return root


def reseal(root: Path, files: list[str]) -> None:
    """Seal the run again with ``files`` added (as if its run had written them): report and view
    show only what a run's manifest seals."""
    from agentbed.manifest import ManifestWriter

    doc = json.loads((root / "manifest.json").read_text())
    sealed = [f for f in doc["files"] if f not in ("run.json", "index.jsonl", "events.jsonl")]
    ManifestWriter(root, doc["plan"], doc["run_id"], dict(doc["episodes"]), None).finish([*sealed, *files])


@pytest.fixture(scope="session")
def summaries() -> dict[str, dict[str, Any]]:
    return fixture_summaries()


@pytest.fixture
def run_dir(tmp_path: Path, summaries: dict[str, dict[str, Any]]) -> Path:
    root = write_vault_run(tmp_path / "run")
    for suite, summary in summaries.items():
        write_summary(summary, root / suite / "summary.json")
    reseal(root, [f"{suite}/summary.json" for suite in summaries])
    return root


class ElementIndex(HTMLParser):
    """Every element with an id: its tag, attributes, text and the tags nested inside it."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.by_id: dict[str, dict[str, Any]] = {}
        self.stack: list[dict[str, Any]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for node in self.stack:
            node["inner"].append(tag)
        if tag in self.VOID:
            return
        node = {"tag": tag, "attrs": dict(attrs), "text": [], "inner": []}
        self.stack.append(node)
        if node["attrs"].get("id"):
            self.by_id.setdefault(node["attrs"]["id"], node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for node in self.stack:
            node["inner"].append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for node in self.stack:
            node["text"].append(data)


def index_html(text: str) -> ElementIndex:
    parser = ElementIndex()
    parser.feed(text)
    parser.close()
    for node in parser.by_id.values():
        node["text"] = "".join(node["text"]).strip()
    return parser


@pytest.fixture
def parse_html():
    return index_html


@pytest.fixture
def write_json():
    def write(path: Path, value: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
        return path

    return write
