"""The `trainstack` command line. Heavy modules (pulumi, the providers) load inside the commands
that need them, so `trainstack stacks` and `trainstack validate` answer at once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from trainstack.errors import TrainstackError

FORMATS = click.Choice(["table", "json", "markdown"])


def fail(message: str) -> NoReturn:
    """One clear line (or block) on stderr and exit code 2: bad input, nothing was created."""
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Deploy GPU training recipes on GKE: plan offline, or drive Pulumi."""


@main.command("stacks")
def stacks_command() -> None:
    """List the stacks (stacks/Pulumi.<stack>.yaml)."""
    from trainstack.app.stacks import stack_names

    for name in stack_names():
        click.echo(name)


@main.command("validate")
@click.argument("stack")
def validate_command(stack: str) -> None:
    """Check a stack's configuration only (no engine, no resources)."""
    from trainstack.app.plan.engine import validate_offline
    from trainstack.app.stacks import raw_stack_config

    try:
        config = validate_offline(stack, raw_stack_config(stack)).config
    except TrainstackError as exc:
        fail(str(exc))
    pool = config.gpu_pool
    click.echo(
        f"{stack}: valid ({pool.max_nodes} x {pool.machine_type}, {pool.max_nodes * pool.machine.gpus_per_node} GPUs, "
        f"GPUDirect {pool.machine.gpudirect.value}, queue {config.local_queue})"
    )


@main.command("plan")
@click.argument("stacks", nargs=-1)
@click.option("--all", "all_stacks", is_flag=True, help="Plan every stack in one interpreter.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default build/plans/<stack>).")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def plan_command(stacks: tuple[str, ...], all_stacks: bool, out: Path | None, fmt: str) -> None:
    """Render STACK offline under the mock engine: plan.json, manifests/ and a summary."""
    from trainstack.app.stacks import project_root, raw_stack_config, stack_names

    names = stack_names() if all_stacks else list(stacks)
    if not names:
        fail("name a stack (or pass --all); known stacks: " + ", ".join(stack_names()))
    if out is not None and len(names) > 1:
        fail("--out takes one stack; with several, each goes to build/plans/<stack>")
    raws = {}
    for name in names:
        try:
            raws[name] = raw_stack_config(name)
        except TrainstackError as exc:
            fail(str(exc))
    from trainstack.app.plan.plan import render
    from trainstack.app.plan.report import describe

    for name, raw in raws.items():
        try:
            plan = render(name, raw)
        except TrainstackError as exc:
            fail(str(exc))
        target = out or project_root() / "build" / "plans" / name
        plan.write(target)
        click.echo(describe(plan, target, fmt))


def _add_groups() -> None:
    """Command groups that live beside the code they drive."""
    from trainstack.app.ops.cli import COMMANDS
    from trainstack.app.reports.metrics_cli import metrics

    for command in (*COMMANDS, metrics):
        main.add_command(command)


_add_groups()


if __name__ == "__main__":
    main()
