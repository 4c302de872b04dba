"""``agentbed oversight build``: branch a benchmark's base-agent trajectories into a dataset file
(controllers/oversight/dataset.py), every setting recorded with the one command that rebuilds it;
and the argument types the other oversight verbs share."""

from __future__ import annotations

import argparse
import shlex
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from agentbed.arguments import check_output_file
from agentbed.errors import UsageError
from agentbed.streams import SEEDINGS as BASE_SEEDINGS
from attacks.graphrag.camouflage import DRESSES
from controllers.oversight.dataset import BRANCH_SEEDING, LEGACY_SEEDING, BuildConfig
from suites.oversight.benchmarks import TARGETS
from suites.oversight.benchmarks.alfworld import DEFAULT_REGIME, REFLECT_MODES, REGIMES
from suites.oversight.benchmarks.graphrag import DEFAULT_DRESS
from suites.oversight.build import SEEDED_BASE_AGENTS, build_dataset
from suites.oversight.seeds import describe_seeds


def register(verbs: Any) -> None:
    build = verbs.add_parser("build", help="branch base-agent trajectories into a dataset file")
    build.add_argument("benchmark", help=f"one of: {', '.join(sorted(TARGETS))}, or suite:NAME for any suite")
    build.add_argument("--out", required=True, help="dataset file to write (JSON Lines)")
    build.add_argument("--games", type=positive, default=None, help="use the first N games (default: all)")
    build.add_argument("--skip-games", "--offset", dest="skip_games", type=nonnegative, default=0,
                       help="game offset: leave out the first N games (e.g. games never looked at while designing)")
    build.add_argument("--games-seed", type=nonnegative, default=0,
                       help="alfworld: the game generator's seed (another seed gives games the controllers never saw)")
    build.add_argument("--split", choices=("development", "held-out"), default=None,
                       help="scienceworld, graphrag, suite:NAME: only the games of this side of the benchmark's "
                            "registered split (suites/oversight/seeds.py); alfworld's split is --games-seed")
    build.add_argument("--regime", choices=sorted(REGIMES), default=None,
                       help=f"alfworld: the intervention setting (default {DEFAULT_REGIME}: the benchmark's "
                            "configuration; free: a flawless, unlimited, free expert, as public reconstructions of the paper's protocol have it); the --expert-* "
                            "flags below override its values")
    build.add_argument("--expert-as-shipped", action="store_true",
                       help="alfworld: ALFWorld's expert exactly as released (it never learns that 'move O to R' put O "
                            "down); only to reproduce numbers measured before the fix became the default")
    build.add_argument("--fix-expert-bookkeeping", action="store_true",
                       help="alfworld: the default now; accepted so that older command lines still run")
    build.add_argument("--expert-noise", type=_rate, default=None,
                       help="alfworld: the expert's slip rate per step (a random admissible command instead of its plan's)")
    build.add_argument("--expert-budget", type=_budget, default=None,
                       help="alfworld: steps the expert may take before it gives up (the branch ends, failed); "
                            "'none' for no budget")
    build.add_argument("--expert-step-cost", type=float, default=None,
                       help="alfworld: the extra cost per expert step that evaluate charges by default (recorded "
                            "in the dataset; evaluate --action-step-cost overrides it)")
    build.add_argument("--reflect", choices=REFLECT_MODES, default="mechanism",
                       help="alfworld: what 'reflect' does: its mechanisms alone (default), or with the assumed "
                            "flaw-rate cut as datasets built before issue 54 recorded it (the cut alone is the "
                            "separate intervention 'reflect-cut')")
    build.add_argument("--seeding", choices=("branch", "legacy"), default="branch",
                       help="how a branch's random streams are seeded: from the game, base agent, trajectory, "
                            "checkpoint and rollout (default), or, to rebuild datasets from before issue 54, from "
                            "the trajectory, checkpoint and rollout only (slips shared by every game)")
    build.add_argument("--base-seeding", choices=BASE_SEEDINGS, default="game",
                       help="alfworld, scienceworld, vault: how the scripted base agents seed their flaws and "
                            "stated-risk noise: from the game, agent and trajectory seed (default), or, to rebuild "
                            "datasets whose provenance records no base_seeding, without the game (every game the "
                            "same streams)")
    build.add_argument("--dress", choices=DRESSES, default=None,
                       help=f"graphrag: the attack documents' camouflage (default {DEFAULT_DRESS}, the suite's); "
                            "titled rebuilds datasets whose provenance records no dress")
    build.add_argument("--flaws", default="", help="comma-separated scripted base agents (default: all, or none with --model)")
    build.add_argument("--model", default="", help="branch a chat model as base agent (provider:model); alone unless --flaws names scripted ones")
    build.add_argument("--server-threads", type=positive, default=None,
                       help="a local: model's llama.cpp server threads (default: every core; 1 leaves a core to others)")
    build.add_argument("--seeds", type=positive, default=1, help="base trajectories per game and flaw")
    build.add_argument("--rollouts", type=positive, default=2, help="rollouts per candidate action")
    build.add_argument("--checkpoints", type=positive, default=3, help="checkpoints per trajectory")
    build.add_argument("--first", type=nonnegative, default=2, help="step of the first checkpoint")
    build.add_argument("--every", type=positive, default=4, help="steps between checkpoints")
    build.add_argument("--max-steps", type=positive, default=None,
                       help="step cap per episode and branch (default: the benchmark's, ALFWorld 50)")
    build.add_argument("--method", choices=("auto", "snapshot", "replay"), default="auto")
    build.add_argument("--workers", type=positive, default=1, help="processes")
    build.add_argument("--base-agents", default="", help="suite:NAME only: comma-separated base agents")
    build.add_argument("--interventions", default="",
                       help="comma-separated interventions: suite:NAME's handover agents; alfworld's menu "
                            "(default expert,planner,reflect)")
    build.add_argument("--target-option", action="append", default=[], metavar="KEY=VALUE",
                       help="agentdojo: attack, pairs, follow_rate, risk_noise (every one recorded)")
    build.add_argument("--logs", default=None, help="directory for one trajectory log per branch")
    build.set_defaults(func=_build)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def nonnegative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def command_line() -> str:
    return "agentbed " + shlex.join(sys.argv[1:])


