"""`metrics mfu` and `metrics goodput`: the report modules on the command line.

Every failure prints one `Error: ...` line to stderr and exits 2.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import click
import yaml

from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.metrics import goodput as goodput_report
from trainstack.app.metrics import mfu as mfu_report
from trainstack.core import catalog
from trainstack.core import memory as memory_report
from trainstack.core.errors import ReportError, TrainstackError
from trainstack.core.models import MODELS


class Failure(click.ClickException):
    """A one-line error with exit status 2."""

    exit_code = 2


def _table(rows: list[tuple[str, str]]) -> str:
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value}" for label, value in rows)


@click.group("metrics")
def metrics() -> None:
    """Training reports: MFU from a NeMo log, goodput from a job's event log, GPU memory fit."""


def _stack_figures(name: str) -> dict[str, Any]:
    """MFU inputs a stack's config gives (None where it sets nothing)."""
    from trainstack.app.plan.engine import (
        load_stack,  # start-up laziness: the engine imports pulumi
    )
    from trainstack.workloads import launchers  # start-up laziness: imports the providers

    ctx = load_stack(name)
    workload, machine = ctx.workload, ctx.machine
    if workload is None:
        raise ReportError(f"stack {name!r} is a platform: it has no workload to measure")
    return {
        "model": workload.model,
        "batch_size": launchers.global_batch(workload, machine),
        "seq_len": launchers.training(workload, machine).seq_length,
        "accelerators": machine.gpus(workload.nodes),
        "accelerator_type": machine.gpu.name,
        "precision": workload.precision,
    }


