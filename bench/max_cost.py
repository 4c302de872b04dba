"""How far a run can overshoot ``--max-cost``: the cap is kept per model call, so only the calls in
flight when it is reached add to it, at most one call's cost per connection.

A loopback OpenAI-compatible server (tests/agents/openai_stub.py) plays vault ``open-fast`` in three
calls of 200, 250 and 300 input tokens, answering after 50-150 ms; priced at $1000 per 1M input
tokens, a call costs $0.20-$0.30 and an episode $0.75. Each line is one ``agentbed run`` of 40
episodes with two workers under ``--max-cost 2.0`` at a number of connections:

    .venv/bin/python bench/max_cost.py --connections 1 4 16
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents"))

from openai_stub import OpenAIStub  # noqa: E402 - needs the path above
from scripted_models import vault_three_calls  # noqa: E402

DEAREST_CALL = 0.30  # USD: 300 input tokens at $1000 per 1M


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--max-cost", type=float, default=2.0)
    parser.add_argument("--episodes", type=int, default=40)
    args = parser.parse_args()
    stub = OpenAIStub(lambda body: vault_three_calls(body, delay=0.05, jitter=0.1))
    stub.start()
    env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "bench"}
    print("connections | paid | overshoot | bound (connections x dearest call) | not run | cut short | exit")
    with tempfile.TemporaryDirectory() as tmp:
        prices = Path(tmp) / "prices.yaml"
        prices.write_text("source: bench\ndate: '2026-12-05'\nmodels:\n  'openai:stub-*': {input: 1000, output: 0}\n")
        for connections in args.connections:
            done = subprocess.run(
                [sys.executable, "-m", "agentbed.cli", "run", "vault", "--task", "open-fast", "--model",
                 "openai:stub-m", "--seeds", str(args.episodes), "--no-cache", "--max-connections", str(connections),
                 "-j", "2", "--prices", str(prices), "--max-cost", str(args.max_cost), "--json", "--out",
                 str(Path(tmp) / f"c{connections}")], env=env, capture_output=True, text=True, timeout=900)
            stop = json.loads(done.stdout)["stopped"] or {}
            paid = stop.get("spent_usd", 0.0)
            print(f"{connections} | ${paid:.2f} | ${max(0.0, paid - args.max_cost):.2f} | "
                  f"${connections * DEAREST_CALL:.2f} | {stop.get('episodes_left')} | {stop.get('episodes_cut')} | "
                  f"{done.returncode}", flush=True)
    stub.stop()


if __name__ == "__main__":
    main()
