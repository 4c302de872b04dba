"""A seeded generator of ALFWorld games, written as PDDL problems against ALFWorld's own domain.

ALFWorld's game data (ALFRED scenes compiled to PDDL) is downloaded at set-up and cannot be
here, so the games are generated: for game ``index`` and generator ``seed`` a room kind, a
layout (how many cabinets, drawers, ...), the target object and receptacle, distractor
objects and their places are drawn from a ``random.Random`` seeded by (seed, index, attempt).
The PDDL domain, the text grammar, the goal formulas and the instruction templates all come
from the ``alfworld`` package (``alfred.pddl``, ``alfred.twl2``, ``alfworld.gen.goal_library``)
and the object/receptacle compatibility from ``alfworld.gen.constants``.

A draft is kept only if ALFWorld's handcoded expert wins it within the episode cap; otherwise
the next attempt is drawn. Game ``index`` is therefore the same game on every machine, and
task type ``TASK_TYPES[index % 6]`` keeps the six types balanced. Games ``index % 5 == 4``
form the fixed held-out split (whole games, balanced across types).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from environments.alfworld import game_archive
from environments.alfworld.layouts import (
    LAMP_STANDS,
    TASK_APPLIANCE,
    TASK_PROPERTY,
    TASK_ROOMS,
    TASK_TYPES,
    RoomKind,
)

GENERATOR_VERSION = 2
DEFAULT_SEED = 0
DEFAULT_GAME_COUNT = 320
MAX_EPISODE_STEPS = 50
MAX_ATTEMPTS = 20
HELDOUT_EVERY = 5
EXPERT_SEED = 0  # the handcoded expert's random stream, in the solvability check and in every episode

SHORT_NAMES = {"pick_and_place_simple": "simple", "look_at_obj_in_light": "light",
               "pick_clean_then_place_in_recep": "clean", "pick_heat_then_place_in_recep": "heat",
               "pick_cool_then_place_in_recep": "cool", "pick_two_obj_and_place": "two"}


def task_type_of(index: int) -> str:
    return TASK_TYPES[index % len(TASK_TYPES)]


def split_of(index: int) -> str:
    return "heldout" if index % HELDOUT_EVERY == HELDOUT_EVERY - 1 else "train"


def game_id(index: int, seed: int = DEFAULT_SEED) -> str:
    """``NNN-type`` for the default generator seed, ``sS-NNN-type`` for another: ids never collide
    across seeds, so a held-out set from another seed cannot share a game with a development set."""
    base = f"{index:03d}-{SHORT_NAMES[task_type_of(index)]}"
    return base if seed == DEFAULT_SEED else f"s{seed}-{base}"


def cache_root() -> Path:
    """Where generated games live: ``$AGENTBED_ALFWORLD_CACHE`` or ``<project>/.cache/alfworld``."""
    override = os.environ.get("AGENTBED_ALFWORLD_CACHE")
    base = Path(override) if override else Path(__file__).resolve().parents[2] / ".cache" / "alfworld"
    return base / f"v{GENERATOR_VERSION}"


@dataclass
class GameDraft:
    """One sampled game before it is written: everything needed for the PDDL problem."""

    index: int
    attempt: int
    task_type: str
    room: str
    object_target: str
    parent_target: str
    toggle_target: str
    receptacles: list[tuple[str, str, str]] = field(default_factory=list)  # (pddl id, type, location)
    objects: list[tuple[str, str, str]] = field(default_factory=list)  # (pddl id, type, receptacle id)
    start: str = ""
    task_desc: str = ""

    def pddl_params(self) -> dict[str, Any]:
        return {"object_target": self.object_target, "parent_target": self.parent_target,
                "toggle_target": self.toggle_target, "mrecep_target": "", "object_sliced": False}


def _receptacle_id(rtype: str, k: int) -> str:
    # ALFWorld's demangler turns ids containing "basin" into "sinkbasin"/"bathtubbasin".
    if rtype == "SinkBasin":
        return f"Sink_bar_{k}_bar_SinkBasin"
    if rtype == "BathtubBasin":
        return f"Bathtub_bar_{k}_bar_BathtubBasin"
    return f"{rtype}_bar_{k}"


def _homes(obj: str, present: list[str], fits: dict[str, list[str]]) -> list[str]:
    return [rt for rt in present if obj in fits.get(rt, ())]


def sample_game(index: int, seed: int = DEFAULT_SEED, attempt: int = 0) -> GameDraft | None:
    """Draw game ``index`` (try ``attempt``); ``None`` when the drawn room cannot host the task."""
    from alfworld.gen import constants, goal_library

    rng = random.Random(f"agentbed-alfworld:{seed}:{index}:{attempt}")
    task_type = task_type_of(index)
    room: RoomKind = rng.choice(TASK_ROOMS[task_type])
    counts = {rt: rng.randint(lo, hi) for rt, (lo, hi) in room.receptacles.items()}
    appliance = TASK_APPLIANCE.get(task_type)
    if appliance:
        counts[appliance] = max(1, counts[appliance])
    if task_type == "look_at_obj_in_light" and not any(counts.get(s, 0) for s in LAMP_STANDS):
        counts[rng.choice([s for s in LAMP_STANDS if s in counts])] = 1
    present = sorted(rt for rt, n in counts.items() if n > 0)
    fits = {rt: list(objs) for rt, objs in constants.VAL_RECEPTACLE_OBJECTS.items()}

    prop = TASK_PROPERTY.get(task_type)
    candidates: list[tuple[str, str]] = []
    for obj in room.objects:
        if prop and obj not in constants.VAL_ACTION_OBJECTS[prop]:
            continue
        homes = [rt for rt in _homes(obj, present, fits) if rt != appliance]
        if task_type == "look_at_obj_in_light":
            candidates += [(obj, "")] if homes else []
            continue
        for parent in homes:
            if any(h != parent for h in homes):  # the target must start somewhere else
                candidates.append((obj, parent))
    if not candidates:
        return None
    obj, parent = rng.choice(candidates)

    draft = GameDraft(index, attempt, task_type, room.name, obj, parent,
                      "DeskLamp" if task_type == "look_at_obj_in_light" else "")
    cells = rng.sample([(x, z) for x in range(-8, 9) for z in range(-8, 9)], sum(counts.values()) + 1)
    by_type: dict[str, list[str]] = {}
    for rtype in present:
        for k in range(1, counts[rtype] + 1):
            x, z = cells.pop()
            loc = f"loc_bar_{_num(x)}_bar_{_num(z)}_bar_{rng.randrange(4)}_bar_{rng.choice((0, 30, 45, 60))}"
            rid = _receptacle_id(rtype, k)
            draft.receptacles.append((rid, rtype, loc))
            by_type.setdefault(rtype, []).append(rid)
    x, z = cells.pop()
    draft.start = f"loc_bar_{_num(x)}_bar_{_num(z)}_bar_0_bar_30"

    serial: dict[str, int] = {}

    def place(otype: str, allowed: list[str], recep: str = "") -> None:
        serial[otype] = serial.get(otype, 0) + 1
        recep = recep or rng.choice([rid for rt in allowed for rid in by_type[rt]])
        draft.objects.append((f"{otype}_bar_{serial[otype]}", otype, recep))

    target_homes = [rt for rt in _homes(obj, present, fits) if rt not in (parent, appliance)]
    if task_type == "pick_two_obj_and_place":
        # Half the pick-two games keep the objects together: ALFWorld's expert, after placing the
        # first, searches again where it found it, and rarely wins within 50 steps otherwise.
        together = rng.choice([rid for rt in target_homes for rid in by_type[rt]]) if rng.random() < 0.5 else ""
        for _ in range(rng.randint(2, 3)):
            place(obj, target_homes, together)
    else:
        for _ in range(rng.randint(1, 2)):
            place(obj, target_homes)
    if draft.toggle_target:
        place("DeskLamp", [s for s in LAMP_STANDS if s in by_type])
    others = [o for o in room.objects if o != obj and _homes(o, present, fits)]
    for otype in rng.sample(others, min(len(others), rng.randint(4, 10))):
        for _ in range(rng.randint(1, 2)):
            place(otype, _homes(otype, present, fits))

    template = rng.choice(goal_library.gdict[task_type]["templates"])
    draft.task_desc = template.format(obj=obj.lower(), recep=parent.lower(), toggle=draft.toggle_target.lower(),
                                      mrecep="")
    return draft


def _num(value: int) -> str:
    return f"_minus_{-value}" if value < 0 else str(value)


def render_problem(draft: GameDraft) -> str:
    """The PDDL problem of a draft against ALFWorld's ``alfred`` domain."""
    from alfworld.gen import constants, goal_library

    otypes = sorted({t for _, t, _ in draft.objects} | {draft.object_target} | ({draft.toggle_target} - {""}))
    rtypes = sorted({t for _, t, _ in draft.receptacles} | ({draft.parent_target} - {""}))
    locations = sorted({loc for _, _, loc in draft.receptacles} | {draft.start})
    loc_of = {rid: loc for rid, _, loc in draft.receptacles}
    decl = (["agent1 - agent"] + [f"{oid} - object" for oid, _, _ in draft.objects]
            + [f"{rid} - receptacle" for rid, _, _ in draft.receptacles] + [f"{loc} - location" for loc in locations]
            + [f"{t}Type - otype" for t in otypes] + [f"{t}Type - rtype" for t in rtypes])
    facts = [f"(atLocation agent1 {draft.start})"]
    for rid, rtype, loc in draft.receptacles:
        facts += [f"(receptacleType {rid} {rtype}Type)", f"(receptacleAtLocation {rid} {loc})"]
        if rtype in constants.OPENABLE_CLASS_LIST:
            facts.append(f"(openable {rid})")
    properties = {"Heatable": "heatable", "Coolable": "coolable", "Cleanable": "cleanable",
                  "Toggleable": "toggleable"}
    for oid, otype, rid in draft.objects:
        facts += [f"(objectType {oid} {otype}Type)", f"(inReceptacle {oid} {rid})",
                  f"(objectAtLocation {oid} {loc_of[rid]})"]
        if otype != "DeskLamp":
            facts.append(f"(pickupable {oid})")
        facts += [f"({pred} {oid})" for key, pred in properties.items() if otype in constants.VAL_ACTION_OBJECTS[key]]
    for rtype in rtypes:
        facts += [f"(canContain {rtype}Type {ot}Type)" for ot in otypes
                  if ot in constants.VAL_RECEPTACLE_OBJECTS.get(rtype, ())]
    goal = goal_library.gdict[draft.task_type]["pddl"].format(
        obj=draft.object_target, recep=draft.parent_target, toggle=draft.toggle_target, mrecep="").replace("#", "-")
    body = "\n        ".join
    return (f"(define (problem agentbed_{draft.index:03d})\n    (:domain alfred)\n    (:objects\n        {body(decl)}\n"
            f"    )\n    (:init\n        {body(facts)}\n    )\n{goal}\n")


