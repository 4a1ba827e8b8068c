"""Shared test setup: the real inputs the tests read, and markers by test location."""

from __future__ import annotations

import compileall
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
# copies of the real inputs in the team's shared/fixtures (tests/fixtures/PROVENANCE.md): a
# clone tests on its own, with no shared/ beside it
FIXTURES = REPO / "tests" / "fixtures"
ATIF_FIXTURES = FIXTURES / "atif"
E2E = REPO / "tests" / "e2e"


def pytest_configure(config: pytest.Config) -> None:
    # Run from a background job of a script (`cmd &`), the suite inherits SIGINT ignored, and
    # so would every CLI it starts: the Ctrl-C tests' SIGINT would do nothing. A handled
    # signal is reset to its default in an exec'd child, so handling it here gives the CLIs
    # Python's usual KeyboardInterrupt, as from a terminal.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    # With PYTHONDONTWRITEBYTECODE set (as on the machine the suite is timed on), no Python
    # process keeps the modules it compiles: every `agentjudge` CLI, Ray worker and eval-hub
    # job the tests start, hundreds of them, compiled all of agentjudge again, 0.2 s of CPU
    # each. Compiled here once (only what changed since), they read it: the variable stops
    # writes, not reads.
    if sys.flags.dont_write_bytecode:
        compileall.compile_dir(REPO / "src" / "agentjudge", quiet=1)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The markers a test gets from where it lives and what it uses (pyproject.toml lists
    them): `e2e` for everything under tests/e2e/, `browser` for every test that uses the
    `browser` fixture (headless chromium). `local_judge` is set by its module."""
    for item in items:
        if item.path.resolve().is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def atif_fixtures() -> Path:
    """The real ATIF files copied into tests/fixtures/atif."""
    return ATIF_FIXTURES


# CI runs the same examples every time (a red CI must mean a code change, not a new draw);
# developers' runs explore new ones.
settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")
