"""agentbed: one episode runner for testing the safety and oversight of tool-using agents."""

from agentbed.hashseed import pin_hash_seed

pin_hash_seed()  # first of all: the command re-executes itself with a fixed hash seed before importing more

from importlib.metadata import PackageNotFoundError, version  # noqa: E402 - after the re-execution above

from agentbed.blaskernel import pin_openblas_kernel  # noqa: E402

pin_openblas_kernel()  # before anything imports numpy: the same floating-point bytes on every x86-64 CPU

try:  # the one place the version is written is pyproject.toml; its installed metadata carries it here
    __version__ = version("agentbed")
except PackageNotFoundError:  # a source tree never installed: say so rather than guess
    __version__ = "0+unknown"
