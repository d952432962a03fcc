"""Model FLOPS utilization (MFU) of a NeMo training run, from its step-time log.

Inputs, in the order a report reads them:

1. Step times. `read_step_times` accepts either
   - a NeMo dllogger log (`dllogger/rank-0/dllogger.json`): JSON objects, each optionally
     prefixed with `DLLL `, either one per line or pretty-printed over several lines. Entries
     with `"type": "LOG"`, an integer `step` and a number at `data["train_step_timing in s"]`
     count; every other entry (METADATA, validation, garbage) is skipped; or
   - a NeMo text log, used only when no dllogger entry is found. A line (split at `\\n` and
     at the `\\r` progress bars redraw with) counts when it holds
     `train_step_timing in s=<seconds>` (or `: <seconds>`, NeMo 2.0's printer) and a step:
     `global_step=<n>` (`=5.000` and `: 5` both read as 5), else PyTorch Lightning's progress
     counter `<done>/<total> [`, which is 1-based, so the step is `done - 1`.
   A step logged twice keeps its last time (progress bars redraw a step several times).

2. The steady-state step time (`steady_step_time`): the mean over the logged steps after
   skipping the first `warmup` of them (default 10) and, when `last_step` is given, only up to
   that step number inclusive. NeMo numbers steps from 0, so `warmup=10, last_step=30` is the
   upstream tool's window of steps 10-30. Counting warm-up in logged steps, not step numbers,
   also skips the warm-up of a run resumed from a checkpoint.

3. FLOPs per token of a dense decoder-only transformer, training (forward + backward = 3x the
   forward pass), without activation recomputation:

       flops_per_token = 6 * N + 12 * L * h * s

   N is the number of weights in matrix multiplies: per layer the Q and output projections
   (2 h^2), the K and V projections (2 h * kv_heads * h / heads) and the MLP (2 h * ffn, or
   3 h * ffn when gated), plus the output (logit) projection V * h. Each weight costs
   2 FLOPs (multiply + add) per token forward and 4 backward: 6 N. The input embedding is a
   lookup, not a multiply, so an untied one is outside N (it is inside `ModelShape.params`).
   Attention scores Q K^T and the weighted sum over values cost 2 * s * h FLOPs each per
   token per layer forward, counted over the full (non-causal) s x s matrix as Megatron-LM's
   formula does: 3 * 4 * L * h * s = 12 L h s. Norms, biases, softmax and rotary embeddings
   (<0.5%) are left out. Per sample it is `flops_per_token * s`.

4. `compute_mfu`: tokens/s per GPU = GBS * s / step time / GPUs; achieved TFLOPS per GPU =
   tokens/s per GPU * flops_per_token / 1e12; MFU = that / the GPU's peak dense TFLOPS at the
   run's precision, from `trainstack.core.catalog`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from trainstack.core import catalog
from trainstack.core.errors import CatalogError, ReportError
from trainstack.core.models import ModelShape, model_shape

TIMING_KEY = "train_step_timing in s"


def model_spec(name: str) -> ModelShape:
    """The shape of model `name` (trainstack.core.models, the one table), else ReportError."""
    try:
        return model_shape(name)
    except CatalogError as exc:
        raise ReportError(str(exc)) from None


def gpu_spec(name: str) -> catalog.Gpu:
    """The catalog's record for accelerator `name`, else ReportError listing the known ones."""
    try:
        return catalog.GPUS[name.lower()]
    except KeyError:
        raise ReportError(f"unknown accelerator {name!r}; known: {', '.join(sorted(catalog.GPUS))}") from None


# ---------------------------------------------------------------------------------------------
# Step times

_JSON_START = re.compile(r"^[ \t]*(?:DLLL[ \t]+)?(?=\{)", re.MULTILINE)
_DECODER = json.JSONDecoder()
_NUMBER = r"(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
_TEXT_TIMING = re.compile(rf"train_step_timing in s\s*[=:]\s*{_NUMBER}")
_TEXT_STEP = re.compile(r"global_step\s*[=:]\s*(\d+)")
_TEXT_PROGRESS = re.compile(r"(\d+)/\d+\s*\[")


