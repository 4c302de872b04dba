"""What the readers of a run (verify, report, the viewer's runs list) hold of its plan does not grow
with its episodes (issue 55 item 6): run.json's and the manifest's seeds are read as the range they
are, and the check for lone surrogates makes no path per integer. Counted in objects and bytes
(``sys.getsizeof``, tracemalloc's peak), never timed."""

import json
import tracemalloc

from agentbed import manifest as mf
from agentbed.cli import main
from agentbed.cost import load_prices
from agentbed.jsonstream import iter_streamed
from agentbed.report.rundir import load_run
from agentbed.schemas import fold_seeds
from agentbed.store import RunStore
from agentbed.validate import _lone_surrogate
from agentbed.view.catalog import RunView
from tests.engine.test_flat_driver import held, planned


def recorded(root, seeds):
    store = RunStore(root)
    store.create({**planned(seeds)[1], "executor": "serial"})
    store.unlock()
    return root


def plan_held(root):
    """The bytes each reader holds of the run's plan: run.json as verify and the viewer read it,
    the manifest's plan, and run.json as the report shows it."""
    meta = RunStore(root).meta()
    doc = mf.load(root, streamed=True)
    mf.close(doc)
    view = RunView(root, ".", load_prices())
    view.listing()  # the runs list's reading: run.json and the manifest kept, the seal checked
    return {"meta": held(meta)[1], "manifest plan": held(doc["plan"])[1], "viewer": held(view._json)[1],
            "report": held(load_run(root).run_info)[1]}


def test_the_readers_hold_a_plan_of_100000_seeds_as_one_of_10(tmp_path):
    small, large = plan_held(recorded(tmp_path / "small", 10)), plan_held(recorded(tmp_path / "large", 100_000))
    for reader, size in large.items():  # a list of 100,000 integers is 3.6 MB
        assert abs(size - small[reader]) < 4096, (reader, small[reader], size)
    root = tmp_path / "large"
    meta = RunStore(root).meta()
    assert meta["seeds"] == range(3, 100_003)
    # written back as the store writes it, the same bytes: nothing on disk changes
    assert "".join(iter_streamed(meta, indent=1)).encode("utf-8") == (root / "run.json").read_bytes()


def test_only_seeds_one_step_apart_become_a_range():
    assert fold_seeds([4, 5, 6]) == range(4, 7)
    assert fold_seeds([9, 7, 5]) == range(9, 4, -2)
    assert fold_seeds([7]) == range(7, 8)
    for kept in ([0, 1, 3], [0, 1.0, 2], [0, True], [], [1, 1]):
        assert [(type(x), x) for x in fold_seeds(kept)] == [(type(x), x) for x in kept]
        assert type(fold_seeds(kept)) is list


def test_the_lone_surrogate_check_makes_no_path_per_integer():
    doc = {"plan": {"seeds": list(range(100_000)), "tasks": ["echo"]}}
    tracemalloc.start()
    try:
        _lone_surrogate(doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024  # a (value, path) pair per integer was 13 MB
    assert _lone_surrogate({"a": [1, {"b": "\ud800"}], "c": "x"}) == "a[1].b"
    assert _lone_surrogate({"a": [1, 2], "\udc00": 3}) == "\udc00"
    assert _lone_surrogate(["ok", ["\ud800"]]) == "[1][0]"
    assert _lone_surrogate("\ud800") == "(top level)"


def test_verify_still_names_seeds_that_differ_from_the_sealed_plan(tmp_path, capsys):
    root = tmp_path / "run"
    assert main(["run", "vault", "--task", "echo", "--agent", "oracle", "--seeds", "3", "--executor", "serial",
                 "--quiet", "--out", str(root)]) == 0
    original = (root / "run.json").read_text()
    for edited in ([0, 1, 5], [2, 1, 0], [0, 1]):  # a list kept, a range the other way, a shorter range
        meta = json.loads(original)
        (root / "run.json").write_text(json.dumps({**meta, "seeds": edited}, indent=1, sort_keys=True))
        capsys.readouterr()
        assert main(["verify", str(root)]) != 0
        assert "field 'seeds' differs from the plan the manifest sealed" in capsys.readouterr().out, edited
