"""The dataset hash is graph-agents-cli's: sha256 of `json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False)`, whichever encoder writes the bytes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentjudge.cases.loading.dataset import canonical_hash


def json_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# any character but lone surrogates (not UTF-8: json's encoding fails on them too)
TEXT = st.text(st.characters(exclude_categories=["Cs"]))
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=25,
)


@given(VALUES)
@settings(max_examples=600, deadline=None)
def test_the_hash_is_jsons_for_any_value(value: Any) -> None:
    assert canonical_hash(value) == json_hash(value)


def test_the_floats_where_the_encoders_differ() -> None:
    # orjson writes these 0.00001, 1e-5 and 1e-7 where json writes 1e-05, 1e-05 and 1e-07
    for value in (1e-5, 0.00001, [1.5e-7, {"b": 2.5e-9, "a": 1e-300}], 1e16, 5e-324):
        assert canonical_hash(value) == json_hash(value)
    # a string that merely looks like such a number is kept as written
    assert canonical_hash({"text": "3e-5 or 0.00001"}) == json_hash({"text": "3e-5 or 0.00001"})
