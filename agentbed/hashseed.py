"""The ``agentbed`` command's str-hash seed, pinned before anything else is imported.

Python salts str hashes per process, so a set's order changes between processes; code that lists
a set (AgentDojo's create_event: list(set(participants))) gives other bytes in a re-run or a branch.
The command re-executes itself once with :data:`HASH_SEED`. ``agentbed/__init__`` calls
:func:`pin_hash_seed` first of all, so the process thrown away has imported only this module (it
used to import the CLI module and its dependencies first: ~0.1 s of CPU per command).
"""

from __future__ import annotations

import os
import sys

HASH_SEED = "0"


def _launched_as_agentbed() -> bool:
    """Whether this interpreter was started as the agentbed command (its script, ``-m agentbed`` or
    ``-m agentbed.cli``): only then is re-executing it re-running agentbed. A host process that
    imports agentbed (a test runner, pytest-xdist's worker) must never be replaced."""
    args = sys.orig_argv[1:]
    while args and args[0].startswith("-") and args[0] not in ("-m", "-c"):
        args = args[1:]  # interpreter options such as -u, -B, -X
    if args[:1] == ["-m"]:
        return len(args) > 1 and args[1] in ("agentbed", "agentbed.cli")
    return bool(args) and os.path.basename(args[0]) == "agentbed"


def pin_hash_seed() -> None:
    """Run this command with :data:`HASH_SEED` as its hash seed (re-executing itself once), so it
    and every process it starts order sets alike."""
    if os.environ.get("PYTHONHASHSEED") == HASH_SEED or not _launched_as_agentbed():
        return
    os.environ["PYTHONHASHSEED"] = HASH_SEED
    sys.stdout.flush()
    # the interpreter's own command line, so `python -m agentbed.cli` stays a module run
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
