"""The native reader (environments/cocoder/native/reader.c, built by scripts/build-native) reads
what the ast path reads: on every module it vouches for, the same top-level names, interface texts
(in order), work estimate, imports (in order, with their flags) and ``m.NAME`` uses (scanned
outside the triple-quoted strings it found) as the whole-file parse, and
the same dependency graphs, on code nobody here wrote (networkx, ray, the pinned repositories,
standard-library packages) and on modules hypothesis assembles from signatures, targets,
docstrings and import statements of every form it handles and some it must refuse."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from package_files import write_package

from environments.cocoder import facts, nativereader
from environments.cocoder.depgraph import (
    build_dependency_graph,
    discover_modules,
    forget_parsed,
    parse_module,
)

STDLIB = Path(ast.__file__).parent


@pytest.fixture(autouse=True)
def _built() -> None:
    from agentbed.testing import require

    require(nativereader.read is not None, "CoCoder's native reader (environments/cocoder/native/reader.c, built)",
            f"run {nativereader.BUILD_COMMAND} (needs a C compiler and Python's headers)")


def _native(name: str, path: Path) -> facts.ModuleFacts | None:
    """The facts the native reader gives, or None where it does not vouch for the file."""
    assert nativereader.read is not None
    reading = nativereader.read(path.read_bytes())
    if isinstance(reading, str):
        return None
    return facts._native_facts(name, path, path.read_text(encoding="utf-8"), reading)


def _same_facts(name: str, path: Path) -> bool:
    """Whether the native reader vouched; asserts its facts are the whole-file parse's."""
    native = _native(name, path)
    if native is None:
        return False
    forget_parsed()
    whole = parse_module(name, path, whole=True)
    assert native.defined == whole.defined, path
    assert list(native.interfaces.items()) == list(whole.interfaces.items()), path
    assert native.work == whole.work, path
    assert native.imports == whole.imports, path
    for bound in {ref.bound_as for ref in whole.imports if not ref.names}:  # ``m.NAME`` scanned in its strings
        assert native.names_used_from(bound) == whole.names_used_from(bound), (path, bound)
    return True


