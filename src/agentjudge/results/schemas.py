"""The JSON Schema of each results document, generated from its TypedDicts.

`CONTRACTS` is the registry of document kinds (`contract.Contract`: its types, its version,
how a document of that kind is recognized). `python -m agentjudge.results.schemas
docs/schemas` writes every schema (`<name>.schema.json`); `--check` says which committed
ones differ instead (exit 1).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agentjudge.results.contract import Contract
from agentjudge.results.grade import GRADE
from agentjudge.results.score import SCORE

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# one entry per document kind; a reader or test finds a document's by `contract_for`
CONTRACTS: tuple[Contract[Any], ...] = (SCORE, GRADE)


def contract_for(document: Any) -> Contract[Any] | None:
    """The registered kind and version `document` is, or None."""
    for contract in CONTRACTS:
        if contract.claims(document) and document.get("schema", contract.schema) == contract.schema:
            return contract
    return None


def file_name(contract: Contract[Any]) -> str:
    """The schema's file in docs/schemas/."""
    return f"{contract.name}.schema.json"


def schema_text(contract: Contract[Any]) -> str:
    """The document's JSON Schema (draft 2020-12) as committed in docs/schemas/: indented,
    one final newline."""
    schema = {"$schema": DIALECT, **contract.adapter.json_schema()}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write every schema into the folder given (default docs/schemas); with `--check`,
    write nothing and exit 1 naming each file that is missing or differs."""
    check = "--check" in argv
    folder = Path(next((a for a in argv if a != "--check"), "docs/schemas"))
    stale = []
    for contract in CONTRACTS:
        path = folder / file_name(contract)
        text = schema_text(contract)
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
