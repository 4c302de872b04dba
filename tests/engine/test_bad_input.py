"""Every verb, every bad input: one line naming the culprit, exit 2, no traceback.

The corpus (bad_input_corpus.py) is generated here from a real run directory: for every file
kind a reader takes (log, index, run.json, results, baseline, team manifest) its generic bad
contents and, field by field, its wrong-typed and missing fields; plus bad paths and a closed
pipe. The whole corpus runs in-process through ``agentbed.cli.main`` (the same code path as
the console script, minus interpreter start-up); a slice of it, every (kind, verb) pair at
least once and every bad path, runs as real subprocesses under a 3 GiB address-space limit
and a timeout, which is what bounds memory and time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from bad_input_cli import LOG, ROOT, assert_refused, copy_run, in_process, make_valid_run, subprocess_cli
from bad_input_corpus import DAMAGED_LOGS, field_mutations, generic_contents, huge_line, rechain

from agentbed import manifest
from agentbed.schemas import INDEX_RECORD_SCHEMA, RESULTS_SCHEMA, RUN_META_SCHEMA, trajectory_schema


@pytest.fixture(scope="module")
def valid_run(tmp_path_factory) -> Path:
    return make_valid_run(tmp_path_factory.mktemp("bad-input") / "run")


# -- file kinds: where a valid one lives in a run directory and which verbs read it ------------
LOG_VERBS: dict[str, Callable[[Path], list[str]]] = {
    "verify-file": lambda d: ["verify", str(d / LOG)],
    "replay": lambda d: ["replay", str(d / LOG)],
    "replay-rerun": lambda d: ["replay", str(d / LOG), "--rerun"],
    "branch": lambda d: ["branch", str(d / LOG), "--at", "1", "--agents", "oracle", "--out", str(d / "b")],
    "verify-dir": lambda d: ["verify", str(d)],
    "report": lambda d: ["report", str(d), "--out", str(d / "r.html")],
    "export": lambda d: ["export", str(d), "--format", "inspect", "--out", str(d / "x")],
}
RUN_DIR_VERBS: dict[str, Callable[[Path], list[str]]] = {
    "verify-dir": LOG_VERBS["verify-dir"], "report": LOG_VERBS["report"], "export": LOG_VERBS["export"],
    "resume": lambda d: ["run", "vault", "--out", str(d), "--resume", "--quiet"],
}
KINDS: dict[str, tuple[str, dict[str, Callable[[Path], list[str]]]]] = {
    "log": (LOG, LOG_VERBS),
    "index": ("index.jsonl", {**RUN_DIR_VERBS, "gate-dir": lambda d: ["gate", str(d), "--baseline",
                                                                       str(d / "results.json")]}),
    "run.json": ("run.json", {"resume": RUN_DIR_VERBS["resume"], "report": RUN_DIR_VERBS["report"]}),
    "results": ("results.json", {"gate": lambda d: ["gate", str(d / "results.json"), "--baseline",
                                                     "baselines/vault.json"],
                                 "verify-dir": RUN_DIR_VERBS["verify-dir"]}),
    "manifest": ("manifest.json", {"verify-dir": RUN_DIR_VERBS["verify-dir"], "resume": RUN_DIR_VERBS["resume"],
                                   "gate": lambda d: ["gate", str(d), "--baseline", "baselines/vault.json"]}),
    "baseline": ("results.json", {"gate-baseline": lambda d: ["gate", "baselines/vault.json", "--baseline",
                                                               str(d / "results.json")]}),
}


def _place(run: Path, kind: str, content: bytes) -> Path:
    rel, _ = KINDS[kind]
    target = run / rel
    if kind == "index":  # the gate reads the index only without results.json
        (run / "results.json").unlink(missing_ok=True)
    target.write_bytes(content)
    return target


def _generic_cases(valid_run: Path) -> list[tuple[str, str, str, bytes]]:
    cases = []
    for kind, (rel, verbs) in KINDS.items():
        for name, content in generic_contents((valid_run / rel).read_bytes()):
            for verb in verbs:
                cases.append((kind, name, verb, content))
    return cases


CHECKING_VERBS = ("verify-file", "verify-dir", "report")


def assert_refused_or_changed(outcome: tuple[int, str, str], kind: str, name: str, verb: str, culprit: str,
                              what: str) -> None:
    """A damaged log that is still recognisably a log is "changed" (exit 1, named on stdout)
    for the verbs that check logs; anything else is refused (exit 2)."""
    status, out, err = outcome
    if kind == "index" and name in ("empty", "blank-lines", "truncated"):  # as a kill leaves it: valid
        assert "Traceback" not in err + out and status in (0, 1, 2), f"{what}: exit {status} {err[-1000:]}"
        if status == 2:
            assert_refused(outcome, what=what)
        return
    if kind == "log" and name in DAMAGED_LOGS and verb in CHECKING_VERBS and status == 1:
        assert "Traceback" not in err + out and not err.strip(), f"{what}: {err[-1000:]}"
        assert culprit in out or verb == "report", f"{what}: {culprit} not named in {out[-500:]}"
        return
    assert_refused(outcome, culprit, what=what)


def test_generic_bad_contents_in_process(valid_run, tmp_path):
    for kind, name, verb, content in _generic_cases(valid_run):
        run = copy_run(valid_run, tmp_path)
        path = _place(run, kind, content)
        rel = KINDS[kind][0]
        assert_refused_or_changed(in_process(KINDS[kind][1][verb](run)), kind, name, verb, Path(rel).name,
                                  what=f"{kind}/{name}/{verb} ({path})")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _reindex(run: Path, rel: str) -> None:
    """Give the index the log's new final digest (a careless tool rewriting both)."""
    last = (run / rel).read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    digest = last[-66:-2].decode("ascii", "replace")
    lines = _records(run / "index.jsonl")
    for line in lines:
        if line["log"] == rel:
            line["digest"] = digest
    (run / "index.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in lines))


def test_every_field_of_a_log_wrong_or_missing(valid_run, tmp_path):
    schema = trajectory_schema()
    records = _records(valid_run / LOG)
    count = 0
    for position, record in enumerate(records):
        for description, field, mutated in field_mutations(record, schema):
            run = copy_run(valid_run, tmp_path)
            changed = [*records[:position], mutated, *records[position + 1:]]
            (run / LOG).write_bytes(rechain(changed))
            _reindex(run, LOG)
            # without its type or schema the header is no header: "line 1 is not a trajectory header"
            named = () if position == 0 and field in ("type", "schema") else (field,)
            for verb in ("verify-file", "replay", "replay-rerun", "branch", "export", "report"):
                assert_refused(in_process(LOG_VERBS[verb](run)), Path(LOG).name, f"line {position + 1}", *named,
                               what=f"log record {position + 1} {description} / {verb}")
                count += 1
    assert count > 200


def test_every_field_of_an_index_line_wrong_or_missing(valid_run, tmp_path):
    lines = _records(valid_run / "index.jsonl")
    count = 0
    for description, field, mutated in field_mutations(lines[0], INDEX_RECORD_SCHEMA):
        run = copy_run(valid_run, tmp_path)
        content = b"".join(json.dumps(r).encode() + b"\n" for r in [mutated, *lines[1:]])
        _place(run, "index", content)
        for verb, argv in KINDS["index"][1].items():
            assert_refused(in_process(argv(run)), "index.jsonl", "line 1", field, what=f"index {description} / {verb}")
            count += 1
    assert count > 40


def test_every_field_of_run_json_wrong_or_missing(valid_run, tmp_path):
    meta = json.loads((valid_run / "run.json").read_text())
    count = 0
    for description, field, mutated in field_mutations(meta, RUN_META_SCHEMA):
        run = copy_run(valid_run, tmp_path)
        (run / "run.json").write_text(json.dumps(mutated))
        assert_refused(in_process(RUN_DIR_VERBS["resume"](run)), "run.json", field, what=f"run.json {description}")
        # the report shows run.json as it is and interprets no field of it: any value is readable
        outcome = in_process(RUN_DIR_VERBS["report"](run))
        if outcome[0] == 2:  # unparseable (a non-finite number)
            assert_refused(outcome, "run.json", what=f"run.json {description} / report")
        assert "Traceback" not in outcome[2] and outcome[0] in (0, 1, 2), (description, outcome[2])
        count += 1
    assert count > 10


def test_every_field_of_results_and_baseline_wrong_or_missing(valid_run, tmp_path):
    doc = json.loads((valid_run / "results.json").read_text())
    metric = doc["metrics"][0]
    cases = list(field_mutations(doc, RESULTS_SCHEMA))
    for description, field, mutated_metric in field_mutations(metric, RESULTS_SCHEMA["properties"]["metrics"]["items"]):
        cases.append((f"metrics[0].{description}", f"metrics[0].{field}", {**doc, "metrics": [mutated_metric]}))
    unit = next(iter(metric["values"]))
    for bad in ("1e999", "-1e999", '"1.0"', "true", "null", "[1]"):
        text = json.dumps(doc).replace(f'"{unit}": {json.dumps(metric["values"][unit])}', f'"{unit}": {bad}', 1)
        cases.append((f"value {bad}", f"metrics[0].values.{unit}", json.loads(text) if "e999" not in bad else text))
    count = 0
    for description, field, mutated in cases:
        for kind in ("results", "baseline"):
            run = copy_run(valid_run, tmp_path)
            _place(run, kind, mutated.encode() if isinstance(mutated, str) else json.dumps(mutated).encode())
            for verb, argv in KINDS[kind][1].items():
                assert_refused(in_process(argv(run)), "results.json", field, what=f"{kind} {description} / {verb}")
                count += 1
    assert count > 30


def test_every_field_of_the_manifest_wrong_or_missing(valid_run, tmp_path):
    doc = json.loads((valid_run / "manifest.json").read_text())
    count = 0
    for description, field, mutated in field_mutations(doc, manifest.SCHEMA):
        run = copy_run(valid_run, tmp_path)
        (run / "manifest.json").write_text(json.dumps(mutated))
        for verb, argv in KINDS["manifest"][1].items():
            assert_refused(in_process(argv(run)), "manifest.json", field, what=f"manifest {description} / {verb}")
            count += 1
    assert count > 20


def test_gate_refuses_non_finite_tolerances(valid_run):
    for bad in ("nan", "inf", "-inf", "-0.1"):
        assert_refused(in_process(["gate", str(valid_run), "--baseline", "baselines/vault.json", "--tolerance", bad]),
                       "--tolerance", what=bad)
    doc = json.loads((valid_run / "results.json").read_text())
    for bad in ("NaN", "Infinity", "1e999"):
        text = json.dumps({**doc, "metrics": [{**doc["metrics"][0], "tolerance": 0.05}]}).replace("0.05", bad)
        path = valid_run.parent / "tolerance.json"
        path.write_text(text)
        assert_refused(in_process(["gate", str(valid_run), "--baseline", str(path)]), "tolerance.json", what=bad)


# -- bad paths and arguments ---------------------------------------------------------------------
def _bad_path_cases(run: Path, a_file: Path) -> list[tuple[list[str], str]]:
    unwritable = "/proc/agentbed-no-such/x"  # nobody, not even root, creates files in /proc
    return [
        (["run", "vault", "--out", str(a_file), "--quiet"], str(a_file)),
        (["run", "vault", "--out", str(a_file / "sub"), "--quiet"], str(a_file / "sub")),
        (["run", "vault", "--out", unwritable, "--quiet"], unwritable),
        (["run", "vault", "--out", str(a_file), "--resume"], str(a_file)),
        (["report", str(run), "--out", str(run)], str(run)),
        (["report", str(run), "--out", str(a_file / "r.html")], str(a_file / "r.html")),
        (["report", str(run), "--out", unwritable], unwritable),
        (["report", str(a_file)], str(a_file)),
        (["export", str(run), "--format", "inspect", "--out", str(a_file)], str(a_file)),
        (["export", str(run), "--format", "inspect", "--out", unwritable], unwritable),
        (["branch", str(run / LOG), "--at", "1", "--agents", "oracle", "--out", str(a_file)], str(a_file)),
        (["verify", str(run / "no-such.jsonl")], "no-such.jsonl"),
        (["verify", str(run / "episodes" / "..")], ""),
        (["replay", str(run)], str(run)),
        (["replay", str(run / LOG), "--step", "0"], "--step"),
        (["branch", str(run / LOG), "--at", "-1", "--agents", "oracle"], "--at"),
        (["branch", str(run / LOG), "--at", "1", "--agents", "oracle", "--rollouts", "0"], "--rollouts"),
        (["branch", str(run / LOG), "--at", "1", "--agents", "ghost"], "ghost"),
        (["gate", str(run), "--baseline", str(run / "episodes")], "episodes"),
        (["gate", str(a_file), "--baseline", str(run / "results.json")], str(a_file)),
        (["run", "vault", "--agent", "oracle,oracle", "--out", str(run.parent / "dup")], "oracle"),
        (["run", "vault", "--task", "open-fast", "--task", "open-fast", "--out", str(run.parent / "dup")], "open-fast"),
        (["run", "vault", "-j", "0", "--out", str(run.parent / "j0")], "-j"),
        (["run", "vault", "--degrade", "nan", "--out", str(run.parent / "nan")], "--degrade"),
    ]


def test_bad_paths_and_arguments_in_process(valid_run, tmp_path):
    run = copy_run(valid_run, tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    (run / "episodes" / "..").resolve()
    for argv, name in _bad_path_cases(run, a_file):
        if argv[:2] == ["verify", str(run / "episodes" / "..")]:
            continue  # a valid run directory spelled oddly: not a bad input
        assert_refused(in_process(argv), name, what=" ".join(argv))
    assert (run / "run.json").read_bytes() == (valid_run / "run.json").read_bytes()  # nothing recorded is lost


def test_a_slice_as_subprocesses_with_bounded_memory_and_time(valid_run, tmp_path):
    """Every (kind, verb) pair once, each with another generic content, plus the huge line for
    every kind, under RLIMIT_AS and a timeout; then every bad path."""
    generic = [c for c in _generic_cases(valid_run)]
    contents = [name for name, _ in generic_contents(b"{}")]
    chosen, seen = [], set()
    for kind, name, verb, content in generic:
        if (kind, verb) not in seen and name == contents[len(seen) % len(contents)]:
            seen.add((kind, verb))
            chosen.append((kind, name, verb, content))
    for kind, name, verb, content in generic:  # pairs the rotation missed
        if (kind, verb) not in seen:
            seen.add((kind, verb))
            chosen.append((kind, name, verb, content))
    big = huge_line()
    for kind, (_, verbs) in KINDS.items():
        chosen.append((kind, "huge-line", next(iter(verbs)), big))
    for kind, name, verb, content in chosen:
        run = copy_run(valid_run, tmp_path)
        _place(run, kind, content)
        assert_refused_or_changed(subprocess_cli(KINDS[kind][1][verb](run)), kind, name, verb,
                                  Path(KINDS[kind][0]).name, what=f"subprocess {kind}/{name}/{verb}")
    run = copy_run(valid_run, tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    for argv, name in _bad_path_cases(run, a_file)[:12]:
        if argv[:2] == ["verify", str(run / "episodes" / "..")]:
            continue
        assert_refused(subprocess_cli(argv), name, what="subprocess " + " ".join(argv))


def test_a_closed_pipe_is_not_a_traceback(valid_run, tmp_path):
    """`verify ... | head -1` with more output than a pipe holds, so the writer meets a closed pipe."""
    data = (valid_run / LOG).read_bytes().replace(b'"reward":', b'"reward": ', 1)
    for i in range(2000):  # one line each on stdout: more than a pipe's buffer
        (tmp_path / f"tampered-{i}.jsonl").write_bytes(data)
    for argv in (["verify", str(tmp_path)], ["replay", str(valid_run / LOG)], ["list"]):
        cmd = " ".join([sys.executable, "-m", "agentbed.cli", *argv]) + " | head -c 1 >/dev/null; " \
              "echo ${PIPESTATUS[0]} >&2"
        result = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120, cwd=ROOT,
                                env={**os.environ, "COLUMNS": "80"})
        assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
        # 141: ours (128 + SIGPIPE); 1: rich's own broken-pipe exit for its rendered output
        assert result.stderr.strip().splitlines() in (["0"], ["141"], ["1"]), (argv[0], result.stderr)


# -- the workloads' verbs that read files ---------------------------------------------------------
WORKLOAD_READERS: dict[str, Callable[[Path], list[str]]] = {
    "oversight-evaluate": lambda f: ["oversight", "evaluate", str(f)],
    "oversight-features": lambda f: ["oversight", "features", str(f), "--out", str(f.parent / "new.jsonl")],
    "cocoder-plan": lambda f: ["cocoder-plan", str(f)],
}


def test_the_workloads_file_verbs_over_generic_bad_contents(tmp_path):
    valid = b'{"provenance": {"schema": "agentbed.oversight.dataset/1"}}\n'
    for name, content in [*generic_contents(valid), ("huge-line", huge_line())]:
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(content)
        for verb, argv in WORKLOAD_READERS.items():
            assert_refused(in_process(argv(path)), path.name, what=f"{verb} on {name}")
        path.unlink()


def test_the_other_verbs_refuse_bad_arguments_in_one_line(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    for argv, name in ((["list", "ghost"], "ghost"), (["demo", "--suites", "ghost"], "ghost"),
                       (["sandbox", "prune", "--backend", "bad"], "bad"), (["cocoder-plan", str(tmp_path)], str(tmp_path)),
                       (["oversight", "evaluate", str(tmp_path / "none.jsonl")], "none.jsonl"),
                       (["graphrag", "grid", "--dataset", "nowhere"], "nowhere")):
        assert_refused(in_process(argv), name, what=" ".join(argv))
