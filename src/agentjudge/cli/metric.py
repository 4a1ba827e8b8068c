"""`agentjudge metric list`: the catalogue of metrics a case can use."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from agentjudge.cases.loading import DEFAULT_CONFIG, find_root
from agentjudge.cli.options import CatalogueJson

if TYPE_CHECKING:
    from agentjudge.cases.loading import EvalConfig

metric_app = typer.Typer(help="Discover the metrics a case can use.", no_args_is_help=True)


@metric_app.command("list")
def metric_list(as_json: CatalogueJson = False) -> int:
    """List the deterministic checks, modifiers, judges and this project's metrics."""
    from agentjudge.cases.loading import catalog, load_config

    root = find_root()
    config: EvalConfig | None = None
    if root is not None and (root / DEFAULT_CONFIG).is_file():
        config = load_config(root / DEFAULT_CONFIG)
    entries = catalog(config)
    if as_json:
        typer.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    console = Console(soft_wrap=True)
    for title, rows in (
        ("Checks (expect.<name>)", entries["checks"]),
        ("Modifiers (expect.<name>)", entries["modifiers"]),
    ):
        console.print(f"[bold]{title}[/bold]")
        for row in rows:
            console.print(f"  [cyan]{row['name']}[/cyan]  {row['description']}")
    console.print("[bold]Judges (judge.<name>)[/bold]")
    for row in entries["judges"]:
        mark = " (quality)" if row["name"] in entries["quality_metrics"] else ""
        console.print(
            f"  [cyan]{row['name']}[/cyan]{mark}  scale {row['scale']:g}  {row['description']}"
            f"  [dim]{row['source']}[/dim]"
        )
    if entries["custom_metrics"]:
        console.print("[bold]Custom metrics (custom_metrics)[/bold]")
        for row in entries["custom_metrics"]:
            console.print(
                f"  [cyan]{row['name']}[/cyan]  {row['callable']}  threshold {row['threshold']:g}"
            )
    return 0
