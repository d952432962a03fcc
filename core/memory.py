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
  Allowance: +2 bytes per transformer-layer weight, counted as weights, not sharded by the
  distributed optimizer; sharded over the data-parallel ranks under Megatron-FSDP's full sharding
  (zeroStage 3), whose model-weight buffer, FP8 raw data and transpose buffer alike, is distributed
  for `optim_grads_params` and gathered a layer at a time (NVIDIA/Megatron-LM d98e8a6
  megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py
  `_init_each_parameter_group_buffers`, `is_model_weight_buffer_distributed`). Embeddings and the output layer run in bf16.
- FP8 primary weights (`fp8_params`: Megatron `fp8_param_gather`, which Megatron-Bridge 9c9dd84
  src/megatron/bridge/training/mixed_precision.py `bf16_with_fp8_current_scaling_mixed` sets):
  each transformer-layer weight is held as FP8 data alone, 1 byte, in place of the 16-bit weight
  and its FP8 cast and transpose (the fp32 master copy stays in the optimizer), and ZeRO-3 gathers
  it in FP8. Counted as Megatron-FSDP holds it: its buffers keep a transpose only for MXFP8
  tensors (NVIDIA/Megatron-LM d98e8a6 megatron/core/distributed/fsdp/src/megatron_fsdp/
  mixed_precision.py `fp8_need_transpose_data`), the per-tensor FP8 transpose being a cache it
  discards (`fp8_discard_transpose_cache`).
- FP8 activations: each Transformer Engine linear layer saves the FP8 cast of its GEMM input for
  the weight gradient, 1 byte an element, not its 16-bit input: `Linear` quantizes its input and
  saves that, one usage (row- or column-wise) kept (NVIDIA/TransformerEngine v2.12 5671fd3
  transformer_engine/pytorch/module/linear.py `_Linear.forward`: `inputmat = input_quantizer(...)`,
  `update_usage(rowwise_usage=False, columnwise_usage=True)`, `saved_inputmat = inputmat`; v1.8
  the same with delayed scaling: `saved_inputmat_t`, the FP8 transpose, or the FP8 cast under
  sequence parallelism), and `LayerNormLinear`'s norm writes an FP8 output, which it saves beside
  its 16-bit input (v2.12 layernorm_linear.py `with_quantized_norm`, `prepare_for_saving(inputmat,
  ..., ln_out, ...)`; v1.8 `ln_out_dtype = torch.uint8`). So under FP8: the QKV and fc1 inputs (the
  norms' outputs) and the fc2 input are 1 byte; the output projection saves an FP8 copy of the
  attention output, which a fused attention kernel also keeps in 16 bits (+1 byte); the norms'
  inputs, Q, K, V, the attention output and the activation function's input (Megatron's fused
  bias-SwiGLU/GeLU saves its 16-bit input unless `activation_func_fp8_input_store`, default False,
  NVIDIA/Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py, which Megatron-Bridge
  9c9dd84 does not set) stay 16-bit, attention itself running in bf16 (Megatron-Bridge's
  `fp8_dot_product_attention` defaults False and no recipe here sets it). The same for delayed and current scaling; MXFP8's per-32-element scale (1/32
  byte more) is not counted: no shipped recipe uses it.

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

The implementation's own tensors (Megatron-core core_v0.19.0, 5be9626, and what it saves through
PyTorch's autograd); these generalize Table 2, which they reduce to for GPT-3 shapes:
- Rotary position embeddings (`ModelShape.rotary`): megatron/core/models/common/embeddings/
  rope_utils.py `_apply_rotary_pos_emb_bshd` returns new Q and K tensors, which attention saves,
  while the fused QKV output stays alive through V (a view of it): + 2 (1 + kv/a) s b h / t with
  flash attention. Unfused attention under grouped-query attention saves the rotated Q and the
  K and V expanded to every head (`repeat_interleave` in dot_product_attention.py): 2 + 4 in
  place of the QKV output.
- Unfused attention (dot_product_attention.py, fusions/fused_softmax.py `forward_torch_softmax`):
  the softmax output, 2 a s / h (bf16); with `attention_softmax_in_fp32` the fp32 softmax output
  (4) and the 16-bit copy the value product reads (2); with dropout its mask (1) and output (2),
  which the value product reads instead. Megatron-core's `DotProductAttention` also keeps a
  persistent global buffer for its `baddbmm` input, 2 b (a/t) s^2 bytes (`persistent`).
