"""The dependency graph read from skeletons (function bodies that import nothing from the package
blanked, ``name.attr`` uses scanned on demand) is the graph read from whole files: on code we did
not write (the pinned repositories, standard-library packages, networkx), on the synthetic
generator's packages, and on modules hypothesis assembles from the constructs the text-level
reading has to get right (docstrings of every form, headers with nested brackets and comments,
strings and comments that look like code, f-strings, local and TYPE_CHECKING imports)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from package_files import write_package

from agentbed.errors import UsageError
from environments.cocoder.depgraph import build_dependency_graph, forget_parsed, parse_module
from environments.cocoder.skeleton import skeleton
from environments.cocoder.synth import SynthSpec, generate_repo

STDLIB = Path(ast.__file__).parent


@pytest.fixture(autouse=True)
def _skeletons_read_by_ast(monkeypatch):
    """The skeleton path itself, also where the native reader is built (it reads what that reader
    does not vouch for; the native reader has tests/cocoder/test_native_reader.py)."""
    from environments.cocoder import facts

    monkeypatch.setattr(facts, "_native_read", None)


def _dump(graph) -> tuple:
    """Everything a plan can see, orders included (a schedule walks predecessors in order)."""
    return (list(graph.nodes(data=True)), list(graph.edges(data=True)),
            {n: list(graph.pred[n]) for n in graph}, {n: list(graph.succ[n]) for n in graph})


def assert_same_graphs(package_dir: Path, modes=({}, {"include_local": False}, {"collapse_reexports": False})) -> None:
    for kwargs in modes:
        forget_parsed()  # facts parsed whole would serve the skeleton request too
        whole = _dump(build_dependency_graph(package_dir, whole_files=True, **kwargs))
        forget_parsed()
        assert _dump(build_dependency_graph(package_dir, **kwargs)) == whole, (package_dir, kwargs)


def test_the_pinned_repositories_graphs_are_the_whole_file_graphs():
    from agentbed.testing import require
    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos, package_base

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")
    for repo in REPOS:
        assert_same_graphs(package_base(repo) / repo.package)


@pytest.mark.parametrize("package", ["email", "json", "asyncio", "importlib", "xml", "logging", "unittest", "http"])
def test_standard_library_packages_graphs_are_the_whole_file_graphs(package):
    assert_same_graphs(STDLIB / package)


def test_networkx_graph_is_the_whole_file_graph():
    spec = importlib.util.find_spec("networkx")
    assert spec is not None and spec.submodule_search_locations
    assert_same_graphs(Path(next(iter(spec.submodule_search_locations))), modes=({},))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modules=st.integers(5, 40), hubs=st.integers(1, 3), cycles=st.integers(0, 3), seed=st.integers(0, 10_000),
       local=st.floats(0, 0.5), type_checking=st.floats(0, 0.5))
def test_synthetic_packages_graphs_are_the_whole_file_graphs(tmp_path_factory, modules, hubs, cycles, seed, local,
                                                             type_checking):
    out = tmp_path_factory.mktemp("synth")
    repo = generate_repo(SynthSpec(modules=modules, hubs=hubs, cycles=cycles, seed=seed, package="hsyn",
                                   local_import_fraction=local, type_checking_fraction=type_checking),
                         out / "hsyn", with_tests=False)
    assert_same_graphs(repo.package_dir)


# -- modules assembled from the constructs a text-level reading can get wrong --------------------
DOCSTRINGS = ['"""One line."""', '"""First line.\n\n    More, indented.\n    """', '"""\n    Starts later.\n    """',
              "r'''Raw \\d first.\n    rest'''", '"single quoted"', '("in" "parens")', '"a" "b"',
              '"""ends in a backslash \\\n    continued"""', '"""Doc."""; x = 1', 'b"""bytes"""',
              '"""has def f(): and import hpkg.b\ndef g():\n    pass\n"""', '"""tab\tinside"""', "f'''f {bb.doc}'''"]
HEADERS = ["def f{n}(a, b=1):", "async def f{n}(self, *args, **kw) -> int:",
           "def f{n}(\n    a: dict[str, list[tuple[int, int]]] = {{}},\n    b=\"):#(\",\n) -> 'Ret':",
           "def f{n}(a,  # a comment (with a paren\n          b=lambda x: x[0]):",
           "def f{n}(x: Callable[[Optional[Union[int, Dict[str, List[int]]]]], None]) -> Optional[Dict[str, Any]]:",
           "def f{n}(a=(1, (2, (3, (4, (5, 6)))))):", "@decorator(arg=')')\ndef f{n}():"]
STATEMENTS = ["return bb.x", "y = hpkg.b.y(1)", "s = 'bb.not_a_use'", "# bb.nor_this", "t = f'{bb.in_f}'",
              "from hpkg.b import g", "import json", "from hpkg import TYPE_CHECKING_NOT", "z = bb . spaced",
              "if TYPE_CHECKING:\n    from hpkg.a import h", "def inner():\n    import hpkg.a\n    return hpkg.a.deep",
              "w = [\n1, 2]", "v = 'continued \\\nstring'", "u = '''\ncolumn zero\nbb.in_string\n'''",
              "return x.bb.not_a_chain", "q = {'import': 1}", "pass", "import_me = 1", "print(bb.z, hpkg.b.z2)",
              "e = f'{{bb.literal}} {bb.field}'", "e = f'{x!r} {bb.after}'", "e = f'{bb.a:>{bb.w}}'",
              "e = rf'''\n{bb.triple}\n'''", "e = F'{ {bb.in_set} }'", "e = f\"{d['bb.key']}\"",
              "if'bb.not_f' in s: pass",
              # a kept body is cut after the statement with its last package import: clauses and
              # closing brackets at the body's indentation belong to that statement
              "try:\n    from hpkg.b import t1\nexcept ImportError:\n    t1 = None\nelse:\n    pass\nfinally:\n    pass",
              "from hpkg.b import (\n    p1,\n    p2,\n)", "from hpkg.b import \\\n    q1",
              "if x:\n    import hpkg.a\nelif y:\n    pass\nelse:\n    import hpkg.b as bb2\nbb2.after_cut",
              # a body reduced to its package imports: what must keep it whole instead
              "# from hpkg.b import commented", "v2 = 'continued \\\nfrom hpkg.b import not_an_import'",
              "from hpkg.b import (r1,  # a comment (\n    r2)", "import hpkg.a; import hpkg.b",
              "try: from hpkg.b import t2\nexcept ImportError: pass", "class Inner:\n    from hpkg.b import inner_cls",
              "from hpkg.b import s1 as s2, \\\n    s3", "x = [i for i in range(3)]; from hpkg import b"]
TOP = ["import hpkg.b as bb", "import hpkg.b", "from hpkg import b", "from . import b", "from .b import g, h",
       "import os.path", "from typing import TYPE_CHECKING", "if TYPE_CHECKING:\n    from hpkg.b import T",
       "X = 1", "A, B = 1, 2", "d = {}\nd['k'] = 3", "n: int", "LIST = [\n'a',\n'b',\n]", 'DOC = """text\ndef x():\n"""',
       "def one(): return bb.one", "try:\n    import hpkg.b\nexcept ImportError:\n    pass\nelse:\n    pass",
       "class K(Base, metaclass=M):\n    attr: int = 1\n    def m(self):\n        return bb.k\n",
       "class Empty:\n    '''Doc.'''", "x = 1; import hpkg.a"]


@st.composite
def module_source(draw) -> str:
    parts = list(draw(st.lists(st.sampled_from(TOP), max_size=6)))
    for n in range(draw(st.integers(0, 5))):
        header = draw(st.sampled_from(HEADERS)).format(n=n)
        body = []
        if draw(st.booleans()):
            body.append(draw(st.sampled_from(DOCSTRINGS)))
        body += draw(st.lists(st.sampled_from(STATEMENTS), min_size=0 if body else 1, max_size=5))
        text = header + "\n" + "\n".join("    " + line.replace("\n", "\n    ") if not line.startswith(("w = [", "v = '", "u = '", "v2 = '"))
                                         else "    " + line for line in body)
        if draw(st.booleans()):  # as a method
            text = f"class C{n}:\n    " + text.replace("\n", "\n    ")
        parts.append(text)
    text = "\n\n".join(parts) + "\n"
    return text.replace("\n", draw(st.sampled_from(["\n", "\r\n", "\n\f", "\n  \n"])))


def _facts(name: str, path: Path, whole: bool, bounds: list[str]) -> tuple:
    forget_parsed()
    facts = parse_module(name, path, whole=whole)
    internal = [r for r in facts.imports if r.target.split(".")[0] == "hpkg"]
    return facts.defined, facts.interfaces, facts.work, internal, {b: facts.names_used_from(b) for b in bounds}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=module_source())
def test_assembled_modules_facts_are_the_whole_file_facts(tmp_path_factory, source):
    try:
        tree = compile(source, "m.py", "exec", flags=ast.PyCF_ONLY_AST)
    except SyntaxError:
        return  # not a module: the whole-file parse refuses it, tested elsewhere
    bounds = sorted({a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names})
    root = tmp_path_factory.mktemp("h")
    pkg = write_package(root, {"hpkg/__init__.py": "", "hpkg/a.py": "", "hpkg/b.py": "", "hpkg/m.py": source})
    assert _facts("hpkg.m", pkg / "m.py", False, bounds) == _facts("hpkg.m", pkg / "m.py", True, bounds)
    assert skeleton(source, "hpkg")[0].count("\n") == source.count("\n")


def test_a_syntax_error_in_a_body_is_refused_only_when_every_line_is_read(tmp_path):
    pkg = write_package(tmp_path, {"bad/__init__.py": "", "bad/x.py": "def f():\n    return (1 +\n\n\ndef g():\n    pass\n"})
    with pytest.raises(UsageError, match=r"x.py:\d+: syntax error"):
        build_dependency_graph(pkg, whole_files=True)
    forget_parsed()
    pkg2 = write_package(tmp_path / "two", {"ok/__init__.py": "", "ok/x.py": "def f():\n    return 1 +\n"})
    assert set(build_dependency_graph(pkg2)) == {"ok", "ok.x"}  # the planner's graph reads no body
    with pytest.raises(UsageError, match="x.py:2: syntax error"):
        build_dependency_graph(pkg2, whole_files=True)


def test_the_garbage_collector_is_back_as_it_was_after_a_build(tmp_path):
    import gc

    pkg = write_package(tmp_path, {"gcp/__init__.py": "", "gcp/x.py": "import gcp\n"})
    assert gc.isenabled()
    build_dependency_graph(pkg)
    assert gc.isenabled()
    gc.disable()
    try:
        build_dependency_graph(pkg, whole_files=True)
        assert not gc.isenabled()
    finally:
        gc.enable()
