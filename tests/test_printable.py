"""`printable`: untrusted names on one console line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentjudge.printable import printable


def test_controls_are_escaped_and_the_rest_kept() -> None:
    name = "a\nvalid b.json\r\x1b[2J\u202eé 日本\t"
    assert printable(name) == "a\\nvalid b.json\\r\\x1b[2J\\u202eé 日本\\t"


def test_a_printable_name_is_unchanged() -> None:
    assert printable("runs/t00000.json → step 3") == "runs/t00000.json → step 3"


@given(st.text())
def test_the_result_is_always_one_printable_line(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable()
    assert len(shown.splitlines()) <= 1
