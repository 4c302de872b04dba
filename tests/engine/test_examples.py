"""The examples under examples/ run as docs/extending.md says (the suite and the controller
examples have their own tests: test_one_file_suite.py, test_controllers_given.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def agentbed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentbed", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


def _index(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]


def test_an_agent_of_your_own_on_a_built_in_suite(tmp_path):
    out = tmp_path / "run"
    result = agentbed("run", "vault", "--agent", "naive,examples/agent/refresher.py:Refresher", "--seeds", "2",
                      "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    rate = {}
    for r in _index(out):
        rate.setdefault(r["agent"], []).append(r["success"])
    assert all(rate["examples/agent/refresher.py:Refresher"])  # a fresh token before every opening
    assert sum(rate["naive"]) == 2  # the naive agent opens only the chore-free task
    log = next((out / "episodes").glob("*long-chores*refresher*"))
    assert agentbed("replay", str(log), "--rerun").stdout.strip() == "identical"


def test_the_hosted_benchmark_agrees_with_its_own_runner(tmp_path):
    """The peer's own runner is the oracle: the same agent, through quizbench's runner and through
    agentbed, gets the same verdict on every task."""
    sys.path.insert(0, str(ROOT / "examples" / "benchmark"))
    try:
        import quiz_adapter
        import quizbench
    finally:
        sys.path.remove(str(ROOT / "examples" / "benchmark"))

    def solver_of(agent_class):
        def solve(question, search):
            agent = agent_class()
            agent.reset(seed=0)
            first = json.loads(agent.act(question, []).text)
            if first["tool"] == "answer":
                return first["arguments"]["text"]
            return json.loads(agent.act(search(first["arguments"]["term"]), []).text)["arguments"]["text"]
        return solve

    out = tmp_path / "run"
    result = agentbed("run", "examples/benchmark/quiz_adapter.py", "--agent", "reader,guesser", "--out", str(out),
                      "--quiet")
    assert result.returncode == 0, result.stderr
    ours = {(r["agent"], r["task"]): r["success"] for r in _index(out)}
    for name, agent_class in (("reader", quiz_adapter.Reader), ("guesser", quiz_adapter.Guesser)):
        theirs = quizbench.run_reference(solver_of(agent_class))
        assert theirs == {task: ours[(name, task)] for task in theirs}
    assert sum(ours.values()) == 4  # the reader 3 of 3, the guesser 1 of 3: the suite tells them apart


def test_every_example_is_exercised_by_a_test():
    tests = "".join(p.read_text() for p in (ROOT / "tests" / "engine").glob("test_*.py"))
    for example in sorted((ROOT / "examples").rglob("*.py")):
        rel = example.relative_to(ROOT).as_posix()
        used = rel in tests or example.stem in tests
        assert used, f"{rel} is run by no test"
