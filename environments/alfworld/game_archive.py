"""The default generator seed's 320 games, generated once and shipped in the repository.

Generating them is most of a fresh machine's set-up: each draft is checked solvable by ALFWorld's
handcoded expert, about 1.8 s of CPU a game, 281 s on two cores in the lead's clean-clone set-up
of session 17 (issue 55 item 2), on the set-up's critical path after the pip install. The games
are the same bytes on every machine (``games`` seeds each draft by seed, index and attempt), so
``python -m environments.alfworld.games --write-archive`` packs the cache's games into
``data/games-v2-seed0.tar.xz`` (185 KB, deterministic bytes), pinned by :data:`ARCHIVE_SHA256`,
and :func:`unpack` (called by ``games.ensure_games``) puts them in the cache instead of generating
them. This module knows nothing of the generator: its callers name the games.
tests/alfworld/test_game_archive.py regenerates a sample of the games with the generator and
compares their bytes with the archive's, so the archive cannot drift from what the generator
writes. A game the archive lacks, or an archive whose sha256 is not the pinned one, is generated
as before.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import re
import sys
import tarfile
import tempfile
from pathlib import Path

SEED, VERSION = 0, 2  # the generator seed and games.GENERATOR_VERSION the archive holds
ARCHIVE = Path(__file__).parent / "data" / f"games-v{VERSION}-seed{SEED}.tar.xz"
ARCHIVE_SHA256 = "682abcf205304cdff13727654dd6de7dba4e8023b14c8c2441bd3e640c059e19"
GAME_FILES = ("game.tw-pddl", "traj_data.json")
MEMBER = re.compile(rf"seed{SEED}/(\d{{3}}-[a-z]+)/(game\.tw-pddl|traj_data\.json)")


def archive_ok(archive: Path | None = None) -> bool:
    """The archive is there and is the pinned one."""
    archive = archive or ARCHIVE
    return archive.is_file() and hashlib.sha256(archive.read_bytes()).hexdigest() == ARCHIVE_SHA256


def members(archive: Path | None = None) -> dict[str, bytes]:
    """``seed0/NNN-type/file`` -> bytes, for every member that is a game's file (nothing else is read)."""
    archive = archive or ARCHIVE
    out: dict[str, bytes] = {}
    with tarfile.open(archive, "r:xz") as tar:
        for info in tar:
            handle = tar.extractfile(info) if info.isfile() and MEMBER.fullmatch(info.name) else None
            if handle is not None:
                out[info.name] = handle.read()
    return out


def unpack(root: Path, names: list[str]) -> int:
    """Put the games ``names`` (``NNN-type``) of the shipped seed from the pinned archive into
    ``root`` (the cache's versioned folder) where they are missing; the number unpacked. Each game
    appears at once (written aside, then renamed), as a generated one does."""
    seed_dir = root / f"seed{SEED}"
    wanted = set(names)
    if all((seed_dir / game / "game.tw-pddl").exists() for game in wanted):
        return 0
    if not archive_ok():
        if ARCHIVE.is_file():
            print(f"{ARCHIVE}: sha256 is not the pinned one; generating the games instead", file=sys.stderr)
        return 0
    games: dict[str, dict[str, bytes]] = {}
    for name, data in members().items():
        match = MEMBER.fullmatch(name)
        if match and match.group(1) in wanted:
            games.setdefault(match.group(1), {})[match.group(2)] = data
    seed_dir.mkdir(parents=True, exist_ok=True)
    unpacked = 0
    for game, files in sorted(games.items()):
        final = seed_dir / game
        if (final / "game.tw-pddl").exists() or set(files) != set(GAME_FILES):
            continue
        work = Path(tempfile.mkdtemp(prefix=f".{game}.", dir=seed_dir))
        work.chmod(0o755)
        for file, data in files.items():
            (work / file).write_bytes(data)
        try:
            work.rename(final)
            unpacked += 1
        except OSError:  # a concurrent generator or unpacker got there first
            for file in files:
                (work / file).unlink()
            work.rmdir()
    return unpacked


def write(root: Path, names: list[str], archive: Path | None = None) -> str:
    """Pack the cache's games ``names``, in that order, into ``archive`` with deterministic bytes
    (no times or owners); its sha256."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for game in names:
            for file in GAME_FILES:
                name = f"seed{SEED}/{game}/{file}"
                data = (root / name).read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
    packed = lzma.compress(buffer.getvalue(), format=lzma.FORMAT_XZ, preset=9)
    archive = archive or ARCHIVE
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(packed)
    return hashlib.sha256(packed).hexdigest()

