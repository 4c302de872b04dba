"""CoCoder's native reader of a module's definitions, signatures and imports (issue 55 item 4).

``environments/cocoder/native/reader.c`` is a CPython extension built by ``scripts/build-native``
(called by ``scripts/setup``) with the system's C compiler, offline, from that source. It reads a
file's text once, as Python's tokenizer does, and hands back what ``facts._parse_facts`` would
have read from the syntax tree for the dependency graph (top-level names and their interface text
as ``ast.unparse`` writes it, the work estimate, every import with whether it is local or
``TYPE_CHECKING``-only), or why it does not vouch for the file (a comprehension in a signature,
an f-string default, a tab in an indentation...), and then the file is read with ``ast`` as
before. Python's parser over ray's skeletons alone cost more than grimp's whole build.

:func:`read` is None when the extension is not built, or was built from another version of the
source: the graph is then read with ``ast`` only (the same graph, slower). The two readings are
compared on networkx, ray, the pinned repositories, standard-library packages and generated
modules (tests/cocoder/test_native_reader.py). Not seen by this reader: a syntax error outside the
headers, imports and top-level assignment targets it parses (as inside the function bodies a
skeleton blanks); a task's package is parsed whole when it is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path

BUILD_COMMAND = "scripts/build-native"
SOURCE = Path(__file__).parent / "native" / "reader.c"
BUILT = SOURCE.with_name("_reader" + importlib.machinery.EXTENSION_SUFFIXES[0])

# (interfaces [(name, text)], work, imports [(level, module, names, bound, local, type_only)],
# triple-quoted strings [(start, end)] in characters) or the reason it was not read
Reading = tuple[list[tuple[str, str]], int, list[tuple[int, str | None, tuple[str, ...] | None, str, bool, bool]],
                list[tuple[int, int]]] | str


def _load() -> Callable[[bytes], Reading] | None:
    if not BUILT.is_file() or not SOURCE.is_file():
        return None
    spec = importlib.util.spec_from_file_location("environments.cocoder.native._reader", BUILT)
    if spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:  # built for another interpreter
        return None
    if module.SOURCE_SHA256 != hashlib.sha256(SOURCE.read_bytes()).hexdigest():
        return None  # built from another version of reader.c: scripts/build-native rebuilds it
    reader: Callable[[bytes], Reading] = module.read
    return reader


read = _load()
