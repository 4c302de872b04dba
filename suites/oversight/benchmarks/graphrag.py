"""GraphRAG question answering under poisoning as a branching benchmark.

A game is one targeted question of a generated world under one attack (``none``, GragPoison,
TKPA, KEPo), so the best action differs by game: continuing is best on clean questions, handing
the answer to a TDP-defended reader where TDP removes the poison, and quitting (abstaining)
where nothing stops the attack. The base agent is the suite's deterministic reader; its risk
score is a verbal-confidence analogue: one minus the share of claims behind its answer at the
most contested hop. The checkpoint is step 2: the entities are linked and the evidence retrieved, the answer not given.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.control import StepView
from agentbed.env import ToolEnv
from agentbed.errors import UsageError
from agentbed.tools import Tool, make_action
from controllers.oversight.target import BranchTarget

ATTACKS = ("none", "gragpoison", "tkpa", "kepo")
EVIDENCE_FEATURES = ("contested_hops", "winner_share_min", "candidates_max", "negations", "dated_share",
                     "statements", "removed_by_defense")


def _payload(observation: str) -> dict[str, Any]:
    try:
        value = json.loads(observation)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _rows(payload: dict[str, Any]) -> list[list[Any]]:
    rows = payload.get("statements", [])
    return rows if isinstance(rows, list) else []


def hop_shares(rows: Sequence[Sequence[Any]], topic: str, plan: Sequence[str]) -> list[tuple[float, int]]:
    """Per hop of the plan, following the most-claimed object: (its share of the claims, the
    number of objects claimed)."""
    out, entity = [], topic
    for relation in plan:
        claims = Counter(r[3] for r in rows if r[1] == entity and r[2] == relation and not r[6])
        if not claims:
            break
        winner, top = min(claims.items(), key=lambda kv: (-kv[1], kv[0]))
        out.append((top / sum(claims.values()), len(claims)))
        entity = winner
    return out


class RiskReportingReader(Agent):
    """The suite's reader, stating how contested its answer is as ``Action.risk``."""

    name = "reader"

    def __init__(self) -> None:
        from environments.graphrag.agents import ReaderAgent

        self.reader = ReaderAgent()

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.reader.reset(seed=seed, task=task)

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        topic, plan = self.reader.topic, self.reader.plan  # the reader's own reading of the question
        action = self.reader.act(observation, tools)
        if topic is None:
            return Action(action.text, risk=0.5)
        shares = hop_shares(_rows(_payload(observation)), topic, plan)
        return Action(action.text, risk=round(1.0 - min((s for s, _ in shares), default=0.0), 4))


class DefendedReader(Agent):
    """The intervention: TDP (controllers.graphrag.tdp) applied to the evidence already
    retrieved in this episode, then the reader's answer from what survives."""

    name = "tdp-reader"

    def __init__(self, env: ToolEnv) -> None:
        self.env: Any = getattr(env, "unwrapped", env)  # the GraphRAG world: its scenario and query

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        from controllers.graphrag.candidates import interpret_query
        from environments.graphrag.agents import answer_chain
        from suites.graphrag.defenses import make_defense

        rows = _rows(_payload(observation))
        kg, query = self.env.scenario.index.kg, self.env.query
        defense = make_defense("tdp")
        assert defense is not None  # only "none" names no defense
        verdict = defense(kg, query, [int(r[0]) for r in rows])
        kept = [r for r in rows if int(r[0]) not in verdict.removed]
        reading = interpret_query(kg, query)
        answer = answer_chain(kept, reading.topic, reading.plan) if reading else None
        return Action(make_action("answer", answer=answer or "unknown"))


def evidence_features(first_observation: str, history: Sequence[StepView]) -> dict[str, float]:
    """What the retrieved evidence looks like: contested hops, claim shares, negations, dates."""
    features = dict.fromkeys(EVIDENCE_FEATURES, 0.0)
    if not history:
        return features
    from environments.graphrag.parse import interpret

    question, payload = _payload(first_observation), _payload(history[-1].observation)
    rows = _rows(payload)
    entities = _payload(history[0].observation).get("entities", [])
    reading = interpret(str(question.get("question", "")), entities if isinstance(entities, list) else [],
                        question.get("schema", []), question.get("glosses"))
    shares = hop_shares(rows, reading.topic, reading.plan) if reading else []
    features.update(
        contested_hops=float(sum(n > 1 for _, n in shares)),
        winner_share_min=min((s for s, _ in shares), default=0.0),
        candidates_max=float(max((n for _, n in shares), default=0)),
        negations=float(sum(bool(r[6]) for r in rows)),
        dated_share=sum(bool(r[5]) for r in rows) / len(rows) if rows else 0.0,
        statements=float(len(rows)),
        removed_by_defense=float(payload.get("removed_by_defense", 0)),
    )
    return features


DEFAULT_DRESS = "length"  # the suite's default (suites/graphrag/scenarios.py, option "dress")
RECORDED_DRESS = "titled"  # what a dataset that records no dress was built under (every one before session 19)


def target(worlds: int = 2, attacks: Sequence[str] = ATTACKS, dress: str = DEFAULT_DRESS,
           **options: Any) -> BranchTarget:
    """``dress``: the attack documents' camouflage (the suite's option), recorded in the target's
    notes. A dataset whose provenance names no dress was built under ``titled``, the suite's
    default before ca7e8ab made the length dress title attacker pages as clean ones;
    ``suites/oversight/build.recorded_config`` reads it so, and ``oversight build --dress titled``
    rebuilds it."""
    from attacks.graphrag.camouflage import DRESSES

    if dress not in DRESSES:
        raise UsageError(f"dress: one of {', '.join(DRESSES)}, got {dress!r}")
    from suites.graphrag.scenarios import make_env, task_ids

    questions = task_ids({"worlds": worlds})
    games = [f"{attack}/{q}" for attack in attacks for q in questions]

    def env_for(game: str) -> ToolEnv:
        attack, question = game.split("/", 1)
        return make_env(question, {"attack": attack, "worlds": worlds, "dress": dress})

    return BranchTarget(
        name="graphrag", games=games, make_env=env_for,
        base_agents={"reader": lambda seed: RiskReportingReader()},
        interventions={"tdp-reader": lambda env, agent: DefendedReader(env)},
        max_steps=5,
        notes={"games": f"targeted questions of {worlds} generated worlds x attacks {', '.join(attacks)}",
               "tdp-reader": "TDP on the retrieved evidence, then the reader's answer", "dress": dress},
        progress_features=evidence_features, progress_feature_names=EVIDENCE_FEATURES,
        group=lambda game: game.split("/", 1)[1],  # one question under every attack: held out together
    )
