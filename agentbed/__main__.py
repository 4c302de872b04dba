"""``python -m agentbed``: the ``agentbed`` command."""

from agentbed.cli import run

run()
