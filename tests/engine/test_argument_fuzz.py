"""Every verb, every numeric and text option, given values no verb can use (issue 31).

The verbs and their options come from the CLI's own parser (workloads' verbs included), so an
option added later is fuzzed without anyone listing it. Each verb's command is replaced by one
that fails the test: a bad value must be refused (exit 2, one line naming the option) before
the verb starts any work.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Iterator

import pytest

from agentbed import cli

BAD_NUMBERS = ("nan", "inf", "-inf", "1e400", "-1", "1" + "0" * 40, "-" + "9" * 30)
EMPTY_TEXTS = ("", " ", ",", ",,")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                          argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _leaves(child, (*path, name))


def _filler(action: argparse.Action) -> list[str]:
    """A value the parser accepts for a required argument (never reaches a verb here)."""
    if action.choices:
        value = str(next(iter(action.choices)))
    elif action.type in (int, float):
        value = "1"
    else:
        value = "x"
    count = 1 if action.nargs in (None, "+", 1) or not isinstance(action.nargs, int) else action.nargs
    return [*action.option_strings[:1], *([value] * count)]


def _argv(path: tuple[str, ...], parser: argparse.ArgumentParser, target: argparse.Action, value: str) -> list[str]:
    """The verb with every required argument filled in, in order, and ``target`` given ``value``."""
    argv = list(path)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action is target:
            argv += [*action.option_strings[:1], value]
        elif not action.option_strings or action.required:
            argv += _filler(action)
    return argv


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(action, argparse._HelpAction | argparse._SubParsersAction
                                                | argparse.BooleanOptionalAction) and not action.choices


def cases() -> Iterator[tuple[list[str], str, str]]:
    """(argv, the option's name, the value) for every verb, option and bad value."""
    for path, parser in _leaves(cli.build_parser(every_verb=True)):
        for action in parser._actions:
            if not _takes_value(action) or action.dest == "extra":
                continue
            name = action.option_strings[-1] if action.option_strings else action.dest
            numeric = action.type in (int, float)
            values = BAD_NUMBERS if numeric else (EMPTY_TEXTS if action.type in (None, str) else ())
            for value in values:
                if value == action.default:  # "" where the default is "" (all modules): not a bad value
                    continue
                yield _argv(path, parser, action, value), name, value


@pytest.fixture
def no_verb_runs(monkeypatch):
    """Every verb's command fails the test if it is reached. The guarded parser is built once and
    reused: parsing leaves a parser as it was, and building one with every verb for each of the
    ~800 cases was nearly all of this file's time."""
    parser = cli.build_parser(every_verb=True)
    for path, leaf in _leaves(parser):
        leaf.set_defaults(func=lambda args, path=path: pytest.fail(f"{' '.join(path)} ran with a bad argument"))

    def guarded(verb=None, *, every_verb=False):
        return parser
    monkeypatch.setattr(cli, "build_parser", guarded)


def test_every_verb_refuses_every_unusable_number_and_empty_text_before_it_starts(no_verb_runs):
    count, verbs = 0, set()
    for argv, name, _value in cases():
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(argv)
        lines = err.getvalue().strip().splitlines()
        assert status == 2, f"{argv}: exit {status}: {err.getvalue()[-500:]}"
        assert len(lines) == 1 and lines[0].startswith("agentbed: error:"), (argv, err.getvalue())
        shown = name if name.startswith("-") else ""
        assert shown in lines[0] or "invalid" in lines[0], (argv, lines[0])
        count += 1
        verbs.add(argv[0])
    # every built-in and workload verb, each numeric option with 7 values and each text one with 4
    assert {"run", "gate", "verify", "branch", "replay", "oversight", "graphrag", "cocoder-plan"} <= verbs, verbs
    assert count > 300, count


def test_the_bounds_a_verb_adds_are_checked_before_work(tmp_path):
    for argv, words in ((["run", "vault", "--seeds", "100001", "--out", str(tmp_path / "a")], "--seeds"),
                        (["run", "vault", "--seed-start", "4294967295", "--seeds", "2", "--out", str(tmp_path / "b")],
                         "--seed-start"),
                        (["run", "vault", "-j", "100000", "--out", str(tmp_path / "c")], "-j"),
                        (["cocoder-plan", "pkg", "--team-size", "1000000"], "--team-size"),
                        (["cocoder-plan", "pkg", "--agents", "1000000"], "--team-size"),  # the older name
                        (["run", "cocoder", "--team-size", "1000000", "--out", str(tmp_path / "d")], "--team-size"),
                        (["oversight", "features", str(tmp_path / "none.jsonl"), "--out", str(tmp_path)], "--out")):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = cli.main(argv)
        assert status == 2 and words in err.getvalue(), (argv, err.getvalue())
        assert not (tmp_path / "a").exists() and not (tmp_path / "d").exists()
