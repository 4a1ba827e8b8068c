"""Approval-gate matching: what a ``match`` names, path templates, and their descriptions."""

from __future__ import annotations

import pytest

from agentjudge.cases.loading.approval_match import (
    call_matches,
    describe_gate,
    describe_match,
    match_problem,
    normalise_path,
    path_matches,
)


@pytest.mark.parametrize(
    ("template", "path", "expected"),
    [
        ("/orders/{id}/cancel", "/orders/ORD-1/cancel", True),
        ("/orders/{id}/cancel", "/orders/a/b/cancel", False),  # one segment only
        ("/orders/{id}/cancel", "/orders//cancel", False),  # a non-empty one
        ("/orders/{id}", "/orders/7/", True),  # one trailing slash is dropped
        ("/orders/{id}/", "/orders/7", True),
        ("/orders/ORD-{n}", "/orders/ORD-7", True),  # a placeholder inside a segment
        ("/orders/ORD-{n}", "/orders/X-7", False),
        ("/orders/{id}", "/Orders/7", False),  # case counts
        ("/admin", "/%61dmin", True),  # unreserved escapes are decoded
        ("/a%2fb", "/a%2Fb", True),  # other escapes compare upper-cased
        ("/a/b", "/a%2Fb", False),  # an encoded slash is not a separator
        ("/items/{x}", "/items/{x}", True),  # the template itself
        ("/a.b", "/aXb", False),  # literal text is literal, not a regex
        ("/orders/{id}/cancel", "/orders/7/cancel.json", False),  # no suffix matching
        ("/", "/", True),
    ],
)
def test_path_matches(template: str, path: str, expected: bool) -> None:
    assert path_matches(template, path) is expected


def test_normalise_path() -> None:
    assert normalise_path("/a%7e/%2f/x/") == "/a~/%2F/x"
    assert normalise_path("/") == "/"


def test_call_matches_every_given_key() -> None:
    gate = {"api": "orders", "operation_id": "cancelOrder", "method": "post", "path": "/o/1"}
    assert call_matches({"operation_id": "cancelOrder"}, gate)
    assert call_matches({"method": "POST", "path": "/o/{id}"}, gate)  # method ignores case
    assert call_matches({"api": "orders", "operation_id": "cancelOrder"}, gate)
    assert not call_matches({"api": "billing", "operation_id": "cancelOrder"}, gate)
    assert not call_matches({"operation_id": "refund"}, gate)
    assert not call_matches({"method": "GET", "path": "/o/{id}"}, gate)
    assert not call_matches({"method": "POST", "path": "/o/{id}"}, {"method": "POST"})
    assert not call_matches({"method": "POST", "path": "/o/{id}"}, {**gate, "path": 5})


@pytest.mark.parametrize(
    ("match", "problem"),
    [
        ({"operation_id": "x"}, None),
        ({"method": "post", "path": "/orders/{id}/"}, None),
        ({"api": "orders", "operation_id": "x", "method": "GET", "path": "/"}, None),
        ({}, "must be an object like"),
        ("cancelOrder", "must be an object like"),
        ({"operation_id": "x", "verb": "GET"}, "unknown key(s) verb"),
        ({"operation_id": " "}, "operation_id must be a non-empty string"),
        ({"api": "orders"}, "needs operation_id, or method and path"),
        ({"method": "GET"}, "method and path go together"),
        ({"operation_id": "x", "path": "/a"}, "method and path go together"),
        ({"method": "FETCH", "path": "/a"}, "unknown HTTP method 'FETCH'"),
        ({"method": "GET", "path": "a"}, "path must start with /"),
        ({"method": "GET", "path": "/a//b"}, "path must not have empty"),
        ({"method": "GET", "path": "/a/../b"}, "path must not have empty, '.' or '..'"),
        ({"method": "GET", "path": "/a/%2e%2E"}, "percent-encoded ones included"),
        ({"method": "GET", "path": "/a?x=1"}, "path segments hold literal characters"),
        ({"method": "GET", "path": "/a/{1x}"}, "path segments hold literal characters"),
        ({"method": "GET", "path": "/a%00"}, "control character"),
        ({"method": "GET", "path": "/a%20"}, "starts or ends with whitespace"),
        ({"method": "GET", "path": "/a%20.json"}, "whitespace beside a dot"),
        ({"method": "GET", "path": "/a%2Fb"}, "encoded slash"),
        ({"method": "GET", "path": "/a;b"}, "holds ';'"),
    ],
)
def test_match_problem(match: object, problem: str | None) -> None:
    found = match_problem(match)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_descriptions() -> None:
    assert describe_match({"operation_id": "cancelOrder"}) == "cancelOrder"
    assert describe_match({"method": "post", "path": "/o/{id}"}) == "POST /o/{id}"
    assert (
        describe_match({"api": "orders", "operation_id": "c", "method": "GET", "path": "/o"})
        == "orders: c GET /o"
    )
    assert describe_gate({"method": "POST", "path": "/o/1", "status": "approved"}) == (
        "POST /o/1 (approved)"
    )
    assert describe_gate({"operation_id": "c"}) == "c ? ? (undecided)"
