"""Exports of a run directory to other tools' log formats: ``export_inspect(run_dir, out_dir)``."""

from agentbed.export.inspect_log import export_inspect

__all__ = ["export_inspect"]
