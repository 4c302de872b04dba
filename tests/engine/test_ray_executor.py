"""The Ray executor's own logic on a local Ray: logs travel back with their records, the driver
stores them before the index names them, lost tasks become error episodes. The real two-node
cluster is tested in test_ray_cluster.py."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentbed.errors import UsageError
from agentbed.executors import execute
from agentbed.executors_ray import parse_resources
from agentbed.log import verify_log
from agentbed.runner import EpisodeSpec
from agentbed.store import RunStore
from agentbed.testing import episode_bytes, require
from agentbed.worker import failure_record, run_spec, run_spec_shipped

pytestmark = pytest.mark.exclusive("ray")  # one Ray instance on the machine at a time

SPECS = [EpisodeSpec("vault", t, a, s) for a in ("oracle", "random") for t in ("open-fast", "long-chores")
         for s in range(3)]


@pytest.fixture(scope="module")
def workers_tmp() -> Iterator[Path]:
    """The temporary directory of the module's Ray and its workers (TMPDIR), theirs alone: what
    a run leaves there is seen. Short, for the Unix sockets Ray keeps in it."""
    path = Path(tempfile.mkdtemp(prefix="abrt-", dir="/tmp"))
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(path)
    try:
        yield path
    finally:
        if saved is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def ray(workers_tmp):
    require(importlib.util.find_spec("ray") is not None, "Ray", "pip install 'agentbed[ray]' (make test does this)")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_a_shipped_episode_carries_the_bytes_a_local_one_writes(tmp_path):
    spec = SPECS[0]
    record, files = run_spec_shipped(spec)
    local = run_spec(spec, tmp_path)
    assert record.log == local.log == f"episodes/{spec.episode_id}.jsonl"
    assert files == {local.log: (tmp_path / local.log).read_bytes()}
    assert record.digest == local.digest
    again, _ = run_spec_shipped(spec)  # the node's scratch space is emptied between episodes
    assert again.digest == record.digest


def test_a_ray_run_leaves_no_scratch_directory_behind(ray, workers_tmp, tmp_path):
    """Each chunk's scratch directory goes with the chunk: the workers live on (until Ray ends
    them, without their atexit handlers), their scratch does not. Neither does an episode shipped
    here, nor an error episode the driver makes for a lost task."""
    records = list(execute(SPECS, tmp_path / "run", executor="ray", jobs=2))
    assert len(records) == len(SPECS) and not [r for r in records if r.status == "error"]
    assert list(workers_tmp.glob("agentbed-worker-*")) == []
    here = tmp_path / "here"
    here.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(here))
        run_spec_shipped(SPECS[0])
        failure_record(SPECS[1], "lost")
    assert list(here.iterdir()) == []


def test_stored_files_are_complete_and_stay_in_the_run_directory(tmp_path):
    store = RunStore(tmp_path)
    store.write_files({"episodes/a.jsonl": b"x" * 3_000_000, "episodes/sub/b.json": b"{}"})
    assert (tmp_path / "episodes/a.jsonl").stat().st_size == 3_000_000
    assert (tmp_path / "episodes/sub/b.json").read_bytes() == b"{}"
    assert not list(tmp_path.rglob("*.part")) and not list(tmp_path.rglob("*.tmp"))
    for bad in ("../outside.jsonl", "/etc/passwd", "episodes/../../x"):
        with pytest.raises(ValueError, match="inside the run directory"):
            store.write_files({bad: b""})
    assert not (tmp_path.parent / "outside.jsonl").exists()


def test_resources_parse_or_name_the_bad_argument():
    assert parse_resources(["container_node=2", "gpu"]) == {"container_node": 2.0, "gpu": 1.0}
    assert parse_resources(["half=0.5"]) == {"half": 0.5}
    # session 18's probe: these reached ray.init, an internal error (exit 70) after Ray had started
    for bad in ("=1", "x=0", "x=many", "x=nan", "x=inf", "x=1e400", "x=1e300", "x=1.5", "x=-inf"):
        with pytest.raises(UsageError, match="--ray-resource"):
            parse_resources([bad])


def test_a_fractional_resource_runs_on_the_cluster_the_run_starts(tmp_path, agentbed_cmd):
    """Session 18's probe: ``--ray-resource gpu=0.5`` without ``--address`` declared the node's own
    0.5 units to ray.init, which takes only whole ones: exit 70. The node now holds whole units.
    (A process of its own: the cluster is the one the run starts, never this module's.)"""
    out = tmp_path / "run"
    done = subprocess.run(agentbed_cmd + ["run", "vault", "--task", "open-fast", "--seeds", "2", "--executor", "ray",
                                          "-j", "1", "--ray-resource", "half=0.5", "--quiet", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len((out / "index.jsonl").read_text().splitlines()) == 2


def test_team_runs_ship_every_file_they_write(ray, tmp_path):
    specs = [EpisodeSpec("cocoder", "synth-12", "simulated", s, _cocoder_options()) for s in range(2)]
    # serial first: it prepares the task's cached tree, which two workers preparing at once can break
    list(execute(specs, tmp_path / "serial", executor="serial"))
    ray_records = list(execute(specs, tmp_path / "ray", executor="ray", jobs=2))
    shipped = sorted(p.name for p in (tmp_path / "ray" / "episodes").iterdir())
    assert shipped == sorted(p.name for p in (tmp_path / "serial" / "episodes").iterdir())
    assert len([n for n in shipped if n.endswith(".team.json")]) == 2 and len(shipped) > 2
    for name in shipped:
        if name.endswith(".jsonl"):  # the manifest also records its wall-clock time
            assert episode_bytes(tmp_path / "ray/episodes" / name) == episode_bytes(tmp_path / "serial/episodes" / name)
    for record in ray_records:
        assert (tmp_path / "ray" / record.log).exists()


def test_each_node_that_ran_episodes_is_one_event_naming_its_python_release(ray, tmp_path):
    """Logs record Python as major.minor; the exact release of each node is an event of the run."""
    from agentbed.agents.connections import read_events

    list(execute(SPECS, tmp_path, executor="ray", jobs=2))
    assert read_events(tmp_path / "events.jsonl") == [
        {"event": "ray_node", "node": ray.get_runtime_context().get_node_id(), "python": platform.python_version()}]


def test_a_ray_workers_logs_name_the_drivers_code(ray, tmp_path, monkeypatch):
    """A worker process records the provenance the driver put into its spec, not its own copy's
    (on a cluster node: an installed copy with no commit)."""
    from agentbed import executors

    driver = {"agentbed": "driver", "commit": "d" * 40, "dirty": False, "suite": None}
    monkeypatch.setattr(executors, "header_provenance", lambda suite: driver)
    records = list(execute(SPECS[:2], tmp_path, executor="ray", jobs=2))
    assert len(records) == 2
    for record in records:
        assert json.loads((tmp_path / record.log).read_text().splitlines()[0])["provenance"] == driver


def test_a_resource_no_node_has_is_a_usage_error(ray, tmp_path):
    with pytest.raises(UsageError, match="no node of the Ray cluster"):
        list(execute(SPECS[:1], tmp_path, executor="ray", ray_address="auto", ray_resources={"nowhere": 1}))


def test_a_task_that_keeps_dying_becomes_error_episodes(ray, tmp_path, monkeypatch):
    from agentbed import executors_ray

    monkeypatch.setattr(executors_ray, "MAX_RETRIES", 1)
    die = lambda specs: os._exit(1)  # noqa: E731 - pickled by value: a worker dying as its machine would
    streamed = list(executors_ray._stream(ray, [SPECS[:2]], 1, {}, spread=False, task=die))
    ((node, shipped),) = streamed
    assert node is None  # no node's results came home
    assert [r.episode_id for r, _ in shipped] == [s.episode_id for s in SPECS[:2]]
    store = RunStore(tmp_path)
    for record, files in shipped:
        assert record.status == "error" and "Ray task" in record.error
        store.write_files(files)
        assert verify_log(tmp_path / record.log, record.digest).ok


def test_the_cli_refuses_ray_options_without_ray(tmp_path, agentbed_cmd):
    done = subprocess.run(agentbed_cmd + ["run", "vault", "--ray-resource", "x=1", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, env={**os.environ}, timeout=120)
    assert done.returncode == 2 and "--executor ray" in done.stderr
    assert not (tmp_path / "r").exists()


def test_a_ray_run_records_its_cap_and_cache_like_any_run(tmp_path):
    """On Ray the cap and the cache reach every node through one actor (agentbed.ray_models), so a
    Ray run starts with the same settings as a process run."""
    import argparse

    from agentbed.agents.connections import read_events
    from agentbed.cli_models import model_runtime

    spec = EpisodeSpec("vault", "open-fast", "model:local:gemma-3-270m", 0)
    for executor in ("process", "ray"):
        args = argparse.Namespace(executor=executor, cache=True, cache_dir=str(tmp_path / "cache"),
                                  cache_expiry="7d", max_connections=None, jobs=2)
        (tmp_path / executor).mkdir()
        runtime = model_runtime(args, [spec], tmp_path / executor)
        assert runtime.cache is not None
    process, ray_run = (read_events(tmp_path / e / "events.jsonl")[0] for e in ("process", "ray"))
    for event in (process, ray_run):
        assert event["cache"] and event["max_connections"] == {"local:gemma-3-270m": 2}


def test_one_cap_and_the_drivers_cache_hold_for_every_ray_worker(ray, tmp_path):
    """Episodes in two Ray workers share one cap of 1 call (the loopback server counts the most
    requests it held at once) and the driver's cache: a rerun makes no call. (The workers were
    started before the stub: its address reaches them as a setting of the model.)"""
    sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
    from openai_stub import OpenAIStub
    from scripted_models import vault_three_calls

    from agentbed.agents.cache import ModelCallCache
    from agentbed.executors import execute
    from agentbed.inflight import ModelRuntime

    stub = OpenAIStub(lambda body: vault_three_calls(body, delay=0.2))
    stub.start()
    try:
        where = {"base_url": stub.base_url, "api_key": "test"}
        specs = [EpisodeSpec("vault", "open-fast", "model:openai:stub-model", seed, generation=where)
                 for seed in range(6)]
        for run in ("live", "again"):
            runtime = ModelRuntime.for_run([s.agent for s in specs], tmp_path / run, max_connections=1,
                                           cache=ModelCallCache(tmp_path / "cache"))
            (tmp_path / run).mkdir()
            records = list(execute(specs, tmp_path / run, executor="ray", jobs=4, runtime=runtime))
            assert all(r.status == "ok" for r in records), [r.error for r in records]
            if run == "live":
                served = stub.served
                assert served == 3 * len(specs) and stub.peak == 1
        assert stub.served == served, "the cached rerun on Ray called the provider"
        assert all(r.usage["cached_calls"] == r.usage["calls"] for r in records)
    finally:
        stub.stop()


def test_max_cost_is_one_cap_across_ray_workers(ray, tmp_path):
    """--max-cost on Ray is kept per call by the run's actor, whichever worker calls: 6 episodes of
    three calls ($0.20, $0.25, $0.30: 200-300 input tokens at $1000 per 1M) in 4 workers over one
    connection, a cap of $1.00; the run pays at most the cap plus one call, the calls past it are
    refused (the episodes cut, kind budget), and the driver's ledger, which its stop check reads
    (``agentbed run`` then hands out no more), is what the provider served. (Before, each episode was capped alone: 18 calls, $4.50.)"""
    sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
    from openai_stub import OpenAIStub
    from scripted_models import vault_three_calls

    from agentbed.cost import Price, PriceTable, SpendCap
    from agentbed.inflight import ModelRuntime
    from agentbed.problems import classify

    stub = OpenAIStub(vault_three_calls)
    stub.start()
    try:
        where = {"base_url": stub.base_url, "api_key": "test"}
        specs = [EpisodeSpec("vault", "open-fast", "model:openai:stub-model", seed, generation=where)
                 for seed in range(6)]
        runtime = ModelRuntime.for_run([s.agent for s in specs], tmp_path, max_connections=1)
        cap = runtime.spend = SpendCap(PriceTable({"openai:stub-model": Price(1000.0, 0.0)}, "test", "2026-12-01"),
                                       max_cost=1.0, max_tokens=None)
        records = list(execute(specs, tmp_path, executor="ray", jobs=4, runtime=runtime))
    finally:
        stub.stop()
    paid = cap.spent_usd
    assert 1.0 - 0.3 <= paid <= 1.0 + 0.3 and 0.2 * stub.served <= paid <= 0.3 * stub.served, (paid, stub.served)
    assert cap.reason() == "max_cost"
    cut = [r for r in records if r.status == "error"]
    assert len(records) == 6 and cut and all(classify(r.error).name == "budget" for r in cut), [r.error for r in cut]


def _cocoder_options():
    from agentbed.suite import get_suite

    return get_suite("cocoder").resolve_options({})


def test_tasks_no_live_node_can_take_become_error_episodes(ray, monkeypatch):
    """A node with the resource asked for is gone (here: never was): after STRANDED_SECONDS the
    waiting tasks and the ones not yet handed out are recorded as errors, none lost."""
    from agentbed import executors_ray

    monkeypatch.setattr(executors_ray, "STRANDED_SECONDS", 1.0)
    monkeypatch.setattr(executors_ray, "WAIT_SECONDS", 0.5)
    work = [[s] for s in SPECS]
    streamed = list(executors_ray._stream(ray, work, 1, {"gone_node": 1}, spread=False))
    records = [r for _, shipped in streamed for r, _ in shipped]
    assert sorted(r.episode_id for r in records) == sorted(s.episode_id for s in SPECS)
    assert all(r.status == "error" and "no live node" in r.error and "gone_node=1" in r.error for r in records)


SUITE_FILE = Path(__file__).resolve().parents[2] / "examples" / "suite" / "refund_desk.py"


def test_a_one_file_suite_runs_on_ray_workers_as_in_the_driver(ray, tmp_path):
    """A Ray worker is a fresh process: it loads the suite file the driver's specs name (from the
    bytes the executor ships), and its logs are the serial run's, byte for byte."""
    from agentbed.suite import get_suite

    suite = get_suite(str(SUITE_FILE))
    specs = [EpisodeSpec(suite.name, t, a, s, suite.resolve_options({})) for t in suite.task_ids({})
             for a in ("careful", "credulous") for s in range(2)]
    on_ray = {r.episode_id: r for r in execute(specs, tmp_path / "ray", executor="ray", jobs=2)}
    serial = {r.episode_id: r for r in execute(specs, tmp_path / "serial", executor="serial")}
    assert sorted(on_ray) == sorted(serial) and len(on_ray) == 12
    assert {r.status for r in on_ray.values()} == {"ok"}, [r.error for r in on_ray.values()]
    for eid, record in on_ray.items():
        assert episode_bytes(tmp_path / "ray" / record.log) == episode_bytes(tmp_path / "serial" / serial[eid].log)


_SHIPPED_SCRIPT = """
import hashlib, json, sys
from pathlib import Path
from agentbed.runner import EpisodeSpec
from agentbed.suite_files import install_sources
from agentbed.worker import run_spec

data = Path(sys.argv[1]).read_bytes()
elsewhere = "/nonexistent/driver/checkout/refund_desk.py"  # the driver's path: not on this node
install_sources({elsewhere: data})
for digest in (hashlib.sha256(data).hexdigest(), "0" * 64):
    origin = {"file": elsewhere, "sha256": digest, "attribute": "SUITE"}
    spec = EpisodeSpec("refund-desk", "inflated", "careful", 0, provenance={"suite": origin})
    record = run_spec(spec, sys.argv[2])
    print(json.dumps([record.status, record.success, record.error]))
"""


def test_a_node_without_the_file_runs_the_shipped_bytes_and_refuses_other_ones(tmp_path):
    """What a cluster node does: the driver's path is absent there, so the shipped copy runs; a
    spec whose recorded SHA-256 is not the shipped bytes' is an error episode saying so."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _SHIPPED_SCRIPT, str(SUITE_FILE), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shipped, other = (json.loads(line) for line in done.stdout.splitlines())
    assert shipped[:2] == ["ok", True], shipped
    assert other[0] == "error" and "is not the file the run started with" in other[2], other


def test_a_lazy_models_request_profiles_reach_the_drivers_cache_from_a_ray_node(ray, tmp_path):
    """A chat model built at its first uncached call keys a rerun's requests from profiles kept in
    the cache (agentbed.agents.request_keys); on Ray that is the driver's cache, through the run's actor:
    what a node stores and reads is what the cache itself holds."""
    from agentbed.agents.cache import ModelCallCache
    from agentbed.ray_models import RemoteCache, start_service

    service = start_service(ray, {"openai:m": 1}, tmp_path / "cache", 3600.0)
    remote, local = RemoteCache(service, str(tmp_path / "cache")), ModelCallCache(tmp_path / "cache")
    tools = ('{"function": {"name": "open"}}',)
    assert not remote.has_profiles("openai:m") and remote.get_profile("openai:m", "r1", tools) is None
    remote.put_profile("openai:m", "r1", tools, ("openai-chat", {"stream": False, "temperature": 0.5}))
    assert remote.has_profiles("openai:m") and local.has_profiles("openai:m")
    assert remote.get_profile("openai:m", "r1", tools) == local.get_profile("openai:m", "r1", tools) == \
        ("openai-chat", {"stream": False, "temperature": 0.5})
    assert remote.get_profile("openai:m", "r2", tools) is None  # another recipe: not reused
