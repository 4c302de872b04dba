"""Poisoning attacks on GraphRAG. Each attack maps (dataset, plan, rng, budget) to a Poisoning."""

from __future__ import annotations

from collections.abc import Callable

from attacks.graphrag.adaptive import (
    adaptive_attack,
    anchored_attack,
    copy_attack,
    frame_attack,
    support_attack,
)
from attacks.graphrag.bridged import bridged_attack
from attacks.graphrag.coassert import coassert_attack
from attacks.graphrag.community import community_injection
from attacks.graphrag.diluted import diluted_attack
from attacks.graphrag.fabricated import fabricated_attack
from attacks.graphrag.gragpoison import gragpoison
from attacks.graphrag.kepo import kepo
from attacks.graphrag.passages import poisonedrag
from attacks.graphrag.restate import restate_attack
from attacks.graphrag.targets import AttackPlan, Poisoning, Target, plan_attack
from attacks.graphrag.tkpa import tkpa, tkpa_rules, tkpa_sourced

ATTACKS: dict[str, Callable[..., Poisoning]] = {
    "poisonedrag": poisonedrag,
    "gragpoison": gragpoison,
    "community": community_injection,
    "kepo": kepo,
    "tkpa": tkpa,
    "copy": copy_attack,
    "support": support_attack,
    "frame": frame_attack,
    "adaptive": adaptive_attack,
    "anchored": anchored_attack,
    "bridged": bridged_attack,
    "diluted": diluted_attack,
    "fabricated": fabricated_attack,
    "coassert": coassert_attack,
    "tkpa-rules": tkpa_rules,
    "tkpa-sourced": tkpa_sourced,
    "restate": restate_attack,
}
ADAPTIVE = ("copy", "support", "frame", "adaptive", "anchored", "bridged", "diluted", "fabricated", "coassert", "tkpa-rules", "tkpa-sourced", "restate")

__all__ = ["ADAPTIVE", "ATTACKS", "AttackPlan", "Poisoning", "Target", "plan_attack"]
