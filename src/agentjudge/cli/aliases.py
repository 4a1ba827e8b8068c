"""Old flag spellings that keep working, hidden from `--help`.

Each `Alias` is one more (hidden) option of its command: given, it prints one `warning:`
line naming what to write now, and its value reaches the command under the name of the
configuration key (or parameter) it stands for. An alias with no `instead` is a spelling
kept for good and silently: `grade`'s `--judge-provider`, which graph-agents-cli passes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer

# the parameter of a command that receives its aliases' values, by key
ALIASED = "aliased"


@dataclass(frozen=True, slots=True)
class Alias:
    """An old flag: its spelling, the key its value is given under, and what replaces it."""

    flag: str
    key: str
    instead: str | None = None  # None: kept for good, no warning

    @property
    def parameter(self) -> str:
        """The hidden option's parameter name (distinct from every real one)."""
        return "alias_" + self.flag.lstrip("-").replace("-", "_")


def setting(flag: str, key: str) -> Alias:
    """An old flag of a configuration key that now has no flag of its own: `--set`."""
    return Alias(flag, key, f"--set {key}=VALUE")


def accepting(aliases: Sequence[Alias]) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate a command so that it also takes each alias's flag (hidden from --help).

    The command has a parameter named `aliased`: a dict of key -> value, one entry per
    alias given. Typer sees the command's own parameters and the aliases' instead."""

    def wrap(command: Callable[..., int]) -> Callable[..., int]:
        own = inspect.signature(command, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != ALIASED]
        hidden = [
            inspect.Parameter(
                alias.parameter,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None,
                annotation=Annotated[str | None, typer.Option(alias.flag, hidden=True)],
            )
            for alias in aliases
        ]

        @functools.wraps(command)
        def with_aliases(**kwargs: Any) -> int:
            aliased: dict[str, str] = {}
            for alias in aliases:
                value = kwargs.pop(alias.parameter)
                if value is None:
                    continue
                if alias.instead is not None:
                    typer.echo(
                        f"warning: {alias.flag} is deprecated and will be removed: "
                        f"write {alias.instead}",
                        err=True,
                    )
                aliased[alias.key] = value
            return command(**kwargs, **{ALIASED: aliased})

        parameters = [*kept, *hidden]
        with_aliases.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_aliases.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_aliases

    return wrap


def flag_of(aliases: Sequence[Alias], key: str) -> str:
    """The old flag that gave `key` (for error messages)."""
    return next(alias.flag for alias in aliases if alias.key == key)