def _json_objects(text: str) -> Iterator[object]:
    """Each JSON value starting a line (after an optional `DLLL `), single- or multi-line."""
    pos = 0
    while match := _JSON_START.search(text, pos):
        try:
            value, pos = _DECODER.raw_decode(text, match.end())
        except json.JSONDecodeError:
            pos = match.end() + 1
            continue
        yield value


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _dllogger_times(text: str) -> dict[int, float]:
    times: dict[int, float] = {}
    for entry in _json_objects(text):
        if not isinstance(entry, dict) or entry.get("type") != "LOG":
            continue
        step, data = entry.get("step"), entry.get("data")
        if isinstance(step, int) and not isinstance(step, bool) and isinstance(data, dict):
            seconds = data.get(TIMING_KEY)
            if _is_number(seconds) and seconds > 0:
                times[step] = float(seconds)
    return times


def _text_times(text: str) -> dict[int, float]:
    times: dict[int, float] = {}
    for line in re.split(r"[\r\n]", text):
        if not (timing := _TEXT_TIMING.search(line)):
            continue
        if step := _TEXT_STEP.search(line):
            times[int(step.group(1))] = float(timing.group(1))
        elif progress := _TEXT_PROGRESS.search(line):
            times[int(progress.group(1)) - 1] = float(timing.group(1))
    return times


def parse_step_times(text: str, source: str = "log") -> dict[int, float]:
    """Step number -> seconds from dllogger JSON, else from NeMo text lines; ReportError if none."""
    times = _dllogger_times(text) or _text_times(text)
    if not times:
        raise ReportError(
            f"{source}: no training steps found; expected NeMo dllogger entries "
            f'("type": "LOG", a "step" and data["{TIMING_KEY}"]) or text lines with '
            f"'{TIMING_KEY}=<seconds>' and 'global_step=<n>'"
        )
    return times


def read_step_times(path: Path) -> dict[int, float]:
    """`parse_step_times` of the file at `path`."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_step_times(text, str(path))


@dataclass(frozen=True)
class StepTime:
    """The mean step time over the steady-state window `first_step`..`last_step` (`count` steps)."""

    mean_s: float
    first_step: int
    last_step: int
    count: int


def steady_step_time(times: dict[int, float], warmup: int = 10, last_step: int | None = None) -> StepTime:
    """Mean of `times` after the first `warmup` logged steps, up to `last_step` inclusive."""
    if warmup < 0:
        raise ReportError(f"warm-up must be 0 or more steps, not {warmup}")
    steps = sorted(times)
    if len(steps) <= warmup:
        raise ReportError(f"the log has {len(steps)} training steps, no more than the {warmup} warm-up steps skipped; lower the warm-up or run more steps")
    kept = [s for s in steps[warmup:] if last_step is None or s <= last_step]
    if not kept:
        raise ReportError(f"no step after warm-up is at or below last step {last_step}; steady-state steps start at {steps[warmup]}")
    return StepTime(sum(times[s] for s in kept) / len(kept), kept[0], kept[-1], len(kept))


# ---------------------------------------------------------------------------------------------
# MFU


@dataclass(frozen=True)
class MfuResult:
    """Throughput and MFU of one run; `mfu` is a fraction (0.35 = 35%)."""

    model: str
    global_batch_size: int
    seq_len: int
    num_gpus: int
    gpu: str
    precision: str
    step_time_s: float
    tokens_per_s_per_gpu: float
    tflops_per_gpu: float
    peak_tflops: float
    mfu: float


def compute_mfu(
    step_time_s: float,
    model: str,
    global_batch_size: int,
    seq_len: int,
    num_gpus: int,
    gpu: str,
    precision: str,
) -> MfuResult:
    """MFU of `num_gpus` `gpu`s training `model` at `global_batch_size` x `seq_len` tokens a step."""
    for label, value in (
        ("step time", step_time_s),
        ("global batch size", global_batch_size),
        ("sequence length", seq_len),
        ("GPU count", num_gpus),
    ):
        if value <= 0:
            raise ReportError(f"{label} must be positive, not {value}")
    spec, accelerator = model_spec(model), gpu_spec(gpu)
    peak = accelerator.peak(precision)
    tokens_per_s_per_gpu = global_batch_size * seq_len / step_time_s / num_gpus
    tflops = tokens_per_s_per_gpu * spec.flops_per_token(seq_len) / 1e12
    return MfuResult(
        model=spec.name,
        global_batch_size=global_batch_size,
        seq_len=seq_len,
        num_gpus=num_gpus,
        gpu=accelerator.name,
        precision=precision,
        step_time_s=step_time_s,
        tokens_per_s_per_gpu=tokens_per_s_per_gpu,
        tflops_per_gpu=tflops,
        peak_tflops=peak,
        mfu=tflops / peak,
    )
