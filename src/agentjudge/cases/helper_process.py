"""A second process for big runs: a forked helper reads the dataset and grades some of
its blocks of `BLOCK` cases, sending each back finished (its record already encoded), and
the others as read, for this process to grade meanwhile. Grading then uses two cores, and
the dataset is parsed once.

The helper only saves work; it decides nothing. This process still counts every id and
the dataset's hash in order, and grades itself any case the helper hands back undone: one
that fails validation (its error is then raised here, in its turn and in the same words),
one with judge metrics. If the helper stops before the end (a file it cannot read, killed,
out of memory), this process reads the rest itself, skipping the cases it already has;
if none can be forked, it grades them all. So the results file is byte for byte the one a
single process writes, and a bad input gives the same error. The helper never outlives
this process: Ctrl-C and errors kill it, and if this process is killed outright, the
helper's next send fails (it holds no reading end of the pipe) and it ends.

It is used when that is both worth it and safe (`worth_a_helper`): on Linux, with two CPUs
or more, no other thread in this process (a fork copies only the calling thread), a
streamed dataset, no custom metric, and at least `MIN_TRACES` traces.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, NamedTuple

from agentjudge.cases.loading import Case, EvalConfig, PlannedCases, TraceSet
from agentjudge.cases.loading.dataset import CaseStream, canonical_json, parse_case
from agentjudge.cases.outcome import gate
from agentjudge.cases.outcome.results_file import encode_record

BLOCK = 64  # cases per message
# Of each `ROUND` blocks the helper grades those in `HELPER_BLOCKS`, this process the others:
# this process also takes in every case and the helper also parses the dataset (measured
# balance on this machine's kind: bench/grade_throughput.py).
ROUND = 3
HELPER_BLOCKS = frozenset({1})
# A run with fewer traces takes a few tens of milliseconds: a fork would eat the gain.
MIN_TRACES = 1000
_PIPE_BYTES = 1 << 20  # room for a dozen blocks, so that neither side waits on the other
_END = "end"  # the helper's last message once every case was sent


class Done(NamedTuple):
    """A case the helper graded, final: what this process needs of it."""

    id: str
    canonical: bytes  # its canonical JSON, for the dataset's hash
    trace_id: str | None  # the trace it was graded on, None when it had none
    record: bytes  # its record in the results file (`encode_record`)
    tally_fields: tuple[Any, ...]  # its `CaseTally` after `id` but for the (empty) scores

    def tally(self) -> gate.CaseTally:
        """The case's tally, as `CaseGrade.tally` makes it."""
        status, *rest = self.tally_fields
        return gate.CaseTally(self.id, status, gate.NO_SCORES, *rest)


def worth_a_helper(planned: PlannedCases, traces: TraceSet, config: EvalConfig) -> bool:
    """Whether a run's checks are worth a second process, and it is safe to fork one."""
    return (
        sys.platform == "linux"  # fork is the start method there; elsewhere it is unsafe
        and isinstance(planned, CaseStream)
        and not config.custom_metrics  # every case would come back undone
        and len(traces.traces) >= MIN_TRACES
        and threading.active_count() == 1
        and len(os.sched_getaffinity(0)) >= 2
    )


@contextlib.contextmanager
def graded_cases(
    planned: PlannedCases, traces: TraceSet, config: EvalConfig
) -> Iterator[Iterator[Case | Done]]:
    """The planned cases in order, each a `Case` to grade here or a `Done` the helper
    graded; the helper, if one was started, is stopped when the block ends."""
    if not worth_a_helper(planned, traces, config):
        yield iter(planned)
        return
    assert isinstance(planned, CaseStream)  # `worth_a_helper` says so
    try:
        helper = _Helper(planned.raws, traces, config)
    except OSError:  # no fork (a process or memory limit): one process grades them all
        yield iter(planned)
        return
    try:
        yield planned.with_checked(helper.items())
    finally:
        helper.stop()


