"""`agentjudge review`: a local page where a person checks the judge's verdicts one item at a
time and the labels go to a file `calibrate --labels` reads (docs/review.md)."""

from __future__ import annotations

import asyncio
import getpass
import threading
import webbrowser
from pathlib import Path

import typer

from agentjudge.cli.options import NoOpen, Reviewer, ReviewLabels, ReviewPort, ReviewResults, Seed
from agentjudge.collisions import Named, check_no_collision
from agentjudge.errors import EXIT_INTERRUPTED, UsageError, clip
from agentjudge.files import check_writable
from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.printable import printable


def review_command(
    results: ReviewResults,
    labels: ReviewLabels = None,
    reviewer: Reviewer = None,
    port: ReviewPort = 0,
    no_open: NoOpen = False,
    seed: Seed = 0,
) -> int:
    """Review the judge's verdicts in your browser, one step (or case metric) at a time,
    the most telling first: a page on 127.0.0.1 (its URL printed with a token, opened
    unless --no-open) shows each in its context with the judge's score, samples, rationale
    and category. Keys: j/k next and previous, y/n pass or fail, 1-5 a score on the judge's
    scale, c a category, e a note, u undo. Every label is written to the labels file at
    once; run the same command again to resume. Ctrl-C stops it (exit 130)."""
    labels = labels if labels is not None else results.with_name(f"{results.stem}.labels.json")
    try:
        _review(results, labels, reviewer, port=port, no_open=no_open, seed=seed)
    except KeyboardInterrupt:
        typer.echo(
            f"stopped: every label given is in {printable(str(labels))}; run the same "
            "command again to go on",
            err=True,
        )
    return EXIT_INTERRUPTED  # the page is served until Ctrl-C


def _review(
    results: Path, labels: Path, reviewer: str | None, *, port: int, no_open: bool, seed: int
) -> None:
    from agentjudge.review.items import load_items
    from agentjudge.review.labels import LabelBook
    from agentjudge.review.order import review_order
    from agentjudge.review.server import Review, bind, new_token, serve

    check_no_collision([Named("--labels", labels)], [Named("the results file", results)])
    name = reviewer if reviewer is not None else _user()
    if not name.strip():
        raise UsageError("--reviewer: give a name (it is written with every label)")
    sock = bind(port)  # first: a port in use is said before a large file is read
    try:
        items, sha256 = load_items(results)
        check_writable(labels, "--labels", "the labels")
        book = LabelBook.open(labels, results_path=results, results_sha256=sha256, reviewer=name)
        stale = tuple(book.stale([item.key for item in items]))
        if stale:
            typer.echo(
                f"note: {len(stale)} label(s) in {printable(str(labels))} name items these "
                f"results no longer have; they are kept in the file: "
                f"{printable(clip(', '.join(stale)))}",
                err=True,
            )
        review = Review(
            order=review_order(items, seed=seed),
            book=book,
            categories=CATEGORIES,
            reviewer=name,
            results_name=results.name,
            labels_name=labels.name,
            stale=stale,
        )

        def ready(url: str) -> None:
            typer.echo(f"review of {len(items)} item(s) on {url}")
            typer.echo(f"labels are written to {printable(str(labels))} as you go (Ctrl-C stops)")
            if not no_open:
                # a thread of its own: a browser that takes its time never holds the server up
                threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

        asyncio.run(serve(review, sock, token=new_token(), on_ready=ready))
    finally:
        sock.close()


def _user() -> str:
    """The login name, the reviewer's name when --reviewer is not given."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's user)
        raise UsageError("--reviewer: no login name for this user; give --reviewer NAME") from None
