"""The HTML report of a run directory: ``render_report(run_dir) -> Path``."""

from agentbed.report.render import REPORT_NAME, render_report

__all__ = ["REPORT_NAME", "render_report"]
