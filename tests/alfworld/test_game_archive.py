"""The shipped games (environments/alfworld/game_archive.py) are the generator's own output: pinned
by sha256, byte for byte what the generator writes for a sample covering every task type and the
held-out split, unpacked only where missing, and read only through its games' names."""

from __future__ import annotations

import hashlib
import io
import lzma
import tarfile
from pathlib import Path

import pytest

from environments.alfworld import game_archive, games


def test_the_archive_is_the_pinned_one_and_holds_every_game_once() -> None:
    assert game_archive.archive_ok(), f"{game_archive.ARCHIVE}: not the pinned sha256 (python -m environments.alfworld.games --write-archive)"
    assert (game_archive.SEED, game_archive.VERSION) == (games.DEFAULT_SEED, games.GENERATOR_VERSION)
    names = sorted(game_archive.members())
    assert names == sorted(f"seed0/{games.game_id(i)}/{f}" for i in range(games.DEFAULT_GAME_COUNT)
                           for f in game_archive.GAME_FILES)


@pytest.mark.parametrize("index", range(6))  # the six task types; game 4 is in the held-out split
def test_a_regenerated_game_is_the_archived_bytes(tmp_path, index) -> None:
    path = games.ensure_game(index, root=tmp_path)  # generated: the root is empty, the archive not read
    archived = game_archive.members()
    for file in game_archive.GAME_FILES:
        name = f"seed0/{games.game_id(index)}/{file}"
        assert (path.parent / file).read_bytes() == archived[name], name


def test_unpacked_games_are_found_not_generated(tmp_path, monkeypatch) -> None:
    first = [games.game_id(i) for i in range(12)]
    assert game_archive.unpack(tmp_path, first) == 12
    assert game_archive.unpack(tmp_path, first) == 0  # already there
    monkeypatch.setattr(games, "sample_game", lambda *a, **k: pytest.fail("a shipped game was generated"))
    paths = games.ensure_games(12, workers=1, root=tmp_path)
    assert [p.parent.name for p in paths] == [games.game_id(i) for i in range(12)]
    assert all(games.read_traj(p)["task_type"] == games.task_type_of(i) for i, p in enumerate(paths))


def _archive(path: Path, files: dict[str, bytes]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(lzma.compress(buffer.getvalue()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_archive_not_pinned_is_not_read_and_names_outside_its_games_are_never_written(tmp_path, monkeypatch,
                                                                                          capsys) -> None:
    fake = tmp_path / "games.tar.xz"
    sha = _archive(fake, {"seed0/000-simple/game.tw-pddl": b"{}", "seed0/000-simple/traj_data.json": b"{}",
                          "seed0/../../escaped/game.tw-pddl": b"x", "other/001-light/game.tw-pddl": b"x"})
    monkeypatch.setattr(game_archive, "ARCHIVE", fake)
    root = tmp_path / "cache"
    assert game_archive.unpack(root, ["000-simple", "001-light"]) == 0  # not the pinned sha256: generated instead
    assert "not the pinned one" in capsys.readouterr().err
    monkeypatch.setattr(game_archive, "ARCHIVE_SHA256", sha)
    assert game_archive.unpack(root, ["000-simple", "001-light"]) == 1
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "cache/seed0/000-simple/game.tw-pddl", "cache/seed0/000-simple/traj_data.json", "games.tar.xz"]
