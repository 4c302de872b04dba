"""Where a one-file suite's episodes run, the suite is loaded again from the origin its specs carry.

A forked process-pool worker has the driver's module already; a Ray worker is a fresh process,
perhaps on another machine. Each spec carries the driver's provenance (agentbed.provenance), whose
suite origin names the file (with its SHA-256) or module the suite came from. The worker loads it
from there, and refuses a file whose bytes are not the ones the driver ran (its logs would name
the driver's file for other code). The Ray executor ships each one-file suite's bytes with its
tasks (:func:`suite_sources`); a node that lacks the file, or holds other bytes at its path, runs
the shipped copy (:func:`install_sources`). A suite module (``my.module:SUITE``) is not shipped:
it must be importable on every node, like any installed package.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentbed.errors import SuiteError
from agentbed.provenance import file_sha256
from agentbed.runner import EpisodeSpec
from agentbed.suite import Suite, get_suite

# a suite file's path on the driver -> where this process holds the shipped bytes
_SHIPPED: dict[str, Path] = {}


def origin_reference(origin: Any) -> str | None:
    """``file.py:ATTR`` or ``module:ATTR`` when ``origin`` is a one-file suite's, else None
    (an installed suite, or no origin recorded)."""
    if not isinstance(origin, Mapping) or origin.get("entry_point"):
        return None
    source = origin.get("module") or origin.get("file")
    return f"{source}:{origin.get('attribute') or 'SUITE'}" if isinstance(source, str) and source else None


def _one_file_origin(spec: EpisodeSpec) -> Mapping[str, Any] | None:
    """The suite origin ``spec``'s provenance records, when it is a one-file suite's."""
    origin = spec.provenance.get("suite") if isinstance(spec.provenance, Mapping) else None
    return origin if origin_reference(origin) is not None else None


def suite_of_spec(spec: EpisodeSpec) -> Suite:
    """The suite an episode runs: a one-file suite from the file or module its provenance names
    (the very bytes the driver ran), else the installed suite of that name."""
    origin = _one_file_origin(spec)
    ref = origin_reference(origin)
    if origin is None or ref is None:
        return get_suite(spec.suite)
    file, digest = origin.get("file"), origin.get("sha256")
    if not origin.get("module") and isinstance(file, str) and isinstance(digest, str):
        local = _SHIPPED.get(file, Path(file))
        if not local.is_file():
            raise SuiteError(f"suite {spec.suite!r}: its file {file} is not on this machine (a one-file suite "
                             "runs on a Ray node only through agentbed's executor, which ships it)")
        if file_sha256(local) != digest:
            raise SuiteError(f"suite {spec.suite!r}: {file} is not the file the run started with (sha256 "
                             f"{digest[:12]}... then, {file_sha256(local)[:12]}... here); run it again")
        ref = f"{local}:{origin.get('attribute') or 'SUITE'}"
    suite = get_suite(ref)
    if suite.name != spec.suite:
        raise SuiteError(f"suite {spec.suite!r}: {ref} declares {suite.name!r}")
    return suite


def suite_sources(specs: Sequence[EpisodeSpec]) -> dict[str, bytes]:
    """The bytes of each one-file suite ``specs`` run (by the path their origin records), to ship
    to Ray nodes; a file that changed since it was loaded is shipped as it is now (and refused
    there by its SHA-256)."""
    sources: dict[str, bytes] = {}
    for spec in specs:
        origin = _one_file_origin(spec)
        if origin is None or origin.get("module"):
            continue
        file = origin.get("file")
        if isinstance(file, str) and file not in sources and Path(file).is_file():
            sources[file] = Path(file).read_bytes()
    return sources


def install_sources(sources: Mapping[str, bytes]) -> None:
    """Make the shipped suite files loadable here: a file this machine holds with the same bytes
    is used in place; otherwise the bytes are written to this process's scratch space under the
    file's own name (its module name and errors read as on the driver)."""
    for file, data in sources.items():
        digest = hashlib.sha256(data).hexdigest()
        held = _SHIPPED.get(file, Path(file))
        if held.is_file() and file_sha256(held) == digest:
            continue
        folder = Path(tempfile.mkdtemp(prefix=f"agentbed-suite-{digest[:12]}-"))
        copy = folder / Path(file).name
        copy.write_bytes(data)
        _SHIPPED[file] = copy