def _installed(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


def _dump(graph) -> tuple:
    return (list(graph.nodes(data=True)), list(graph.edges(data=True)),
            {n: list(graph.pred[n]) for n in graph}, {n: list(graph.succ[n]) for n in graph})


def _graphs_agree(package_dir: Path, monkeypatch) -> None:
    """The graphs built with the native reader are those built with ast alone, in every mode. Each
    reader parses the package once for its three builds, as a run does: parse_module's cache is
    keyed by a file's name, path and bytes, and every mode asks the same (not whole) facts, so a
    build on the cache is given what a cold one parses (each mode cold was 6 parses of ray's
    2,319 files instead of 2)."""
    modes = ({}, {"include_local": False}, {"collapse_reexports": False})
    forget_parsed()
    native = [_dump(build_dependency_graph(package_dir, **kwargs)) for kwargs in modes]
    forget_parsed()
    with monkeypatch.context() as m:
        m.setattr(facts, "_native_read", None)
        for kwargs, expected in zip(modes, native, strict=True):
            assert _dump(build_dependency_graph(package_dir, **kwargs)) == expected, (package_dir, kwargs)
    forget_parsed()


@pytest.mark.parametrize("package", ["networkx", "ray"])
def test_networkx_and_ray_facts_and_graphs_are_the_ast_paths(package, monkeypatch):
    if importlib.util.find_spec(package) is None:
        from agentbed.testing import require

        require(False, package, "run scripts/setup (the test extras install it)")
    folder = _installed(package)
    modules = discover_modules(folder)
    vouched = sum(_same_facts(name, path) for name, path in modules.items())
    assert vouched >= 0.9 * len(modules)  # 288 of 288 and 2,271 of 2,319 when written: the rest go to ast
    _graphs_agree(folder, monkeypatch)


def test_pinned_repositories_facts_and_graphs_are_the_ast_paths(monkeypatch):
    from agentbed.testing import require
    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos, package_base

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")
    for repo in REPOS:
        folder = package_base(repo) / repo.package
        for name, path in discover_modules(folder).items():
            _same_facts(name, path)
        _graphs_agree(folder, monkeypatch)


@pytest.mark.parametrize("package", ["email", "json", "asyncio", "importlib", "xml", "logging", "unittest", "http"])
def test_standard_library_facts_and_graphs_are_the_ast_paths(package, monkeypatch):
    for name, path in discover_modules(STDLIB / package).items():
        _same_facts(name, path)
    _graphs_agree(STDLIB / package, monkeypatch)


# -- modules assembled from what the reader writes and what it must refuse -------------------------
ATOMS = st.sampled_from([
    "a", "b.c", "int", "None", "True", "False", "...", "0", "7", "00", "1_000", "0x1F", "0o17", "0b101",
    "123456789012345678901234567890", "0.5", "1.0", "1.50", ".5", "1.", "1e5", "1E-7", "0.0000001", "1e999", "2j",
    "'x'", '"y"', "'it\\'s'", '"say \\"hi\\""', "'tab\\there'", "r'\\d+'", "'a' 'b'", "b'by\\x00tes'", "u'uni'",
    "U'uni'", "'\\u00e9'", "'\u00e9'", '"""tri\nple"""', "'\\n'", "'\\x7f'", '"\'"', "'\"'", "'\\N{DASH}'",
    "f'{a}'", "lambda x: x", "(x for x in y)", "a if b else c", "not a", "a < b", "await a", "a.b[1:2]"])


def _expressions(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(children, max_size=3)
    return st.one_of(
        children.map(lambda e: f"({e}).attr"),
        st.tuples(children, st.lists(children, min_size=1, max_size=3), st.booleans()).map(
            lambda t: f"{t[0]}[{', '.join(t[1])}{',' if t[2] else ''}]"),
        st.tuples(children, items, st.lists(st.tuples(st.sampled_from(["k", "key", "**"]), children), max_size=2)).map(
            lambda t: f"{t[0]}({', '.join([*t[1], *(('**' + v) if k == '**' else f'{k}={v}' for k, v in t[2])])})"),
        st.tuples(children, st.sampled_from(["|", "+", "-", "*", "/", "//", "%", "@", "**", "<<", ">>", "&", "^"]),
                  children, st.booleans()).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})" if t[3] else f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(st.sampled_from(["-", "+", "~"]), children).map(lambda t: f"{t[0]}({t[1]})"),
        items.map(lambda xs: f"({', '.join(xs)}{',' if len(xs) == 1 else ''})"),
        items.map(lambda xs: f"[{', '.join(xs)}]"),
        st.lists(children, min_size=1, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
        st.lists(st.tuples(children, children), max_size=3).map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
        children.map(lambda e: f"*{e}"), children.map(lambda e: f"({e})"))


EXPRESSIONS = st.recursive(ATOMS, _expressions, max_leaves=6)
TARGETS = st.recursive(st.sampled_from(["x", "y", "a.b", "a[i]", "d[k.j]", "m[f(n)]", "*s"]),
                       lambda t: st.lists(t, min_size=1, max_size=3).map(lambda xs: f"({', '.join(xs)},)")
                       | st.lists(t, min_size=2, max_size=3).map(lambda xs: f"[{', '.join(xs)}]"), max_leaves=5)
DOCS = ['"""One line."""', '"""\n    Starts later.\n\n      more\n    """', "'''  lead\ttab'''", '"a" "b"', 'u"uni"',
        "r'''\\d raw'''", '"""\\x41 escaped\\nnext"""', '"""\n\n   \n"""', '""""""', 'b"bytes"', 'f"f{x}"', '("paren")',
        '"""doc""".strip()', '"""tab\\tin"""', "'''\u00e9t\u00e9\n  x'''", '"""a\\\n    b"""']
IMPORTS = ["import hpkg.a", "import hpkg.a as al, os.path", "from . import a", "from .a import (x, y as z,)",
           "from .. import up", "from hpkg.b import *", "from __future__ import annotations", "from ...a import far"]


@st.composite
def _parameters(draw) -> str:
    params = []
    for i in range(draw(st.integers(0, 4))):
        text = f"p{i}"
        if draw(st.booleans()):
            text += ": " + draw(EXPRESSIONS)
        if draw(st.booleans()):
            text += "=" + draw(EXPRESSIONS)
        params.append(text)
    if params and draw(st.booleans()):
        params.insert(draw(st.integers(1, len(params))), "/")
    if draw(st.booleans()):
        params.append(draw(st.sampled_from(["*", "*args", "*args: " + draw(EXPRESSIONS)])))
        params.append("kw" + ("=" + draw(EXPRESSIONS) if draw(st.booleans()) else ""))
    if draw(st.booleans()):
        params.append("**kwargs" + (": " + draw(EXPRESSIONS) if draw(st.booleans()) else ""))
    return ", ".join(params)


@st.composite
def _block(draw, indent: str, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["import", "assign", "def", "class", "try", "if", "match", "oneline", "pass"] if depth < 2
                                    else ["import", "assign", "pass"]))
        if kind == "import":
            lines.append(indent + draw(st.sampled_from(IMPORTS)))
        elif kind == "assign":
            targets = draw(st.lists(TARGETS, min_size=1, max_size=2))
            if draw(st.booleans()):
                lines.append(indent + f"{draw(st.sampled_from(['x', 'a.b', 'd[k]']))}: {draw(EXPRESSIONS)}"
                             + (f" = {draw(EXPRESSIONS)}" if draw(st.booleans()) else ""))
            else:
                lines.append(indent + " = ".join(targets) + " = " + draw(st.sampled_from(["1", "(\n1,\n2)", "f(y=1)",
                                                                                             "lambda q=1: q"])))
        elif kind == "def":
            prefix = draw(st.sampled_from(["def", "async def"]))
            returns = f" -> {draw(EXPRESSIONS)}" if draw(st.booleans()) else ""
            lines.append(indent + f"{prefix} f{len(lines)}({draw(_parameters())}){returns}:")
            if draw(st.booleans()):
                lines.append(indent + "    " + draw(st.sampled_from(DOCS)))
            lines += draw(_block(indent + "    ", depth + 1))
        elif kind == "class":
            bases = draw(st.lists(EXPRESSIONS | st.sampled_from(["metaclass=M", "**kw", "*bases"]), max_size=3))
            lines.append(indent + f"class C{len(lines)}({', '.join(bases)}):")
            lines += draw(_block(indent + "    ", depth + 1))
        elif kind == "try":
            lines.append(indent + "try:")
            lines += draw(_block(indent + "    ", depth + 1))
            for clause in draw(st.lists(st.sampled_from(["except ImportError:", "except (A, B) as e:", "except* E:"]),
                                        min_size=1, max_size=2)):
                lines.append(indent + clause)
                lines += draw(_block(indent + "    ", depth + 1))
            for clause in draw(st.sampled_from([[], ["else:"], ["finally:"], ["else:", "finally:"]])):
                lines.append(indent + clause)
                lines += draw(_block(indent + "    ", depth + 1))
        elif kind == "if":
            test = draw(st.sampled_from(["TYPE_CHECKING", "typing.TYPE_CHECKING", "(TYPE_CHECKING)", "not TYPE_CHECKING",
                                         "x and TYPE_CHECKING", "f().TYPE_CHECKING", "x"]))
            lines.append(indent + f"if {test}:")
            lines += draw(_block(indent + "    ", depth + 1))
            for clause in draw(st.lists(st.sampled_from(["elif TYPE_CHECKING:", "elif y:", "else:"]), max_size=2)):
                lines.append(indent + clause)
                lines += draw(_block(indent + "    ", depth + 1))
        elif kind == "match":
            lines.append(indent + draw(st.sampled_from(["match x:", "match (a, b):", "match = 1"])))
            if lines[-1].endswith(":"):
                for case in draw(st.lists(st.sampled_from(["case 1:", "case {'k': v} if v:", "case _: import hpkg.b",
                                                          "case [a, *rest]:"]), min_size=1, max_size=3)):
                    lines.append(indent + "    " + case)
                    if case.endswith(":"):
                        lines += draw(_block(indent + "        ", depth + 1))
        elif kind == "oneline":
            lines.append(indent + draw(st.sampled_from(["if TYPE_CHECKING: from .a import t1", "def g(): import hpkg.b",
                                                        "def h(): 'doc'; import hpkg.a", "class E: pass",
                                                        "x = 1; import hpkg.a; y: int = 2"])))
        else:
            lines.append(indent + "pass")
    return lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_block("", 0))
