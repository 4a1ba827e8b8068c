"""The results file, written as cases finish: each final case's record goes to a spool on
disk at once and leaves memory; the file is put together when the summary is known.

The bytes are those of `write_atomic(path, document, indent=2)` on the whole document:
each record is encoded as orjson indents it, moved four spaces right (its depth in the
file), so a streamed run and an in-memory one write the same file.
"""

from __future__ import annotations

import json
import tempfile
from array import array
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO

import orjson

from agentjudge.cases.outcome.gate import CaseGrade
from agentjudge.errors import UsageError
from agentjudge.files import write_file_atomic

# Where the records go in the document until the file is put together.
_PLACEHOLDER = "\0agentjudge: the cases' records\0"
_BATCH_BYTES = 1 << 20


class ResultsSpool:
    """The records of a run's cases, in the run's order: final ones encoded on disk, the
    ones still waiting for their judges held until `records` is read."""

    def __init__(self, output: Path) -> None:
        self._output = output
        # anonymous, beside the results file: gone with the process, whatever happens
        self._file: IO[bytes] = self._guard(
            lambda: tempfile.TemporaryFile(dir=output.parent)  # noqa: SIM115 (closed by close())
        )
        self._lengths = array("Q")  # per case: its record's bytes in the spool; 0: held
        self._held: dict[int, CaseGrade] = {}
        # records not yet written: one write per batch (a write per record cost more than
        # encoding it)
        self._batch: list[bytes] = []
        self._batch_bytes = 0

    def add(self, grade: CaseGrade) -> None:
        """A final case: its record is spooled now and not kept."""
        record = encode_record(grade.as_dict())
        self._batch.append(record)
        self._batch_bytes += len(record)
        self._lengths.append(len(record))
        if self._batch_bytes >= _BATCH_BYTES:
            self._flush()

    def hold(self, grade: CaseGrade) -> None:
        """A case whose judge or custom metrics are still to come: encoded at the end."""
        self._held[len(self._lengths)] = grade
        self._lengths.append(0)

    def records(self) -> Iterator[bytes]:
        """Every case's encoded record, in order."""
        self._flush()
        self._guard(lambda: self._file.seek(0))
        block, at = b"", 0  # the spool is read a batch at a time, not a record at a time
        for index, length in enumerate(self._lengths):
            if not length:
                yield encode_record(self._held[index].as_dict())
                continue
            if at + length > len(block):
                more = self._guard(lambda n=length: self._file.read(max(_BATCH_BYTES, n)))
                block, at = block[at:] + more, 0
            yield block[at : at + length]
            at += length

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _flush(self) -> None:
        data = b"".join(self._batch)
        self._guard(lambda: self._file.write(data))
        self._batch.clear()
        self._batch_bytes = 0

    def _guard(self, action: Any) -> Any:
        try:
            return action()
        except OSError as exc:
            raise UsageError(
                f"{self._output}: cannot write the results ({exc.strerror or exc}); nothing was "
                "written: free space in its folder or choose another --output, then run the "
                "same command again"
            ) from None


def encode_record(case: Mapping[str, object]) -> bytes:
    """One case's record as it stands in the results file's `cases` list."""
    try:
        data = orjson.dumps(case, option=orjson.OPT_INDENT_2)
    except TypeError:  # what orjson refuses (an integer wider than 64 bits): as write_atomic
        data = json.dumps(case, ensure_ascii=False, indent=2).encode()
    return b"    " + data.replace(b"\n", b"\n    ")  # JSON strings hold no raw newline


def write_results(path: Path, document: Mapping[str, object], records: Iterator[bytes]) -> None:
    """Write `document` with `records` as its `cases` list, safely (a temporary file, then a
    rename), as `write_atomic(path, {..., "cases": [...], ...}, indent=2)` would."""
    head_doc = {**document, "cases": _PLACEHOLDER}
    try:
        encoded = orjson.dumps(head_doc, option=orjson.OPT_INDENT_2)
    except TypeError:
        encoded = json.dumps(head_doc, ensure_ascii=False, indent=2).encode()
    head, tail = encoded.split(json.dumps(_PLACEHOLDER).encode(), 1)

    def write(out: BinaryIO) -> None:
        out.write(head)
        batch: list[bytes] = []  # records joined and written a batch at a time
        size, opening = 0, b"[\n"
        for record in records:
            batch.append(record)
            size += len(record)
            if size >= _BATCH_BYTES:
                out.writelines((opening, b",\n".join(batch)))
                batch.clear()
                size, opening = 0, b",\n"
        if batch:
            out.writelines((opening, b",\n".join(batch)))
            opening = b",\n"
        out.write(b"[]" if opening == b"[\n" else b"\n  ]")  # no case: json's empty list
        out.writelines((tail, b"\n"))

    write_file_atomic(path, write, "--output", "the results")
