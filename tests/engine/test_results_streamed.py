"""results.json written in flat memory: its values per unit kept on disk, its seeds as ranges, and
the file written as they are read is, byte for byte, what ``json.dump`` writes of the whole document."""

import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbed.diskmap import DiskMap
from agentbed.jsonstream import Streamed, dump_streamed
from agentbed.results import EpisodeMetrics, Seeds

texts = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=8)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False), texts)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-30, 30), max_size=80))
def test_seeds_are_the_set_of_seeds_in_order(seeds):
    kept = Seeds()
    for s in seeds:
        kept.add(s)
    assert list(kept) == sorted(set(seeds)) and len(kept) == len(set(seeds))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts, st.integers(-3, 3)), max_size=40), texts, texts)
def test_a_diskmap_reads_a_range_of_keys(items, start, stop):
    with DiskMap() as disk:
        disk.update(items)
        kept = dict(reversed(items))  # first value kept
        assert list(disk.items(start, stop)) == sorted((k, v) for k, v in kept.items() if start <= k < stop)
        assert list(disk.items(start)) == sorted((k, v) for k, v in kept.items() if start <= k)


def _doc(draw_values, draw_list, extra, wrap):
    return {"metrics": [{"agent": "a", "values": wrap(draw_values, True)}, {"agent": "é", "values": wrap({}, True)}],
            "seeds": wrap(draw_list, False), "empty": wrap([], False), **extra}


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(texts, scalars, max_size=12), st.lists(scalars, max_size=12),
       st.dictionaries(texts.filter(lambda k: k not in {"metrics", "seeds", "empty"}),
                       st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(texts, c, max_size=3),
                                    max_leaves=8), max_size=4))
def test_a_streamed_document_is_json_dump_of_the_whole(values, items, extra):
    whole = _doc(dict(sorted(values.items())), items, extra, lambda v, _: v)
    streamed = _doc(dict(sorted(values.items())), items, extra,
                    lambda v, pairs: Streamed(iter(v.items()) if pairs else iter(v), pairs=pairs))
    out = io.StringIO()
    dump_streamed(streamed, out)
    assert out.getvalue() == json.dumps(whole, indent=1, sort_keys=True)


def test_a_stream_longer_than_a_batch_and_a_marker_in_the_text():
    values = {f"t/{i}": float(i % 2) for i in range(5000)}
    doc = {"note": "\0not-a-marker-0\0", "values": dict(sorted(values.items()))}
    out = io.StringIO()
    dump_streamed({**doc, "values": Streamed(iter(doc["values"].items()))}, out)
    assert out.getvalue() == json.dumps(doc, indent=1, sort_keys=True)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["vault", "ö"]), st.sampled_from(["b", "a", "a[x=1]"]), texts,
                          st.integers(0, 4), st.booleans()), max_size=40))
def test_episode_metrics_are_the_dicts_they_replace(rows):
    grouped: dict[tuple[str, str], dict[str, float]] = {}
    fold = EpisodeMetrics()
    for suite, agent, task, seed, success in rows:
        fold.add({"suite": suite, "agent": agent, "task": task, "seed": seed, "success": success})
        grouped.setdefault((suite, agent), {})[f"{task}/{seed}"] = 1.0 if success else 0.0
    expected = [{"suite": s, "agent": a, "metric": "success", "higher_is_better": True, "tolerance": 0.05,
                 "values": dict(sorted(v.items()))} for (s, a), v in sorted(grouped.items())]
    assert fold.metrics() == expected
    out, whole = io.StringIO(), json.dumps({"metrics": expected}, indent=1, sort_keys=True)
    dump_streamed({"metrics": fold.metrics(streamed=True)}, out)
    assert out.getvalue() == whole


def _read_both(path, monkeypatch, chunk):
    from agentbed import jsonstream, manifest
    from agentbed.validate import InputError

    def outcome(streamed):
        try:
            doc = manifest.load(path.parent, streamed=streamed)
        except InputError as exc:
            return "InputError", str(exc)
        pairs = list(doc["episodes"])
        manifest.close(doc)
        seeds = doc["plan"]["seeds"]  # the streamed reading holds seeds one step apart as a range
        return {**doc, "episodes": pairs, "plan": {**doc["plan"], "seeds": list(seeds) if isinstance(seeds, range)
                                                    else seeds}}

    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    return outcome(True), outcome(False)


pair_items = st.one_of(st.tuples(texts, st.sampled_from(["a" * 64, "0" * 64 + "\n", "A" * 64, "x"])).map(list),
                       st.lists(texts, max_size=3), scalars)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(pair_items, max_size=6), st.sampled_from(["", " ", "\n", "x", "}", "{"]), st.booleans(),
       st.sampled_from([1, 3, 7, 1 << 20]), st.sampled_from(["complete", "episodes", "root", "zz"]))