def test_assembled_modules_native_facts_are_the_whole_file_facts(tmp_path_factory, lines):
    source = "\n".join(lines) + "\n"
    try:
        compile(source, "m.py", "exec", flags=ast.PyCF_ONLY_AST)
    except SyntaxError:
        return  # not a module: the whole-file parse refuses it
    root = tmp_path_factory.mktemp("n")
    pkg = write_package(root, {"hpkg/__init__.py": "", "hpkg/a.py": "", "hpkg/sub/__init__.py": "",
                               "hpkg/sub/m.py": source})
    _same_facts("hpkg.sub.m", pkg / "sub" / "m.py")


@pytest.mark.parametrize("source", [
    "def f(a: dict[str, list[int]] | None = None, *args: 'X', b=-1, **kw) -> tuple[int, ...]:\n    '''Doc.'''\n",
    "class K(Base[int], metaclass=M):\n    def m(self, x=0x10, y=1e-7, z=b'\\xff') -> 'K':\n        pass\n",
    "x, *y = a.b = d[k] = 1\nn: int\nif TYPE_CHECKING:\n    from hpkg import a\n",
    "try:\n    import a\nexcept ImportError:\n    import b\nelse:\n    import c\nfinally:\n    import d\n",
    "def f(k=lambda x, *, y=1: x or y and not x, v=a if b is not c else d < e <= f):\n    pass\n",
    "class K(A if b else C, metaclass=M):\n    pass\n",
])
def test_the_reader_vouches_for_what_it_writes(tmp_path, source):
    pkg = write_package(tmp_path, {"hpkg/__init__.py": "", "hpkg/m.py": source})
    assert _same_facts("hpkg.m", pkg / "m.py")


