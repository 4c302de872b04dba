"""How many threads and slots a local model's server gets (unit test: no server starts)."""

import os

import pytest

from agentbed.agents.local.server import THREADS_ENV, ServerSettings, server_threads
from agentbed.errors import UsageError


def test_threads_come_from_the_settings_then_the_environment_then_the_free_cores(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert server_threads(ServerSettings()) == (os.cpu_count() or 1)
    monkeypatch.setenv(THREADS_ENV, "1")
    assert server_threads(ServerSettings()) == 1
    assert server_threads(ServerSettings(threads=3)) == 3  # an explicit size wins


@pytest.mark.parametrize("bad", ["0", "two", "-1", "1.5"])
def test_a_bad_thread_count_is_one_line_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(THREADS_ENV, bad)
    with pytest.raises(UsageError, match=THREADS_ENV):
        server_threads(ServerSettings())


@pytest.mark.parametrize(("cores", "load", "threads"), [(2, 0.2, 2), (2, 0.6, 1), (2, 1.0, 1), (2, 7.5, 1),
                                                       (8, 2.4, 6), (8, 0.0, 8)])
def test_without_a_setting_the_server_takes_the_cores_that_are_free(monkeypatch, cores, load, threads):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 0.0, 0.0))
    assert server_threads(ServerSettings()) == threads


@pytest.mark.parametrize(("connections", "slots"), [(None, 2), (1, 1), (3, 3), (8, 8), (500, 8)])
def test_a_runs_server_decodes_as_many_sequences_together_as_it_keeps_calls_in_flight(connections, slots):
    from agentbed.agents.local.server import MAX_SLOTS

    assert ServerSettings.for_connections(connections).slots == slots <= MAX_SLOTS
