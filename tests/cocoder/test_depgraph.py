import sys

import grimp
import pytest
from package_files import write_package

from agentbed.errors import UsageError
from environments.cocoder.depgraph import MAX_FILE_BYTES, build_dependency_graph, condense, cycles
from environments.cocoder.synth import SynthSpec, generate_repo


def test_graph_matches_the_generators_ground_truth(synth_repo):
    graph = build_dependency_graph(synth_repo.package_dir)
    assert set(graph.edges) == synth_repo.edges
    ordering = {(u, v) for u, v, d in graph.edges(data=True) if d["ordering"]}
    assert ordering == synth_repo.ordering_edges
    assert cycles(graph), "the generator closed at least one import cycle"


def _grimp_edges(root, package, monkeypatch):
    monkeypatch.syspath_prepend(str(root))
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    g = grimp.build_graph(package, cache_dir=None)
    return {(imported, importer) for importer in g.modules for imported in g.find_modules_directly_imported_by(importer)
            if ".tests" not in importer and ".tests" not in imported}


def test_import_edges_agree_with_grimp_on_a_synthetic_repo(tmp_path, monkeypatch):
    repo = generate_repo(SynthSpec(modules=40, hubs=3, cycles=3, seed=11, package="gsynth"), tmp_path)
    ours = set(build_dependency_graph(repo.package_dir, collapse_reexports=False).edges)
    assert ours == _grimp_edges(tmp_path, "gsynth", monkeypatch)


def test_import_edges_agree_with_grimp_on_fetched_repositories(monkeypatch):
    from agentbed.testing import require
    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos, package_base

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")
    for repo in REPOS:
        ours = set(build_dependency_graph(package_base(repo) / repo.package, collapse_reexports=False).edges)
        assert ours == _grimp_edges(package_base(repo), repo.package, monkeypatch), repo.name


def test_relative_type_checking_local_imports_and_reexports(tmp_path):
    pkg = write_package(tmp_path, {
        "app/__init__.py": "from .core import Engine\nfrom .util import helper\n",
        "app/core.py": "from typing import TYPE_CHECKING\nfrom . import util\nif TYPE_CHECKING:\n"
                       "    from .models import Model\n\nclass Engine:\n    def run(self):\n"
                       "        from .models import Model\n        return util.helper(Model)\n",
        "app/models.py": "class Model:\n    pass\n",
        "app/util.py": "def helper(x):\n    return x\n",
        "app/cli.py": "from app import Engine, helper\n",
    })
    graph = build_dependency_graph(pkg)
    assert graph.edges["app.util", "app.core"]["names"] == ["helper"]
    edge = graph.edges["app.models", "app.core"]
    assert edge["local"] is False and edge["type_only"] is False  # one import is local, the other typed
    # re-exports through __init__ collapse to the defining modules: app is not a hub for app.cli
    assert graph.has_edge("app.core", "app.cli") and graph.has_edge("app.util", "app.cli")
    assert not graph.has_edge("app", "app.cli")
    skeleton_view = build_dependency_graph(pkg, include_local=False)
    assert skeleton_view.edges["app.models", "app.core"]["type_only"] is True


def test_cycle_only_graph_condenses_to_one_unit(tmp_path):
    pkg = write_package(tmp_path, {
        "ring/__init__.py": "",
        "ring/a.py": "import ring.b\n\ndef f():\n    return ring.b.g()\n",
        "ring/b.py": "import ring.c\n\ndef g():\n    return ring.c.h()\n",
        "ring/c.py": "import ring.a\n\ndef h():\n    return 1\n",
    })
    graph = build_dependency_graph(pkg)
    dag, mapping = condense(graph)
    assert cycles(graph) == [["ring.a", "ring.b", "ring.c"]]
    assert len({mapping[m] for m in ("ring.a", "ring.b", "ring.c")}) == 1


@pytest.mark.parametrize("files,message", [
    ({"bad/__init__.py": "", "bad/x.py": "def f(:\n    pass\n"}, "x.py:1: syntax error"),
    ({"empty/README": "nothing"}, "no Python modules found"),
    ({"bin/__init__.py": "", "bin/x.py": "x = 1\n"}, None),
])
def test_bad_repositories_get_one_line_errors(tmp_path, files, message):
    pkg = write_package(tmp_path, files)
    if message is None:  # a giant file
        (pkg / "x.py").write_bytes(b"x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
        message = "larger than the"
    with pytest.raises(UsageError, match=message) as err:
        build_dependency_graph(pkg)
    assert "\n" not in str(err.value)


def test_non_utf8_file_is_a_usage_error(tmp_path):
    pkg = write_package(tmp_path, {"enc/__init__.py": ""})
    (pkg / "x.py").write_bytes(b"x = '\xff'\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        build_dependency_graph(pkg)


def test_dotted_uses_are_every_attribute_chain_that_starts_at_a_name():
    from environments.cocoder.facts import _dotted_uses, parse

    tree = parse("import a\n\ndef f(x):\n    return a.b.c(x.y).z + g().w + [k.m for k in a.n]\n")
    # inner chains count too (a.b.c gives a.b); a chain that starts at a call does not
    assert _dotted_uses(tree) == {"a.b.c", "a.b", "x.y", "k.m", "a.n"}


def test_each_file_content_is_parsed_once_and_a_rewrite_again(tmp_path, monkeypatch):
    import os

    from environments.cocoder import facts

    pkg = write_package(tmp_path, {"p/__init__.py": "", "p/a.py": "X = 1\n"})
    calls = []
    real = facts._parse_facts
    monkeypatch.setattr(facts, "_parse_facts", lambda name, *rest: calls.append(name) or real(name, *rest))
    build_dependency_graph(pkg)
    build_dependency_graph(pkg, include_local=False)  # a run's second view of the same files
    assert sorted(calls) == ["p", "p.a"]
    stat = (pkg / "a.py").stat()
    (pkg / "a.py").write_text("Y = 1\n", encoding="utf-8")  # same size, same time stamp
    os.utime(pkg / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    graph = build_dependency_graph(pkg)
    assert calls[2:] == ["p.a"]
    assert graph.nodes["p.a"]["interface"] == "Y = 1"
