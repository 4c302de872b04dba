"""Building the branched dataset: every candidate action executed from the identical state.

For each (game, base agent, seed) the base agent runs live; at each checkpoint t (before the
action it proposes at t is executed) the state is reconstructed once per branch, by snapshot
or by verified replay of the prefix (the engine's :class:`agentbed.branch.ForkPoint`), and each candidate
action (continue, every intervention) is rolled out ``rollouts`` times through the engine's
runner. Quit is not rolled out: its utility is 0 by definition. Replays that do not reproduce
the prefix are discarded and counted, as are branches that end in an error.

The dataset is JSON Lines: the first line ``{"provenance": ...}``, then one row per branch
with the prefix features, the action, the rollout, success and steps. Utilities are computed
from success and steps at evaluation time, so one dataset serves every cost setting.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.branch import ForkPoint, Prefix, PrefixMismatch
from agentbed.control import StepView
from agentbed.env import ToolEnv
from agentbed.errors import UsageError
from agentbed.log import TrajectoryWriter
from agentbed.runner import VERSIONS, Budget, EpisodeSpec
from agentbed.validate import MAX_JSON_BYTES, parse_json, read_bytes
from controllers.oversight.features import FEATURE_NAMES, prefix_features
from controllers.oversight.target import BranchTarget, TargetLoader, reseed_agent
from controllers.oversight.utility import CONTINUE

SCHEMA = "agentbed.oversight.dataset/1"
# How a branch's random streams (the expert's slips, a stochastic agent, Python's random) are
# seeded. LEGACY_SEEDING, the scheme of every dataset built before issue 54, draws from
# (trajectory seed, checkpoint step, rollout) only: every game and base agent share one slip
# schedule per (step, rollout), so slips are perfectly correlated across games. BRANCH_SEEDING
# (the default) also hashes in the game and the base agent, so slips are independent draws at the
# stated rate. A dataset records its scheme (``config.seeding``); one without it is LEGACY_SEEDING.
LEGACY_SEEDING = "trajectory,checkpoint,rollout"
BRANCH_SEEDING = "game,agent,trajectory,checkpoint,rollout"
SEEDINGS = (BRANCH_SEEDING, LEGACY_SEEDING)
ROW_FIELDS = ("benchmark", "game", "flaw", "seed", "trajectory", "checkpoint", "action", "rollout", "success",
              "steps", "status", "method", "risk", "features")


@dataclass
class BuildConfig:
    """What to branch. Checkpoints are at steps first, first+every, ... (at most ``checkpoints``), or
    where the target says (``BranchTarget.checkpoint_when``: first and every are then unused)."""

    benchmark: str
    games: int | None = None  # first N games of the benchmark (after skip_games); None: all
    skip_games: int = 0  # leave out the first games, e.g. to test features on games never looked at
    flaws: list[str] = field(default_factory=list)  # base agents; empty: all of the benchmark's
    seeds: int = 1  # base trajectories per game and flaw
    first: int = 2
    every: int = 4
    checkpoints: int = 3
    rollouts: int = 2
    method: str = "auto"
    workers: int = 1
    target_options: dict[str, Any] = field(default_factory=dict)
    max_steps: int | None = None  # step cap per episode and branch; None: the benchmark's own
    seeding: str = BRANCH_SEEDING  # see SEEDINGS; a recorded config without it is LEGACY_SEEDING

    def __post_init__(self) -> None:
        if self.seeding not in SEEDINGS:
            raise UsageError(f"seeding: unknown scheme {self.seeding!r}; schemes: {', '.join(SEEDINGS)}")

    def checkpoint_steps(self, max_steps: int) -> list[int]:
        return [s for s in (self.first + i * self.every for i in range(self.checkpoints)) if s < max_steps]


@dataclass
class Dataset:
    provenance: dict[str, Any]
    rows: list[dict[str, Any]]

    def save(self, path: str | Path) -> Path:
        """Write JSON Lines; a name ending in .gz is gzip-compressed (with no timestamp, so the
        same dataset always gives the same bytes and sha256)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        lines = [json.dumps({"provenance": self.provenance}, sort_keys=True)]
        lines += [json.dumps(row, sort_keys=True) for row in self.rows]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        tmp.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Dataset:
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"{path}: no such dataset file")
        # bounded, strict UTF-8, finite, not too deep (agentbed.validate): bad bytes are one line
        data = read_bytes(path, limit=16 * MAX_JSON_BYTES, what="oversight dataset")
        if path.suffix == ".gz":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise UsageError(f"{path}: not a gzip file ({exc})") from None
        lines = data.splitlines()
        head = parse_json(lines[0], f"{path}:1") if lines and lines[0].strip() else {}
        provenance = head.get("provenance") if isinstance(head, dict) else None
        if not isinstance(provenance, dict) or provenance.get("schema") != SCHEMA:
            raise UsageError(f"{path}:1: not an oversight dataset (expected provenance.schema {SCHEMA!r})")
        rows = []
        for i, line in enumerate(lines[1:], start=2):
            row = parse_json(line, f"{path}:{i}")
            if not isinstance(row, dict):
                raise UsageError(f"{path}:{i}: a row must be a JSON object")
            missing = [f for f in ROW_FIELDS if f not in row]
            if missing:
                raise UsageError(f"{path}:{i}: row lacks field {missing[0]!r}")
            rows.append(row)
        return cls(head["provenance"], rows)


