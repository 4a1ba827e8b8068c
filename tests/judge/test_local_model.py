"""The embedded judge's model file: joined from its parts in numeric order, and refused
unless its size and SHA-256 are exactly the expected ones. Small fake parts stand in for
the 1.1 GB model, with the expected size and hash injected."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

from agentjudge.errors import UsageError
from agentjudge.judge.model_cache import (
    ModelFile,
    cache_dir,
    ensure_model,
    installed_parts,
    verified,
)

PARTS = [bytes([i]) * (100 + i) for i in range(1, 12)]  # 11 parts: part10 must follow part9


def model_for(data: bytes, package: str = "fake_model_part{}") -> ModelFile:
    return ModelFile(
        name="fake.gguf",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        part_package=package,
        parts=len(PARTS),
    )


MODEL = model_for(b"".join(PARTS))


def write_parts(folder: Path, contents: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, data in enumerate(contents, start=1):
        path = folder / f"part{number:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def install_fake_packages(site: Path, monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Part packages laid out like the published wheels: `<name>N/data/partNN.bin`."""
    for number, data in enumerate(PARTS, start=1):
        root = site / package.format(number)
        (root / "data").mkdir(parents=True)
        (root / "__init__.py").write_text("")
        (root / "data" / f"part{number:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()


def test_joins_the_parts_and_verifies_the_result(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", PARTS)
    path = ensure_model(MODEL, parts, tmp_path / "cache")
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf"]  # no partial file


def test_a_verified_cached_model_is_used_without_the_parts(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", PARTS)
    first = ensure_model(MODEL, parts, tmp_path / "cache")
    for part in parts:
        part.unlink()
    assert ensure_model(MODEL, parts, tmp_path / "cache") == first


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[:-1], id="truncated"),
        pytest.param(lambda b: b[:7] + bytes([b[7] ^ 0xFF]) + b[8:], id="corrupted"),
        pytest.param(lambda b: b + b"\0", id="too-long"),
    ],
)
def test_a_damaged_part_is_refused_with_the_fix(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    contents = list(PARTS)
    contents[4] = damage(contents[4])
    parts = write_parts(tmp_path / "parts", contents)
    with pytest.raises(UsageError) as caught:
        ensure_model(MODEL, parts, tmp_path / "cache")
    message = str(caught.value)
    assert "corrupted or truncated" in message
    assert "pip install --force-reinstall 'agentjudge[local]'" in message
    assert list((tmp_path / "cache").iterdir()) == []  # nothing left to be used later


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:-1] + bytes([b[-1] ^ 1]), id="corrupted"),
    ],
)
def test_a_damaged_cached_model_fails_verification_and_is_joined_again(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    cached = tmp_path / "cache" / "fake.gguf"
    cached.parent.mkdir()
    cached.write_bytes(damage(b"".join(PARTS)))
    assert not verified(cached, MODEL)
    parts = write_parts(tmp_path / "parts", PARTS)
    assert ensure_model(MODEL, parts, tmp_path / "cache") == cached
    assert verified(cached, MODEL)


def test_a_damaged_cached_model_with_damaged_parts_is_refused(tmp_path: Path) -> None:
    cached = tmp_path / "cache" / "fake.gguf"
    cached.parent.mkdir()
    cached.write_bytes(b"".join(PARTS)[:-10])
    parts = write_parts(tmp_path / "parts", [*PARTS[:-1], PARTS[-1][:-10]])
    with pytest.raises(UsageError, match="corrupted or truncated"):
        ensure_model(MODEL, parts, tmp_path / "cache")


def test_verified_needs_the_exact_size_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    assert not verified(path, MODEL)  # missing
    data = b"".join(PARTS)
    path.write_bytes(data)
    assert verified(path, MODEL)
    path.write_bytes(data[:-1] + b"\x00")  # same size, other bytes
    assert not verified(path, MODEL)


def test_installed_parts_are_found_in_numeric_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = "agentjudge_test_part_{}"
    install_fake_packages(tmp_path / "site", monkeypatch, package)
    found = installed_parts(model_for(b"".join(PARTS), package))
    assert [p.name for p in found] == [f"part{n:02d}.bin" for n in range(1, 12)]
    path = ensure_model(model_for(b"".join(PARTS), package), folder=tmp_path / "cache")
    assert path.read_bytes() == b"".join(PARTS)


def test_a_missing_part_package_says_how_to_install_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = "agentjudge_test_missing_{}"
    install_fake_packages(tmp_path / "site", monkeypatch, package)
    model = ModelFile("m.gguf", 1, "0" * 64, package, len(PARTS) + 1)  # one more than exists
    with pytest.raises(UsageError) as caught:
        installed_parts(model)
    assert "agentjudge-test-missing-12 is missing" in str(caught.value)
    assert "pip install 'agentjudge[local]'" in str(caught.value)


def test_the_cache_folder_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "agentjudge" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "agentjudge" / "models"
