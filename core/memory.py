"""Will it fit? Per-GPU memory of a training run: model states, activations and an allowance.

Foundation module: imports only the standard library and `trainstack.core.models` (itself standard
library and `trainstack.core.errors` only). Bytes are bytes;
`Estimate.as_json` reports decimal GB (1e9 bytes). The estimate is for the most loaded GPU: the
first pipeline stage (the input embedding, and the most micro-batches in flight).

Model states, bytes per parameter (Adam; w weights, g gradients, k optimizer state):

- ZeRO (Rajbhandari et al., 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
  Models", section 3.1 and Figure 1): mixed-precision Adam holds 2 (fp16 weights) + 2 (fp16 grads)
  + K = 12 (fp32 master weights, momentum, variance) = 16 bytes. Stage 1 shards the K bytes over
  the Nd data-parallel ranks, stage 2 the gradients too, stage 3 the weights too. Figure 1: 7.5B
  weights, Nd = 64: 120, 31.4, 16.6 and 1.9 GB for stages 0-3.
- Megatron-LM (NVIDIA/Megatron-LM docs/source/distrib_optimizer.md): non-distributed / distributed
  optimizer, d = data-parallel size: float16 param + float16 grads 20 / 4 + 16/d; float16 param +
  fp32 grads 18 / 6 + 12/d; fp32 param + fp32 grads 16 / 8 + 8/d. Its 20 is ZeRO's 16 plus an
  fp32 copy of the fp16 gradients the optimizer steps with (`fp32_grad_copy`). The distributed
  optimizer shards the optimizer-owned bytes and keeps weights and gradients whole: it is ZeRO
  stage 1 (`zero_stage=1`) over the data-parallel ranks. Megatron's data-parallel group for the
  optimizer includes the context-parallel ranks, so the shard count here is `data * context`.
- The model (`w`, `g`, `k`) from `Training`:
  w = 2 for bf16/fp16/fp8 with `master_weights` (Megatron/NeMo "O2", `megatron_amp_O2`; DeepSpeed
  fp16), else 4 (fp32 weights under autocast: NeMo without O2, or fp32 training);
  g = 4 with fp32 weights or `fp32_grads` (default for bf16/fp8: Megatron accumulates and reduces
  bf16 gradients in fp32, `grad_reduce_in_fp32`), else 2;
  k = 8 (fp32 momentum + variance) + 4 (fp32 master weights, when w = 2) + 4 (`fp32_grad_copy`,
  when g = 2). NeMo without O2 and with plain Adam: 4 + 4 + 8 = 16 bytes.
- Megatron-core's precision-aware optimizer (`use_precision_aware_optimizer`, Transformer Engine's
  FusedAdam; NVIDIA/Megatron-LM core_v0.13.0 megatron/core/optimizer/distrib_optimizer.py
  `_copy_model_grads_to_main_grads` hands the optimizer the 16-bit gradient shard itself as
  `decoupled_grad`, where the plain distributed optimizer casts it to an fp32 copy,
  `shard_model_grad.float()`): no `fp32_grad_copy`. Its OptimizerConfig's `store_param_remainders`
  (default True, with TE 2.1+) makes FusedAdam keep only the low 16 bits of each fp32 master weight
  of a bf16 weight, whose high 16 bits are the bf16 weight itself (NVIDIA/TransformerEngine
  f05f12c, 2.5, transformer_engine/pytorch/optimizers/fused_adam.py `store_param_remainders`, int16
  state): `master_remainders`, 2 bytes, not 4, for bf16 weights (TE ignores it for others).
- FP8 (Transformer Engine): weights, gradients and optimizer state are bf16's (the master copies
  stay fp32); TE also keeps an FP8 cast of each linear weight and its FP8 transpose across
  micro-batches (NVIDIA/TransformerEngine transformer_engine/pytorch/module/base.py, 1.x,
  `prepare_forward`: "Create persistent tensors for fp8 weights and their transposes only when fp8
  weight caching is used", which Megatron-core turns on by passing `is_first_microbatch`).
  Allowance: +2 bytes per transformer-layer weight, counted as weights, never sharded. Embeddings and the output layer run in bf16. Activations keep the 16-bit figures
  below (TE saves some linear inputs as FP8, so this overestimates a little).

Activations per transformer layer, bytes (Korthikanti et al., 2022, "Reducing Activation
Recomputation in Large Transformer Models", Table 2; s sequence, b micro-batch, h hidden, a heads,
t tensor parallel):

    no parallelism                    s b h (34 + 5 a s / h)
    tensor parallel                   s b h (10 + 24/t + 5 a s / (h t))
    tensor + sequence parallel        s b h / t (34 + 5 a s / h)
    tensor parallel + selective       s b h (10 + 24/t)
    tensor + sequence + selective     34 s b h / t
    full recomputation                2 s b h            (the layer input only)

The 5 a s / h term is the attention scores (softmax output, its dropout mask, their input to the
value product); selective recomputation drops it, and so does a fused/flash attention kernel, which
never stores them (`flash_attention`, default on: Transformer Engine / FlashAttention in NeMo 24+,
Megatron-core, PyTorch SDPA). Of the 34: 10 stay whole under tensor parallelism (two layer-norm
inputs 4, QKV and MLP inputs 2 + 2, two dropout masks 2); 24 shard (Q and K 4, V 2, output
projection input 2, MLP 16).

A model trained without dropout (`ModelShape.dropout` False: Llama 3) stores no dropout mask:
PyTorch's dropout returns its input untouched when p = 0, with no mask (pytorch/pytorch 92426d6
aten/src/ATen/native/Dropout.cpp `dropout`: the fused kernel, which returns a mask, only for
0 < p < 1, else `_dropout_impl`, which returns the input when p == 0; under torch.compile,
dec01e4 torch/_decomp/decompositions.py `dropout` takes native_dropout only when p != 0).
Megatron-core's bias-dropout-add calls that dropout (NVIDIA/Megatron-LM d98e8a6
megatron/core/fusions/fused_bias_dropout.py, jit-compiled with torch.compile, core_v0.13.0
megatron/core/jit.py), as does its embedding. So the two hidden masks (2 s b h of the 10), the
embedding's mask (s b h) and the scores' mask and dropout output (3 a s / h of the 5: the value
product then reads the softmax output itself) are not stored. Transformer Engine's fused
layer-norm + linear keeps both the norm's input and its output (NVIDIA/TransformerEngine v2.5
transformer_engine/pytorch/module/layernorm_linear.py saves `inputmat` and `ln_out`), so the
layer-norm and QKV / MLP inputs stay counted. The MLP's 16 assumes ffn = 4h: generalized here to 4 ffn / h, or
6 ffn / h for a gated MLP (two ffn-wide fc1 outputs and the ffn-wide fc2 input); grouped-query
attention scales K and V (2 + 2) by kv_heads / heads. Both reduce to Table 2 for GPT-3 shapes.
Full recomputation keeps Table 2's 2 s b h even with sequence parallelism (it would shard by t).
Context parallelism divides s by its size.

Per GPU (Korthikanti section 4.2.3; Narayanan et al., 2021, "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM", sections 2.2.1-2.2.2): with p pipeline stages of ceil(L/p)
layers, 1F1B keeps p micro-batches in flight on the first stage; the interleaved schedule with v
model chunks per stage multiplies that by 1 + (p - 1) / (p v). So the first stage holds
ceil(L/p) * p * (1 + (p-1)/(p v)) layers' activations (ceil(L/p) when p = 1). Section 4.3 adds
the embedding dropout mask (with dropout), s b h per in-flight micro-batch (/ t with sequence parallelism), and
with p = 1 the output layer: final layer-norm and output projection inputs 4 s b h (/ t with
sequence parallelism) and the fp32 logits for the loss 4 s b v / t. Megatron-LM's own estimate
(megatron/training/theoretical_memory_usage.py, "Table 2 of arxiv 2205.05198") does the same. A
1F1B pipeline with fewer micro-batches per step than p holds fewer: this estimate stays the upper
bound.

Allowance (`ALLOWANCE_BYTES`, 3 GB a GPU; an assumption, not a measurement): the CUDA context and
loaded kernels (~0.6 GB on H100 with CUDA 12 lazy loading), NCCL's buffers for the several
communicators a 3-D parallel job opens (NCCL_BUFFSIZE 4 MiB per channel and peer, up to 32
channels; ~2 GB), and cuBLAS / Transformer Engine workspaces (~0.4 GB; TE alone takes 32 MiB
per cuBLAS workspace on Hopper). None of it is in
PyTorch's allocator statistics. Allocator fragmentation and transient buffers (ZeRO-3
all-gathers, gradient buckets) are what `headroom` (default 10% of the GPU) is for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from trainstack.core.models import ModelShape

Precision = Literal["bf16", "fp16", "fp8", "fp32"]
Recompute = Literal["none", "selective", "full"]

PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8", "fp32")
RECOMPUTES: tuple[str, ...] = ("none", "selective", "full")
ALLOWANCE_BYTES = 3e9
FP8_WEIGHT_COPY_BYTES = 2  # FP8 cast + FP8 transpose of each transformer-layer weight
GB = 1e9


@dataclass(frozen=True)
class StateBytes:
    """Model-state bytes per parameter held by one GPU, after ZeRO sharding."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def bytes_per_param(
    precision: str,
    *,
    master_weights: bool = True,
    fp32_grads: bool | None = None,
    fp32_grad_copy: bool = False,
    master_remainders: bool = False,
    zero_stage: int = 0,
    shards: int = 1,
) -> StateBytes:
    """Adam's bytes per parameter (module docstring: w, g, k), sharded over `shards` ranks per ZeRO stage."""
    _check_precision(precision)
    _check_zero_stage(zero_stage)
    w = 2 if master_weights and precision != "fp32" else 4
    full_grads = w == 4 or (precision != "fp16" if fp32_grads is None else fp32_grads)
    g = 4 if full_grads else 2
    master = 0 if w == 4 else 2 if master_remainders and precision == "bf16" else 4
    k = 8 + master + (4 if g == 2 and fp32_grad_copy else 0)
    return StateBytes(
        weights=w / shards if zero_stage >= 3 else w,
        gradients=g / shards if zero_stage >= 2 else g,
        optimizer=k / shards if zero_stage >= 1 else k,
    )


