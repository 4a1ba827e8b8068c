"""The `local` judge: a small model on this machine's CPU, behind llama.cpp's OpenAI-compatible
server, talked to by the same provider code as any other server.

The server (llama-cpp-python's, run by `llama_logprobs.py`) is a child process on 127.0.0.1
and a free port, started when a job opens the provider (`serving()`) and stopped when it
closes it, also on Ctrl-C and on errors. It runs in a process group of its own, which is
what gets killed; on Linux it also dies with us (SIGKILL) if we are killed outright.

The model is small, so its output is constrained to the answer's JSON schema, with the
reasoning asked for before the score (a 1.5B model scores much better that way). No message
reaches it holding the spelling of one of its control tokens (see `inert_tokens`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from importlib.util import find_spec
from pathlib import Path
from typing import IO, Any, ClassVar

import httpx

from agentjudge.errors import UsageError
from agentjudge.judge.answer_schema import answer_schema
from agentjudge.judge.model_cache import INSTALL_HINT, QWEN_CODER_1_5B
from agentjudge.judge.providers.openai_compatible import OpenAICompatible, ResponseMode
from agentjudge.judge.request import JudgeRequest, Message

LOCAL_NOTE = (
    "the embedded judge (Qwen2.5-Coder-1.5B on this CPU) is weak: meant for offline use and "
    "smoke tests, not for decisions; use --judge-url/--judge-model for a real judge"
)
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
CONTEXT_TOKENS = 8192
REASONING_CHARS = 400  # bounds the tokens a CPU spends before the score (~10 a second)
READY_TIMEOUT = 180.0
CALL_TIMEOUT = 600.0
# llama-cpp-python as the Makefile builds it: for x86-64 with AVX2, not -march=native
PORTABLE_BUILD = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
# an idle server exits on SIGTERM in well under a second; a busy one would first finish
# its call (uvicorn waits for requests in flight), so it gets SIGKILL after this
STOP_GRACE = 1.0
# llama-cpp-python's server, with log-probabilities read from each answer token's logits only
SERVER_MODULE = "agentjudge.judge.providers.llama_logprobs"
# llama-cpp-python renders the chat template and tokenizes the whole prompt with special=True
# (llama_chat_format.py, chat_formatter_to_chat_completion_handler; no setting turns it off),
# so a message holding `<|im_start|>system` would open a real system turn. These are the
# spellings of Qwen2.5's control tokens (`<|name|>`, `</s>`) and of the tokens llama.cpp
# matches even without special parsing (`<tool_call>`, `</tool_call>`).
_CONTROL_TOKEN = re.compile(r"<(?=\|[^\s<>|]{1,64}\|>|/s>|/?tool_call>)")

# Run in the child before the server replaces it: ask Linux to SIGKILL it when its parent
# dies (even by SIGKILL), and quit if the parent is already gone. SIGKILL, not SIGTERM: on
# SIGTERM uvicorn waits for the request in flight, minutes of llama.cpp on a busy CPU, and
# the server holds nothing worth a clean exit. (Linux sends it when the thread that started
# the server ends: start it from one that lives as long as the server is needed.)
_LAUNCH = """\
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execv(sys.executable, [sys.executable, "-m", sys.argv[2], *sys.argv[3:]])
"""


def require_extra() -> None:
    """Raise `UsageError` naming the install command when the `local` extra is missing."""
    missing = [name for name in ("llama_cpp", "uvicorn", "fastapi") if find_spec(name) is None]
    if missing:
        raise UsageError(
            f"the embedded judge (--judge local) needs the local extra "
            f"({', '.join(missing)} not installed): {INSTALL_HINT}"
        )


def inert_tokens(text: str) -> str:
    """`text` with the `<` of each control-token spelling written `\\u003c`, as quoted data
    writes it: the judge still reads the text, its tokenizer no longer finds the token."""
    return _CONTROL_TOKEN.sub(r"\\u003c", text)


def machine_threads() -> int:
    """The CPUs this process may run on (a container's or taskset's limit included)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class LocalJudge(OpenAICompatible):
    """The embedded judge. Usable only inside `serving()`, which runs its server."""

    name: str = "local"
    note = LOCAL_NOTE
    preflight: ClassVar[bool] = False
    max_concurrency = 1  # the server answers one request at a time; more would only queue
    keeps_last_prompt = True
    # a long prompt on two busy cores takes minutes; a server that dies fails its calls at once
    min_timeout = CALL_TIMEOUT
    # Asked in its server's own shape from the first call: llama-cpp-python's server knows
    # only `text` and `json_object` (a `json_schema` request is refused with HTTP 500), and
    # turns the schema given beside `json_object` into a grammar (its README, "JSON Schema
    # Mode"). The only mode: a small model is never left without its grammar.
    modes: ClassVar[tuple[ResponseMode, ...]] = ("json_object_schema",)

    def __init__(
        self,
        model_path: Path,
        threads: int | None = None,
        ready_timeout: float = READY_TIMEOUT,
        server_url: str | None = None,
    ) -> None:
        super().__init__("http://127.0.0.1/v1", MODEL_NAME)
        self.model_path = model_path
        self.threads = threads or machine_threads()
        self.ready_timeout = ready_timeout
        # a server already running (one per node of a Ray cluster): used, never started
        self.server_url = server_url

    @property
    def identity(self) -> str:
        # the model file decides the answers, not the port its server happens to get; and so
        # does the escaping in `build` (verdicts stored before it are not reused)
        return f"local|sha256:{QWEN_CODER_1_5B.sha256}|control-tokens-escaped"

    def build(self, request: JudgeRequest) -> httpx.Request:
        """The request with no control token in any message (see `inert_tokens`)."""
        messages = tuple(Message(m.role, inert_tokens(m.content)) for m in request.messages)
        return super().build(replace(request, messages=messages))

    def token_counter(self) -> tuple[Callable[[JudgeRequest], int], str]:
        """Qwen2.5's own tokenizer (the model file's vocabulary, loaded without its weights)
        over each request as the server renders it: the chat template around the messages
        that `build` sends. The server's `usage.prompt_tokens` is the same count."""
        llama_cpp = importlib.import_module("llama_cpp")  # the local extra; checked at build
        with _stderr_silenced():
            vocab = llama_cpp.Llama(model_path=str(self.model_path), vocab_only=True, verbose=False)

        def count(request: JudgeRequest) -> int:
            rendered = "".join(
                f"<|im_start|>{m.role}\n{inert_tokens(m.content)}<|im_end|>\n"
                for m in request.messages
            )
            prompt = f"{rendered}<|im_start|>assistant\n".encode()
            return len(vocab.tokenize(prompt, add_bos=False, special=True))

        return count, f"{MODEL_NAME}'s tokenizer"

    def schema_for(self, request: JudgeRequest, mode: ResponseMode) -> dict[str, Any]:
        """Scores in tenths and bounded reasoning, in every mode (see `answer_schema`)."""
        return answer_schema(request, tenths=True, reasoning_chars=REASONING_CHARS)

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        if self.server_url is not None:
            self._serve_at(self.server_url)
            yield
            return
        server = LlamaServer(self.model_path, self.threads)
        try:
            await server.wait_ready(self.ready_timeout)
            self._serve_at(server.base_url)
            yield
            server.check_alive()  # its failed calls alone would hide why they failed
        finally:
            server.stop()

    def _serve_at(self, base_url: str) -> None:
        self.base_url = base_url
        self.endpoint = f"{base_url}/chat/completions"
        self._url = httpx.URL(self.endpoint)