def _build(args: argparse.Namespace) -> int:
    check_output_file(Path(args.out), "--out")  # before the branching, not after
    if args.benchmark not in TARGETS and not args.benchmark.startswith("suite:"):
        raise UsageError(f"benchmark: unknown {args.benchmark!r}; benchmarks: {', '.join(sorted(TARGETS))}, suite:NAME")
    options: dict[str, Any] = {}
    expert_flags = {"--expert-as-shipped": args.expert_as_shipped, "--fix-expert-bookkeeping": args.fix_expert_bookkeeping,
                    "--expert-noise": args.expert_noise is not None, "--expert-budget": args.expert_budget is not None,
                    "--regime": args.regime is not None, "--reflect": args.reflect != "mechanism",
                    "--expert-step-cost": args.expert_step_cost is not None}
    if args.benchmark == "alfworld":
        if args.expert_as_shipped and args.fix_expert_bookkeeping:
            raise UsageError("--expert-as-shipped and --fix-expert-bookkeeping contradict each other")
        options = alfworld_options(args)
    elif args.games_seed:
        raise UsageError(f"--games-seed: {args.benchmark} has no game generator (alfworld has)")
    elif any(expert_flags.values()):
        flag = next(f for f, given in expert_flags.items() if given)
        raise UsageError(f"{flag}: {args.benchmark} has no ALFWorld expert (alfworld has)")
    if args.benchmark.startswith("suite:"):
        options = {"base": args.base_agents, "interventions": args.interventions}
    if args.benchmark == "agentdojo":
        from suites.oversight.benchmarks.agentdojo import options_from

        options = options_from(args.target_option)
    elif args.target_option:
        raise UsageError(f"--target-option: {args.benchmark} takes none (agentdojo does)")
    if args.benchmark in SEEDED_BASE_AGENTS:  # recorded, the default included (alfworld's is in its options)
        options["base_seeding"] = args.base_seeding
    elif args.benchmark != "alfworld" and args.base_seeding != "game":
        raise UsageError(f"--base-seeding: {args.benchmark}'s base agents are not the scripted flawed ones "
                         "(alfworld, scienceworld and vault have them)")
    if args.split and args.benchmark == "alfworld":
        raise UsageError("--split: alfworld's split is its generator seed (--games-seed; suites/oversight/seeds.py)")
    if args.benchmark == "graphrag":  # recorded, default included (a default may change, as it did)
        options["dress"] = args.dress or DEFAULT_DRESS
    elif args.dress:
        raise UsageError(f"--dress: {args.benchmark} has no attack documents (graphrag has)")
    options.update({"split": args.split} if args.split else {})
    config = BuildConfig(benchmark=args.benchmark, games=args.games, skip_games=args.skip_games,
                         flaws=[f for f in args.flaws.split(",") if f] + ([f"model:{args.model}"] if args.model else []),
                         seeds=args.seeds, first=args.first,
                         every=args.every, checkpoints=args.checkpoints, rollouts=args.rollouts, method=args.method,
                         workers=args.workers, target_options=options, max_steps=args.max_steps,
                         seeding=BRANCH_SEEDING if args.seeding == "branch" else LEGACY_SEEDING)
    with _local_server(args.model, Path(args.out).parent, args.server_threads):
        dataset = build_dataset(config, log_dir=args.logs, progress=lambda m: print(m, file=sys.stderr, flush=True))
    dataset.provenance["command"] = command_line()
    dataset.provenance["generator_seeds"] = describe_seeds(dataset.provenance)
    path = dataset.save(args.out)
    counts = dataset.provenance["counts"]
    print(f"wrote {path}: {len(dataset.rows)} rows, {counts['checkpoints']} checkpoints, "
          f"{counts['replay_mismatches']} replay mismatches and {counts['branch_errors']} branch errors discarded")
    print(f"seeds: {dataset.provenance['generator_seeds']}")
    return 0