def game_data(draft: GameDraft) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``game.tw-pddl`` JSON and the ``traj_data.json`` ALFWorld's loader and expert read."""
    import alfworld

    data_dir = Path(alfworld.__file__).parent / "data"
    grammar = (data_dir / "alfred.twl2").read_text().replace("UNKNOWN GOAL", draft.task_desc)
    game = {"pddl_domain": (data_dir / "alfred.pddl").read_text(), "grammar": grammar,
            "pddl_problem": render_problem(draft), "solvable": False, "walkthrough": []}
    traj = {"task_type": draft.task_type, "pddl_params": draft.pddl_params(), "task_desc": draft.task_desc,
            "room": draft.room, "generator": {"version": GENERATOR_VERSION, "index": draft.index,
                                              "attempt": draft.attempt}}
    return game, traj


def expert_walkthrough(game_file: Path, seed: int = EXPERT_SEED, max_steps: int = MAX_EPISODE_STEPS) -> list[str] | None:
    """The handcoded expert's winning command list within ``max_steps``, or ``None``."""
    from environments.alfworld.tw import load_game

    env = load_game(game_file)
    env.seed_expert(seed)
    state = env.reset()
    commands: list[str] = []
    for _ in range(max_steps):
        command = env.expert_command()
        if command is None:
            return None
        state, _, done = env.step(command)
        commands.append(command)
        if state["won"]:
            return commands
    return None


