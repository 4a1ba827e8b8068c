"""Inspect AI eval logs (`.eval`, a zip, and `.json`) read into ATIF: each sample a root.

Read from the log's documented JSON, without `inspect_ai`: this module opens the file (a
zip member at a time, zstd members through `zstandard`), `inspect_sample.py` maps each
sample (docs/formats.md).
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError, Problem
from agentjudge.files import read_capped
from agentjudge.traces.build import Ignored, as_list
from agentjudge.traces.inspect_sample import sample_run
from agentjudge.traces.read import Format, TraceFile

_JSON_SNIFF = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_ZSTD = 93  # the zip compression method number of zstd


def sniff(path: Path, head: bytes) -> bool:
    """An `.eval` zip, or a `.json` that opens with an eval log's `version` and `status`."""
    if path.suffix == ".eval":
        return head.startswith(b"PK\x03\x04")
    return path.suffix == ".json" and bool(_JSON_SNIFF.match(head))


def read(path: Path, display: str, limits: Limits) -> TraceFile:
    """Every sample of the log in `path` as one ATIF run."""
    max_file_bytes = limits.max_file_bytes
    ignored = Ignored()
    runs = []
    samples = (
        _eval_samples(path, display, max_file_bytes)
        if path.suffix == ".eval"
        else _json_samples(path, display, max_file_bytes)
    )
    for header, where, sample in samples:
        run = sample_run(header, where, sample, ignored)
        if run is None:
            ignored["samples with no input and no model event"] += 1
        else:
            runs.append(run)
    if not runs:
        raise InputError(
            [
                Problem(
                    display,
                    "$.samples",
                    "inspect.no_samples",
                    "the log holds no samples (written with --no-log-samples?); run the "
                    "eval again with samples logged",
                )
            ]
        )
    return TraceFile(tuple(runs), dict(ignored), "events")


def _json_samples(
    path: Path, display: str, max_bytes: int
) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    log = _loads(read_capped(path, "eval log", max_bytes), display, "$")
    for index, sample in enumerate(as_list(log.get("samples"))):
        if isinstance(sample, dict):
            yield log, f"$.samples[{index}]", sample


def _eval_samples(
    path: Path, display: str, max_bytes: int
) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(
            [
                Problem(
                    display,
                    "$",
                    "inspect.bad_zip",
                    f"not a readable .eval zip ({exc}); name an Inspect log",
                )
            ]
        ) from None
    with archive:
        names = archive.namelist()
        header = (
            _member(archive, "header.json", display, max_bytes) if "header.json" in names else {}
        )
        if not header and "_journal/start.json" in names:
            header = _member(archive, "_journal/start.json", display, max_bytes)
        for name in names:
            if name.startswith("samples/") and name.endswith(".json"):
                yield header, name, _member(archive, name, display, max_bytes)


def _member(archive: zipfile.ZipFile, name: str, display: str, max_bytes: int) -> dict[str, Any]:
    info = archive.getinfo(name)
    if info.file_size > max_bytes:
        raise InputError(
            [
                Problem(
                    display,
                    name,
                    "inspect.too_large",
                    f"unpacks to {info.file_size:,} bytes, more than max_file_bytes="
                    f"{max_bytes:,}; raise --max-file-bytes or split the eval",
                )
            ]
        )
    try:
        data = (
            _zstd_member(archive, info, display, max_bytes)
            if info.compress_type == _ZSTD
            else archive.read(name)
        )
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise InputError(
            [
                Problem(
                    display,
                    name,
                    "inspect.bad_zip",
                    f"cannot be unpacked ({exc}); the log is damaged",
                )
            ]
        ) from None
    return _loads(data, display, name)


def _zstd_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, display: str, max_bytes: int
) -> bytes:
    """A member compressed with zstd (what Inspect writes since 2025), which Python's
    zipfile reads only from 3.14: its raw bytes, found through its local header, unpacked
    with `zstandard` (the `inspect` extra) and checked against the member's CRC."""
    try:
        import zstandard
    except ImportError:
        raise InputError(
            [
                Problem(
                    display,
                    info.filename,
                    "inspect.needs_zstd",
                    "is compressed with zstd: install agentjudge[inspect] (zstandard) to "
                    "read it, or write the log as .json (inspect log convert)",
                )
            ]
        ) from None
    handle = archive.fp
    if handle is None:
        raise ValueError("the archive is closed")
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    raw = handle.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(raw)
    data = reader.read(max_bytes + 1)
    if len(data) > max_bytes or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile("its bytes do not match the size and CRC the zip records")
    return bytes(data)


def _loads(data: bytes, display: str, where: str) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            [
                Problem(
                    display,
                    where,
                    "inspect.bad_json",
                    f"is not valid JSON ({exc.msg}, line {exc.lineno})",
                )
            ]
        ) from None
    if not isinstance(value, dict):
        raise InputError([Problem(display, where, "inspect.bad_json", "is not a JSON object")])
    return value


FORMAT = Format("inspect", sniff, read)
