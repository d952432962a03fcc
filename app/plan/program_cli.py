"""`plan --program` and `validate --program` (app/cli.py): a Pulumi program of your own, from its folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from trainstack.app.console import fail, problem_objects
from trainstack.app.plan.plan import Plan
from trainstack.app.plan.program_dir import Job, run_program, stack_of
from trainstack.app.plan.report import describe as summary
from trainstack.core.errors import TrainstackError
from trainstack.workloads import fit


def _run(folder: Path, stacks: tuple[str, ...], verb: str, *, json_problems: bool = False) -> tuple[Plan, list[Job]]:
    """What `validate --program` and `plan --program` open with: one stack of the program (several
    are refused), the one named or its only one, run offline. A program that does not run is bad
    input (exit 2), its problems as JSON under `json_problems` (`validate --format json`)."""
    if len(stacks) > 1:
        fail(f"--program {verb} one stack of the program at a time")
    name = stacks[0] if stacks else None
    try:
        return run_program(folder, name)
    except TrainstackError as exc:
        if json_problems:
            try:
                stack = stack_of(folder, name)
            except TrainstackError:
                fail(str(exc))
            click.echo(json.dumps({stack: {"valid": False, "problems": problem_objects(exc)}}, indent=2))
            sys.exit(2)
        fail(str(exc))


def validate_program(folder: Path, stacks: tuple[str, ...], fmt: str) -> None:
    """`validate --program FOLDER [STACK]`: every component's rules, by running the program offline."""
    plan, jobs = _run(folder, stacks, "validates", json_problems=fmt == "json")
    report: dict[str, Any] = {
        "valid": True,
        "resources": len(plan.resources),
        "gpus": plan.cost.gpus,
        "usdPerHour": plan.cost.max_usd,
        "warnings": plan.warnings(),
    }
    if plan.memory is not None:  # as `validate` reports a stack's job (app/cli.py _validated)
        report["gpuMemory"] = plan.memory
        report["warnings"] += [w for workload, machine in jobs for w in fit.warnings(fit.estimate(workload, machine), workload, machine)]
    if fmt == "json":
        click.echo(json.dumps({plan.stack: report}, indent=2))
        return
    click.echo(f"{plan.stack}: valid ({report['resources']} resources, {report['gpus']} GPUs, est. ${report['usdPerHour']:,.2f}/h)")
    if "gpuMemory" in report:
        figures = report["gpuMemory"]
        click.echo(f"  GPU memory: about {figures['total']} of {figures['gpu_memory']} GB per GPU, {figures['headroom']} GB to spare after headroom")
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)


def plan_program(folder: Path, stacks: tuple[str, ...], out: Path | None, fmt: str) -> None:
    """`plan --program FOLDER [STACK]`: a program of your own, planned as the project's stacks are."""
    plan, _ = _run(folder, stacks, "plans")
    target = out or folder / "build" / "plans" / plan.stack
    plan.write(target)
    click.echo(summary(plan, target, fmt))