@pytest.mark.parametrize("source", ["def f(k=[x for x in y]):\n    pass\n", "def f(a=b[1:2]):\n    pass\n",
                                    "def f():\n\treturn 1\n", "x = 1\r\n", "def f(a=f'{x}'):\n    pass\n"])
def test_what_it_does_not_vouch_for_goes_to_ast(tmp_path, source):
    pkg = write_package(tmp_path, {"hpkg/__init__.py": "", "hpkg/m.py": source})
    assert _native("hpkg.m", pkg / "m.py") is None
    forget_parsed()
    assert parse_module("hpkg.m", pkg / "m.py").interfaces is not None  # read by the ast path, not refused


def _vouched_or_refused(reading: object) -> bool:
    return isinstance(reading, str) or (isinstance(reading, tuple) and len(reading) == 4)


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes_are_read_or_refused_never_a_crash(data):
    """The reader is C run on repositories nobody here wrote: any bytes at all give a reading or a
    reason, never a crash (a crash here takes the test worker with it)."""
    assert nativereader.read is not None
    try:
        reading = nativereader.read(data)
    except UnicodeDecodeError:  # a clean refusal; facts._parse_facts decodes first and names the file
        return
    assert _vouched_or_refused(reading)


MUTATIONS = ("cut", "flip", "insert", "repeat")
SHARP = b"()[]{}:'\"\\#\n\t\r ,=*@"  # the bytes a tokenizer turns on


@settings(max_examples=300, deadline=None)
@given(module=st.sampled_from(sorted((STDLIB / "json").glob("*.py")) + sorted((STDLIB / "email").glob("*.py"))),
       edits=st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 10**6), st.binary(min_size=1, max_size=40)),
                      min_size=1, max_size=6))
def test_damaged_real_modules_are_read_or_refused_never_a_crash(module, edits):
    """Real modules cut short, with bytes flipped, brackets, quotes and line breaks inserted or spans
    repeated: the shapes a half-written or corrupted file takes."""
    assert nativereader.read is not None
    data = bytearray(module.read_bytes())
    for kind, where, chunk in edits:
        at = where % (len(data) + 1)
        if kind == "cut":
            del data[at:]
        elif kind == "flip" and data:
            data[at % len(data)] ^= chunk[0] or 1
        elif kind == "insert":
            data[at:at] = bytes(SHARP[c % len(SHARP)] for c in chunk)
        else:
            data[at:at] = data[at:at + len(chunk) * 5]
    text = bytes(data).decode("utf-8", "replace").encode("utf-8")  # what facts._parse_facts lets through
    assert _vouched_or_refused(nativereader.read(text))
