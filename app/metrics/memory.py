"""`metrics memory` without a stack: a model shape and a training setup, read from a JSON entry
(an entry of the memfit measurements' configs.json with its shape inline, plus the framework and
the optimizer's implementation) or built from command-line options, into trainstack.core.memory's
ModelShape and Training."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainstack.core import memory
from trainstack.core.errors import CatalogError, ReportError
from trainstack.core.models import ModelShape, model_shape

# trainstack:workload.framework values and the Megatron-core family, whose unfused attention keeps
# the persistent baddbmm buffer (memory.Training.attention_buffer).
FRAMEWORKS = ("megatron-core", "megatron-bridge", "nemo2", "nemo-megatron", "deepspeed", "litgpt", "pytorch")
MEGATRON = frozenset({"megatron-core", "megatron-bridge", "nemo2", "nemo-megatron"})
# Attention as the measurements name it (sdpa: PyTorch's flash kernel; local: Megatron-core's unfused).
ATTENTION = {"flash": True, "sdpa": True, "te": True, "unfused": False, "local": False}
SHAPE_KEYS = ("hidden", "ffn", "heads", "kv_heads", "vocab")
_KINDS: dict[type, str] = {Mapping: "an object", str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _get(entry: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any = None, *, where: str = "") -> Any:
    """entry[key] of `kind` (an int is not a bool), `default` where absent and allowed."""
    name = f"{where}{key}"
    if key not in entry:
        if default is None:
            raise ReportError(f"{name}: missing (required)")
        return default
    value = entry[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise ReportError(f"{name} = {value!r}: must be {' or '.join(_KINDS[k] for k in kinds)}")
    return value


def shape_of(raw: Mapping[str, Any], layers: int, seq: int) -> ModelShape:
    """A ModelShape from a memfit `shapes` object (dropout as a probability, position as a name)."""
    sizes = {k: _get(raw, k, int, where="shape.") for k in SHAPE_KEYS}
    for key, value in sizes.items():
        if value < 1:
            raise ReportError(f"shape.{key} = {value}: must be at least 1")
    if sizes["heads"] % sizes["kv_heads"] or sizes["hidden"] % sizes["heads"]:
        raise ReportError(f"shape.kv_heads = {sizes['kv_heads']}: heads ({sizes['heads']}) must be a multiple of it and divide hidden ({sizes['hidden']})")
    dropout = _get(raw, "dropout", (int, float), 0.0, where="shape.")
    position = _get(raw, "position", str, "learned_absolute", where="shape.")
    return ModelShape(
        name=str(raw.get("estimator_model", "custom")),
        layers=layers,
        hidden=sizes["hidden"],
        ffn=sizes["ffn"],
        heads=sizes["heads"],
        kv_heads=sizes["kv_heads"],
        vocab=sizes["vocab"],
        gated_mlp=_get(raw, "gated_mlp", bool, False, where="shape."),
        tied_embeddings=_get(raw, "tied_embeddings", bool, False, where="shape."),
        max_seq_length=seq,
        dropout=dropout > 0,
        rotary=position == "rope",
    )


def from_entry(entry: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> tuple[ModelShape, memory.Training]:
    """The shape and training of a memfit configuration entry (configs.json's `defaults` under it)."""
    if not isinstance(entry, Mapping):
        raise ReportError("the JSON must be an object: a configuration entry")
    entry = {**(defaults or {}), **entry}
    layers, seq = _get(entry, "layers", int), _get(entry, "seq", int)
    micro = _get(entry, "micro_batch", int, 1)
    for key, value in (("layers", layers), ("seq", seq), ("micro_batch", micro)):
        if value < 1:
            raise ReportError(f"{key} = {value}: must be at least 1")
    framework = _get(entry, "framework", str)
    if framework not in FRAMEWORKS:
        raise ReportError(f"framework = {framework!r}: must be one of {', '.join(FRAMEWORKS)}")
    attention = _get(entry, "attention", str, "flash")
    if attention not in ATTENTION:
        raise ReportError(f"attention = {attention!r}: must be one of {', '.join(ATTENTION)}")
    flash = ATTENTION[attention]
    tensor, pipeline, data = (_get(entry, k, int, 1) for k in ("tensor_parallel", "pipeline_parallel", "data_parallel"))
    distributed = _get(entry, "distributed_optimizer", bool, False)
    zero = _get(entry, "zero_stage", int, 1 if distributed else 0)
    precision = _get(entry, "precision", str, "bf16")
    try:
        training = memory.Training(
            tensor=tensor,
            pipeline=pipeline,
            data=data,
            precision=precision,
            zero_stage=zero,
            fp32_grads=_get(entry, "grad_reduce_in_fp32", bool, True),
            fp32_grad_copy=False,
            recompute=_get(entry, "recompute", str, "none"),
            flash_attention=flash,
            attention_buffer=not flash and framework in MEGATRON,
            softmax_fp32=_get(entry, "softmax_fp32", bool, False),
            fused_activation=_get(entry, "bias_activation_fusion", bool, True),
            optimizer=_get(entry, "optimizer", str),
            fp8_params=_get(entry, "fp8_param_gather", bool, False),
            micro_batch=micro,
            seq_length=seq,
        )
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    return shape_of(_get(entry, "shape", Mapping), layers, seq), training


def read_entry(path: Path) -> tuple[ModelShape, memory.Training]:
    """from_entry of the JSON object in `path`."""
    try:
        entry = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not JSON ({exc})") from None
    return from_entry(entry)


def from_options(model: str | None, sizes: Mapping[str, Any], setup: Mapping[str, Any]) -> tuple[ModelShape, memory.Training]:
    """A shape (a known `model`, its layers replaceable, or the sizes given, as a memfit `shapes`
    object names them) and a setup (from_entry's keys) from command-line options, None where not given."""
    given = {k: v for k, v in sizes.items() if v is not None}
    if model is not None:
        try:
            base = model_shape(model)
        except CatalogError as exc:
            raise ReportError(str(exc)) from None
        layers = given.pop("layers", base.layers)
        if given:
            raise ReportError(f"--model {model} gives the shape: drop {', '.join('--' + k.replace('_', '-') for k in sorted(given))}")
        raw: dict[str, Any] = {k: getattr(base, k) for k in SHAPE_KEYS}
        raw.update(gated_mlp=base.gated_mlp, tied_embeddings=base.tied_embeddings, dropout=0.1 if base.dropout else 0.0)
        raw.update(position="rope" if base.rotary else "learned_absolute", estimator_model=base.name)
        seq = base.max_seq_length
    else:
        missing = [k for k in ("layers", *SHAPE_KEYS) if k not in given and k != "kv_heads"]
        if missing:
            raise ReportError(f"give --model, or the shape: missing {', '.join('--' + k.replace('_', '-') for k in missing)}")
        layers = given.pop("layers")
        raw = {"kv_heads": given.get("heads"), **given}
        seq = None
    entry = {"seq": seq, **{k: v for k, v in setup.items() if v is not None}, "layers": layers, "shape": raw}
    if entry["seq"] is None:
        raise ReportError("give --seq-length (a shape of your own has no context length)")
    return from_entry(entry)