@metrics.command("mfu")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--stack", help="Read model, batch, sequence, GPUs and precision from this stack.")
@click.option("--model", help=f"One of: {', '.join(sorted(MODELS))}.")
@click.option("--batch-size", type=click.IntRange(min=1), help="Global batch size (samples a step).")
@click.option("--seq-len", type=click.IntRange(min=1), help="Sequence length (tokens a sample).")
@click.option("--accelerators", type=click.IntRange(min=1), help="GPUs in the run.")
@click.option("--accelerator-type", type=click.Choice(sorted(catalog.GPUS)))
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8"]), help="Peak to compare with [stack's, else bf16].")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True, help="Logged steps skipped first.")
@click.option("--last-step", type=click.IntRange(min=0), help="Last step averaged (inclusive); 30 = upstream's window.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def mfu_command(log: Path, stack: str | None, warmup: int, last_step: int | None, fmt: str, **options: Any) -> None:
    """MFU, TFLOPS and tokens/s per GPU from a dllogger.json or NeMo text LOG.

    Explicit options override the values read with --stack.
    """
    try:
        figures = _stack_figures(stack) if stack else {}
        figures.update({k: v for k, v in options.items() if v is not None})
        missing = [f"--{k.replace('_', '-')}" for k in ("model", "batch_size", "seq_len", "accelerators", "accelerator_type") if figures.get(k) is None]
        if missing:
            raise Failure(f"missing {', '.join(missing)} (give them, or a --stack that sets them)")
        window = mfu_report.steady_step_time(mfu_report.read_step_times(log), warmup, last_step)
        result = mfu_report.compute_mfu(
            window.mean_s,
            figures["model"],
            figures["batch_size"],
            figures["seq_len"],
            figures["accelerators"],
            figures["accelerator_type"],
            figures.get("precision") or "bf16",
        )
    except TrainstackError as exc:
        raise Failure(str(exc)) from None
    if result.mfu > 1:
        click.echo("warning: MFU above 100%; check the model, batch size, sequence length and GPU count", err=True)
    if fmt == "json":
        click.echo(json.dumps({**dataclasses.asdict(result), "steps_averaged": dataclasses.asdict(window)}, indent=2))
        return
    click.echo(
        _table(
            [
                ("model", f"{result.model} on {result.num_gpus} x {result.gpu}, {result.precision}"),
                ("step time", f"{result.step_time_s:.3f} s (mean of steps {window.first_step}-{window.last_step}, {window.count} steps)"),
                ("tokens/s per GPU", f"{result.tokens_per_s_per_gpu:,.1f}"),
                ("TFLOPS per GPU", f"{result.tflops_per_gpu:.1f}"),
                ("MFU", f"{result.mfu:.1%} of {result.peak_tflops:g} peak TFLOPS"),
            ]
        )
    )


def _show(value: float | int | None, unit: str = "", digits: int = 2) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}{unit}" if isinstance(value, float) else f"{value}{unit}"


@metrics.command("goodput")
@click.argument("events", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--reference-step-time",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    help="Seconds a step takes in an undisturbed run (upstream uses 45 on a3ultra 405B).",
)
@click.option("--jobset", help="Read the log <jobset>-goodput from Cloud Logging instead of EVENTS.")
@click.option("--project", help="The project whose Cloud Logging holds the log (with --jobset).")
@click.option("--lookback-days", type=click.FloatRange(min=0, min_open=True), default=7.0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def goodput_command(events: Path | None, reference_step_time: float, jobset: str | None, project: str | None, lookback_days: float, fmt: str) -> None:
    """Goodput from an EVENTS file (JSON array or JSON Lines of Cloud Logging entries)."""
    if (events is None) == (jobset is None):
        raise Failure("give either an EVENTS file or --jobset (with --project)")
    if jobset and not project:
        raise Failure("--jobset needs --project")
    try:
        if events:
            report = goodput_report.read_goodput(events, reference_step_time)
        else:
            assert jobset is not None and project is not None  # one of EVENTS and --jobset, and --jobset with --project (above)
            parsed, warnings = goodput_report.events_from_entries(goodput_report.fetch_entries(jobset, project, lookback_days))
            report = goodput_report.compute_goodput(parsed, reference_step_time, warnings)
    except TrainstackError as exc:
        raise Failure(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(dataclasses.asdict(report), indent=2))
        return
    click.echo(
        _table(
            [
                ("total events", _show(report.total_events)),
                ("job starts", _show(report.job_starts)),
                ("checkpoints loaded", _show(report.checkpoints_loaded)),
                ("checkpoints saved", _show(report.checkpoints_saved)),
                ("total runtime", _show(report.total_runtime_h, " h")),
                ("min loaded step", _show(report.min_loaded_step)),
                ("max saved step", _show(report.max_saved_step)),
                ("step progress", _show(report.step_progress)),
                ("effective time", _show(report.effective_time_h, f" h at {report.reference_step_time_s:g} s/step")),
                ("goodput", _show(report.goodput_pct, "%", 1)),
            ]
        )
    )
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)


def _with_sets(raw: dict[str, Any], sets: tuple[str, ...]) -> dict[str, Any]:
    """`raw` with each `workload.KEY=VALUE` (VALUE read as YAML, KEY dotted) set under trainstack:workload."""
    out = copy.deepcopy(raw)
    for item in sets:
        key, sep, value = item.partition("=")
        path = key.split(".")
        if not sep or path[0] != "workload" or len(path) < 2:
            raise Failure(f"--set {item!r}: must be workload.KEY=VALUE, such as workload.zeroStage=1")
        node = out.setdefault("trainstack:workload", {})
        for step in path[1:-1]:
            node = node.setdefault(step, {})
            if not isinstance(node, dict):
                raise Failure(f"--set {item!r}: {step} is not an object")
        node[path[-1]] = yaml.safe_load(value)
    return out


@metrics.command("memory")
@click.argument("stack", required=False)
@click.option("--set", "sets", multiple=True, metavar="workload.KEY=VALUE", help="What if: change a workload key (repeatable).")
@click.option("--params", type=click.FloatRange(min=1), help="Without a stack: the model's weights (model states only).")
@click.option("--data-parallel", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--zero-stage", type=click.IntRange(0, 3), default=0, show_default=True)
@click.option("--precision", type=click.Choice(list(memory_report.PRECISIONS)), default="bf16", show_default=True)
@click.option("--accelerator-type", type=click.Choice(sorted(catalog.GPUS)), help="Without a stack: the GPU to fit on.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def memory_command(
    stack: str | None,
    sets: tuple[str, ...],
    params: float | None,
    data_parallel: int,
    zero_stage: int,
    precision: str,
    accelerator_type: str | None,
    fmt: str,
) -> None:
    """GPU memory per GPU: of STACK's workload (with --set what-ifs), or of a model of --params
    weights (model states only). Decimal GB."""
    from trainstack.workloads import fit  # start-up laziness: imports the providers

    if stack is None and params is None:
        raise Failure("name a STACK, or give --params for a model without a stack")
    if stack is not None:
        from trainstack.app.plan.engine import (
            validate_offline,  # start-up laziness: the engine imports pulumi
        )

        raw = _with_sets(raw_stack_config(stack), sets)
        raw["trainstack:workload"] = {**(raw.get("trainstack:workload") or {}), "memoryCheck": "off"}
        try:
            ctx = validate_offline(stack, raw)
        except TrainstackError as exc:
            raise Failure(str(exc)) from None
        if ctx.workload is None:
            raise Failure(f"stack {stack!r} is a platform: it has no workload")
        result = fit.estimate(ctx.workload, ctx.machine)
    else:
        assert params is not None
        gpu = catalog.GPUS[accelerator_type].memory_bytes if accelerator_type else None
        result = memory_report.model_states(params, data_parallel, zero_stage, precision, gpu, headroom=fit.HEADROOM)
    figures = fit.summary(result)
    if fmt == "json":
        click.echo(json.dumps(figures, indent=2, sort_keys=True))
        return
    rows = [(key, _show(value, "" if key == "fits" else " GB")) for key, value in figures.items()]
    click.echo(_table(rows))