@dataclass(frozen=True)
class Training:
    """How a model is trained, as far as memory goes.

    Attributes:
        tensor, pipeline, virtual_pipeline, data, context: parallel sizes (virtual_pipeline: model
            chunks per pipeline stage of the interleaved schedule, None for plain 1F1B).
        sequence_parallel: Megatron sequence parallelism (shards norms and dropouts by `tensor`).
        precision: the training precision; fp8 trains bf16 weights with FP8 GEMMs.
        zero_stage: 0 replicated optimizer; 1 optimizer state sharded over data x context ranks
            (Megatron's distributed optimizer, NeMo distributed_fused_adam, DeepSpeed ZeRO-1);
            2 gradients too (DeepSpeed ZeRO-2); 3 weights too (ZeRO-3, FSDP full shard).
        master_weights: 16-bit weights with fp32 master copies in the optimizer (NeMo/Megatron
            "O2", megatron_amp_O2; DeepSpeed fp16); False keeps fp32 weights (NeMo's default O1).
        fp32_grads: gradients held in fp32 (None: yes for bf16/fp8, no for fp16).
        fp32_grad_copy: the optimizer casts 16-bit gradients to an fp32 copy (Megatron's optimizers
            other than the precision-aware one).
        master_remainders: the optimizer keeps only the low 16 bits of each fp32 master weight of
            a bf16 weight (Megatron's precision-aware optimizer, store_param_remainders).
        recompute: activation recomputation: none, selective (attention scores), full (layers).
        flash_attention: a fused attention kernel that never stores the s x s scores.
        micro_batch, seq_length: sequences per micro-batch and tokens per sequence.
        offloaded_layers: layers of a stage whose activations wait in host memory, not the GPU's,
            until the backward pass (Megatron-core activation offloading; Megatron-Bridge
            `--activation_offload_layers`).
    """

    tensor: int = 1
    pipeline: int = 1
    virtual_pipeline: int | None = None
    data: int = 1
    context: int = 1
    sequence_parallel: bool = False
    precision: Precision = "bf16"
    zero_stage: int = 0
    master_weights: bool = True
    fp32_grads: bool | None = None
    fp32_grad_copy: bool = False
    master_remainders: bool = False
    recompute: Recompute = "none"
    flash_attention: bool = True
    micro_batch: int = 1
    seq_length: int = 2048
    offloaded_layers: int = 0

    def __post_init__(self) -> None:
        for name in ("tensor", "pipeline", "data", "context", "micro_batch", "seq_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.virtual_pipeline is not None and self.virtual_pipeline < 1:
            raise ValueError(f"virtual_pipeline must be at least 1 or None, not {self.virtual_pipeline}")
        _check_precision(self.precision)
        _check_zero_stage(self.zero_stage)
        if self.recompute not in RECOMPUTES:
            raise ValueError(f"recompute must be one of {', '.join(RECOMPUTES)}, not {self.recompute!r}")

    @property
    def gpus(self) -> int:
        return self.tensor * self.pipeline * self.data * self.context

    @property
    def shards(self) -> int:
        """Ranks the optimizer shards over: data-parallel x context-parallel."""
        return self.data * self.context


@dataclass(frozen=True)
class Estimate:
    """Bytes per GPU (most loaded GPU) and whether they fit.

    `params` is the weights the GPU holds before ZeRO sharding; `shape` is the model estimated
    (None for `model_states`). `headroom_bytes` is what is left under gpu_memory * (1 - headroom),
    negative when over; it and `fits` are None without a GPU size.
    """

    weights: float
    gradients: float
    optimizer: float
    activations: float
    allowance: float
    gpu_memory: float | None
    headroom: float = 0.1
    params: float = 0.0
    shape: ModelShape | None = field(default=None, repr=False, compare=False)

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.allowance

    @property
    def headroom_bytes(self) -> float | None:
        return None if self.gpu_memory is None else self.gpu_memory * (1 - self.headroom) - self.total

    @property
    def fits(self) -> bool | None:
        return None if self.gpu_memory is None else self.total <= self.gpu_memory * (1 - self.headroom)

    def as_json(self) -> dict[str, float | bool | None]:
        """Decimal GB, 2 decimals: weights, gradients, optimizer, activations, allowance, total, gpu_memory, fits."""
        parts = ("weights", "gradients", "optimizer", "activations", "allowance", "total")
        gb: dict[str, float | bool | None] = {k: round(getattr(self, k) / GB, 2) for k in parts}
        gpu = None if self.gpu_memory is None else round(self.gpu_memory / GB, 2)
        return {**gb, "gpu_memory": gpu, "fits": self.fits}


def model_states(
    params: float,
    data_parallel: int,
    zero_stage: int,
    precision: str,
    gpu_memory_bytes: float | None = None,
    *,
    master_weights: bool = True,
    fp32_grads: bool | None = None,
    fp32_grad_copy: bool = False,
    master_remainders: bool = False,
    headroom: float = 0.1,
) -> Estimate:
    """Weights, gradients and Adam state of `params` weights on one of `data_parallel` ranks (no activations, no allowance)."""
    if data_parallel < 1:
        raise ValueError(f"data_parallel must be at least 1, not {data_parallel}")
    per = bytes_per_param(
        precision,
        master_weights=master_weights,
        fp32_grads=fp32_grads,
        fp32_grad_copy=fp32_grad_copy,
        master_remainders=master_remainders,
        zero_stage=zero_stage,
        shards=data_parallel,
    )
    return Estimate(per.weights * params, per.gradients * params, per.optimizer * params, 0.0, 0.0, gpu_memory_bytes, headroom, params)


def stage_params(shape: ModelShape, training: Training) -> tuple[float, float]:
    """(transformer-layer weights, embedding weights) on the first pipeline stage's GPU.

    ceil(L/p) layers / t, plus the input embedding vocab x h / t; with p = 1 an untied output
    projection too. (With p > 1 the last stage holds the output projection, or the tied copy,
    and no more layers: the first stage is the largest.)
    """
    layers = math.ceil(shape.layers / training.pipeline) * shape.layer_params / training.tensor
    copies = 2 if training.pipeline == 1 and not shape.tied_embeddings else 1
    return layers, copies * shape.embedding_params / training.tensor


def layer_activation_bytes(shape: ModelShape, training: Training) -> float:
    """One transformer layer's stored activations for one micro-batch (Korthikanti Table 2, module docstring)."""
    s = training.seq_length / training.context
    b, h, a, t = training.micro_batch, shape.hidden, shape.heads, training.tensor
    sbh = s * b * h
    if training.recompute == "full":
        return 2 * sbh
    mlp = (6 if shape.gated_mlp else 4) * shape.ffn / h
    sharded = 4 + 4 * shape.kv_heads / shape.heads + mlp  # 24 for GPT-3 shapes
    replicated = 10 if shape.dropout else 8  # less the two hidden dropout masks
    scores = 0.0 if training.recompute == "selective" or training.flash_attention else (5 if shape.dropout else 2) * a * s / h
    if training.sequence_parallel:
        return sbh * (replicated + sharded + scores) / t
    return sbh * (replicated + (sharded + scores) / t)


def in_flight_micro_batches(training: Training) -> float:
    """Micro-batches whose activations the first stage holds: 1; p (1F1B); p (1 + (p-1)/(p v)) interleaved."""
    p, v = training.pipeline, training.virtual_pipeline
    if p == 1:
        return 1.0
    return p * (1 + (p - 1) / (p * v)) if v else float(p)


def activation_bytes(shape: ModelShape, training: Training) -> float:
    """The first stage's activations: its layers x in-flight micro-batches, plus Korthikanti 4.3's extras."""
    s = training.seq_length / training.context
    sbh = s * training.micro_batch * shape.hidden
    t = training.tensor
    sp = t if training.sequence_parallel else 1
    in_flight = in_flight_micro_batches(training)
    kept = max(math.ceil(shape.layers / training.pipeline) - training.offloaded_layers, 0)
    layers = kept * in_flight * layer_activation_bytes(shape, training)
    embedding_dropout = sbh * in_flight / sp if shape.dropout else 0.0
    output = 4 * sbh / sp + 4 * s * training.micro_batch * shape.vocab / t if training.pipeline == 1 else 0.0
    return layers + embedding_dropout + output


def estimate(
    shape: ModelShape,
    training: Training,
    gpu_memory_bytes: float | None,
    headroom: float = 0.1,
    allowance_bytes: float = ALLOWANCE_BYTES,
) -> Estimate:
    """Per-GPU memory of training `shape` as `training` says, on GPUs of `gpu_memory_bytes`."""
    if not 0 <= headroom < 1:
        raise ValueError(f"headroom must be a fraction in [0, 1), not {headroom}")
    layer_params, embedding_params = stage_params(shape, training)
    params = layer_params + embedding_params
    per = bytes_per_param(
        training.precision,
        master_weights=training.master_weights,
        fp32_grads=training.fp32_grads,
        fp32_grad_copy=training.fp32_grad_copy,
        master_remainders=training.master_remainders,
        zero_stage=training.zero_stage,
        shards=training.shards,
    )
    fp8 = FP8_WEIGHT_COPY_BYTES * layer_params if training.precision == "fp8" else 0.0
    return Estimate(
        weights=per.weights * params + fp8,
        gradients=per.gradients * params,
        optimizer=per.optimizer * params,
        activations=activation_bytes(shape, training),
        allowance=allowance_bytes,
        gpu_memory=gpu_memory_bytes,
        headroom=headroom,
        params=params,
        shape=shape,
    )


# A change to trainstack:workload, as key paths (`parallelism.tensor`) and the values they take.
Changes = Mapping[str, object]


def advice(result: Estimate, training: Training, accepts: Callable[[Changes], bool] = lambda changes: True) -> list[tuple[str, str]]:
    """Knobs that would lower `result`, each alone, largest saving first, as (workload key, what
    it does and saves; "(fits)" when that alone is enough). The keys are trainstack:workload's;
    a knob whose change `accepts` refuses (the framework cannot take it) is not offered."""
    if result.fits is not False:
        return []
    options: list[tuple[str, str, Training, dict[str, object]]] = []
    sharded = training.shards > 1
    if training.zero_stage == 0 and sharded:
        text = f"1: the distributed optimizer (ZeRO-1 over {training.shards} data-parallel ranks)"
        options.append(("zeroStage", text, replace(training, zero_stage=1), {"zeroStage": 1}))
    if 1 <= training.zero_stage < 3 and sharded:
        stage = training.zero_stage + 1
        text = f"{stage}: shard {'gradients' if stage == 2 else 'weights'} too (DeepSpeed or FSDP)"
        options.append(("zeroStage", text, replace(training, zero_stage=stage), {"zeroStage": stage}))
    if not training.master_weights and training.precision != "fp32":
        stage = max(training.zero_stage, 1 if sharded else 0)
        text = f"true: 16-bit weights with fp32 master copies (megatron_amp_O2){', with zeroStage 1' if stage else ''}"
        options.append(
            (
                "masterWeights",
                text,
                replace(training, master_weights=True, zero_stage=stage),
                {"masterWeights": True, **({"zeroStage": stage} if stage != training.zero_stage else {})},
            )
        )
    shape = result.shape
    if shape is not None:
        if training.recompute == "none" and not training.flash_attention:
            options.append(("recompute", "selective", replace(training, recompute="selective"), {"recompute": "selective"}))
        if training.recompute != "full":
            options.append(("recompute", "full", replace(training, recompute="full"), {"recompute": "full"}))
        if training.tensor > 1 and not training.sequence_parallel:
            options.append(("parallelism.sequenceParallel", "true", replace(training, sequence_parallel=True), {"parallelism.sequenceParallel": True}))
        if training.data % 2 == 0 and shape.heads % (2 * training.tensor) == 0 and training.tensor < 8:
            options.append(
                (
                    "parallelism.tensor",
                    f"{2 * training.tensor} (data parallel {training.data // 2})",
                    replace(training, tensor=2 * training.tensor, data=training.data // 2),
                    {"parallelism.tensor": 2 * training.tensor},
                )
            )
        if training.data % 2 == 0 and 2 * training.pipeline <= shape.layers:
            options.append(
                (
                    "parallelism.pipeline",
                    f"{2 * training.pipeline} (data parallel {training.data // 2})",
                    replace(training, pipeline=2 * training.pipeline, data=training.data // 2),
                    {"parallelism.pipeline": 2 * training.pipeline},
                )
            )
        if training.micro_batch > 1:
            options.append(
                (
                    "microBatchSize",
                    f"{training.micro_batch // 2} (more gradient accumulation)",
                    replace(training, micro_batch=training.micro_batch // 2),
                    {"microBatchSize": training.micro_batch // 2},
                )
            )
    savings = []
    for key, text, alternative, changes in options:
        after = _again(result, alternative)
        if (saved := result.total - after.total) > 0 and accepts(changes):
            savings.append((saved, key, f"{text}: -{saved / GB:.1f} GB{' (fits)' if after.fits else ''}"))
    return [(key, text) for _, key, text in sorted(savings, key=lambda x: -x[0])]


def _again(result: Estimate, training: Training) -> Estimate:
    if result.shape is not None:
        return estimate(result.shape, training, result.gpu_memory, result.headroom, result.allowance)
    return model_states(
        result.params,
        training.shards,
        training.zero_stage,
        training.precision,
        result.gpu_memory,
        master_weights=training.master_weights,
        fp32_grads=training.fp32_grads,
        fp32_grad_copy=training.fp32_grad_copy,
        master_remainders=training.master_remainders,
        headroom=result.headroom,
    )


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")


def _check_zero_stage(stage: int) -> None:
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, not {stage}")
