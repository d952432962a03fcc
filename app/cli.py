"""The `trainstack` command line.

Start-up laziness (documented exception to module-level imports): the modules that import
pulumi and the providers (the plan engine, the Automation API) load inside the commands that
need them, so `trainstack stacks` and `--help` answer at once."""

from __future__ import annotations

import atexit
import gc
import json
import sys
from pathlib import Path
from typing import Any

import click

from trainstack.app.console import PROGRAM, clear_progress, fail, problem_objects, progress
from trainstack.app.deploy.placeholders import placeholders
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names, stacks_dir
from trainstack.app.metrics.cli import metrics
from trainstack.app.ops.cli import COMMANDS
from trainstack.app.status.cli import status
from trainstack.core.errors import TrainstackError, describe

FORMATS = click.Choice(["table", "json", "markdown"])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trainstack", message="%(prog)s %(version)s")
def main() -> None:
    """Deploy GPU training recipes on GKE: plan offline, or drive Pulumi."""
    # At exit the interpreter's last collections walk every object a plan made (the providers'
    # classes, the engine's outputs): about 0.6 s of a plan's 3 s, with nothing left to free for
    # a process that is ending. Freezing them first skips that walk; files are already closed.
    atexit.unregister(gc.freeze)  # once, however often `main` runs in one process
    atexit.register(gc.freeze)


@main.command("stacks")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def stacks_command(fmt: str) -> None:
    """List the stacks (stacks/Pulumi.<stack>.yaml)."""
    if not stacks_dir().is_dir():
        fail(f"no trainstack project here: no {stacks_dir()} (run in the project, or set TRAINSTACK_ROOT)")
    if fmt == "json":
        click.echo(json.dumps(stack_names()))
        return
    for name in stack_names():
        click.echo(name)


def _chosen(stacks: tuple[str, ...], all_stacks: bool) -> list[str]:
    """The stacks a command runs on: those named, or every stack with --all."""
    names = stack_names() if all_stacks else list(stacks)
    if not names:
        fail("name a stack (or pass --all); known stacks: " + ", ".join(stack_names()))
    return names


def _failed(problems: dict[str, str]) -> None:
    """Exit 2 naming every stack that failed, each with its problem, after all were tried."""
    if problems:
        fail(f"{len(problems)} stack(s) failed:\n" + "\n".join(problems.values()))


