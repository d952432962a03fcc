"""The `trainstack` command line.

Start-up laziness (documented exception to module-level imports): the modules that import
pulumi and the providers (the plan engine, the Automation API) load inside the commands that
need them, so `trainstack stacks` and `--help` answer at once."""

from __future__ import annotations

import atexit
import gc
from pathlib import Path

import click
from trainstack.app.console import fail
from trainstack.app.ops.cli import COMMANDS
from trainstack.app.reports.metrics_cli import metrics
from trainstack.app.stacks import project_root, raw_stack_config, stack_names
from trainstack.core.errors import TrainstackError
from trainstack.core.fleet import FleetStackConfig
from trainstack.workloads import fit

FORMATS = click.Choice(["table", "json", "markdown"])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Deploy GPU training recipes on GKE: plan offline, or drive Pulumi."""
    # At exit the interpreter's last collections walk every object a plan made (the providers'
    # classes, the engine's outputs): about 0.6 s of a plan's 3 s, with nothing left to free for
    # a process that is ending. Freezing them first skips that walk; files are already closed.
    atexit.unregister(gc.freeze)  # once, however often `main` runs in one process
    atexit.register(gc.freeze)


@main.command("stacks")
def stacks_command() -> None:
    """List the stacks (stacks/Pulumi.<stack>.yaml)."""
    for name in stack_names():
        click.echo(name)


@main.command("validate")
@click.argument("stack")
def validate_command(stack: str) -> None:
    """Check a stack's configuration: every rule, then the custom resources it renders (offline,
    under the mock engine) against their CRD schemas. Nothing is created."""
    from trainstack.app.plan.engine import run  # start-up laziness

    try:
        rendered = run(stack, raw_stack_config(stack))
    except TrainstackError as exc:
        fail(str(exc))
    ctx = rendered.context
    if isinstance(ctx.config, FleetStackConfig):
        queues = rendered.outputs.get("queues") or {}
        click.echo(f"{stack}: valid (a fleet of {len(ctx.config.fleet.workers)} workers; queues: " + "; ".join(f"{q} on {', '.join(w)}" for q, w in queues.items()) + ")")
        return
    machine = ctx.machine
    click.echo(
        f"{stack}: valid ({ctx.gpu_nodes} x {machine.name}, {machine.gpus(ctx.gpu_nodes)} GPUs, "
        f"GPUDirect {machine.gpudirect.value}, queue {ctx.local_queue})"
    )
    pools = getattr(ctx.config, "pools", [])  # a platform's; a workload stack has none of its own
    if len(pools) > 1:
        click.echo("  GPU pools, in the order their queues try them: " + ", ".join(f"{p.name} ({p.max_nodes} x {p.machine_type}, {p.capacity})" for p in pools))
    if ctx.workload is not None:
        result = fit.estimate(ctx.workload, machine)
        figures = fit.summary(result)
        click.echo(f"  GPU memory: about {figures['total']} of {figures['gpu_memory']} GB per GPU, {figures['headroom']} GB to spare after headroom")
        if not result.fits:
            click.echo(f"warning: {fit.misfit(result, ctx.workload, machine)}", err=True)


@main.command("plan")
@click.argument("stacks", nargs=-1)
@click.option("--all", "all_stacks", is_flag=True, help="Plan every stack in one interpreter.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default build/plans/<stack>).")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def plan_command(stacks: tuple[str, ...], all_stacks: bool, out: Path | None, fmt: str) -> None:
    """Render STACK offline under the mock engine: plan.json, manifests/ and a summary."""
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
    from trainstack.app.plan.plan import render  # start-up laziness
    from trainstack.app.plan.report import describe

    for name, raw in raws.items():
        try:
            plan = render(name, raw)
        except TrainstackError as exc:
            fail(str(exc))
        target = out or project_root() / "build" / "plans" / name
        plan.write(target)
        click.echo(describe(plan, target, fmt))


# Command groups that live beside the code they drive.
for _command in (*COMMANDS, metrics):
    main.add_command(_command)


if __name__ == "__main__":
    main()