def _write_game(directory: Path, game: dict[str, Any], traj: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "traj_data.json").write_text(json.dumps(traj, indent=1, sort_keys=True))
    path = directory / "game.tw-pddl"
    path.write_text(json.dumps(game, sort_keys=True))
    return path


def ensure_game(index: int, seed: int = DEFAULT_SEED, root: Path | None = None) -> Path:
    """The path of game ``index`` in the cache, generating and checking it on first use."""
    root = root or cache_root()
    final = root / f"seed{seed}" / game_id(index, DEFAULT_SEED)
    path = final / "game.tw-pddl"
    if path.exists():
        return path
    final.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(MAX_ATTEMPTS):
        draft = sample_game(index, seed, attempt)
        if draft is None:
            continue
        game, traj = game_data(draft)
        work = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        work.chmod(0o755)
        try:
            walkthrough = expert_walkthrough(_write_game(work, game, traj))
            if walkthrough is None:
                continue
            game["solvable"], game["walkthrough"] = True, walkthrough
            _write_game(work, game, traj)
            try:
                work.rename(final)  # atomic: a concurrent generator of the same game loses the race harmlessly
            except OSError:
                if not path.exists():
                    raise
            return path
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise RuntimeError(f"game {index}: no draft in {MAX_ATTEMPTS} attempts was solvable by the handcoded expert")


