"""Every results document a test session writes holds to its committed JSON Schema.

The end-to-end tests (tests/e2e/conftest.py) call `ResultsFiles.check_new` after each test:
every JSON file written under the session's temporary folder since the last call (the
test's own folder, and the folders of servers it drove: an eval-hub job's, MLflow's
artifacts; not virtualenvs and Ray sessions, which hold no results) is read, and one whose
kind is registered (`results.schemas.CONTRACTS`, by its `schema` field) is validated with
`jsonschema` against `docs/schemas/<kind>.schema.json`. Results of a kind with no schema
registered yet are counted, by kind, and said at the end of the session: never checked in
silence."""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import orjson

from agentjudge.results.contract import Contract
from agentjudge.results.schemas import contract_for, file_name
from tests.conftest import REPO

MAX_BYTES = 64 * 1024 * 1024  # larger JSON files are no test's results
# Folders that hold no results, only thousands of other files that every walk after every
# later test went through: a virtualenv (graph-agents-cli's scaffolded project's holds
# 15,000 entries: a walk took 0.15 s) and a Ray node's session (its logs and sockets).
PASSED_OVER = re.compile(r"\.venv|site-packages|session_\d{4}-\d\d-\d\d_[\d_-]+")


@cache
def validator(contract: Contract[Any]) -> jsonschema.protocols.Validator:
    """The committed schema's validator (the file users read, not the types behind it)."""
    schema = json.loads((REPO / "docs" / "schemas" / file_name(contract)).read_text())
    return jsonschema.validators.validator_for(schema)(schema)


def unregistered_kind(document: Any) -> str | None:
    """What results `document` looks like when no contract recognizes it: its `schema`
    (`agentjudge.calibration/v1`, ...), or grade's results; None for other JSON."""
    if not isinstance(document, dict):
        return None
    schema = document.get("schema")
    if isinstance(schema, str) and schema.startswith("agentjudge."):
        return schema
    return "grade results" if "cases" in document and "summary" in document else None


def fresh_json_files(base: Path, since: int) -> list[Path]:
    """The `*.json` files under `base` last changed at `since` (ns) or later, as
    `base.rglob` and a `stat` of each would find them (symbolic links to folders not
    followed), but for those in the folders PASSED_OVER; one `stat` a file."""
    found, folders = [], [str(base)]
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:  # gone meanwhile, or unreadable: a hostile test's
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not PASSED_OVER.fullmatch(entry.name):
                        folders.append(entry.path)
                elif (
                    entry.name.endswith(".json")
                    and entry.is_file()
                    and entry.stat().st_mtime_ns >= since
                ):
                    found.append(Path(entry.path))
            except OSError:
                continue
    return sorted(found)


class ResultsFiles:
    """The JSON files under `base`, each checked once after it was written."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.since = time.time_ns()
        self.checked: Counter[str] = Counter()
        self.unchecked: Counter[str] = Counter()  # kinds without a registered schema

    def check_new(self, validate: bool = True) -> list[str]:
        """One line per problem in the files written since the last call (`validate` False:
        a test that writes broken results on purpose; its files are passed over)."""
        started, problems = time.time_ns(), []
        for path in fresh_json_files(self.base, self.since) if validate else ():
            problems += self._check(path)
        self.since = started
        return problems

    def _check(self, path: Path) -> list[str]:
        try:
            if path.stat().st_size > MAX_BYTES:
                return []
            document = orjson.loads(path.read_bytes())  # nesting past 1,024: an error
        except (OSError, ValueError):  # gone, not JSON or a hostile test's: not results
            return []
        contract = contract_for(document)
        if contract is None:
            if (kind := unregistered_kind(document)) is not None:
                self.unchecked[kind] += 1
            return []
        self.checked[contract.name] += 1
        return [
            f"{path}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message} "
            f"(docs/schemas/{file_name(contract)})"
            for error in validator(contract).iter_errors(document)
        ]

    def summary(self) -> str:
        """The session's line: what was checked against which schema, and what was not."""
        checked = ", ".join(f"{n} {kind}" for kind, n in sorted(self.checked.items()))
        line = f"results files checked against their JSON Schemas: {checked or 'none'}"
        if self.unchecked:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.unchecked.items()))
            line += f"; not checked, no schema registered for their kind: {kinds}"
        return line