_Item = tuple[Any, str, str, "Done | None"]  # a raw case, where it is, its file, if done


class _Helper:
    """The forked helper, and the cases it sends, in order (`items`)."""

    def __init__(
        self, raws: Iterable[tuple[Any, str, str]], traces: TraceSet, config: EvalConfig
    ) -> None:
        context = multiprocessing.get_context("fork")
        reader, writer = context.Pipe(duplex=False)
        with contextlib.suppress(OSError):  # a smaller pipe only makes the sides wait more
            fcntl.fcntl(writer.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        # the child flushes its copy of these buffers on exit: they must be empty
        sys.stdout.flush()
        sys.stderr.flush()
        self._process: BaseProcess = context.Process(
            target=_serve,
            args=(raws, traces, config, writer, reader),
            name="agentjudge grade helper",
            daemon=True,
        )
        # Ctrl-C (sent to the whole process group) must not reach the child before it
        # ignores it: held back over the fork, then delivered here as usual
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self._process.start()
        except BaseException:
            reader.close()
            raise
        finally:
            writer.close()  # the child's copy is the only writer: its exit is our EOF
            # its last reference goes while Ctrl-C is held: a Ctrl-C pending over the fork
            # would otherwise be raised inside its __del__, where Python ignores it
            del writer
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        self._reader = reader
        self._raws = raws  # this process's copy, not yet read: for the rest if the child stops

    def items(self) -> Iterator[_Item]:
        """Every case, as the helper sent it; past where it stopped, as read here."""
        received = 0
        while True:
            try:
                block = self._reader.recv()
            except (EOFError, OSError):  # stopped early: read the rest here
                break
            if block == _END:
                return
            for where, origin, raw, done in block:
                yield raw, where, origin, None if done is None else Done(*done)
            received += len(block)
        for raw, where, origin in itertools.islice(self._raws, received, None):
            yield raw, where, origin, None

    def stop(self) -> None:
        """End the helper, finished or not (an error here, Ctrl-C), and reap it."""
        self._reader.close()
        self._process.kill()
        self._process.join()


def _serve(
    raws: Iterable[tuple[Any, str, str]],
    traces: TraceSet,
    config: EvalConfig,
    out: Connection,
    parents_end: Connection,
) -> None:
    """The helper's whole life: read `raws`, grade the cases of its blocks, and send each
    block as a list of (where, origin, raw or None, `Done`'s fields or None), then `_END`.
    On any fault it stops sending: the other process reads on from there."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ends the parent, which kills this
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # with no reader left but the parent's, a parent killed outright (SIGKILL, OOM) makes
    # the next send fail, and this process ends instead of waiting forever
    parents_end.close()
    block: list[tuple[str, str, Any, tuple[Any, ...] | None]] = []
    try:
        for index, (raw, where, origin) in enumerate(raws):
            done = None
            if (index // BLOCK) % ROUND in HELPER_BLOCKS:
                done = _grade(raw, where, traces, config)
            block.append((where, origin, raw if done is None else None, done))
            if len(block) == BLOCK:
                out.send(block)
                block = []
        if block:
            out.send(block)
        out.send(_END)
    except Exception:  # an unreadable dataset, a closed pipe: the parent meets either itself
        return
    finally:
        out.close()


def _grade(raw: Any, where: str, traces: TraceSet, config: EvalConfig) -> tuple[Any, ...] | None:
    """A case graded as `grade._check` grades a final one, or None when it is not final or
    anything is wrong with it (the other process then grades it and says what)."""
    try:
        case = parse_case(raw, where)
        gate.check_case_metrics(config, case)
        if case.judge:  # metrics to open and run: the other process plans them
            return None
        trace = traces.find(case.id)
        grade = gate.grade_checks(case, trace)
        tally = grade.tally()
        return (
            case.id,
            canonical_json(case.raw),
            None if trace is None else str(trace["case_id"]),
            encode_record(grade.as_dict()),
            (tally.status, *tally[3:]),
        )
    except Exception:
        return None