@dataclass
class _Counts:
    trajectories: int = 0
    checkpoints: int = 0
    branches: int = 0
    replays: int = 0
    replay_mismatches: int = 0
    branch_errors: int = 0
    trajectory_errors: int = 0
    base_steps: int = 0
    missing_risk_steps: int = 0  # base-agent steps without a stated confidence (carried forward)
    missing_risk_checkpoints: int = 0
    mismatch_examples: list[dict[str, Any]] = field(default_factory=list)
    error_examples: list[str] = field(default_factory=list)

    def add(self, other: _Counts) -> None:
        for name in ("trajectories", "checkpoints", "branches", "replays", "replay_mismatches", "branch_errors",
                     "trajectory_errors", "base_steps", "missing_risk_steps", "missing_risk_checkpoints"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.mismatch_examples = (self.mismatch_examples + other.mismatch_examples)[:5]
        self.error_examples = (self.error_examples + other.error_examples)[:3]


def checkpoint_features(target: BranchTarget, first_observation: str, history: Sequence[StepView],
                        risks: Sequence[float]) -> dict[str, float]:
    """The prefix features at a checkpoint: the generic ones, then the benchmark's own."""
    features = prefix_features(history, risks, first_observation, target.max_steps)
    if target.progress_features is not None:
        features.update(target.progress_features(first_observation, history))
    return features


def stated_risk(risk: float | None, earlier: Sequence[float]) -> float:
    """The risk score of a step: the agent's stated one, or when it stated none (a chat reply
    without a parsable confidence) the last one it stated, 0.5 before any. Such steps are
    counted in the dataset's provenance and reported, never hidden."""
    if risk is not None:
        return float(risk)
    return earlier[-1] if earlier else 0.5


def branch_seed(seeding: str, game: str, flaw: str, seed: int, step: int, rollout: int) -> int:
    """The seed of one branch's random streams under ``seeding`` (see SEEDINGS)."""
    if seeding == LEGACY_SEEDING:
        return (seed * 1_000_003 + step * 1009 + rollout) % (2**31)
    key = json.dumps([game, flaw, seed, step, rollout]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") % (2**31)


def branch_agent(target: BranchTarget, env: ToolEnv, base_copy: Agent, action: str, rollout: int, rseed: int,
                 seeding: str) -> Agent:
    """The agent that plays ``action``'s branch, every random stream of it seeded from ``rseed``
    (:func:`branch_seed`): Python's ``random`` (which the intervention's factory may draw from)
    and the agent's own (``reseed``)."""
    if target.uses_global_random:
        random.seed(rseed)
    agent = base_copy.fork() if action == CONTINUE else target.interventions[action](env, base_copy.fork())
    if rollout > 0 or seeding != LEGACY_SEEDING:  # legacy: rollout 0 kept the base agent's own stream
        reseed_agent(agent, rseed)
    return agent


def _branch(target: BranchTarget, point: ForkPoint, base_copy: Agent, action: str, rollout: int,
            spec: EpisodeSpec, counts: _Counts, log_dir: Path | None, flaw: str = "",
            seeding: str = LEGACY_SEEDING) -> dict[str, Any] | None:
    """One rollout of ``action`` from the fork point; None when the replay diverged or it errored."""
    counts.branches += 1
    replays_before = point.replays
    try:
        env = point.materialize()
    except PrefixMismatch as exc:
        counts.replays += 1
        counts.replay_mismatches += 1
        counts.mismatch_examples.append({"task": spec.task, "seed": spec.seed, "checkpoint": point.at_step,
                                         "diverged_at": exc.step, "field": exc.field})
        return None
    counts.replays += point.replays - replays_before
    rseed = branch_seed(seeding, spec.task, flaw, spec.seed, point.at_step, rollout)
    try:
        agent = branch_agent(target, env, base_copy, action, rollout, rseed, seeding)
    except Exception as exc:  # noqa: BLE001 - an intervention that does not apply here is a counted error
        counts.branch_errors += 1
        counts.error_examples = (counts.error_examples + [f"{action}: {type(exc).__name__}: {exc}"])[:3]
        return None
    writer = TrajectoryWriter(log_dir / f"{spec.episode_id}.jsonl") if log_dir is not None else None
    cap = min(target.max_steps, point.at_step + target.budgets.get(action, target.max_steps))
    record = point.run(agent, spec, budget=Budget(max_steps=cap), writer=writer, env=env)
    if record.status == "error":
        counts.branch_errors += 1
        counts.error_examples.append(record.error.strip().splitlines()[-1][:300] if record.error else "error")
        return None
    return {"success": bool(record.success), "steps": int(record.steps), "status": record.status}


def branch_trajectory(target: BranchTarget, game: str, flaw: str, seed: int, config: BuildConfig,
                      log_dir: Path | None = None) -> tuple[list[dict[str, Any]], _Counts]:
    """Run one base trajectory and branch it at every checkpoint it reaches."""
    counts = _Counts(trajectories=1)
    rows: list[dict[str, Any]] = []
    if target.uses_global_random:
        random.seed(seed)
    env, branch_env = _envs(target, game)
    agent = make_base_agent(target, flaw, seed)
    observation, _ = env.reset(seed=seed)
    agent.reset(seed=seed, task=env.task)
    tools = env.tool_specs()
    first_observation, actions_so_far, history = observation, [], []
    risks: list[float] = []
    trajectory = f"{target.name}.{game}.{flaw}.s{seed}"
    wanted = set(config.checkpoint_steps(target.max_steps))
    actions = [CONTINUE, *target.interventions]
    method = config.method if config.method != "auto" else ("snapshot" if env.can_snapshot else "replay")
    for t in range(target.max_steps):
        at_checkpoint = (t in wanted if target.checkpoint_when is None
                         else counts.checkpoints < config.checkpoints and target.checkpoint_when(history))
        before = agent.fork() if at_checkpoint else None
        try:
            proposed = agent.act(observation, tools)
        except Exception as exc:  # noqa: BLE001 - a crashing base agent ends its trajectory, counted
            counts.trajectory_errors += 1
            counts.error_examples = (counts.error_examples + [f"{trajectory} step {t}: {type(exc).__name__}: {exc}"])[:3]
            break
        counts.base_steps += 1
        missing = proposed.risk is None
        counts.missing_risk_steps += missing
        risks.append(stated_risk(proposed.risk, risks))
        if before is not None:
            counts.checkpoints += 1
            counts.missing_risk_checkpoints += missing
            prefix = Prefix(game, seed, list(actions_so_far), [first_observation] + [h.observation for h in history],
                            episode_id=trajectory)
            point = ForkPoint(lambda: branch_env, prefix, t, method,
                              seed_global_random=target.uses_global_random)
            features = checkpoint_features(target, first_observation, history, risks)
            for action in actions:
                for r in range(config.rollouts):
                    spec = EpisodeSpec(suite=f"oversight-{target.name}", task=game, agent=f"{flaw}.{action}",
                                       seed=seed, options={"checkpoint": t, "rollout": r})
                    result = _branch(target, point, before, action, r, spec, counts, log_dir, flaw,
                                     config.seeding)
                    if result is not None:
                        rows.append({"benchmark": target.name, "game": game, "group": target.group_of(game),
                                     "flaw": flaw, "seed": seed, "risk_missing": missing,
                                     "trajectory": trajectory, "checkpoint": t, "action": action, "rollout": r,
                                     "method": method, "risk": risks[-1], "features": features,
                                     **result})
        observation, _reward, terminated, truncated, info = env.step(proposed.text)
        actions_so_far.append(proposed.text)
        history.append(StepView(observation, proposed.text, _reward, info))
        if terminated or truncated:
            break
    return rows, counts


_ENVS: dict[tuple[str, str], tuple[ToolEnv, ToolEnv]] = {}


def _envs(target: BranchTarget, game: str) -> tuple[ToolEnv, ToolEnv]:
    """Two environments for ``game`` (the live trajectory's and the branches'), reused across
    trajectories of the same game: ``reset`` rebuilds an episode completely, while building an
    environment can cost seconds (ALFWorld parses its PDDL, ScienceWorld starts a JVM).
    Branches run one at a time, so one environment serves all of them; the verified replay
    would expose any state a reset failed to clear."""
    key = (target.name, game)
    if key not in _ENVS:
        for live, branch in _ENVS.values():
            live.close()
            branch.close()
        _ENVS.clear()
        _ENVS[key] = (target.make_env(game), target.make_env(game))
    return _ENVS[key]


def make_base_agent(target: BranchTarget, flaw: str, seed: int) -> Agent:
    """A named base agent of the target, or ``model:provider:model`` for a chat model (its
    stated confidence is the risk score; sampled at a temperature above 0 with a seed per
    rollout, see :mod:`controllers.oversight.chat_base`)."""
    if flaw.startswith("model:"):
        from controllers.oversight.chat_base import chat_base_agent

        return chat_base_agent(flaw.removeprefix("model:"), seed)
    return target.base_agents[flaw](seed)


def _unit(args: tuple[TargetLoader, str, dict[str, Any], str, str, int, BuildConfig, str | None]
          ) -> tuple[list[dict], _Counts]:
    load_target, name, options, game, flaw, seed, config, log_dir = args
    target = _capped(load_target(name, **options), config)
    return branch_trajectory(target, game, flaw, seed, config, Path(log_dir) if log_dir else None)


def _capped(target: BranchTarget, config: BuildConfig) -> BranchTarget:
    if config.max_steps is not None:
        target.max_steps = config.max_steps
    return target


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() if out.returncode == 0 else ""
    except OSError:
        return ""


def build_dataset(config: BuildConfig, load_target: TargetLoader, log_dir: str | Path | None = None,
                  progress: Callable[[str], None] | None = None) -> Dataset:
    """Branch every (game, flaw, seed) of ``config`` and return the rows with their provenance.

    ``load_target(name, **options)`` gives the benchmark (suites/oversight/benchmarks.load_target)."""
    target = _capped(load_target(config.benchmark, **config.target_options), config)
    games = target.games[config.skip_games:]
    if config.games and len(games) < config.games or not games:
        raise UsageError(f"--games {config.games or 'all'} --skip-games {config.skip_games}: {target.name} has "
                         f"only {len(target.games)} games")
    games = games[: config.games] if config.games else games
    models = [f for f in config.flaws if f.startswith("model:")]
    # the scripted agents named, or all of them unless a model is branched alone
    flaws = [f for f in config.flaws if not f.startswith("model:")] or ([] if models else list(target.base_agents))
    flaws += models
    for model in models:  # a model that cannot even be constructed (no provider package, no key) is bad input
        try:
            make_base_agent(target, model, 0)
        except Exception as exc:  # noqa: BLE001 - any provider error becomes one line
            raise UsageError(f"--model {model.removeprefix('model:')}: {type(exc).__name__}: {exc}") from None
    unknown = [f for f in flaws if f not in target.base_agents and not f.startswith("model:")]
    if unknown:
        raise UsageError(f"--flaws: {target.name} has no base agent {unknown[0]!r} "
                         f"(agents: {', '.join(target.base_agents)})")
    units = [(load_target, config.benchmark, config.target_options, g, f, s, config, str(log_dir) if log_dir else None)
             for g in games for f in flaws for s in range(config.seeds)]
    counts, rows = _Counts(), []
    per_flaw = {f: _Counts() for f in flaws}
    results: Iterable[tuple[list[dict], _Counts]]
    if config.workers > 1:
        pool = ProcessPoolExecutor(config.workers)
        results = pool.map(_unit, units)
    else:
        pool, results = None, map(_unit, units)
    try:
        for i, (unit, (unit_rows, unit_counts)) in enumerate(zip(units, results, strict=True), start=1):
            rows.extend(unit_rows)
            counts.add(unit_counts)
            per_flaw[unit[4]].add(unit_counts)
            if progress is not None:
                progress(f"{i}/{len(units)} trajectories, {len(rows)} rows")
    finally:
        if pool is not None:
            pool.shutdown()
    provenance = {
        "schema": SCHEMA, "benchmark": target.name, "config": asdict(config), "games": games, "flaws": flaws,
        "actions": [CONTINUE, *target.interventions, "quit"], "primary_intervention": target.primary_intervention,
        "max_steps": target.max_steps, "feature_names": [*FEATURE_NAMES, *target.progress_feature_names], "versions": VERSIONS,
        "git_commit": _git_commit(), "target_notes": target.notes, "budgets": dict(target.budgets), "counts": asdict(counts),
        "counts_per_flaw": {f: asdict(c) for f, c in per_flaw.items()}, "rows": len(rows),
    }
    return Dataset(provenance, rows)
