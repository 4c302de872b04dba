"""A seeded generator of synthetic Python packages, for scale tests and edge cases.

Modules import each other (some import cycles, a few hub modules that many import, some
``TYPE_CHECKING``-only and function-local imports, re-exports through ``__init__``). Every
function returns an integer computed from the functions it calls, and the generator knows
every value, so it can also write a pytest suite that checks them: a synthetic repository is
a complete task. Calls only go to functions created earlier, so evaluation always terminates
even where modules import each other in a cycle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SynthSpec:
    modules: int = 12
    functions_per_module: int = 3
    imports_per_module: int = 2
    hubs: int = 1
    cycles: int = 1
    type_checking_fraction: float = 0.1
    local_import_fraction: float = 0.1
    seed: int = 0
    package: str = "synthpkg"


@dataclass
class SynthRepo:
    package_dir: Path
    edges: set[tuple[str, str]] = field(default_factory=set)  # (imported, importer), every import
    ordering_edges: set[tuple[str, str]] = field(default_factory=set)  # excluding TYPE_CHECKING-only
    values: dict[str, int] = field(default_factory=dict)  # "module:function" -> value
    test_count: int = 0


def generate_repo(spec: SynthSpec, out_dir: Path, *, with_tests: bool = True) -> SynthRepo:
    """Write the package (and ``tests/``) under ``out_dir``; return the ground truth."""
    rng = random.Random(spec.seed)
    pkg = spec.package
    names = [f"{pkg}.m{i:05d}" for i in range(spec.modules)]
    hubs = names[: min(spec.hubs, len(names))]
    imports: dict[str, dict[str, str]] = {m: {} for m in names}  # importer -> {imported: kind}
    for i, m in enumerate(names):
        earlier = [n for n in names[:i] if n not in hubs]
        picks = set(rng.sample(earlier, min(spec.imports_per_module, len(earlier))))
        if i >= len(hubs):
            picks.update(hubs)
        for dep in sorted(picks):
            roll = rng.random()
            kind = ("type" if roll < spec.type_checking_fraction
                    else "local" if roll < spec.type_checking_fraction + spec.local_import_fraction else "top")
            imports[m][dep] = kind
    for _ in range(spec.cycles):  # a back edge closes a cycle (a module-level import: a real cycle)
        if len(names) > len(hubs) + 2:
            a, b = sorted(rng.sample(names[len(hubs):], 2))
            imports[a][b] = "top"
    repo = SynthRepo(out_dir / pkg)
    repo.package_dir.mkdir(parents=True, exist_ok=True)
    functions: list[tuple[str, str]] = []  # creation order = evaluation order
    bodies: dict[str, list[str]] = {m: [] for m in names}
    for m in names:
        for j in range(spec.functions_per_module):
            fname = f"f{j}"
            const = rng.randint(1, 9)
            callable_deps = [(d, f) for d, f in functions if d in imports[m] and imports[m][d] != "type"
                             or d == m]
            calls = rng.sample(callable_deps, min(2, len(callable_deps)))
            value = const + sum(repo.values[f"{d}:{f}"] for d, f in calls)
            repo.values[f"{m}:{fname}"] = value
            lines = [f"def {fname}() -> int:", f'    """Value {value}."""', f"    total = {const}"]
            for d, f in calls:
                if d == m:
                    lines.append(f"    total += {f}()")
                elif imports[m][d] == "local":
                    lines += [f"    from {pkg} import {d.rsplit('.', 1)[1]} as _dep", f"    total += _dep.{f}()"]
                else:
                    lines.append(f"    total += {d}.{f}()")
            lines.append("    return total")
            bodies[m].append("\n".join(lines))
            functions.append((m, fname))
    for m in names:  # a function-local import nobody called still exists in the code
        for d in sorted(k for k, kind in imports[m].items() if kind == "local"):
            short = d.rsplit(".", 1)[1]
            if f"import {short} as _dep" not in "\n".join(bodies[m]):
                bodies[m].append(f"def _uses_{short}() -> int:\n    from {pkg} import {short} as _dep\n"
                                 f"    return _dep.CONSTANT")
    for m in names:
        top = sorted(d for d, k in imports[m].items() if k == "top")
        typed = sorted(d for d, k in imports[m].items() if k == "type")
        head = ['"""Synthetic module."""', "from __future__ import annotations", "", "from typing import TYPE_CHECKING", ""]
        head += [f"import {d}" for d in top]
        if typed:
            head += ["", "if TYPE_CHECKING:"] + [f"    import {d}" for d in typed]
        head += ["", f"CONSTANT = {rng.randint(0, 99)}", ""]
        text = "\n".join(head) + "\n\n" + "\n\n\n".join(bodies[m]) + "\n"
        (repo.package_dir / f"{m.rsplit('.', 1)[1]}.py").write_text(text, encoding="utf-8")
        for d, kind in imports[m].items():
            repo.edges.add((d, m))
            if kind != "type":
                repo.ordering_edges.add((d, m))
    # the package re-exports its hubs' first function: importers of the package see no hub
    init = [f'"""Synthetic package {pkg}."""']
    init += [f"from {h} import f0 as {h.rsplit('.', 1)[1]}_f0" for h in hubs]
    (repo.package_dir / "__init__.py").write_text("\n".join(init) + "\n", encoding="utf-8")
    for h in hubs:
        repo.edges.add((h, pkg))
        repo.ordering_edges.add((h, pkg))
    if with_tests:
        repo.test_count = _write_tests(out_dir / "tests", pkg, names, repo.values)
    return repo


def _write_tests(tests_dir: Path, pkg: str, names: list[str], values: dict[str, int]) -> int:
    tests_dir.mkdir(parents=True, exist_ok=True)
    lines = ["import importlib", "", "import pytest", "", "CASES = ["]
    lines += [f"    ({m!r}, {key.split(':')[1]!r}, {v})," for key, v in values.items() for m in [key.split(':')[0]]]
    lines += ["]", "", "", "@pytest.mark.parametrize('module,function,value', CASES)",
              "def test_value(module, function, value):",
              "    assert getattr(importlib.import_module(module), function)() == value", ""]
    (tests_dir / "test_values.py").write_text("\n".join(lines), encoding="utf-8")
    return len(values)
