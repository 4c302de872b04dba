"""Bad input past the corpus (issue 31): numbers past 64 bits, lone surrogates, repeated keys,
special files, the prices file and a full disk. Each is one line naming the culprit, exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bad_input_cli import LOG, assert_refused, copy_run, in_process, make_valid_run, subprocess_cli


@pytest.fixture(scope="module")
def valid_run(tmp_path_factory) -> Path:
    return make_valid_run(tmp_path_factory.mktemp("bad-input-special") / "run")


def test_huge_integers_lone_surrogates_and_repeated_keys_are_one_line_in_every_reader(valid_run, tmp_path):
    big = "9" * 5000
    results = (valid_run / "results.json").read_text()
    unit = next(iter(json.loads(results)["metrics"][0]["values"]))
    cases = {
        "results big int": ("results.json", results.replace('"episodes": ', f'"episodes": {big}, "x": ', 1)),
        "results surrogate": ("results.json", results.replace(f'"{unit}"', '"\\ud800"', 1)),
        "results repeated key": ("results.json", results.replace(f'"{unit}": ', f'"{unit}": 0.0, "{unit}": ', 1)),
        "run.json big int": ("run.json", (valid_run / "run.json").read_text().replace('"seeds": [', f'"seeds": [{big}, ')),
        "index surrogate": ("index.jsonl", (valid_run / "index.jsonl").read_text().replace('"task": "', '"task": "\\udc00', 1)),
        "log big int": (LOG, (valid_run / LOG).read_text().replace('"seed":', f'"x":{big},"seed":', 1)),
    }
    for what, (rel, text) in cases.items():
        run = copy_run(valid_run, tmp_path)
        (run / rel).write_text(text)
        readers = [["verify", str(run)], ["gate", str(run), "--baseline", "baselines/vault.json"],
                   ["report", str(run), "--out", str(tmp_path / "r.html")]]
        for argv in readers + ([["replay", str(run / LOG)]] if rel == LOG else []):
            status, out, err = in_process(argv)
            assert status in (1, 2) and "internal error" not in err and "Traceback" not in err, (what, argv, err)
            if status == 2:
                assert_refused((status, out, err), what=f"{what} / {argv[0]}")
    (tmp_path / "cur.json").write_text(cases["results repeated key"][1])
    assert_refused(in_process(["gate", str(tmp_path / "cur.json"), "--baseline", "baselines/vault.json"]),
                   "given twice", what="a repeated unit key")


def test_fifos_and_devices_are_refused_at_once_never_waited_on(valid_run, tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for argv in (["replay", str(fifo)], ["verify", str(fifo)], ["gate", str(valid_run), "--baseline", str(fifo)],
                 ["gate", str(fifo), "--baseline", "baselines/vault.json"], ["replay", "/dev/zero"],
                 ["run", "vault", "--prices", str(fifo), "--out", str(tmp_path / "p")]):
        assert_refused(subprocess_cli(argv, timeout=60), what=" ".join(argv))


def test_the_prices_file_goes_through_the_validator(tmp_path):
    for name, text in (("nan", "models:\n  'x:*': {input: .nan, output: 1}\n"),
                       ("inf", "models:\n  'x:*': {input: .inf, output: 1}\n"),
                       ("huge", "models:\n  'x:*': {input: 1e300, output: 1}\n"),
                       ("big-int", f"models:\n  'x:*': {{input: {'9' * 5000}, output: 1}}\n"),
                       ("latin1", "models: {}\n# \xe9\n")):
        path = tmp_path / f"{name}.yaml"
        path.write_bytes(text.encode("latin-1") if name == "latin1" else text.encode())
        assert_refused(in_process(["run", "vault", "--prices", str(path), "--out", str(tmp_path / name)]),
                       "--prices", name, what=name)
        assert not (tmp_path / name).exists()


def test_a_full_disk_is_named_not_an_internal_error(tmp_path, monkeypatch):
    import errno

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    outcome = in_process(["run", "vault", "--agent", "oracle", "--task", "open-fast", "--seeds", "1",
                          "--executor", "serial", "--out", str(tmp_path / "run"), "--quiet"])
    monkeypatch.undo()
    assert_refused(outcome, "run.json", "No space left on device", what="ENOSPC")


def test_a_log_linked_to_itself_fails_the_seal_in_every_reader_never_an_internal_error(valid_run, tmp_path):
    """Session 18's probe: a run whose log is a link in a loop (``ln -s x x``) made ``report`` exit 70
    (an internal error: Path.resolve raises RuntimeError on a loop before Python 3.13) and the
    viewer's page of the run a 500; each now reads it as a missing log."""
    from agentbed.view.api import episodes_document, run_document
    from agentbed.view.catalog import Catalog

    run = copy_run(valid_run, tmp_path / "runs")
    (run / LOG).unlink()
    os.symlink((run / LOG).name, run / LOG)
    for argv in (["verify", str(run)], ["gate", str(run), "--baseline", "baselines/vault.json"],
                 ["report", str(run), "--out", str(tmp_path / "r.html")],
                 ["export", str(run), "--format", "inspect", "--out", str(tmp_path / "inspect")]):
        status, out, err = in_process(argv)
        assert status in (0, 1) and "internal error" not in err, (argv, status, err)
        assert status == 1 or argv[0] == "export", argv
    view = next(iter(Catalog(run.parent).runs().values()))
    assert run_document(view)["run"]["seal"].startswith("seal FAILED")
    assert episodes_document(view, {})["total"] == 4
