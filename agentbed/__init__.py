"""agentbed: one episode runner for testing the safety and oversight of tool-using agents."""

from importlib.metadata import PackageNotFoundError, version

try:  # the one place the version is written is pyproject.toml; its installed metadata carries it here
    __version__ = version("agentbed")
except PackageNotFoundError:  # a source tree never installed: say so rather than guess
    __version__ = "0+unknown"