def _ensure_one(args: tuple[int, int, str | None]) -> str:
    index, seed, root = args
    return str(ensure_game(index, seed, Path(root) if root else None))


def ensure_games(count: int = DEFAULT_GAME_COUNT, seed: int = DEFAULT_SEED, workers: int | None = None,
                 root: Path | None = None) -> list[Path]:
    """Generate (or find in the cache) games ``0..count-1``, in ``workers`` processes."""
    from agentbed.progress import RunProgress

    if (seed, GENERATOR_VERSION) == (game_archive.SEED, game_archive.VERSION):  # shipped, pinned by sha256 (game_archive)
        game_archive.unpack(root or cache_root(), [game_id(i) for i in range(count)])
    jobs = [(i, seed, str(root) if root else None) for i in range(count)]
    workers = workers or min(os.cpu_count() or 1, 4)
    # a bar on a terminal, a line every 10 s on a pipe: generating 320 games takes minutes
    with RunProgress(count, label="ALFWorld games", figures=False) as progress:
        if workers <= 1:
            out = []
            for job in jobs:
                out.append(Path(_ensure_one(job)))
                progress.advance(None)
            return out
        import multiprocessing

        # TextWorld is not thread-safe; separate processes each get their own engine.
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            out = []
            for path in pool.imap(_ensure_one, jobs, chunksize=4):  # in order, as each finishes
                out.append(Path(path))
                progress.advance(None)
            return out


def read_traj(game_file: Path) -> dict[str, Any]:
    return json.loads((Path(game_file).parent / "traj_data.json").read_text())


def main(argv: list[str] | None = None) -> int:
    """``python -m environments.alfworld.games --count 320``: generate the games into the cache."""
    import argparse
    import time
    from collections import Counter

    parser = argparse.ArgumentParser(description="Generate ALFWorld games checked by the handcoded expert.")
    parser.add_argument("--count", type=int, default=DEFAULT_GAME_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--workers", type=int, default=None, help="processes (default: CPUs, at most 4)")
    parser.add_argument("--write-archive", action="store_true",
                        help="then pack the default seed's games into the shipped archive and print its sha256 to pin")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    if args.write_archive and (args.seed, args.count) != (DEFAULT_SEED, DEFAULT_GAME_COUNT):
        parser.error(f"--write-archive: the archive holds seed {DEFAULT_SEED}'s {DEFAULT_GAME_COUNT} games")
    start = time.perf_counter()
    paths = ensure_games(args.count, args.seed, args.workers)
    types = Counter(read_traj(p)["task_type"] for p in paths)
    print(f"{len(paths)} games in {cache_root() / f'seed{args.seed}'} ({time.perf_counter() - start:.0f} s): "
          + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    if args.write_archive:
        print(game_archive.write(cache_root(), [game_id(i) for i in range(args.count)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
