"""The JSON Schema of each results document, generated from its TypedDicts.

`CONTRACTS` is the registry: a document kind, how a document of that kind is recognized,
and its types. `python -m agentjudge.results.schemas docs/schemas` writes every schema
(`<name>.schema.json`); `--check` says which committed ones differ instead (exit 1).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from agentjudge.results.grade import GRADE_SCHEMA, GradeResults
from agentjudge.results.score import SCORE_RESULTS, SCORE_SCHEMA

DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Contract:
    """A results document kind: its schema file's name, its types, and whether a parsed
    document is one (by its `schema` field where it has one)."""

    name: str
    adapter: TypeAdapter[Any]
    recognizes: Callable[[Any], bool]

    @property
    def file_name(self) -> str:
        return f"{self.name}.schema.json"

    def json_schema(self) -> dict[str, Any]:
        """The document's JSON Schema (draft 2020-12)."""
        return {"$schema": DIALECT, **self.adapter.json_schema()}

    def text(self) -> str:
        """The schema as committed in docs/schemas/: indented, one final newline."""
        return json.dumps(self.json_schema(), indent=2, ensure_ascii=False) + "\n"


def _has_schema(value: str) -> Callable[[Any], bool]:
    return lambda document: isinstance(document, dict) and document.get("schema") == value


def _is_grade(document: Any) -> bool:
    """Grade results: ours name their schema; graph-agents-cli's (and ours written before
    the field) are known by their keys, which are the same."""
    if not isinstance(document, dict):
        return False
    if "schema" in document:
        return bool(document["schema"] == GRADE_SCHEMA)
    return isinstance(document.get("cases"), list) and isinstance(document.get("summary"), dict)


# one entry per document kind; a reader or test finds a document's by `contract_for`
CONTRACTS: tuple[Contract, ...] = (
    Contract("score-results", SCORE_RESULTS, _has_schema(SCORE_SCHEMA)),
    Contract("grade-results", TypeAdapter(GradeResults), _is_grade),
)


def contract_for(document: Any) -> Contract | None:
    """The registered kind `document` is, or None."""
    return next((c for c in CONTRACTS if c.recognizes(document)), None)


def main(argv: list[str]) -> int:
    """Write every schema into the folder given (default docs/schemas); with `--check`,
    write nothing and exit 1 naming each file that is missing or differs."""
    check = "--check" in argv
    folder = Path(next((a for a in argv if a != "--check"), "docs/schemas"))
    stale = []
    for contract in CONTRACTS:
        path = folder / contract.file_name
        text = contract.text()
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"{name}: not the schema the models generate; run `make schemas`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
