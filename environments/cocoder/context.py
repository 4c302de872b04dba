"""What one turn of a team run is shown, built from what the agents actually wrote.

The schedule decides, per dependency of a turn, how the turn receives it (``Turn.sources``):
already in the agent's conversation (``history``), written by the same agent in an earlier
conversation and shown again like a message, without one (``own``), transferred from the agent who finished it
(``message``), its interface because nobody has written it yet (``interface``), or a sibling
piece written at the same time whose signatures the skeleton shows (``stub``). Here that
decision becomes text: a message carries the interfaces of what the turn uses, cut from the
provider's own output (an ordered piece: of the sibling definitions it uses; a module-level
dependency: of the names it uses), the cost model's ``c_uv``. A piece is shown its module's
skeleton as ``piece_outline`` cuts it. The context billed for a turn is the token estimate of
exactly these texts, so what a model reads and what the cost model charges are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from environments.cocoder.defs import definition_outlines, piece_outline
from environments.cocoder.depgraph import estimate_tokens, module_interfaces
from environments.cocoder.tasks import RepoTask


def dependency_fields(graph: Any, node: str, sources: Mapping[str, str], module_of: Any) -> list[dict[str, Any]]:
    """A turn's dependencies as the environment needs them (JSON: they go into the turn queue)."""
    out = []
    for unit, how in sorted(sources.items()):
        edge = graph.edges[unit, node]
        out.append({"unit": unit, "module": module_of(unit), "how": how, "names": list(edge.get("names", ())),
                    "defs": list(edge.get("defs", ()))})
    return out


def _interfaces(text: str | None, skeleton: str, names: list[str]) -> dict[str, str]:
    """Interfaces of the used names as the provider wrote them (the skeleton's where its text
    lacks one, or for a piece); every interface when none of the names is a top-level one (as the
    edge's tokens)."""
    api = module_interfaces(skeleton)
    if text is not None:
        api.update({n: t for n, t in module_interfaces(text).items() if n in api})
    used = {n: api[n] for n in names if n in api}
    return used or api


def _outlines(text: str | None, skeleton: str, defs: list[str]) -> dict[str, str]:
    """The sibling definitions' interfaces as the provider wrote them (the skeleton's where its text lacks one)."""
    found = definition_outlines(text, defs) if text is not None else {}
    missing = [q for q in defs if q not in found]
    return {**found, **definition_outlines(skeleton, missing)} if missing else found


def dependency_view(task: RepoTask, dep: Mapping[str, Any], written: Mapping[str, str]) -> dict[str, str]:
    """The texts one dependency contributes to a turn's observation (nothing for history and stubs)."""
    how = dep["how"]
    if how not in ("message", "own", "interface"):
        return {}
    skeleton = task.modules[dep["module"]].skeleton
    text = written.get(dep["unit"]) if how in ("message", "own") else None
    if dep.get("defs"):
        return _outlines(text, skeleton, dep["defs"])
    if dep["unit"] != dep["module"]:
        # a piece's text holds part of a class: its interface is the skeleton's, whose signatures
        # it keeps; a split class's interface comes with one of its pieces, the others only order
        return _interfaces(None, skeleton, dep["names"]) if dep["names"] else {}
    return _interfaces(text, skeleton, dep["names"])


def unit_skeleton(task: RepoTask, module: str, definitions: Sequence[str] | None, siblings: Sequence[str]) -> str:
    """What a unit is shown of its module: a whole module its skeleton, a piece (its
    ``definitions``, beside the ``siblings`` other pieces write) the view ``piece_outline`` cuts."""
    mt = task.modules[module]
    return piece_outline(mt.skeleton, mt.reference, definitions, siblings) if definitions else mt.skeleton


def turn_material(task: RepoTask, turn: Mapping[str, Any], written: Mapping[str, str]
                  ) -> tuple[dict[str, Any], int]:
    """The observation fields of a turn's context and their tokens (the project's estimate, text
    by text: the skeleton, every dependency text shown, a repair's previous source and request)."""
    skeleton = unit_skeleton(task, turn["module"], turn.get("definitions"), turn.get("siblings", ()))
    received: dict[str, dict[str, str]] = {}
    interfaces: dict[str, dict[str, str]] = {}
    reread: dict[str, dict[str, str]] = {}
    kept: list[str] = []
    stubs: list[str] = []
    for dep in turn.get("deps", ()):
        view = dependency_view(task, dep, written)
        if dep["how"] == "message":
            received[dep["unit"]] = view
        elif dep["how"] == "interface":
            interfaces[dep["unit"]] = view
        elif dep["how"] == "own":
            reread[dep["unit"]] = view
        else:
            (kept if dep["how"] == "history" else stubs).append(dep["unit"])
    shown = (*received.values(), *reread.values(), *interfaces.values())
    texts = [skeleton, *(t for v in shown for t in v.values())]
    fields: dict[str, Any] = {"skeleton": skeleton, "received": received, "written_by_you_earlier": reread,
                              "dependency_interfaces": interfaces, "written_earlier_in_this_conversation": kept,
                              "written_at_once_by_others": stubs}
    if turn.get("repair") is not None:
        fields["previous_source"] = turn.get("previous", "")
        texts += [fields["previous_source"], turn["repair"]]
    return fields, sum(estimate_tokens(t) for t in texts)
