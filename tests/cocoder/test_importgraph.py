"""CoCoder's import graph from grimp (issue 37): the same module edges as our own builder where
both apply, packages given by folder (src layouts, namespace packages, several at once)."""

import pytest
from package_files import write_package

from agentbed.errors import UsageError
from environments.cocoder.depgraph import build_dependency_graph
from environments.cocoder.importgraph import import_graph
from environments.cocoder.synth import SynthSpec, generate_repo


def test_edges_are_our_builders_on_a_synthetic_repo(tmp_path):
    repo = generate_repo(SynthSpec(modules=40, hubs=3, cycles=3, seed=11, package="gsynth"), tmp_path)
    ours = build_dependency_graph(repo.package_dir, collapse_reexports=False)
    graph = import_graph(repo.package_dir)
    assert set(graph.nodes) == set(ours.nodes)
    assert set(graph.edges) == set(ours.edges) == repo.edges


def test_edges_are_our_builders_on_every_pinned_repository():
    from agentbed.testing import require
    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos, package_base

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")
    for repo in REPOS:
        folder = package_base(repo) / repo.package
        ours = build_dependency_graph(folder, collapse_reexports=False)
        graph = import_graph(folder)
        assert set(graph.nodes) == set(ours.nodes), repo.name
        assert set(graph.edges) == set(ours.edges), repo.name


def test_lines_relative_imports_and_a_src_layout(tmp_path):
    pkg = write_package(tmp_path / "src", {
        "app/__init__.py": "from .core import Engine\n",
        "app/core.py": "import os\n\nfrom . import util\n\n\nclass Engine:\n    def run(self):\n"
                       "        from .models import Model\n        return util.helper(Model)\n",
        "app/models.py": "class Model:\n    pass\n",
        "app/util.py": "def helper(x):\n    return x\n",
        "app/tests/test_core.py": "from app.core import Engine\n",
    })
    graph = import_graph(pkg)
    assert set(graph.nodes) == {"app", "app.core", "app.models", "app.util"}  # tests left out, as ours
    assert set(graph.edges) == {("app.core", "app"), ("app.util", "app.core"), ("app.models", "app.core")}
    assert graph.edges["app.util", "app.core"]["lines"] == [3]
    assert graph.edges["app.models", "app.core"]["lines"] == [8]


def test_several_top_level_packages_and_a_namespace_package(tmp_path):
    write_package(tmp_path, {
        "alpha/__init__.py": "",
        "alpha/a.py": "from beta.b import g\nimport nsp.inner.c\n",
        "beta/__init__.py": "",
        "beta/b.py": "def g():\n    return 1\n",
        "nsp/inner/__init__.py": "",
        "nsp/inner/c.py": "from alpha import a\n",
    })
    graph = import_graph(tmp_path / "alpha", tmp_path / "beta", tmp_path / "nsp")
    assert ("beta.b", "alpha.a") in graph.edges  # across packages: internal
    assert ("nsp.inner.c", "alpha.a") in graph.edges
    assert ("alpha.a", "nsp.inner.c") in graph.edges
    assert graph.graph["packages"] == ["alpha", "beta", "nsp"]


def test_a_checkout_named_like_an_imported_package_is_read_from_its_folder(tmp_path):
    import networkx  # noqa: F401  imported in this process: grimp's name lookup would find it instead

    write_package(tmp_path, {"networkx/__init__.py": "from .own import thing\n", "networkx/own.py": "thing = 1\n"})
    graph = import_graph(tmp_path / "networkx")
    assert set(graph.nodes) == {"networkx", "networkx.own"}
    assert set(graph.edges) == {("networkx.own", "networkx")}


def test_a_missing_folder_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="not a directory"):
        import_graph(tmp_path / "nowhere")