@main.command("validate")
@click.argument("stacks", nargs=-1)
@click.option("--all", "all_stacks", is_flag=True, help="Validate every stack; report every problem.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@PROGRAM
def validate_command(stacks: tuple[str, ...], all_stacks: bool, fmt: str, program: Path | None) -> None:
    """Check each STACK's configuration: every rule, then the custom resources it renders (offline,
    under the mock engine) against their CRD schemas. Nothing is created. With --program, STACK is
    a stack of that program (default its only one), checked by running it offline."""
    if program is not None:
        from trainstack.app.plan.program_cli import validate_program  # start-up laziness

        validate_program(program, stacks, fmt)
        return
    from trainstack.app.plan.engine import run  # start-up laziness

    reports: dict[str, dict[str, Any]] = {}
    problems: dict[str, str] = {}
    for stack in progress(_chosen(stacks, all_stacks), "validating"):
        try:
            raw = raw_stack_config(stack)
            rendered = run(stack, raw)
        except TrainstackError as exc:
            problems[stack] = str(exc)
            reports[stack] = {"valid": False, "problems": problem_objects(exc)}
            continue
        reports[stack] = _validated(raw, rendered.context, rendered.outputs)
        reports[stack]["warnings"] += [describe(p) for p in placeholders(raw)]
    if fmt == "json":
        click.echo(json.dumps(reports, indent=2))
        if problems:
            sys.exit(2)
        return
    for stack, report in reports.items():
        if report["valid"]:
            _echo_valid(stack, report)
    _failed(problems)


def _validated(raw: dict[str, Any], ctx: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    """What `validate` reports of a valid stack (of a fleet: its workers and queues)."""
    from trainstack.app.deploy import stack_file  # start-up laziness (pydantic models, the providers)
    from trainstack.workloads import fit

    kind = stack_file.kind(raw)
    if kind is stack_file.FLEET:
        return {"valid": True, "workers": [w.name for w in ctx.stack_file.fleet.workers], "queues": outputs.get("queues") or {}, "warnings": []}
    machine = ctx.machine
    pools = getattr(ctx.stack_file, "pools", [])  # a platform's; a workload stack has none of its own
    report: dict[str, Any] = {
        "valid": True,
        "nodes": ctx.gpu_nodes,
        "machineType": machine.name,
        "gpus": machine.gpus(ctx.gpu_nodes),
        "gpudirect": machine.gpudirect.value,
        "queue": ctx.local_queue,
        "pools": [{"name": p.name, "nodes": p.max_nodes, "machineType": p.machine_type, "capacity": p.capacity} for p in pools],
        # a zone the catalog's table does not know (a workload stack makes no pools of its own)
        "warnings": kind.warnings(ctx.stack_file),
    }
    if ctx.workload is not None:
        result = fit.estimate(ctx.workload, machine)
        report["gpuMemory"] = fit.summary(result)
        report["warnings"] += fit.warnings(result, ctx.workload, machine)
    return report


def _echo_valid(stack: str, report: dict[str, Any]) -> None:
    if "workers" in report:
        click.echo(
            f"{stack}: valid (a fleet of {len(report['workers'])} workers; queues: "
            + "; ".join(f"{q} on {', '.join(w)}" for q, w in report["queues"].items())
            + ")"
        )
        return
    click.echo(f"{stack}: valid ({report['nodes']} x {report['machineType']}, {report['gpus']} GPUs, GPUDirect {report['gpudirect']}, queue {report['queue']})")
    if len(report["pools"]) > 1:
        click.echo(
            "  GPU pools, in the order their queues try them: "
            + ", ".join(f"{p['name']} ({p['nodes']} x {p['machineType']}, {p['capacity']})" for p in report["pools"])
        )
    if "gpuMemory" in report:
        figures = report["gpuMemory"]
        click.echo(f"  GPU memory: about {figures['total']} of {figures['gpu_memory']} GB per GPU, {figures['headroom']} GB to spare after headroom")
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)


@main.command("plan")
@click.argument("stacks", nargs=-1)
@click.option("--all", "all_stacks", is_flag=True, help="Plan every stack in one interpreter.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default build/plans/<stack>).")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@PROGRAM
def plan_command(stacks: tuple[str, ...], all_stacks: bool, out: Path | None, fmt: str, program: Path | None) -> None:
    """Render each STACK offline under the mock engine: plan.json, manifests/ and a summary. A
    stack that fails is reported after the others are planned. With --program, STACK is a stack
    of that program (default its only one)."""
    if program is not None:
        from trainstack.app.plan.program_cli import plan_program  # start-up laziness

        plan_program(program, stacks, out, fmt)
        return
    names = _chosen(stacks, all_stacks)
    if out is not None and len(names) > 1:
        fail("--out takes one stack; with several, each goes to build/plans/<stack>")
    from trainstack.app.plan.plan import render  # start-up laziness
    from trainstack.app.plan.report import describe

    problems: dict[str, str] = {}
    for name in progress(names, "planning"):
        try:
            plan = render(name, raw_stack_config(name))
        except TrainstackError as exc:
            problems[name] = str(exc)
            continue
        target = out or project_root() / "build" / "plans" / name
        plan.write(target)
        clear_progress()
        click.echo(describe(plan, target, fmt))
    _failed(problems)


# Command groups that live beside the code they drive.
for _command in (*COMMANDS, metrics, status):
    main.add_command(_command)


if __name__ == "__main__":
    main()
