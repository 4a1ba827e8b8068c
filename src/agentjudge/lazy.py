"""Packages that re-export their modules' names and import each module on first use.

The CLI's start-up time is the reason: `import agentjudge.cases.loading` must not load
jsonschema, aiohttp or the gate before a command needs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, homes: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` (module → names) is read
    from `package.module`, imported when the name is first asked for."""
    home = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
