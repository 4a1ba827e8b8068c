"""The default transport: httpx's transport interface over an aiohttp connection pool.

aiohttp's pool costs the same per request at any concurrency (httpcore 1.0's scans every
connection for every queued request). The transport reads at most `max_body_bytes` + 1
bytes of a body, so an oversized answer is never read whole; the client's deadline
(asyncio.timeout) bounds every request, so no aiohttp timeout is set here.
"""

from __future__ import annotations

import errno
import ssl
from collections.abc import Mapping

import aiohttp
import httpx
import yarl

from agentjudge.errors import UsageError

# aiohttp computes these itself
_OWN = frozenset({b"host", b"content-length"})
_RETRY_HEADERS = ("retry-after", "retry-after-ms")
# why a connection was not made, as the system said it (the others: "cannot connect")
_CONNECT_ERRORS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ETIMEDOUT: "connection timed out",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
}


class TLSProblem(Exception):
    """The judge's TLS certificate was not accepted: sending again would not change that."""


def tls_context(ca_bundle: str | None) -> ssl.SSLContext | None:
    """The TLS context of `--judge-ca-bundle`, or None for the system's CAs."""
    if ca_bundle is None:
        return None
    try:
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or "not PEM certificates"
        raise UsageError(
            f"{ca_bundle}: cannot read the judge's CA bundle ({why}); give a PEM file"
        ) from None


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One aiohttp session (one pool) behind httpx's `handle_async_request`."""

    def __init__(
        self, max_connections: int, max_body_bytes: int, tls: ssl.SSLContext | None = None
    ) -> None:
        self._max_connections = max_connections
        self._max_body_bytes = max_body_bytes
        self._tls = tls  # None: the system's CAs (and SSL_CERT_FILE)
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[str, yarl.URL] = {}

    def _get_session(self) -> aiohttp.ClientSession:
        # created lazily: a session belongs to the event loop that first uses it
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections, ssl=self._tls if self._tls is not None else True
            )
            timeout = aiohttp.ClientTimeout(total=None)
            self._session = aiohttp.ClientSession(connector=connector, timeout=timeout)
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._get_session()
        body = await request.aread()
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in request.headers.raw
            if name.lower() not in _OWN
        ]
        try:
            async with session.request(
                request.method,
                self._url(request.url),
                data=body,
                headers=headers,
                allow_redirects=False,
                auto_decompress=True,
            ) as response:
                body = await self._read(response)
                return httpx.Response(
                    response.status,
                    # the client reads no other header; copying them all costs per call
                    headers=_retry_headers(response.headers) if response.status >= 400 else None,
                    content=body,
                    request=request,
                )
        except aiohttp.ServerTimeoutError as exc:
            raise httpx.ReadTimeout("read timed out", request=request) from exc
        except (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError) as exc:
            raise TLSProblem(_tls_reason(exc)) from exc
        except aiohttp.ClientConnectorDNSError as exc:
            raise httpx.ConnectError(
                "the judge's host name did not resolve", request=request
            ) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(_connect_failure(exc), request=request) from exc
        except (aiohttp.ClientError, ConnectionError) as exc:
            raise httpx.ReadError("connection failed", request=request) from exc

    def _url(self, url: httpx.URL) -> yarl.URL:
        # parsing the same few judge URLs once each, not once per call
        text = str(url)
        parsed = self._urls.get(text)
        if parsed is None:
            parsed = self._urls[text] = yarl.URL(text)
        return parsed

    async def _read(self, response: aiohttp.ClientResponse) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while size <= self._max_body_bytes:
            chunk = await response.content.readany()
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _connect_failure(exc: aiohttp.ClientConnectorError) -> str:
    """`connection refused` and the like: what a user checks first (is the server up?)."""
    return _CONNECT_ERRORS.get(exc.os_error.errno or 0, "cannot connect")


def _retry_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {name: headers[name] for name in _RETRY_HEADERS if name in headers}


def _tls_reason(exc: Exception) -> str:
    """Why the certificate was not accepted, and the fix."""
    certificate = getattr(exc, "certificate_error", None)
    reason = getattr(certificate, "verify_message", None) or getattr(exc, "strerror", None)
    shown = f" ({reason})" if reason else ""
    return (
        f"the judge server's TLS certificate was not accepted{shown}: give its CA "
        "certificate with --judge-ca-bundle FILE (score: --set judge_ca_bundle=FILE; or "
        "SSL_CERT_FILE)"
    )
