"""The results documents' contract: what `score` and `grade` write and every reader takes.

Each document is declared once, as TypedDicts: the writer builds plain dicts of those
types (nothing on the hot path but the dicts it always built, so the bytes do not change),
readers index them with keys mypy checks, and pydantic validates a file against the same
types when one is read back (`contract.Contract.check`). `schemas.py` generates each document's
JSON Schema from them (docs/results.md).
"""
