"""What a provider is: it builds HTTP requests and reads responses; nothing else.

Retries, backoff, concurrency, caps, the verdict store and accounting live once, in
`JudgeClient`. A provider may also *adapt* to a server that refused a request (a parameter
the model does not take, a response format the server does not know): it changes how it
builds later requests and says so once; the client then sends the same call again.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httpx
import orjson

from agentjudge.errors import ProtocolError
from agentjudge.judge.binary_verdict import TokenChoice
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.secrets import endpoint_secrets, redact, redact_endpoint

RetryDecision = Literal["rate_limit", "transient", "no"]
MAX_ERROR_CHARS = 500  # of a server's own error message, kept in results and the console
FORM = "agentjudge.form"  # extension of a built request: the form it was built in
# a Python traceback's lines, as a server may append them to its error message
_TRACEBACK_HEADER = re.compile(r"Traceback \(most recent call last\):")
_FRAME = re.compile(r'File "[^"\n]*", line \d+(?:, in [\w<>.]+)?')


Stop = Literal["done", "truncated", "refused"]


@dataclass(frozen=True, slots=True)
class Answer:
    """The text a provider extracted from a response, the tokens it reports, and why the
    judge stopped: `truncated` (its token budget ran out, the text may be cut) or `refused`
    (it declined to answer: no text). `tokens`: the generated tokens with the
    log-probabilities of their alternatives, when the request asked for them (a `binary`
    answer's; see judge/binary_verdict.py). `input_tokens` is every input token the call was
    billed for; `cache_read_tokens` and `cache_write_tokens` are the parts of it the provider
    read from or wrote to its prompt cache. `output_tokens` is every generated token billed,
    thinking included; `reasoning_tokens` is the thinking part of it (docs/judge.md)."""

    content: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop: Stop = "done"
    tokens: tuple[TokenChoice, ...] = ()
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class Provider:
    """A judge API: how to build a request for it and how to read what it answers.

    Subclasses set `name` and implement `build` and `parse`; the rest has defaults that
    suit an HTTP API on another machine.
    """

    name: str = "provider"
    quality_signal: ClassVar[bool] = True
    # a small call before a job's first real one proves the judge usable; one that starts
    # its own server proves that as it starts, and a fake one needs no proof
    preflight: ClassVar[bool] = True
    # the judge's note on its own verdicts: said on the console and kept with every result
    note: str | None = None
    max_concurrency: int | None = None  # calls the server can usefully take at once
    # the server keeps only the last prompt it read, and reads again all of the next one
    # after the start the two share (llama.cpp's): calls go in prefix order, not FIFO
    keeps_last_prompt: ClassVar[bool] = False
    # the API caches the prompts' shared prefixes (on its own or where a request marks
    # them): a node's first call goes ahead of the others, which then find it cached
    prompt_cache: ClassVar[bool] = False
    min_timeout: float | None = None  # seconds a call may need, whatever the job's timeout

    def __init__(self, model: str, endpoint: str, api_key: str | None = None) -> None:
        self.model = model
        self.endpoint = endpoint  # the URL requests go to (may hold credentials)
        self._api_key = api_key

    def __repr__(self) -> str:  # never shows the key or credentials in the URL
        return f"{type(self).__name__}(model={self.model!r}, endpoint={self.safe_endpoint!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """What this judge is sent that is a credential: its key and its endpoint's."""
        key = (self._api_key,) if self._api_key else ()
        return (*key, *endpoint_secrets(self.endpoint))

    @property
    def safe_endpoint(self) -> str:
        """The endpoint as it may be shown: no credentials, no key in the query."""
        return redact_endpoint(self.endpoint)

    @property
    def identity(self) -> str:
        """Which judge answers: part of every verdict-store key, so that another judge
        (another provider, model or server) never answers from the store. The endpoint's
        query (an API version, which a run may adapt) is left out."""
        return f"{self.name}|{self.model}|{self.safe_endpoint.split('?', 1)[0]}"

    def token_counter(self) -> tuple[Callable[[JudgeRequest], int], str] | None:
        """The judge's own count of a request's input tokens, and a name for it, when this
        provider knows its model's tokenizer; None when it does not (plans estimate)."""
        return None

    def answer_tokens(self, max_tokens: int) -> int:
        """How much of the model's context a call asking for `max_tokens` leaves to its
        answer (a reasoning model's thinking too): a prompt must fit in the rest."""
        return max_tokens

    def build(self, request: JudgeRequest) -> httpx.Request:
        raise NotImplementedError

    def parse(self, status: int, body: bytes) -> Answer:
        raise NotImplementedError

    def should_retry(self, status: int) -> RetryDecision:
        if status == 429:
            return "rate_limit"
        if status in (408, 409) or status >= 500:
            return "transient"
        return "no"

    def error_message(self, body: bytes) -> str:
        """The server's own explanation of a refused call, fit to show: secrets redacted,
        on one line, at most 500 characters ("" when it gave none)."""
        text = body.decode("utf-8", "replace")
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            pass  # a proxy's plain-text or HTML page: shown as it is
        else:
            text = self.read_error(data) or text
        return fit_to_show(text, self.secrets)

    def read_error(self, data: Any) -> str | None:
        """The message in this API's error body (`{"error": {"message": ...}}` here)."""
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        return None

    def adapt(self, status: int, message: str, refused: httpx.Request) -> str | None:
        """A server refused `refused` with `status` and `message`. Return a note (said
        once) if requests are now built differently and the same call may succeed, ""
        if another call has already adapted since this one was built, None otherwise."""
        return None

    def accepted(self, built: httpx.Request) -> str | None:
        """The server answered `built` (2xx): what it was built with works. A note if
        that undoes an adaptation."""
        return None

    def settled(self) -> dict[str, Any]:
        """How requests are built now that the run has adapted (for the results)."""
        return {}

    def transport(self) -> httpx.AsyncBaseTransport | None:
        """A transport of its own (an in-process judge), else None: the client's pool."""
        return None

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Held open for a job's judge calls: a judge that runs its own server (`local`)
        starts it here and stops it on the way out; a remote server needs nothing."""
        yield


def fit_to_show(text: str, secrets: Iterable[str] = ()) -> str:
    """A judge's error message as it may be shown: secrets redacted, without the server's
    traceback (see `without_traceback`), on one line, at most MAX_ERROR_CHARS characters."""
    text = " ".join(redact(without_traceback(text), secrets).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def without_traceback(text: str) -> str:
    """`text` without the Python traceback a server may append to its message (a frame's
    `File "/its/path.py", line N, in f` and the source line under it, `Traceback (most
    recent call last):`): the server's file paths are not the user's concern, and
    llama-cpp-python's server puts one in every validation error it answers with 500."""
    kept: list[str] = []
    frame_indent: int | None = None  # the indentation of the frame line just dropped
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if frame_indent is not None and line.strip() and indent > frame_indent:
            frame_indent = None
            continue  # the frame's source line
        frame_indent = None
        if _TRACEBACK_HEADER.fullmatch(line.strip()):
            continue
        if _FRAME.fullmatch(line.strip()):
            frame_indent = indent
            continue
        kept.append(_FRAME.sub("", line))  # a frame run into other text on one line
    return "\n".join(kept)


def post_json(url: httpx.URL, headers: httpx.Headers, body: dict[str, Any]) -> httpx.Request:
    """A POST of `body` as JSON, read (so `.content` is there for whoever inspects it).

    orjson: ~40x faster than json on these prompts. The body goes in as a read stream, not
    `content=`, which re-encodes it and rebuilds the headers (13 us against 5 us alone, ~40
    us a call in a busy job); the transport sets Content-Length.
    """
    built = httpx.Request("POST", url, headers=headers, stream=httpx.ByteStream(orjson.dumps(body)))
    built.read()
    return built


def json_body(body: bytes) -> Any:
    """A response body as JSON, or `ProtocolError` (empty or not JSON)."""
    if not body:
        raise ProtocolError("empty_body")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ProtocolError("malformed_completion") from None


def token_count(value: object) -> int:
    """A token count from a `usage` block: a non-negative int, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
