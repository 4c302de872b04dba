"""What the chaos provider's test costs, beside the same plan against a provider with no fault.

    python bench/chaos_test_time.py

Runs ``tests/agents/test_chaos_chain.py`` in its own pytest process with ``--durations=0`` and
reads pytest's own timings: the module's ``baseline`` fixture (the test's plan, 2 models x 4
seeds of vault's open-fast, 3 calls an episode, against the loopback stub with no fault: its
set-up of the first test) and, for each chaos seed, the call (the same plan against the chaos
provider, which dies mid-run and comes back, then ``--resume --retry-errors``, each surface
cross-checked). The whole process's wall time includes pytest's start-up and imports.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/agents/test_chaos_chain.py"
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)$")


def main() -> int:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", TEST, "-q", "-p", "no:cacheprovider", "--durations=0",
                           "--durations-min=0"], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    rows = [m.groups() for line in done.stdout.splitlines() if (m := DURATION.match(line.strip()))]
    if done.returncode != 0 or not rows:
        print(done.stdout[-3000:], done.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"chaos_test_time: pytest exited {done.returncode}")
    print(f"{TEST}, load average at start {load}, at end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| what | phase | seconds |")
    print("|---|---|---|")
    for seconds, phase, test in sorted(rows, key=lambda r: r[2]):
        if float(seconds) >= 0.05:
            what = test.split("::")[-1]
            if phase == "setup" and float(seconds) > 1:
                what += " (the module's clean-provider baseline run is built here)"
            print(f"| {what} | {phase} | {float(seconds):.2f} |")
    print(f"| the whole pytest process | | {wall:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