- The unfused SwiGLU (mlp.py `glu`, `bias_activation_fusion` off) saves the SiLU output and
  `x_linear + glu_linear_offset`, two ffn-wide tensors more than the fused one (4 ffn / h).

The peak, by phase (each the most the allocator holds at once, for the most loaded GPU):
- forward: the stored activations, and at the loss the 16-bit logits beside their fp32 copy
  (tensor_parallel/cross_entropy.py `calculate_logits_max` casts with `.float()`): 2 s b v / t.
  With unfused attention, the last layer's forward holds its scores (the `baddbmm` output, alive
  until `DotProductAttention.forward` returns), their fp32 copy with fp32 softmax, and its
  probabilities even where selective recomputation will not keep them.
- backward: at the loss, the cross-entropy's fp32 gradient is computed in place in the saved
  softmax, and autograd casts it to the logits' 16-bit dtype beside it (2 s b v / t, the same
  figure as the forward's). At the last layer, the logits are gone and its activations are held
  whole: stored, or rematerialised under recomputation (full: the layer; selective: its
  attention). Its unfused attention backward holds 8 b (a/t) s^2 bytes: the in-place mask on
  the scores' view (`attention_mask_func`, `masked_fill_`) puts a CopySlices node in the graph,
  whose backward holds the incoming gradient, a base-sized copy, a clone of the slice and the
  masked gradient at once (pytorch/pytorch 1679682 torch/csrc/autograd/functions/tensor.cpp
  `CopySlices::apply`); with fp32 softmax the mask is on a fresh fp32 copy instead, and the fp32
  softmax output, the gradient's fp32 copy and the softmax's fp32 gradient peak at 12 b (a/t) s^2.
  The MLP's backward holds the gradients of the fc2 input and the fc1 output and fc1's 16-bit
  weight gradient.
- ZeRO-3 (`zero3`): during the forward and the backward, the gathered 16-bit (or fp32) weights of
  the layer computing and those fetched ahead, and in the backward the unsharded gradients
  waiting for their reduce-scatter. PyTorch FSDP lets two all-gathers be in flight
  (pytorch/pytorch e6401a2 torch/distributed/fsdp/_limiter_utils.py `_FreeEventQueue`,
  `_max_num_inflight_all_gathers = 2`, under `limit_all_gathers`): two layers' weights, and a
  layer's gradient (none yet at the loss's backward). Megatron-FSDP sizes both from
  `suggested_communication_unit_size`, at least 1e9 elements or twice a layer (core_v0.19.0
  megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py: a prefetch of half of it
  beside the layer computing; param_and_grad_buffer.py `wait_for_previous_grad_reduce` lets a
  reduce-scatter queue of all of it wait). DeepSpeed's ZeRO-3 is counted as PyTorch FSDP (its
  prefetch and live-parameter limits are not modelled).
- optimizer step: the activations are gone; the step's own temporaries (`OPTIMIZERS`). PyTorch's
  AdamW with foreach (its default on CUDA) takes `torch._foreach_sqrt(device_exp_avg_sqs)`, a new
  tensor for every state tensor: 4 bytes a parameter the optimizer holds (pytorch/pytorch c15fcf4
  torch/optim/adamw.py `_multi_tensor_adamw`, chosen by `_default_to_fused_or_foreach`); its
  for-loop form takes `exp_avg_sq.sqrt() / bias_correction2_sqrt`, two temporaries of one tensor
  (`_single_tensor_adamw`). Fused multi-tensor Adams update in place: torch's `fused=True`
  (`_fused_adamw`), Transformer Engine's FusedAdam (NVIDIA/TransformerEngine d0067d0
  transformer_engine/pytorch/optimizers/fused_adam.py, `multi_tensor_applier`), apex's, which
  Megatron-core uses when TE is absent (megatron/core/optimizer/__init__.py; torch's AdamW only
  without either), and DeepSpeed's (deepspeedai/DeepSpeed edaa722 deepspeed/ops/adam/
  fused_adam.py; deepspeed/runtime/engine.py builds it for "Adam"/"AdamW" unless torch_adam).