def alfworld_options(args: argparse.Namespace) -> dict[str, Any]:
    """The alfworld target's options from the build flags, every setting recorded, zero values
    included (an expert that never slips records rate 0, no budget records null)."""
    options: dict[str, Any] = {"games": args.skip_games + args.games} if args.games else {}
    options.update({"games_seed": args.games_seed} if args.games_seed else {})
    options.update({"expert_as_shipped": True} if args.expert_as_shipped else {})
    if args.expert_step_cost is not None and args.expert_step_cost < 0:
        raise UsageError(f"--expert-step-cost: must not be negative, got {args.expert_step_cost}")
    regime = args.regime or DEFAULT_REGIME
    chosen = {**REGIMES[regime], **{k: v for k, v in (("expert_noise", args.expert_noise),
                                                       ("expert_budget", args.expert_budget),
                                                       ("expert_step_cost", args.expert_step_cost)) if v is not None}}
    options["regime"] = regime
    options.update({"expert_noise": float(chosen.get("expert_noise") or 0.0),
                    "expert_budget": chosen.get("expert_budget") or None,
                    "expert_step_cost": float(chosen.get("expert_step_cost") or 0.0),
                    "reflect": args.reflect, "base_seeding": args.base_seeding})
    options.update({"interventions": args.interventions} if args.interventions else {})
    return options


def _budget(text: str) -> int:
    return 0 if text == "none" else positive(text)


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate in [0, 1]")
    return value


def _local_server(model: str, run_dir: Path, threads: int | None = None) -> Any:
    """A ``local:`` model needs its llama.cpp server for the build (workers find it through the
    environment); any other model, none. On a shared small CPU one thread can be faster than
    every core: llama.cpp's threads wait for each other, so one preempted thread stalls them all."""
    if not model.startswith("local:"):
        return nullcontext()
    from agentbed.agents.local.server import ServerSettings, serving

    run_dir.mkdir(parents=True, exist_ok=True)
    return serving([model], run_dir, ServerSettings(threads=threads))
