"""Exports of a run directory to other tools' log formats: ``export_inspect(run_dir, out_dir)``.

``export_inspect`` is imported on first use: its module imports inspect-ai (about 2 s of CPU), which
readers of :mod:`agentbed.export.episodes` alone (ControlArena's analysis) do not need."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentbed.export.inspect_log import export_inspect

__all__ = ["export_inspect"]


def __getattr__(name: str) -> Any:
    if name == "export_inspect":
        from agentbed.export.inspect_log import export_inspect

        return export_inspect
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
