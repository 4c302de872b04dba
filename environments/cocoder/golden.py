"""Golden tests for a pinned repository whose sdist ships no test suite (zxcvbn): the reference's
own outputs on fixed passwords, recorded once in the sandbox at preparation, become its tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from environments.cocoder.sandboxed import sandbox_exec

GOLDEN_PASSWORDS = (
    "password", "correcthorsebatterystaple", "Tr0ub4dour&3", "qwerty", "123456", "abc123", "letmein",
    "iloveyou", "monkey", "dragon", "zxcvbnm", "asdfghjkl", "1q2w3e4r", "p@ssw0rd", "P4$$w0rd!",
    "aaaaaaaa", "abcdefgh", "87654321", "2024-01-01", "19850412", "JohnSmith1985", "coRrecTHorse",
    "rWibMFACxAUGZmxhVncy", "Ba9ZyWABu99[BK#6MBgbH88Tofv)vs$w", "verlongpasswordwithoutdigits",
    "sgn4t8!kq", "hello world", "mississippi", "ZXCVBN", "qazwsxedc", "thx1138",
)
GOLDEN_PROBE = '''
import json, sys
from zxcvbn import zxcvbn
def digest(result):
    return {"score": result["score"], "guesses": str(result["guesses"]),
            "sequence": [m["pattern"] for m in result["sequence"]], "feedback": result["feedback"]}
print(json.dumps({p: digest(zxcvbn(p)) for p in json.loads(sys.argv[1])}))
'''
GOLDEN_TEST = '''"""Golden tests written by agentbed: the reference zxcvbn's outputs on fixed passwords."""
import json
import pathlib

import pytest

from zxcvbn import zxcvbn

CASES = json.loads(pathlib.Path(__file__).with_name("golden.json").read_text())


def digest(result):
    return {"score": result["score"], "guesses": str(result["guesses"]),
            "sequence": [m["pattern"] for m in result["sequence"]], "feedback": result["feedback"]}


@pytest.mark.parametrize("password", sorted(CASES))
def test_golden(password):
    assert digest(zxcvbn(password)) == CASES[password]
'''


def write_golden_tests(tree: Path, tests: Path) -> None:
    """Record the reference's outputs on GOLDEN_PASSWORDS in the sandbox and write them, with the
    test that checks them, into ``tests``. RuntimeError when the reference cannot be run."""
    probe = tree / "_golden_probe"
    probe.mkdir()
    (probe / "__init__.py").write_text("", encoding="utf-8")
    (probe / "__main__.py").write_text(GOLDEN_PROBE, encoding="utf-8")
    outcome = sandbox_exec(tree, ["_golden_probe", json.dumps(list(GOLDEN_PASSWORDS))], timeout=120)
    shutil.rmtree(probe)
    if outcome.status != "ok":
        raise RuntimeError(f"recording golden outputs failed: {outcome.stderr.strip()[-200:]}")
    tests.mkdir(exist_ok=True)
    (tests / "golden.json").write_text(outcome.stdout.strip().splitlines()[-1], encoding="utf-8")
    (tests / "test_golden.py").write_text(GOLDEN_TEST, encoding="utf-8")
