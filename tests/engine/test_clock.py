import datetime as dt
import json
import multiprocessing
import time

import botocore.session
import jwt
import pytest
from botocore.config import Config

from agentbed.clock import DEFAULT_START, FREEZE_BACKENDS, ClockError, VirtualClock


def test_clock_advances_only_when_told():
    clock = VirtualClock()
    assert clock.now() == DEFAULT_START
    clock.advance(12.5)
    assert clock.elapsed() == 12.5
    with pytest.raises(ClockError):
        clock.advance(-1)
    assert clock.isoformat() == "2026-01-01T00:00:12Z"


@pytest.mark.parametrize("backend", FREEZE_BACKENDS)
def test_frozen_time_is_virtual_for_stdlib(backend):
    clock = VirtualClock()
    clock.advance(3600)
    with clock.frozen(backend):
        assert time.time() == clock.now()
        assert dt.datetime.now(dt.UTC) == clock.datetime()
    assert abs(time.time() - clock.now()) > 1000  # the real clock is back


@pytest.mark.parametrize("backend", FREEZE_BACKENDS)
def test_botocore_presigning_follows_the_virtual_clock(backend):
    session = botocore.session.get_session()
    s3 = session.create_client("s3", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE",
                               aws_secret_access_key="secret",
                               config=Config(signature_version="s3v4"))
    clock = VirtualClock()
    clock.advance(7 * 3600 + 5)
    with clock.frozen(backend):
        url = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"}, ExpiresIn=60)
    assert "X-Amz-Date=20260101T070005Z" in url
    assert "X-Amz-Expires=60" in url


@pytest.mark.parametrize("backend", FREEZE_BACKENDS)
def test_pyjwt_expiry_follows_the_virtual_clock(backend):
    clock = VirtualClock()
    token = jwt.encode({"sub": "a", "exp": int(clock.now()) + 60}, "k" * 32, algorithm="HS256")
    clock.advance(59)
    with clock.frozen(backend):
        assert jwt.decode(token, "k" * 32, algorithms=["HS256"])["sub"] == "a"
    clock.advance(2)
    with clock.frozen(backend), pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(token, "k" * 32, algorithms=["HS256"])


def _advance_and_report(seconds, barrier, results):
    clock = VirtualClock()
    clock.advance(seconds)
    barrier.wait(timeout=30)  # both processes are inside their episode at once
    with clock.frozen():
        results[seconds] = json.dumps([time.time(), clock.now()])


def test_parallel_processes_do_not_share_time():
    # Plain processes that return, not a Pool: under xdist a Pool's exit hung for 600 s joining an idle
    # worker it had sent SIGTERM (a handler inherited from the forking host is the likely cause); these
    # children exit by returning, and one that hangs is killed after 120 s, a failure instead of a hang
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager:
        barrier, shared = manager.Barrier(2), manager.dict()
        children = [ctx.Process(target=_advance_and_report, args=(s, barrier, shared)) for s in (10, 5000)]
        for child in children:
            child.start()
        for child in children:
            child.join(timeout=120)
        for child in children:
            if child.is_alive():
                child.kill()
        assert [child.exitcode for child in children] == [0, 0]
        results = [shared[10], shared[5000]]
    (t1, c1), (t2, c2) = (json.loads(r) for r in results)
    assert t1 == c1 == DEFAULT_START + 10
    assert t2 == c2 == DEFAULT_START + 5000


def test_freezegun_leaves_nothing_frozen_when_its_module_scan_raises(monkeypatch):
    """freezegun reads every attribute of every loaded module as it starts; a lazy module attribute
    that raises there (langchain_core's exports did, importing pydantic models under the fake
    datetime) must not leave the clock frozen for every later test."""
    import sys
    import types

    import freezegun.api

    class Lazy(types.ModuleType):
        def __dir__(self):
            return ["answer"]

        def __getattr__(self, name):
            raise RuntimeError(f"{name} cannot be built while datetime is patched")

    monkeypatch.setitem(sys.modules, "zz_lazy_exports", Lazy("zz_lazy_exports"))
    clock = VirtualClock()
    with pytest.raises(RuntimeError, match="cannot be built"), clock.frozen("freezegun"):
        pass
    assert not freezegun.api.freeze_factories and abs(time.time() - clock.now()) > 1000


def test_freezegun_freezes_with_langchain_loaded():
    import freezegun.api
    import langchain_core.language_models  # noqa: F401 - lazy exports, as a LangChain chat model loads them

    clock = VirtualClock()
    with clock.frozen("freezegun"):
        assert time.time() == clock.now()
    assert not freezegun.api.freeze_factories and abs(time.time() - clock.now()) > 1000
