"""The committed JSON Schemas (docs/schemas/) are the ones the contract's types generate, and
they accept and refuse the same documents the types do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentjudge.results.schemas import CONTRACTS, contract_for, file_name, main, schema_text
from tests.conftest import REPO
from tests.results.test_score_contract import written

SCHEMAS = REPO / "docs" / "schemas"
WHERE = ("trajectories", 0, "nodes", 0)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_the_committed_schema_is_the_generated_one(contract: Any) -> None:
    committed = SCHEMAS / file_name(contract)
    assert committed.is_file(), f"{committed} is missing: run `make schemas`"
    assert committed.read_text(encoding="utf-8") == schema_text(contract), (
        f"{committed} differs from what the types in src/agentjudge/results/ generate: "
        "run `make schemas` and commit it (a change to a results document's keys is a new "
        "version: docs/results.md)"
    )


def test_check_names_a_stale_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 0  # writes them
    assert main(["--check", str(tmp_path)]) == 0
    stale = tmp_path / "score-results.schema.json"
    stale.write_text(stale.read_text().replace('"own_score"', '"node_score"'))
    assert main(["--check", str(tmp_path)]) == 1
    assert f"{stale}: not the schema the models generate" in capsys.readouterr().err


def validator() -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMAS / "score-results.schema.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_the_schema_accepts_what_score_writes_and_refuses_a_renamed_field() -> None:
    document = written()
    validator().validate(document)
    node = document["trajectories"][0]["nodes"][0]
    node["node_score"] = node.pop("own_score")
    errors = {(e.message, tuple(e.absolute_path)) for e in validator().iter_errors(document)}
    assert errors == {
        ("Additional properties are not allowed ('node_score' was unexpected)", WHERE),
        ("'own_score' is a required property", WHERE),
    }


def test_a_document_finds_its_contract_by_its_schema_field() -> None:
    assert contract_for(written()) is CONTRACTS[0]
    grade: dict[str, Any] = {"cases": [], "summary": {}}  # graph-agents-cli's own: no schema field
    assert contract_for(grade) is CONTRACTS[1]
    assert contract_for({**grade, "schema": "agentjudge.grade/v1"}) is CONTRACTS[1]
    assert contract_for({**grade, "schema": "agentjudge.grade/v2"}) is None
    assert contract_for({"schema": "agentjudge.calibration/v1"}) is None
    assert contract_for([]) is None