def server_arguments(model_path: Path, port: int, threads: int) -> list[str]:
    """The server's command-line arguments (`python -m llama_cpp.server`'s)."""
    return [
        "--model", str(model_path),
        "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--n_ctx", str(CONTEXT_TOKENS),
        # SERVER_MODULE reads logprobs from the answer's own logits: none for the prompt
        "--logits_all", "false",
    ]  # fmt: skip


class LlamaServer:
    """llama-cpp-python's server (run as SERVER_MODULE) on 127.0.0.1 and a free port, in its
    own process group.

    Its output goes to an unnamed temporary file, read only to explain a failed start.
    """

    def __init__(self, model_path: Path, threads: int) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop())
        args = server_arguments(model_path, self.port, threads)
        if sys.platform == "linux":
            command = [sys.executable, "-c", _LAUNCH, str(os.getpid()), SERVER_MODULE, *args]
        else:
            command = [sys.executable, "-m", SERVER_MODULE, *args]
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C is ours to handle; the group is ours to kill
        )

    @property
    def pid(self) -> int:
        return self._process.pid

    async def wait_ready(self, timeout: float) -> None:
        """Return once the server has answered a one-token completion (it loads the model
        before it listens; the first answer proves that its build runs on this CPU); raise
        `UsageError` if it exits or is not ready within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=timeout) as http:
            while not await self._answers(http):
                self.check_alive("while starting")
                if time.monotonic() > deadline:
                    raise UsageError(
                        f"the embedded judge's server was not ready after {timeout:.0f} s"
                        f"{self._last_line()}; is the machine very busy?"
                    )
                await asyncio.sleep(0.25)

    async def _answers(self, http: httpx.AsyncClient) -> bool:
        try:
            if (await http.get(f"{self.base_url}/models", timeout=2.0)).status_code != 200:
                return False
            body = {"messages": [{"role": "user", "content": "Say ok."}], "max_tokens": 1}
            answer = await http.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def check_alive(self, when: str = "during the job") -> None:
        """Raise `UsageError` saying how the server ended if it is no longer running."""
        code = self._process.poll()
        if code is None:
            return
        how = f"exited with code {code}"
        fix = f"check memory and that `{INSTALL_HINT}` succeeded"
        if code < 0:
            how = f"was killed by {signal.Signals(-code).name}"
        if code == -signal.SIGILL:  # e.g. AMX, which -march=native compiles in
            fix = (
                "its llama-cpp-python build uses an instruction this CPU does not run; "
                f"rebuild it for AVX2: CMAKE_ARGS='{PORTABLE_BUILD}' pip install "
                "--force-reinstall --no-cache-dir --no-deps llama-cpp-python"
            )
        raise UsageError(f"the embedded judge's server {how} {when}{self._last_line()}; {fix}")

    def stop(self) -> None:
        """Stop the server's whole process group: SIGTERM, then SIGKILL after `STOP_GRACE`
        seconds. Synchronous, so a second Ctrl-C cannot interrupt it half-way."""
        try:
            if self._process.poll() is None:
                _signal_group(self._process.pid, signal.SIGTERM)
                try:
                    self._process.wait(STOP_GRACE)
                except subprocess.TimeoutExpired:
                    _signal_group(self._process.pid, signal.SIGKILL)
                    self._process.wait()
            # anything the server itself started goes with it
            _signal_group(self._process.pid, signal.SIGKILL)
        finally:
            self._log.close()

    def _last_line(self) -> str:
        self._log.seek(0)
        lines = [ln for ln in self._log.read().decode(errors="replace").splitlines() if ln]
        return f" ({lines[-1].strip()[:300]})" if lines else ""


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Standard error's file descriptor points at /dev/null meanwhile. llama.cpp writes a
    warning there from C, past its Python logger and `verbose=False`, whenever it loads a
    vocabulary without weights ("n_ctx_seq > n_ctx_train (0)"): not the user's concern.
    A failed load still raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
