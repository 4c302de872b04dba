"""The graphrag scenarios: the environment, attacks and defenses joined per task (suite.py registers them).

``agentbed run graphrag --attack gragpoison --defense tdp`` runs the reader on the targeted
questions of the evaluation worlds (seeds 1000+) or of a real graph (``--dataset nations``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import environments.graphrag  # noqa: F401 - registers agentbed/graphrag-v0
from agentbed.env import TaskSpec
from agentbed.errors import UsageError
from agentbed.runner import Budget
from agentbed.suite import Option, Suite
from attacks.graphrag import ATTACKS
from attacks.graphrag.camouflage import DRESSES
from attacks.graphrag.globalpoison import GLOBAL_ATTACKS
from attacks.graphrag.readable import WORDINGS
from attacks.graphrag.scenario import NO_ATTACK, Poisoned, attack_plan, poisoned_global_index, poisoned_index
from environments.graphrag.agents import ReaderAgent
from environments.graphrag.dataset import Dataset
from environments.graphrag.env import GraphRAGEnv, Scenario, parse_task_id
from environments.graphrag.extractors import Extractor, make_extractor
from environments.graphrag.globalsearch import global_questions
from environments.graphrag.prose import PAGES
from environments.graphrag.real import load_real, real_datasets
from environments.graphrag.world import generate_world
from suites.graphrag.defenses import DEFENSES, TDP_CHECKS, make_defense

EVAL_WORLD_BASE = 1000
DATASETS = ("world", *real_datasets())
DEFAULT_TARGETS = {"world": 12}  # a real graph: 20


@lru_cache(maxsize=16)
def load_dataset(name: str, world: int, pages: str = "one") -> Dataset:
    """``pages``: clean pages per entity (:data:`environments.graphrag.prose.PAGES`)."""
    return generate_world(world, pages=pages) if name == "world" else load_real(name, seed=world, pages=pages)


def _extractor(name: str, data: Dataset) -> Extractor | None:
    """The index's extractor (:func:`environments.graphrag.extractors.make_extractor`); ``rules``
    is the pipeline's default; ``llm:MODEL`` is the LLM extractor with that model (its calls go
    through the model-call cache; a ``local:`` model needs the run to serve it)."""
    if name.startswith("llm:"):
        return make_extractor("llm", sorted(data.table.phrases), model=name.removeprefix("llm:"))
    return None if name == "rules" else make_extractor(name, sorted(data.table.phrases))


def extractor_of(options: dict[str, Any]) -> str:
    """The extractor string the index builders take: ``rules``, ``spacy`` or ``llm:MODEL``."""
    name = str(options.get("extractor", "rules"))
    if name != "llm":
        return name
    model = str(options.get("extractor_model") or "")
    if not model:
        raise UsageError("-O extractor=llm needs -O extractor_model=MODEL (local:gemma-3-270m or provider:model)")
    return f"llm:{model}"


WHITE_BOX = ("adaptive", "bridged", "diluted")  # the attacks that read the defense's features and weights (``against``)


def poisoned(name: str, world: int, attack: str, budget: int, targets: int, communities: str,
             against: str = "tdp", aim: str = "targeted", extractor: str = "rules", dress: str = "length",
             pages: str = "one", wording: str = "writer") -> Poisoned:
    """``against``: the TDP variant whose features and weights the white-box ``adaptive``
    attack knows (the deployed ``tdp``, or ``tdp-mix`` when that is the defense evaluated);
    ``aim``: which questions the attack plan targets (:func:`aim_of`); ``dress``: how attack
    documents are camouflaged (:func:`attacks.graphrag.camouflage.camouflage`); ``pages``: the clean
    corpus's pages per entity (:func:`load_dataset`); ``wording``: ``read`` when the attacker knows
    the index's extractor and writes what it reads (:mod:`attacks.graphrag.readable`). Only a
    white-box attack reads ``against``: the others' index is built once for every defense (a grid's
    ``tdp-static`` column shares it)."""
    return _poisoned(name, world, attack, budget, targets, communities, against if attack in WHITE_BOX else "tdp",
                     aim, extractor, dress, pages, wording if attack != NO_ATTACK else "writer")


@lru_cache(maxsize=64)
def _poisoned(name: str, world: int, attack: str, budget: int, targets: int, communities: str, against: str,
              aim: str, extractor: str, dress: str, pages: str, wording: str = "writer") -> Poisoned:
    data = load_dataset(name, world, pages)
    knowledge: dict[str, Any] = {}  # poisoned_index keyword arguments
    if attack in WHITE_BOX:  # white-box: the defense's features and weights
        from suites.graphrag.training import trained_ranker
        from suites.graphrag.whitebox import single_subjects, tdp_surrogate

        checks = TDP_CHECKS[against] if against in MODELLED_CHECKS else {}
        knowledge["surrogate"] = tdp_surrogate(trained_ranker(against if against in OWN_RANKERS else "tdp"), data,
                                               strict=attack != "adaptive", **checks)
        if attack != "adaptive" and checks:
            knowledge["paged"] = True
        if attack == "diluted":  # and the statistic tdp-disputed reads which relations are single-valued by
            knowledge["single_valued"] = single_subjects(data)
    if attack == "tkpa-rules":  # white-box: tdp-plausible's rule miner and threshold
        from suites.graphrag.defenses import PLAUSIBILITY_RATE
        from suites.graphrag.whitebox import rule_repairs

        knowledge["repairs"] = rule_repairs(data, PLAUSIBILITY_RATE)
    return poisoned_index(data, attack, targets=targets, budget=budget, seed=world, community_method=communities,
                          aim=aim, extractor=_extractor(extractor, data), dress=dress, wording=wording, **knowledge)


@lru_cache(maxsize=64)
def poisoned_global(name: str, world: int, attack: str, budget: int, communities: str,
                    extractor: str = "rules") -> Poisoned:
    data = load_dataset(name, world)
    return poisoned_global_index(data, attack, budget=budget, seed=world, community_method=communities,
                                 extractor=_extractor(extractor, data))


def is_global(question_id: str) -> bool:
    return question_id[:1] == "g" and question_id[1:].isdigit()  # g0, g1...; not "geonames-q0"


# TDP variants with a ranker of their own: ``adaptive`` aims at that ranker (white-box); against
# every other defense it aims at the deployed ``tdp`` (the variants with a check share its ranker).
# Issue #51: ``tdp-static`` too (it was a transfer target, attacked with ``tdp``'s weights).
OWN_RANKERS = ("tdp-static", "tdp-mix", "tdp-raw")
# TDP variants whose check the white-box surrogate models (``tdp-disputed``'s abstention where the
# entity's pages disagree): the attack against them is re-optimised for that check.
MODELLED_CHECKS = ("tdp-disputed", "tdp-paired")


def adaptive_target(defense: str) -> str:
    return defense if defense in OWN_RANKERS or defense in MODELLED_CHECKS else "tdp"


def aim_of(options: dict[str, Any]) -> str:
    """Under ``--questions conflict`` the attack aims at the conflict questions themselves."""
    return "conflict" if options.get("questions") == "conflict" else "targeted"


def targets_for(options: dict[str, Any]) -> int:
    return int(options.get("targets") or DEFAULT_TARGETS.get(options.get("dataset", "world"), 20))


def build_scenario(task: TaskSpec) -> Scenario:
    p = task.params
    name, world = p.get("dataset", "world"), int(p.get("world", EVAL_WORLD_BASE))
    attack, budget, method = p.get("attack", NO_ATTACK), int(p.get("budget", 5)), p.get("communities", "louvain")
    if is_global(str(p.get("question", ""))):
        built = poisoned_global(name, world, attack, budget, method, extractor_of(p))
    else:
        built = poisoned(name, world, attack, budget, targets_for(p), method, adaptive_target(p.get("defense", "none")),
                         aim_of(p), extractor_of(p), str(p.get("dress", "length")), str(p.get("pages", "one")),
                         str(p.get("wording", "writer")))
    return Scenario(load_dataset(name, world, str(p.get("pages", "one"))), built.index, built.poison, built.attacker_answers,
                    make_defense(p.get("defense", "none")))


def world_seeds(options: dict[str, Any]) -> list[int]:
    if options.get("dataset", "world") == "world":
        first = int(options.get("first_world", EVAL_WORLD_BASE))
        return [first + i for i in range(int(options.get("worlds", 4)))]
    return [0]


def check_options(options: dict[str, Any]) -> None:
    for name, least in (("worlds", 1), ("budget", 1), ("targets", 0), ("first_world", 0)):
        if name in options and int(options[name]) < least:
            raise UsageError(f"--{name}: must be at least {least}, got {options[name]}")
    extractor_of(options)  # -O extractor=llm without a model fails before the run
    attack = options.get("attack", NO_ATTACK)
    if options.get("questions") == "global" and attack not in (NO_ATTACK, *GLOBAL_ATTACKS):
        raise UsageError(f"--attack {attack}: global questions take {', '.join((NO_ATTACK, *GLOBAL_ATTACKS))}")


def task_ids(options: dict[str, Any]) -> list[str]:
    """``--questions targeted`` (default): the questions the attack plan can flip, the same for
    every attack; ``conflict``: the questions whose gold path crosses a natural conflict of the
    clean data (superseded facts, disagreeing sources, multi-valued relations; an attack then
    aims at them); ``all``: every question."""
    check_options(options)
    name, pages = options.get("dataset", "world"), str(options.get("pages", "one"))
    which = options.get("questions", "targeted")
    ids = []
    for world in world_seeds(options):
        if which == "global":
            chosen = [q.id for q in global_questions(load_dataset(name, world))]
        elif which == "targeted":  # the attack plan alone: listing builds no index
            plan = attack_plan(load_dataset(name, world, pages), targets_for(options), world)
            chosen = [q for t in plan.targets for q in t.questions]
        else:
            data = load_dataset(name, world, pages)
            chosen = [q.id for q in data.questions if which == "all" or data.crosses_conflict(q)]
        ids += [f"{name}-{world}-{q}" for q in chosen]
    return sorted(ids, key=lambda s: (s.rsplit("-", 1)[0], s.rsplit("-", 1)[1][0], int(s.rsplit("-", 1)[1][1:])))


@dataclass(frozen=True)
class ScenarioBuilder:
    """Builds a task's scenario under the run's options (attack, defense, budget...). The
    options live here, not in the task the agent is handed: its task names the dataset, world
    and question, never the attack or the defense."""

    options: tuple[tuple[str, Any], ...]

    def __call__(self, task: TaskSpec) -> Scenario:
        return build_scenario(TaskSpec(task.id, {**task.params, **dict(self.options)}))


def make_env(task: str, options: dict[str, Any]) -> GraphRAGEnv:
    return GraphRAGEnv(parse_task_id(task), builder=ScenarioBuilder(tuple(sorted(options.items()))))


def summarize(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    """Accuracy and attack success per agent, bootstrapped over worlds (``agentbed run``)."""
    from agentbed.stats import bootstrap_ci
    from agentbed.summary import fmt, headline, table

    opts = " ".join(f"--{k} {v}" for k, v in sorted(options.items()))
    heads, rows = [], []
    for agent in sorted({r["agent"] for r in records}):
        recs = [r for r in records if r["agent"] == agent and r["status"] != "error"]
        groups = [r["task"].rsplit("-", 1)[0] for r in recs]
        acc = bootstrap_ci([float(r["metrics"].get("correct", False)) for r in recs], groups=groups)
        asr = bootstrap_ci([float(r["metrics"].get("attack_success", False)) for r in recs], groups=groups)
        heads.append(headline("accuracy", acc, agent=agent))
        if options.get("attack", NO_ATTACK) != NO_ATTACK:
            heads.append(headline("attack_success", asr, agent=agent, higher_is_better=False))
        removed = sum(r["metrics"].get("removed_clean", 0) for r in recs)
        kept = sum(r["metrics"].get("retrieved_clean", 0) for r in recs)
        rows.append([agent, len(recs), len(set(groups)), fmt(acc), fmt(asr), f"{removed}/{kept}",
                     len(records) - len(recs)])
    return {"suite": "graphrag", "title": f"GraphRAG poisoning ({opts})", "episodes": len(records),
            "seeds": len({r["seed"] for r in records}), "headline": heads, "figures": [],
            "tables": [table("Accuracy and attack success (95% cluster bootstrap over worlds)",
                             ["agent", "episodes", "worlds", "accuracy", "attack success", "clean removed",
                              "errors"], rows)],
            "command": f"agentbed run graphrag {opts}"}


def graphrag_suite(demo: Callable[[Any], dict[str, Any]] | None = None) -> Suite:
    """The suite's definition; the composition's entry point (suite.py) adds the demo."""
    return Suite(
        name="graphrag",
        description="GraphRAG poisoning (PoisonedRAG, GragPoison, community, KEPo, TKPA) and defenses incl. TDP.",
        tasks=task_ids,
        make_env=make_env,
        agents={"reader": lambda setup: ReaderAgent()},
        default_agent="reader",
        options={
            "dataset": Option("world", "generated worlds or a real graph (pykeen's three, GeoNames; held out: gazetteer, periodic)", choices=DATASETS),
            "attack": Option(NO_ATTACK, "poisoning attack", choices=(NO_ATTACK, *ATTACKS)),
            "defense": Option("none", "retrieval defense", choices=DEFENSES),
            "worlds": Option(4, "number of generated evaluation worlds", type=int),
            "first_world": Option(EVAL_WORLD_BASE, "the first generated evaluation world's seed (development "
                                  "worlds 4-7: 4; 0-3 train TDP)", type=int),
            "budget": Option(5, "poison documents per contested fact (and 4 statements each)", type=int),
            "targets": Option(0, "questions targeted per world (0: dataset default)", type=int),
            "questions": Option("targeted", "which questions: targeted by the attack plan, crossing a natural "
                                "conflict of the clean data, all local ones, or global (answered from community "
                                "reports)", choices=("targeted", "conflict", "all", "global")),
            "communities": Option("louvain", "community detection", choices=("louvain", "leiden")),
            "extractor": Option("rules", "the index's triple extractor: rules (the baseline), spacy (the pinned "
                                "English pipeline) or llm (GraphRAG's extraction prompt through extractor_model)",
                                choices=("rules", "spacy", "llm", "spacy-rules")),
            "extractor_model": Option("", "with extractor=llm: local:NAME (served by the run, e.g. the agent's "
                                      "model) or provider:model"),
            "dress": Option("length", "attack documents' camouflage: length (cut or padded to a clean page's length) "
                            "or shape (a clean page's title form and statement counts, filled with true facts), or entity "
                            "(the claims placed on pages titled after the entities they name, then shaped)",
                            choices=DRESSES),
            "wording": Option("writer", "the attack's sentences: as its writer words them (writer), or re-worded "
                              "until the index's extractor reads each claim (read: an attacker who knows the "
                              "extractor)", choices=WORDINGS),
            "pages": Option("one", "clean pages per entity: one (every table before issue 50 item 3's second round) "
                            "or several (half the entities get a second page under their name, as wikis and news "
                            "have)", choices=PAGES),
        },
        default_seeds=1,
        budget=Budget(max_steps=12),
        summarize=summarize,
        demo=demo,
    )
