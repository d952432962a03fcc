"""`metrics mfu`, `goodput`, `memory` and `timeline`: the report modules on the command line.

Every failure prints one `Error: ...` line to stderr and exits 2; `metrics memory` exits 4 when
the job does not fit.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import click
import yaml

from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.metrics import goodput as goodput_report
from trainstack.app.metrics import memory as memory_input
from trainstack.app.metrics import mfu as mfu_report
from trainstack.app.metrics import timeline as timeline_report
from trainstack.app.metrics.preflight import preflight_command
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
    """Training reports: MFU from a NeMo log, goodput from a job's event log, GPU memory fit, time to first step, a preflight log judged."""


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
        for depth in range(1, len(path)):
            if not isinstance(node, dict):
                raise Failure(f"--set {item!r}: {'.'.join(path[:depth])} is not an object")
            node = node.setdefault(path[depth], {}) if depth < len(path) - 1 else node
        node[path[-1]] = yaml.safe_load(value)
    return out


@metrics.command("memory")
@click.argument("stack", required=False)
@click.option("--set", "sets", multiple=True, metavar="workload.KEY=VALUE", help="What if: change a workload key (repeatable).")
@click.option("--from-json", "from_json", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="A model and setup as a JSON entry (README).")
@click.option("--params", type=click.FloatRange(min=1), help="Without a stack: the model's weights (model states only).")
@click.option("--model", help=f"Without a stack: a known shape ({', '.join(sorted(MODELS))}).")
@click.option("--layers", type=click.IntRange(min=1), help="Transformer layers (with --model: replaces its count).")
@click.option("--hidden", type=click.IntRange(min=1))
@click.option("--ffn", type=click.IntRange(min=1))
@click.option("--heads", type=click.IntRange(min=1))
@click.option("--kv-heads", type=click.IntRange(min=1), help="Key/value heads [--heads].")
@click.option("--vocab", type=click.IntRange(min=1))
@click.option("--gated-mlp/--no-gated-mlp", default=None)
@click.option("--tied-embeddings/--no-tied-embeddings", default=None)
@click.option("--dropout", type=click.FloatRange(0, 1), help="Hidden and attention dropout probability [0].")
@click.option("--position", type=click.Choice(["rope", "learned_absolute"]))
@click.option("--seq-length", type=click.IntRange(min=1), help="Tokens a sequence [the model's context].")
@click.option("--micro-batch-size", type=click.IntRange(min=1))
@click.option("--tensor", type=click.IntRange(min=1))
@click.option("--pipeline", type=click.IntRange(min=1))
@click.option("--data-parallel", type=click.IntRange(min=1))
@click.option("--zero-stage", type=click.IntRange(0, 3))
@click.option("--precision", type=click.Choice(list(memory_report.PRECISIONS)))
@click.option("--recompute", type=click.Choice(list(memory_report.RECOMPUTES)))
@click.option("--fp8-params", "fp8_params", is_flag=True, default=None, help="With --precision fp8: FP8 primary weights (Megatron fp8_param_gather).")
@click.option("--attention", type=click.Choice(sorted(memory_input.ATTENTION)), help="flash (sdpa, te) or unfused (local) [flash].")
@click.option("--softmax-fp32", is_flag=True, default=None, help="Unfused attention's softmax in fp32.")
@click.option("--unfused-activation", "unfused_activation", is_flag=True, default=None, help="The unfused SwiGLU/GeLU.")
@click.option("--framework", type=click.Choice(memory_input.FRAMEWORKS), help="The training framework [megatron-core].")
@click.option("--optimizer", type=click.Choice(sorted(memory_report.OPTIMIZERS)), help="The optimizer's implementation [te-fused-adam].")
@click.option("--accelerator-type", type=click.Choice(sorted(catalog.GPUS)), help="Without a stack: the GPU to fit on.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def memory_command(
    stack: str | None,
    sets: tuple[str, ...],
    from_json: Path | None,
    params: float | None,
    model: str | None,
    accelerator_type: str | None,
    fmt: str,
    **options: Any,
) -> None:
    """GPU memory per GPU, decimal GB: of STACK's workload (with --set what-ifs), of a model and
    setup (--from-json FILE, or --model / the shape options with the setup options), or of a model
    of --params weights (model states only). The peak is the largest of the step's phases (forward,
    backward, optimizer step); the total adds what lives outside PyTorch's allocator and
    fragmentation. Exit 0 fits (or no GPU given), 4 does not fit, 2 bad input."""
    from trainstack.workloads import fit  # start-up laziness: imports the providers

    sources = [name for name, given in (("STACK", stack), ("--from-json", from_json), ("--params", params), ("--model", model)) if given is not None]
    shape_given = any(options[k] is not None for k in ("hidden", "ffn", "heads", "vocab"))
    if len(sources) > 1:
        raise Failure(f"give one of {', '.join(sources)}")
    if not sources and not shape_given:
        raise Failure("name a STACK, or give --from-json FILE, --model or the shape (--layers, --hidden, ...), or --params")
    if sets and stack is None:
        raise Failure("--set changes a STACK's workload: name the STACK")
    gpu = catalog.GPUS[accelerator_type].memory_bytes if accelerator_type else None
    try:
        if stack is not None:
            result = _stack_estimate(stack, sets)
        elif params is not None:
            setup = {k: options[k] for k in ("data_parallel", "zero_stage", "precision")}
            result = memory_report.model_states(
                params, setup["data_parallel"] or 1, setup["zero_stage"] or 0, setup["precision"] or "bf16", gpu, headroom=fit.HEADROOM
            )
        else:
            shape, training = memory_input.read_entry(from_json) if from_json else _from_options(model, options)
            result = memory_report.estimate(shape, training, gpu, fit.HEADROOM)
    except TrainstackError as exc:
        raise Failure(str(exc)) from None
    figures = {**fit.summary(result), "peak_in": result.peak_phase.what}
    if fmt == "json":
        click.echo(json.dumps(figures, indent=2, sort_keys=True))
    else:
        click.echo(_table(_memory_rows(figures)))
    if result.fits is False:
        sys.exit(4)


