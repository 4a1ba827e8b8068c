"""Every fault a judge endpoint throws at the client, against our judge server on 127.0.0.1:
rate limits (waited out, no attempt spent), 5xx, lost connections, silence, a body that
dribbles, a huge or HTML answer, a redirect elsewhere, an unknown host, TLS."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import re
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agentjudge.errors import UsageError
from agentjudge.judge import JudgeClient, JudgeOutcome, JudgeRequest
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import Message
from agentjudge.testing import JudgeServer, Script

pytestmark = pytest.mark.timeout(60)


def request(text: str) -> JudgeRequest:
    return JudgeRequest((Message("system", "judge"), Message("user", text)), "test-v1")


def judge(
    url: str, texts: list[str], api_key: str | None = None, **options: object
) -> tuple[list[JudgeOutcome], JudgeClient]:
    async def go() -> tuple[list[JudgeOutcome], JudgeClient]:
        settings: dict[str, object] = {"initial_backoff": 0.01, "max_backoff": 0.05}
        settings.update(options)
        provider = OpenAICompatible(url, "judge", api_key=api_key)
        async with JudgeClient(provider, **settings) as client:  # type: ignore[arg-type]
            outcomes = await asyncio.gather(*(client.judge(request(t)) for t in texts))
        return list(outcomes), client

    return asyncio.run(go())


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.mark.parametrize("retry_after", [None, "seconds", "date"])
def test_rate_limits_are_waited_out_without_spending_an_attempt(
    server: JudgeServer, retry_after: str | None
) -> None:
    server.script = Script(
        fail_first=4,
        fail_first_fault="429",
        retry_after=1.0 if retry_after == "date" else 0.01,
        retry_after_date=retry_after == "date",
    )
    if retry_after is None:  # no Retry-After at all: backoff
        server.script.retry_after = None  # type: ignore[assignment]
    started = time.monotonic()
    (outcome,), _ = judge(server.base_url, ["a [[score=0.4]]"], max_attempts=1)
    assert outcome.verdict is not None, outcome
    assert outcome.verdict.score == 0.4
    assert server.outcomes() == {"429": 4, "ok": 1}
    if retry_after == "date":  # an HTTP date is read as the wait it names (whole seconds)
        assert time.monotonic() - started >= 1.0


def test_rate_limits_past_the_budget_end_the_call(server: JudgeServer) -> None:
    server.script = Script(fail_first=100, fail_first_fault="429", retry_after=0.2)
    (outcome,), _ = judge(server.base_url, ["a"], retry_budget=0.5)
    assert outcome.error == "http_429"


FAILED_AS = {"drop": "transport_error", "garbage": "malformed_completion"}


@pytest.mark.parametrize("fault", ["500", "502", "503", "504", "drop", "garbage"])
def test_server_failures_spend_attempts(server: JudgeServer, fault: str) -> None:
    # a 200 that is no completion ("garbage") is a failed call like a 5xx, not a verdict
    server.script = Script(fail_first=2, fail_first_fault=fault)  # type: ignore[arg-type]
    (ok,), client = judge(server.base_url, ["a [[score=0.7]]"], max_attempts=3)
    assert ok.verdict is not None
    assert ok.verdict.score == 0.7
    assert (client.stats.retries, client.stats.errors) == (2, 2)
    server.script = Script(fail_first=2, fail_first_fault=fault)  # type: ignore[arg-type]
    (lost,), _ = judge(server.base_url, ["b"], max_attempts=2)
    assert lost.error == FAILED_AS.get(fault, f"http_{fault}")
    assert not lost.protocol  # so a step that met it gets a second round


def test_both_kinds_of_garbage_are_retried(server: JudgeServer) -> None:
    server.script = Script(fail_first=6, fail_first_fault="garbage")
    texts = [f"g{i} [[score=0.3]]" for i in range(8)]
    outcomes, client = judge(server.base_url, texts, max_attempts=7)
    assert [o.verdict.score if o.verdict else o.error for o in outcomes] == [0.3] * 8
    assert (client.stats.retries, client.stats.protocol_errors) == (48, 0)


@pytest.mark.parametrize("fault", ["hang", "dribble"])
def test_silence_and_dribbling_bodies_time_out(server: JudgeServer, fault: str) -> None:
    server.script = Script(fail_first=1, fail_first_fault=fault, hang_seconds=3)  # type: ignore[arg-type]
    started = time.monotonic()
    (outcome,), client = judge(server.base_url, ["a [[score=0.2]]"], timeout=0.5)
    assert outcome.verdict is not None  # the second attempt is answered
    assert client.stats.errors == 1
    assert time.monotonic() - started < 5


def test_a_huge_answer_is_an_unusable_one(server: JudgeServer) -> None:
    server.script = Script(malformed="huge")
    (outcome,), _ = judge(server.base_url, ["a"])
    assert (outcome.verdict, outcome.error, outcome.protocol) == (None, "body_too_large", True)


def test_an_html_200_is_a_failed_call(server: JudgeServer) -> None:
    # a proxy's error page, sent with 200: no completion, retried as a 5xx is
    server.script = Script(malformed="html")
    (outcome,), client = judge(server.base_url, ["a"], max_attempts=3)
    assert (outcome.error, outcome.protocol) == ("malformed_completion", False)
    assert (client.stats.calls, client.stats.errors, client.stats.protocol_errors) == (3, 3, 0)


def test_a_redirect_elsewhere_is_not_followed(server: JudgeServer) -> None:
    with JudgeServer() as elsewhere:
        server.script = Script(fail_first=9, fail_first_fault="redirect")
        server.script.redirect_to = f"http://127.0.0.1:{elsewhere.port}"
        (outcome,), _ = judge(server.base_url, ["a"], api_key="sk-not-for-them-123")
        assert outcome.error == "http_307"
        assert elsewhere.log == []  # never followed, so the key never went there


def test_an_unknown_host_is_a_transport_error_saying_so() -> None:
    (outcome,), _ = judge("http://no-such-judge.invalid/v1", ["a"], max_attempts=2)
    assert outcome.error == "transport_error"
    assert outcome.message == "the judge's host name did not resolve"


def test_a_refused_connection_is_a_transport_error_saying_so() -> None:
    (outcome,), _ = judge("http://127.0.0.1:9/v1", ["a"], max_attempts=2)  # nothing on 9
    assert outcome.error == "transport_error"
    assert outcome.message == "connection refused"


def self_signed(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate for 127.0.0.1 that is its own CA, and a server context holding it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentjudge test judge")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert = folder / "judge-ca.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    private = folder / "judge-key.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, private)
    return cert, context


def test_tls_a_self_signed_judge_needs_its_ca(tmp_path: Path) -> None:
    cert, context = self_signed(tmp_path)
    with JudgeServer(tls=context) as secure:
        assert secure.base_url.startswith("https://")
        (refused,), client = judge(secure.base_url, ["a [[score=0.6]]"])
        assert refused.error == "tls_error"
        assert refused.message is not None
        assert "--judge-ca-bundle" in refused.message
        assert client.stats.calls == 1  # not sent again: it would not change
        (trusted,), _ = judge(secure.base_url, ["a [[score=0.6]]"], ca_bundle=str(cert))
        assert trusted.verdict is not None
        assert trusted.verdict.score == 0.6


def test_a_ca_bundle_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate")
    for path in (tmp_path / "missing.pem", tmp_path / "bad.pem"):
        with pytest.raises(UsageError, match="cannot read the judge's CA bundle"):
            judge("https://127.0.0.1:9/v1", ["a"], ca_bundle=str(path))


def test_a_judge_that_keeps_rate_limiting_says_what_calls_wait_for(server: JudgeServer) -> None:
    server.script = Script(fail_first=1000, fail_first_fault="429", retry_after=0.05)
    said: list[str] = []
    texts = [f"r{i}" for i in range(4)]
    outcomes, client = judge(
        server.base_url,
        texts,
        on_wait=said.append,
        retry_budget=2.0,
        wait_note_after=0.5,
        wait_note_every=0.6,
    )
    assert {o.error for o in outcomes} == {"http_429"}
    assert client.stats.retries > 40  # many waits ...
    assert 1 <= len(said) <= 4  # ... said now and then, not each time
    assert said[0].startswith("judge openai-compatible/judge is rate-limiting calls (http_429")
    assert re.search(r"waiting 0\.\d s to ask again; a call waits 2 s at most$", said[0])
    assert client.notes == []  # a console line, not a note kept with the results


def test_a_few_rate_limits_say_nothing(server: JudgeServer) -> None:
    server.script = Script(fail_first=3, fail_first_fault="429", retry_after=0.05)
    said: list[str] = []
    (outcome,), _ = judge(server.base_url, ["a [[score=0.5]]"], on_wait=said.append)
    assert outcome.verdict is not None
    assert said == []
