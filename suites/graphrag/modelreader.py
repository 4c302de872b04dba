"""The chat-model reader beside the deterministic one: the same tasks, tools and defenses.

``agentbed graphrag readers --model local:gemma-3-270m`` plays every task of each (attack,
defense) cell twice, once with the deterministic :class:`ReaderAgent` and once with the chat
model (any LangChain ``provider:model``; ``local:`` models are served for the run), and tabulates
accuracy and attack success per reader with cluster-bootstrap intervals. Each model episode's
log is written to ``--out`` (``agentbed verify`` checks it). ``--max-steps`` caps the model's
episodes (the deterministic reader needs three steps: search, local search, answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.log import TrajectoryWriter
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode
from agentbed.summary import fmt, table
from environments.graphrag.agents import ReaderAgent
from suites.graphrag.report import SUITE, Cell
from suites.graphrag.scenarios import make_env, task_ids


def run_reader(agent: Callable[[], Agent], name: str, attack: str, defense: str, budget: Budget,
               out_dir: Path | None, parallel: int = 1, **options: Any) -> Cell:
    opts = SUITE.resolve_options({"attack": attack, "defense": defense, **options})

    def one(task: str) -> EpisodeRecord:
        spec = EpisodeSpec("graphrag", task, name, 0, opts)
        writer = TrajectoryWriter(out_dir / f"{attack}-{defense}-{task}.jsonl") if out_dir else None
        return run_episode(make_env(task, opts), agent(), spec, budget=budget, writer=writer)

    with ThreadPoolExecutor(max_workers=parallel) as pool:  # a local server answers two at a time
        records = list(pool.map(one, task_ids(opts)))
    return Cell(opts["dataset"], attack, defense, records, int(opts["budget"]))


def compare_readers(model_agent: Callable[[], Agent], model: str, cells: Sequence[tuple[str, str]], *,
                    max_steps: int, out_dir: Path, parallel: int = 2,
                    each: Callable[[list[tuple[str, Cell]]], None] | None = None,
                    **options: Any) -> list[tuple[str, Cell]]:
    """Both readers on every cell; ``each`` sees the rows so far after every cell (a slow model's
    finished cells are kept when the run is stopped)."""
    out: list[tuple[str, Cell]] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for attack, defense in cells:
        out.append(("reader", run_reader(ReaderAgent, "reader", attack, defense, SUITE.budget, None, **options)))
        out.append((model, run_reader(model_agent, f"model:{model}", attack, defense, Budget(max_steps=max_steps),
                                      out_dir, parallel, **options)))
        if each:
            each(out)
    return out


def readers_table(rows: list[tuple[str, Cell]], command: str) -> dict[str, Any]:
    body = []
    for reader, c in rows:
        answered = sum("NO_ANSWER" not in r.labels for r in c.records)
        steps = sum(r.steps for r in c.records) / max(1, len(c.records))
        body.append([reader, c.attack, c.defense, len(c.records), answered, sum(r.status == "error" for r in c.records),
                     f"{steps:.1f}",
                     fmt(c.interval("accuracy"), 2), fmt(c.interval("attack_success"), 2) if c.attack != "none" else "-"])
    return table("The chat-model reader beside the deterministic reader (same tasks, tools and defenses)",
                 ["reader", "attack", "defense", "questions", "answered", "errors", "mean steps", "accuracy",
                  "attack success"], body,
                 note=f"95% bootstrap intervals over questions (one world: one cluster); regenerate: {command}")