Allowances, measured (NVIDIA H200, PyTorch 2.11, megatron-core 0.19.2, world size 1; the data is
in tests/data/memfit, its method in its README): `OUTSIDE_ALLOCATOR_BYTES`, what nvidia-smi counts
beyond the allocator's reserved memory (CUDA context, kernels, library workspaces), the same
2.59 GB on every run; `FRAGMENTATION`, reserved less peak allocated as a fraction of the peak, the
largest measured for each attention kind (flash 3.3%, unfused 7.8%). Multi-rank NCCL buffers
were not measured (world size 1): the headroom (5%, the estimate's tolerated underestimate) is
what covers them.

Not modelled (departures): Megatron's fused scaled-masked softmax kernel (apex / Megatron's C++
extension, absent from the measurements; unfused attention is counted as the PyTorch softmax
path), `gradient_accumulation_fusion` (which writes weight gradients into the fp32 main
gradients without the 16-bit copy counted in the MLP backward), pipeline stages after the
first, and CPU-offloaded optimizer state.
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
# Optimizer implementations: bytes a parameter the step allocates beyond the states, as
# (per parameter the optimizer holds, per element of its largest tensor) (module docstring).
OPTIMIZERS: dict[str, tuple[float, float]] = {
    "torch-adamw-foreach": (4.0, 0.0),
    "torch-adamw-for-loop": (0.0, 8.0),
    "torch-adamw-fused": (0.0, 0.0),
    "te-fused-adam": (0.0, 0.0),
    "apex-fused-adam": (0.0, 0.0),
    "deepspeed-fused-adam": (0.0, 0.0),
}
ZERO3: tuple[str, ...] = ("torch-fsdp", "megatron-fsdp")
OUTSIDE_ALLOCATOR_BYTES = 2_593_980_416.0  # measured: nvidia-smi used - reserved (tests/data/memfit)
FRAGMENTATION = {"flash": 0.033, "unfused": 0.078}  # measured: (reserved - peak) / peak, the largest
HEADROOM = 0.05  # the underestimate the measurement test tolerates
ALLOWANCE_BYTES = OUTSIDE_ALLOCATOR_BYTES
FP8_WEIGHT_COPY_BYTES = 2  # FP8 cast + FP8 transpose of each transformer-layer weight
FP8_BYTES = 1  # an FP8 element: a primary FP8 weight, or a GEMM input TE saves under FP8
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
        attention_buffer: unfused attention keeps Megatron-core's persistent `baddbmm` buffer.
        softmax_fp32: unfused attention's softmax in fp32 (`attention_softmax_in_fp32`).
        fused_activation: the fused SwiGLU/GeLU that saves only its input (`bias_activation_fusion`).
        optimizer: the optimizer's implementation, a key of OPTIMIZERS.
        zero3: with zero_stage 3, how weights are gathered: torch-fsdp (PyTorch FSDP) or
            megatron-fsdp (Megatron-core's Megatron-FSDP).
        micro_batch, seq_length: sequences per micro-batch and tokens per sequence.
        offloaded_layers: layers of a stage whose activations wait in host memory, not the GPU's,
            until the backward pass (Megatron-core activation offloading; Megatron-Bridge
            `--activation_offload_layers`).
        fp8_params: with fp8, the transformer-layer weights are FP8 primary weights (Megatron's
            `fp8_param_gather`), not 16-bit weights with FP8 copies.
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
    attention_buffer: bool = False
    softmax_fp32: bool = False
    fused_activation: bool = True
    optimizer: str = "te-fused-adam"
    zero3: str = "torch-fsdp"
    micro_batch: int = 1
    seq_length: int = 2048
    offloaded_layers: int = 0
    fp8_params: bool = False

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
        if self.zero3 not in ZERO3:
            raise ValueError(f"zero3 must be one of {', '.join(ZERO3)}, not {self.zero3!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, not {self.optimizer!r}")
        if self.fp8_params and self.precision != "fp8":
            raise ValueError(f"fp8_params needs precision fp8, not {self.precision!r}")

    @property
    def gpus(self) -> int:
        return self.tensor * self.pipeline * self.data * self.context

    @property
    def shards(self) -> int:
        """Ranks the optimizer shards over: data-parallel x context-parallel."""
        return self.data * self.context


@dataclass(frozen=True)
class Phase:
    """The most the allocator holds during one phase of a step, and what besides the states."""

    name: str
    bytes: float
    what: str


@dataclass(frozen=True)
class Estimate:
    """Bytes per GPU (most loaded GPU) and whether they fit.

    `params` is the weights the GPU holds before ZeRO sharding; `shape` is the model estimated
    (None for `model_states`). `phases` are the step's peaks (forward, backward, optimizer step);
    `peak` is the largest, and `total` adds the allowance outside the allocator and
    `fragmentation` (a fraction of the peak). `headroom_bytes` is what is left under
    gpu_memory * (1 - headroom), negative when over; it and `fits` are None without a GPU size.
    """

    weights: float
    gradients: float
    optimizer: float
    activations: float
    allowance: float
    gpu_memory: float | None
    headroom: float = HEADROOM
    params: float = 0.0
    shape: ModelShape | None = field(default=None, repr=False, compare=False)
    persistent: float = 0.0
    phases: tuple[Phase, ...] = ()
    fragmentation: float = 0.0

    @property
    def states(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def peak_phase(self) -> Phase:
        """The phase with the most allocated (the stored total where no phase is estimated)."""
        stored = Phase("stored", self.states + self.persistent + self.activations, "states and activations")
        return max(self.phases, key=lambda p: p.bytes) if self.phases else stored

    @property
    def peak(self) -> float:
        return self.peak_phase.bytes

    @property
    def fragmentation_bytes(self) -> float:
        return self.fragmentation * self.peak

    @property
    def total(self) -> float:
        return self.peak + self.allowance + self.fragmentation_bytes

    @property
    def limit(self) -> float | None:
        return None if self.gpu_memory is None else self.gpu_memory * (1 - self.headroom)

    @property
    def headroom_bytes(self) -> float | None:
        return None if self.limit is None else self.limit - self.total

    @property
    def fits(self) -> bool | None:
        return None if self.limit is None else self.total <= self.limit

    def as_json(self) -> dict[str, float | bool | str | None]:
        """Decimal GB, 2 decimals: the states, activations, peak (and its phase), allowances,
        total, gpu_memory, fits."""
        parts = ("weights", "gradients", "optimizer", "states", "activations", "persistent", "peak", "allowance", "fragmentation_bytes", "total")
        gb: dict[str, float | bool | str | None] = {k.removesuffix("_bytes"): round(getattr(self, k) / GB, 2) for k in parts}
        phases = {f"peak_{p.name.replace(' ', '_')}": round(p.bytes / GB, 2) for p in self.phases}
        gpu = None if self.gpu_memory is None else round(self.gpu_memory / GB, 2)
        return {**gb, **phases, "phase": self.peak_phase.name, "gpu_memory": gpu, "fits": self.fits}


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
    headroom: float = HEADROOM,
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


def _gemm_input_bytes(training: Training) -> int:
    """Bytes of each element of a linear layer's input saved for its weight gradient: its FP8
    cast under fp8 (module docstring, FP8 activations), else the 16-bit input."""
    return FP8_BYTES if training.precision == "fp8" else 2


def _scores_per_sbh(shape: ModelShape, training: Training) -> float:
    """Unfused attention's stored scores per s b h (before tensor parallelism): the softmax output
    (2, or 4 in fp32), the 16-bit tensor the value product reads where it is not the softmax
    output (2: the fp32 softmax's cast or the dropout output), the dropout mask (1); x a s / h."""
    s = training.seq_length / training.context
    bytes_ = (4 if training.softmax_fp32 else 2) + (2 if training.softmax_fp32 or shape.dropout else 0) + (1 if shape.dropout else 0)
    return bytes_ * shape.heads * s / shape.hidden


def _attention_per_sbh(shape: ModelShape, training: Training) -> float:
    """Q, K, V and the attention output a layer saves, per s b h (before tensor parallelism):
    flash attention saves Q, K and V (the QKV output, and rotated Q and K with rotary
    embeddings) and its output; unfused attention under GQA the rotated Q and the expanded K, V.
    The output projection saves its input: the attention output itself in 16 bits (which a
    flash kernel keeps too), its FP8 cast under fp8 beside the kernel's 16-bit copy."""
    kv = shape.kv_heads / shape.heads
    qkv = 2 * (1 + 2 * kv)
    rotated = 2 * (1 + kv) if shape.rotary else 0.0
    kernel_keeps_output = training.flash_attention and training.recompute == "none"
    projection = _gemm_input_bytes(training) + (2 if kernel_keeps_output and training.precision == "fp8" else 0)
    if training.flash_attention or training.recompute != "none" or kv == 1:
        return qkv + rotated + projection  # selective recomputation saves the same, as its checkpoint's inputs
    return (2 if shape.rotary else qkv) + 4 + projection


def _mlp_per_sbh(shape: ModelShape, training: Training) -> float:
    """fc1 output (16-bit, the activation's input) and fc2 input (Table 2's 16 at ffn = 4h; the
    fc2 input FP8 under fp8), and the unfused SwiGLU's two more."""
    ratio = shape.ffn / shape.hidden
    unfused = 4 * ratio if shape.gated_mlp and not training.fused_activation else 0.0
    return ((4 if shape.gated_mlp else 2) + _gemm_input_bytes(training)) * ratio + unfused


def layer_activation_bytes(shape: ModelShape, training: Training) -> float:
    """One transformer layer's stored activations for one micro-batch (Korthikanti Table 2, module docstring)."""
    s = training.seq_length / training.context
    b, t = training.micro_batch, training.tensor
    sbh = s * b * shape.hidden
    if training.recompute == "full":
        return 2 * sbh
    sharded = _attention_per_sbh(shape, training) + _mlp_per_sbh(shape, training)
    # two norm inputs (16-bit), the QKV and fc1 inputs (the norms' outputs), two hidden dropout masks
    replicated = 4 + 2 * _gemm_input_bytes(training) + (2 if shape.dropout else 0)
    scores = 0.0 if training.recompute == "selective" or training.flash_attention else _scores_per_sbh(shape, training)
    if training.sequence_parallel:
        return sbh * (replicated + sharded + scores) / t
    return sbh * (replicated + (sharded + scores) / t)


def in_flight_micro_batches(training: Training) -> float:
    """Micro-batches whose activations the first stage holds: 1; p (1F1B); p (1 + (p-1)/(p v)) interleaved."""
    p, v = training.pipeline, training.virtual_pipeline
    if p == 1:
        return 1.0
    return p * (1 + (p - 1) / (p * v)) if v else float(p)


def _kept_layers(shape: ModelShape, training: Training) -> float:
    return max(math.ceil(shape.layers / training.pipeline) - training.offloaded_layers, 0) * in_flight_micro_batches(training)


def _output_bytes(shape: ModelShape, training: Training) -> float:
    """Final norm input and output, and the fp32 logits the loss saves (p = 1 only)."""
    s = training.seq_length / training.context
    sp = training.tensor if training.sequence_parallel else 1
    return 4 * s * training.micro_batch * shape.hidden / sp + 4 * s * training.micro_batch * shape.vocab / training.tensor if training.pipeline == 1 else 0.0


def _embedding_bytes(shape: ModelShape, training: Training) -> float:
    sp = training.tensor if training.sequence_parallel else 1
    sbh = training.seq_length / training.context * training.micro_batch * shape.hidden
    return sbh * in_flight_micro_batches(training) / sp if shape.dropout else 0.0


def activation_bytes(shape: ModelShape, training: Training) -> float:
    """The first stage's activations: its layers x in-flight micro-batches, plus Korthikanti 4.3's extras."""
    layers = _kept_layers(shape, training) * layer_activation_bytes(shape, training)
    return layers + _embedding_bytes(shape, training) + _output_bytes(shape, training)


def persistent_bytes(shape: ModelShape, training: Training) -> float:
    """Megatron-core's global `baddbmm` buffer of unfused attention: b (a/t) s^2 in the 16-bit dtype."""
    if training.flash_attention or not training.attention_buffer:
        return 0.0
    return _score_elements(shape, training) * (4 if training.precision == "fp32" else 2)


def _score_elements(shape: ModelShape, training: Training) -> float:
    s = training.seq_length / training.context
    return training.micro_batch * shape.heads / training.tensor * s * s


def _logits16_bytes(shape: ModelShape, training: Training) -> float:
    """The 16-bit logits beside their fp32 copy (forward), or their gradient (backward): 2 s b v / t."""
    if training.pipeline != 1:
        return 0.0
    return 2 * training.seq_length / training.context * training.micro_batch * shape.vocab / training.tensor


def gathered_bytes(shape: ModelShape, training: Training) -> tuple[float, float]:
    """ZeRO-3's unsharded weights in flight during the forward, and with the gradients awaiting
    their reduce-scatter during the backward (module docstring), for a unit of one layer."""
    if training.zero_stage < 3:
        return 0.0, 0.0
    whole = bytes_per_param(training.precision, master_weights=training.master_weights, fp32_grads=training.fp32_grads)
    weight = FP8_BYTES if training.fp8_params else whole.weights
    unit = shape.layer_params / training.tensor
    if training.zero3 == "megatron-fsdp":
        budget = max(1e9, 2 * unit)
        return (unit + budget / 2) * weight, (unit + budget / 2) * weight + budget * whole.gradients
    return 2 * unit * weight, 2 * unit * weight + unit * whole.gradients


def phases(shape: ModelShape, training: Training, states: float, params: float) -> tuple[Phase, ...]:
    """The peaks of a step (module docstring): forward, backward, optimizer step."""
    persistent = persistent_bytes(shape, training)
    stored = activation_bytes(shape, training)
    whole = layer_activation_bytes(shape, replace(training, recompute="none"))  # the last layer, held whole
    sbh = training.seq_length / training.context * training.micro_batch * shape.hidden
    t, sp = training.tensor, training.tensor if training.sequence_parallel else 1
    unfused = not training.flash_attention
    scores = sbh * _scores_per_sbh(shape, training) / t if unfused else 0.0
    before = persistent + _embedding_bytes(shape, training) + max(_kept_layers(shape, training) - 1, 0) * layer_activation_bytes(shape, training)
    u = _score_elements(shape, training)
    forward_gathered, backward_gathered = gathered_bytes(shape, training)
    states_fwd, states_bwd = states + forward_gathered, states + backward_gathered
    found = [Phase("forward", states_fwd + persistent + stored + _logits16_bytes(shape, training), "the loss: the 16-bit logits beside their fp32 copy")]
    if unfused:
        # the last layer's scores (baddbmm output) beside its probabilities, and their fp32 copy
        transient = 2 * u + (4 * u if training.softmax_fp32 else 0.0)
        found.append(Phase("forward", states_fwd + before + whole + transient, "the last layer's attention scores"))
    found.append(Phase("backward", states_fwd + persistent + stored + _logits16_bytes(shape, training), "the loss: the logits' 16-bit gradient"))
    remat = {"none": "", "selective": ", its attention rematerialised", "full": ", rematerialised"}[training.recompute]
    if unfused:
        attention = (12 if training.softmax_fp32 else 8) * u
        found.append(Phase("backward", states_bwd + before + whole - scores + attention + 4 * sbh / sp, f"the last layer's attention backward{remat}"))
    ratio = shape.ffn / shape.hidden
    mlp = sbh * (2 + (4 if shape.gated_mlp else 2)) * ratio / t + 2 * (2 if shape.gated_mlp else 1) * shape.hidden * shape.ffn / t
    found.append(Phase("backward", states_bwd + before + whole + mlp + 4 * sbh / sp, f"the last layer's MLP backward{remat}"))
    held = params / training.shards if training.zero_stage >= 1 else params
    per_param, per_element = OPTIMIZERS[training.optimizer]
    largest = max(shape.embedding_params, (2 if shape.gated_mlp else 1) * shape.hidden * shape.ffn) / t
    if training.zero_stage >= 1:
        largest /= training.shards
    found.append(Phase("optimizer step", states + persistent + per_param * held + per_element * largest, f"{training.optimizer}'s temporaries"))
    best: dict[str, Phase] = {}
    for phase in found:
        if phase.name not in best or phase.bytes > best[phase.name].bytes:
            best[phase.name] = phase
    return tuple(best.values())


def estimate(
    shape: ModelShape,
    training: Training,
    gpu_memory_bytes: float | None,
    headroom: float = HEADROOM,
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
    shard = training.shards if training.zero_stage == 3 else 1
    fp8_copies = FP8_WEIGHT_COPY_BYTES / shard if training.precision == "fp8" else 0.0
    # FP8 primary weights: FP8 data in place of the 16-bit weight and its FP8 copies
    layer_weight = FP8_BYTES / shard if training.fp8_params else per.weights + fp8_copies
    weights = per.weights * embedding_params + layer_weight * layer_params
    gradients, optimizer = per.gradients * params, per.optimizer * params
    return Estimate(
        weights=weights,
        gradients=gradients,
        optimizer=optimizer,
        activations=activation_bytes(shape, training),
        allowance=allowance_bytes,
        gpu_memory=gpu_memory_bytes,
        headroom=headroom,
        params=params,
        shape=shape,
        persistent=persistent_bytes(shape, training),
        phases=phases(shape, training, weights + gradients + optimizer, params),
        fragmentation=FRAGMENTATION["flash" if training.flash_attention else "unfused"],
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