def _stack_estimate(stack: str, sets: tuple[str, ...]) -> memory_report.Estimate:
    from trainstack.app.plan.engine import (
        validate_offline,  # start-up laziness: the engine imports pulumi
    )
    from trainstack.workloads import fit  # start-up laziness: imports the providers

    raw = _with_sets(raw_stack_config(stack), sets)
    workload = raw.get("trainstack:workload")
    if isinstance(workload, dict):  # anything else is refused by the validation below, as `validate` refuses it
        raw["trainstack:workload"] = {**workload, "memoryCheck": "off"}
    ctx = validate_offline(stack, raw)
    if ctx.workload is None:
        raise ReportError(f"stack {stack!r} is a platform: it has no workload")
    return fit.estimate(ctx.workload, ctx.machine)


def _from_options(model: str | None, options: dict[str, Any]) -> tuple[Any, memory_report.Training]:
    sizes = {k: options[k] for k in ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "gated_mlp", "tied_embeddings", "dropout", "position")}
    unfused = options["unfused_activation"]
    setup = {
        "seq": options["seq_length"],
        "micro_batch": options["micro_batch_size"],
        "tensor_parallel": options["tensor"],
        "pipeline_parallel": options["pipeline"],
        "data_parallel": options["data_parallel"],
        "zero_stage": options["zero_stage"],
        "precision": options["precision"],
        "recompute": options["recompute"],
        "attention": options["attention"],
        "softmax_fp32": options["softmax_fp32"],
        "bias_activation_fusion": None if unfused is None else not unfused,
        "framework": options["framework"] or "megatron-core",
        "optimizer": options["optimizer"] or "te-fused-adam",
        "fp8_param_gather": options["fp8_params"],
    }
    return memory_input.from_options(model, sizes, setup)


def _memory_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    phases = ", ".join(f"{k.removeprefix('peak_').replace('_', ' ')} {v:.2f}" for k, v in figures.items() if k.startswith("peak_") and k != "peak_in")
    verdict = {True: "fits", False: "does not fit", None: "no GPU given (--accelerator-type)"}[figures["fits"]]
    rows = [
        (
            "states",
            f"{figures['states']:.2f} GB (weights {figures['weights']:.2f}, gradients {figures['gradients']:.2f}, optimizer {figures['optimizer']:.2f})",
        ),
        ("activations", f"{figures['activations']:.2f} GB stored at the end of the forward"),
        ("peak", f"{figures['peak']:.2f} GB in the {figures['phase']} ({figures['peak_in']})"),
        ("phases", f"{phases} GB" if phases else "n/a"),
        ("allowances", f"{figures['allowance']:.2f} GB outside the allocator, {figures['fragmentation']:.2f} GB fragmentation"),
        ("total", f"{figures['total']:.2f} GB"),
    ]
    if figures["persistent"]:
        rows.insert(2, ("persistent", f"{figures['persistent']:.2f} GB (Megatron's attention buffer)"))
    if figures["gpu_memory"] is not None:
        rows.append(("GPU", f"{figures['gpu_memory']:.2f} GB, {figures['headroom']:.2f} GB to spare after headroom"))
    rows.append(("verdict", verdict))
    return rows


@metrics.command("timeline")
@click.argument("dump", type=click.Path(exists=True, path_type=Path))
@click.option("--log", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="The leader's log, from `kubectl logs --timestamps`.")
@click.option("--jobset", help="Measure this JobSet's pods (default: every pod of a JobSet).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def timeline_command(dump: Path, log: Path | None, jobset: str | None, fmt: str) -> None:
    """Time to first step, per phase, from DUMP (`kubectl get nodes,pods,events -A -o json`, a file
    or a directory of them) and the leader's --log."""
    try:
        measured = timeline_report.from_files(dump, log, jobset)
    except TrainstackError as exc:
        raise Failure(str(exc)) from None
    click.echo(json.dumps(measured.to_dict(), indent=2) if fmt == "json" else measured.to_table())


metrics.add_command(preflight_command)
