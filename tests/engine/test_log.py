import json
from pathlib import Path

import jsonschema
import pytest

from agentbed.log import TrajectoryWriter, read_log, verify_log
from agentbed.runner import EpisodeSpec, run_episode
from environments.vault.agents import VaultOracle
from environments.vault.env import VaultEnv

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "agentbed" / "schema" / "trajectory.schema.json").read_text())


@pytest.fixture
def log_path(tmp_path):
    writer = TrajectoryWriter(tmp_path / "e.jsonl")
    run_episode(VaultEnv("open-after-chores"), VaultOracle(), EpisodeSpec("vault", "open-after-chores", "oracle", 1),
                writer=writer)
    return writer.path


def test_log_verifies_and_matches_schema(log_path):
    result = verify_log(log_path)
    assert result.ok and result.records == 6
    for record in read_log(log_path):
        jsonschema.validate(record, SCHEMA)


def test_every_flipped_byte_is_detected_at_its_record(log_path, tmp_path):
    data = log_path.read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")][:-1]
    tampered = tmp_path / "t.jsonl"
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= 0x01
        tampered.write_bytes(bytes(flipped))
        result = verify_log(tampered)
        record = sum(1 for s in starts if s <= position)
        assert not result.ok, f"byte {position} flip not detected"
        # a flipped newline merges or splits records: it is caught at that record or the next
        assert result.first_bad in (record, record + 1), (position, result)


def test_removed_reordered_and_truncated_records_are_detected(log_path, tmp_path):
    lines = log_path.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "b.jsonl"
    bad.write_bytes(b"".join(lines[:2] + lines[3:]))
    assert verify_log(bad).first_bad == 3
    bad.write_bytes(b"".join([lines[0], lines[2], lines[1]] + lines[3:]))
    assert verify_log(bad).first_bad == 2
    bad.write_bytes(b"".join(lines[:-1]))
    result = verify_log(bad)
    assert not result.ok and "footer" in result.reason


def test_an_unfinished_log_is_reported_as_truncated(tmp_path):
    writer = TrajectoryWriter(tmp_path / "x.jsonl")
    writer.write("header", schema="agentbed.trajectory/1")
    assert not (tmp_path / "x.jsonl").exists()  # buffered: nothing on disk for a short prefix
    for _ in range(TrajectoryWriter.FLUSH_RECORDS):  # a full batch reaches the disk
        writer.write("step")
    result = verify_log(tmp_path / "x.jsonl")  # as a crash at this point would leave it
    assert not result.ok and "footer" in result.reason
    writer.write("footer")
    writer.close()
    assert len((tmp_path / "x.jsonl").read_text().splitlines()) == TrajectoryWriter.FLUSH_RECORDS + 2
    assert verify_log(tmp_path / "x.jsonl").ok
    assert (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.part").exists()
