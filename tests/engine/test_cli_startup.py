"""Every agentbed command pays for what ``import agentbed.cli`` imports: it must stay light.

A verb imports its heavy dependencies (gymnasium, numpy, LangChain, a workload) when it runs,
never when the CLI module loads. Timings are shown by bench/, never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("gymnasium", "numpy", "langchain", "langchain_core", "scipy", "sklearn", "networkx",
         "environments", "attacks", "controllers", "suites")


def test_importing_the_cli_pulls_in_no_heavy_package():
    probe = ("import json, sys; import agentbed.cli; "
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [], "import agentbed.cli imported these; import them inside the verb"