def test_a_streamed_manifest_reads_as_the_whole_file_does(tmp_path_factory, monkeypatch, pairs, tail, spaced, chunk,
                                                           twice):
    """Valid or not (bad pairs, a key twice, more after the document, a number cut by a chunk's end):
    the streamed read gives read_json's document, or its very message."""
    doc = {"format": "agentbed.manifest/2", "run_id": "ab" * 16, "key_id": None, "complete": True, "final": False,
           "plan": {"suite": "vault", "tasks": ["é"], "agents": ["a"], "seeds": list(range(40)), "options": {},
                    "degrade": 0.25}, "expected": 123456789, "root": "c" * 64, "files": {}, "episodes": pairs}
    text = json.dumps(doc, indent=1 if spaced else None, ensure_ascii=False)
    text = text[:-1] + f', "{twice}": 1}}' if twice != "zz" else text
    path = tmp_path_factory.mktemp("m") / "manifest.json"
    path.write_text(text + tail, encoding="utf-8")
    streamed, whole = _read_both(path, monkeypatch, chunk)
    assert streamed == whole


def _results_both(path, monkeypatch, chunk):
    from agentbed import jsonstream
    from agentbed.errors import UsageError
    from agentbed.results import StreamedMetrics, load_results
    from agentbed.validate import InputError

    def outcome(streamed):
        try:
            doc = load_results(path, streamed=streamed)
        except (InputError, UsageError) as exc:
            return type(exc).__name__, str(exc)
        if isinstance(doc["metrics"], StreamedMetrics):
            metrics = [{**m, "values": dict(m["values"])} for m in doc["metrics"]]
            again = [{**m, "values": list(m["values"])} for m in doc["metrics"]]  # read again from the file
            assert [dict(m["values"]) for m in again] == [m["values"] for m in metrics]
            seeds = list(doc["seeds"]) if "seeds" in doc else None
            doc["metrics"].close()
            return {**doc, "metrics": metrics, **({"seeds": seeds} if seeds is not None else {})}
        return doc

    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    return outcome(True), outcome(False)


values_of = st.dictionaries(texts, st.one_of(st.sampled_from([1.0, 0.0, 1, -2.5, True]), scalars), max_size=5)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(values_of, st.booleans(), st.sampled_from(["success", "cost"])), max_size=3),
       st.sampled_from(["", " ", "\n", "x", "}"]), st.booleans(), st.sampled_from([1, 3, 7, 1 << 20]),
       st.sampled_from(["none", "shuffled", "values first", "twice", "format", "no values", "seeds", "nan",
                        "no metrics"]))
def test_streamed_results_read_as_the_whole_file_does(tmp_path_factory, monkeypatch, metrics, tail, spaced, chunk,
                                                      damage):
    """As written (units sorted, values last) or not, valid or not: the streamed read gives
    load_results' document, or its very message; its metrics can be read again."""
    listed = [{"suite": "vault", "agent": f"a{i}", "metric": metric, "higher_is_better": True, "tolerance": 0.05,
               "values": dict(sorted(values.items()))} for i, (values, _, metric) in enumerate(metrics)]
    doc = {"format": "agentbed.results/1", "episodes": 3, "seeds": [0, 1, 2], "errored_episodes": 0,
           "metrics": listed}
    text = json.dumps(doc, indent=1 if spaced else None, sort_keys=True)
    if damage == "shuffled" and listed and len(listed[0]["values"]) > 1:
        items = list(listed[0]["values"].items())
        listed[0]["values"] = dict(items[1:] + items[:1])
        text = json.dumps(doc, indent=1 if spaced else None)
    elif damage == "values first" and listed:
        doc["metrics"] = [{"values": m["values"], **{k: v for k, v in m.items() if k != "values"}} for m in listed]
        text = json.dumps(doc, indent=1 if spaced else None)
    elif damage == "twice":
        text = text[:-1] + ', "episodes": 4}'
    elif damage == "format":
        text = text.replace("agentbed.results/1", "other/1")
    elif damage == "no values" and listed:
        del listed[0]["values"]
        text = json.dumps(doc, sort_keys=True)
    elif damage == "seeds":
        text = text.replace('"seeds": [', '"seeds": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['
                            + "]" * 66 + ", ", 1)
    elif damage == "no metrics":
        text = json.dumps({k: v for k, v in doc.items() if k != "metrics"})
    elif damage == "nan":
        text = text.replace('"tolerance": 0.05', '"tolerance": NaN', 1)
    path = tmp_path_factory.mktemp("r") / "results.json"
    path.write_text(text + tail, encoding="utf-8")
    streamed, whole = _results_both(path, monkeypatch, chunk)
    assert streamed == whole


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.tuples(texts, st.integers(0, 3)), st.booleans(), max_size=12),
       st.dictionaries(texts, st.sampled_from([1.0, 0.0, 1, 0, 0.5]), max_size=12))
def test_differs_is_the_dicts_inequality(mine, theirs):
    fold = EpisodeMetrics()
    for (task, seed), success in mine.items():
        fold.add({"suite": "s", "agent": "a", "task": task, "seed": seed, "success": success})
    ours = {f"{t}/{s}": 1.0 if ok else 0.0 for (t, s), ok in mine.items()}
    if not ours:
        assert not fold.differs("s", "a", sorted(theirs.items()))
        return
    assert fold.differs("s", "a", sorted(theirs.items())) == (ours != theirs)
    assert not fold.differs("s", "a", sorted(ours.items()))
