"""A scoring job's parameters from the command line: the flags, `--set KEY=VALUE` and old
flags (cli/aliases.py) over `--config FILE`, validated once by `ScoreConfig`; and
`--help-config`, the list of every key, read from the model (so a new key is listed as
soon as it exists)."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer

from agentjudge.errors import EXIT_OK, UsageError
from agentjudge.printable import printable
from agentjudge.scoring.config import ScoreConfig, load_config

_KEY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
HELP_CONFIG = "agentjudge score --help-config"


def parse_settings(pairs: Sequence[str]) -> dict[str, str]:
    """`--set KEY=VALUE` pairs as key -> value (a string: the model converts and checks
    it); a pair that is malformed, names no parameter or repeats one is a `UsageError`.
    A value is never quoted back: it may be a secret."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        key = key.strip()
        if not equals or not _KEY.match(key):
            raise UsageError(
                "--set takes KEY=VALUE, KEY a parameter name such as judge_max_attempts "
                f"({HELP_CONFIG} lists them)"
            )
        if key not in ScoreConfig.model_fields:
            close = difflib.get_close_matches(key, list(ScoreConfig.model_fields), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise UsageError(f"--set {key}: unknown parameter ({hint}{HELP_CONFIG} lists them)")
        if key in settings:
            raise UsageError(f"--set {key} is given twice: give it once")
        settings[key] = value
    return settings


def command_line_config(
    config_file: Path | None,
    flags: Mapping[str, tuple[str, Any]],
    pairs: Sequence[str],
    aliased: Mapping[str, tuple[str, str]],
) -> ScoreConfig:
    """The job's configuration: `config_file`'s values, then the command line's. `flags`:
    key -> (flag, value; None when not given); `pairs`: the `--set` pairs; `aliased`: key
    -> (old flag, value). A key given twice on the command line is a `UsageError`; a bad
    value names the flag (or `--set KEY`) it came from."""
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    given = [(key, flag, value) for key, (flag, value) in flags.items()]
    given += [(key, f"--set {key}", value) for key, value in parse_settings(pairs).items()]
    given += [(key, flag, value) for key, (flag, value) in aliased.items()]
    for key, name, value in given:
        if value is None:
            continue
        if key in values:
            raise UsageError(f"{key} is given twice, by {names[key]} and by {name}: give one")
        values[key] = value
        names[key] = name
    return load_config(config_file, values, "flags", names)


def print_config_help(value: bool) -> None:
    """`--help-config`: every configuration key with its type, default and description."""
    if not value:
        return
    typer.echo(
        "Every key of --config FILE (YAML) and --set KEY=VALUE; the command line overrides "
        "the file. A flag of its own, where a key has one, is named in its description.\n"
    )
    for line in config_help_lines():
        typer.echo(line)
    raise typer.Exit(EXIT_OK)


def config_help_lines() -> Iterator[str]:
    """Two lines per key of `ScoreConfig`, in its order: `key: type [default]`, then the
    description (the field's docstring)."""
    schema = ScoreConfig.model_json_schema()
    for key, field in ScoreConfig.model_fields.items():
        spec = schema["properties"][key]
        default = "none" if field.default is None else json.dumps(field.default)
        yield f"{key}: {_type(spec)} [{default}]"
        yield "    " + printable(" ".join((field.description or "").split()))


def _type(spec: Mapping[str, Any]) -> str:
    """A JSON schema's type as one short phrase: `integer >= 1`, `flat | hierarchical`."""
    if "enum" in spec:
        return " | ".join(str(v) for v in spec["enum"])
    if "const" in spec:
        return str(spec["const"])
    if "anyOf" in spec:
        return " | ".join(_type(s) for s in spec["anyOf"])
    kind = str(spec.get("type", "any"))
    if kind == "null":
        return "none"
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if kind == "object":
        return "mapping"
    bounds = [
        f"{sign} {spec[word]:g}"
        for word, sign in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        )
        if word in spec
    ]
    return " ".join([kind, ", ".join(bounds)]) if bounds else kind
