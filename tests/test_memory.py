"""Will it fit? trainstack.core.models shapes and trainstack.core.memory against published figures, and the
stacks' scenarios. GPU sizes are the catalog's decimal reading: H100 80 GB = 80e9 bytes, H200 141 GB
= 141e9 bytes (nvidia-smi reports an H100 80GB HBM3 as 81559 MiB = 85.5e9 bytes, so these are
conservative)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from trainstack.core.errors import CatalogError
from trainstack.core.memory import (
    FRAGMENTATION,
    HEADROOM,
    OUTSIDE_ALLOCATOR_BYTES,
    Estimate,
    Phase,
    Training,
    activation_bytes,
    advice,
    bytes_per_param,
    estimate,
    gathered_bytes,
    in_flight_micro_batches,
    layer_activation_bytes,
    model_states,
)
from trainstack.core.models import MODELS, ModelShape, model_shape

H100 = 80e9
H200 = 141e9


# ---------------------------------------------------------------------------------------------
# Model shapes


@pytest.mark.parametrize(
    ("name", "published", "tolerance"),
    [
        ("gpt3-175b", 175e9, 0.02),  # GPT-3 paper: 175B
        ("llama3.1-405b", 405e9, 0.02),  # Llama 3.1 model card: 405B
        ("llama3.1-70b", 70.6e9, 0.01),  # Llama 3.1 model card: 70.6B
        # EleutherAI/pythia-6.9b model card: 6,857,302,016 weights with biases and norms, which this
        # count leaves out (32 x 53,248 + 8,192 = 1,712,128 of them).
        ("pythia-6.9b", 6_857_302_016, 0.001),
        ("gpt3-5b", 5e9, 0.02),  # NeMo-Megatron-Launcher conf/training/gpt3/5b.yaml: NeMo's "5B"
        ("gpt2-small", 124_439_808, 0.01),  # Hugging Face gpt2: 124M with position embeddings, biases, norms
    ],
)
def test_parameter_counts_match_the_published_sizes(name: str, published: float, tolerance: float) -> None:
    assert model_shape(name).params == pytest.approx(published, rel=tolerance)


def test_shapes_match_their_sources() -> None:
    pythia = model_shape("pythia-6.9b")  # lit_gpt/config.py at 6178c7cc
    assert (pythia.layers, pythia.hidden, pythia.heads, pythia.ffn, pythia.vocab) == (32, 4096, 32, 16384, 50432)
    assert pythia.parallel_residual and not pythia.tied_embeddings
    small = model_shape("gpt2-small")  # Hugging Face gpt2 via mistral's registry at bf9eff0
    assert (small.layers, small.hidden, small.heads, small.vocab, small.max_seq_length) == (12, 768, 12, 50257, 1024)
    micro = model_shape("gpt2-micro")  # mistral conf/models/mistral-micro.json at bf9eff0
    assert (micro.layers, micro.hidden, micro.heads, micro.ffn, micro.vocab, micro.max_seq_length) == (2, 768, 2, 3072, 50257, 256)
    assert (model_shape("gpt3-5b").init_method_std, model_shape("gpt3-175b").init_method_std) == (0.01, 0.006)


def test_model_names_ignore_case_and_punctuation_and_unknown_ones_list_the_known() -> None:
    assert model_shape("GPT3_175B") is MODELS["gpt3-175b"]
    assert model_shape("Llama3-70B") is MODELS["llama3.1-70b"]
    with pytest.raises(CatalogError) as err:
        model_shape("gpt-4")
    assert "gpt-4" in str(err.value) and all(name in str(err.value) for name in MODELS)


# ---------------------------------------------------------------------------------------------
# Model states


@pytest.mark.parametrize(("stage", "published_gb"), [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_figure_1_seven_and_a_half_billion_on_64_gpus(stage: int, published_gb: float) -> None:
    """Rajbhandari et al. 2020, Figure 1: Psi = 7.5B, Nd = 64, K = 12."""
    states = model_states(7.5e9, 64, stage, "fp16", None)
    assert states.total == pytest.approx(published_gb * 1e9, rel=0.05)
    assert states.activations == 0 and states.fits is None


@pytest.mark.parametrize("d", [1, 2, 8, 64, 100])
def test_megatron_distributed_optimizer_bytes_per_parameter_table(d: int) -> None:
    """NVIDIA/Megatron-LM docs/source/distrib_optimizer.md: the six entries, exactly."""
    fp16 = {"fp32_grads": False, "fp32_grad_copy": True}
    assert bytes_per_param("fp16", **fp16).total == 20
    assert bytes_per_param("fp16", **fp16, zero_stage=1, shards=d).total == pytest.approx(4 + 16 / d, abs=1e-12)
    assert bytes_per_param("bf16").total == 18  # 16-bit param, fp32 grads
    assert bytes_per_param("bf16", zero_stage=1, shards=d).total == pytest.approx(6 + 12 / d, abs=1e-12)
    assert bytes_per_param("fp16", fp32_grads=True).total == 18
    assert bytes_per_param("fp32").total == 16
    assert bytes_per_param("fp32", zero_stage=1, shards=d).total == pytest.approx(8 + 8 / d, abs=1e-12)


@pytest.mark.parametrize("d", [1, 8, 64])
def test_megatron_precision_aware_optimizer_holds_4_plus_10_over_d(d: int) -> None:
    """Megatron's table has no row for its precision-aware optimizer (use_precision_aware_optimizer,
    which NeMo's performance scripts set for bf16): bf16 weights and bf16 gradients (2 + 2), and per
    shard fp32 momentum and variance (8) with a 16-bit remainder of the fp32 master weight (2,
    OptimizerConfig.store_param_remainders default True: NVIDIA/Megatron-LM core_v0.13.0
    megatron/core/optimizer/optimizer_config.py; TransformerEngine f05f12c fused_adam.py keeps it
    as int16), and no fp32 copy of the gradient (distrib_optimizer.py `_copy_model_grads_to_main_grads`
    hands the 16-bit shard over as decoupled_grad): the fp16 row's 4 + 16/d less 4 + 2 a shard."""
    aware = {"fp32_grads": False, "master_remainders": True}
    per = bytes_per_param("bf16", **aware, zero_stage=1, shards=d)
    assert (per.weights, per.gradients) == (2, 2) and per.optimizer == pytest.approx(10 / d, abs=1e-12)
    megatron_fp16_row = bytes_per_param("fp16", fp32_grads=False, fp32_grad_copy=True, zero_stage=1, shards=d).total
    assert megatron_fp16_row - per.total == pytest.approx(6 / d, abs=1e-12)
    # TE keeps remainders of bf16 weights only (`p.dtype == torch.bfloat16`): fp16 keeps 4-byte masters.
    assert bytes_per_param("fp16", **aware).optimizer == 12


def test_nemo_without_o2_holds_fp32_weights_at_16_bytes() -> None:
    per = bytes_per_param("bf16", master_weights=False)
    assert (per.weights, per.gradients, per.optimizer) == (4, 4, 8)


# ---------------------------------------------------------------------------------------------
# Activations: Korthikanti et al. 2022, Table 2, on the paper's Table 3 GPT configurations
# (s = 2048, t = 8; b = 1 here, the formulas are linear in b). The paper gives these per-layer
# sizes only as formulas and bar charts, so the expected bytes are the formulas worked by hand.


def gpt(heads: int, hidden: int, layers: int) -> ModelShape:
    return ModelShape("paper", layers, hidden, 4 * hidden, heads, heads, 51200, gated_mlp=False, tied_embeddings=True, max_seq_length=2048)


PAPER = {"22B": gpt(64, 6144, 48), "175B": gpt(96, 12288, 96), "530B": gpt(128, 20480, 105), "1T": gpt(160, 25600, 128)}
PAPER_RUN = Training(tensor=8, seq_length=2048, micro_batch=1, flash_attention=False)

# 175B: s b h = 2048 x 12288 = 25,165,824 and 5 a s / h = 5 x 96 x 2048 / 12288 = 80.
TABLE_2_175B = [
    ({"tensor": 1}, 2_868_903_936),  # sbh (34 + 80)
    ({}, 578_813_952),  # sbh (10 + 24/8 + 80/8) = 23 sbh
    ({"sequence_parallel": True}, 358_612_992),  # sbh/8 (34 + 80)
    ({"recompute": "selective"}, 327_155_712),  # sbh (10 + 24/8) = 13 sbh
    ({"sequence_parallel": True, "recompute": "selective"}, 106_954_752),  # 34 sbh / 8
    ({"recompute": "full"}, 50_331_648),  # 2 sbh
]


@pytest.mark.parametrize(("change", "expected"), TABLE_2_175B)
def test_table_2_per_layer_activations_of_the_175b_configuration(change: dict, expected: int) -> None:
    assert layer_activation_bytes(PAPER["175B"], replace(PAPER_RUN, **change)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("model", "baseline", "reduced"),
    [
        ("22B", 331_350_016, 53_477_376),  # sbh = 12,582,912; 5as/h = 320/3: sbh (13 + 40/3); 34 sbh / 8
        ("530B", 880_803_840, 178_257_920),  # sbh = 41,943,040; 5as/h = 64: 21 sbh; 4.25 sbh
        ("1T", 1_101_004_800, 222_822_400),  # sbh = 52,428,800; 5as/h = 64: 21 sbh; 4.25 sbh
    ],
)
def test_table_2_tensor_parallel_baseline_and_sequence_parallel_selective(model: str, baseline: int, reduced: int) -> None:
    shape = PAPER[model]
    assert layer_activation_bytes(shape, PAPER_RUN) == pytest.approx(baseline, rel=1e-12)
    both = replace(PAPER_RUN, sequence_parallel=True, recompute="selective")
    assert layer_activation_bytes(shape, both) == pytest.approx(reduced, rel=1e-12)


@pytest.mark.parametrize("model", ["530B", "1T"])
def test_sequence_parallel_and_selective_recompute_cut_activations_5x(model: str) -> None:
    """The paper's abstract: the two together "reduce activation memory by 5x"."""
    shape = PAPER[model]
    both = replace(PAPER_RUN, sequence_parallel=True, recompute="selective")
    assert layer_activation_bytes(shape, PAPER_RUN) / layer_activation_bytes(shape, both) == pytest.approx(5, rel=0.05)


def test_flash_attention_stores_no_scores_like_selective_recompute() -> None:
    shape = PAPER["175B"]
    assert layer_activation_bytes(shape, replace(PAPER_RUN, flash_attention=True)) == 327_155_712


def test_pipeline_micro_batches_in_flight() -> None:
    """1F1B: p on the first stage; interleaved with v chunks: p (1 + (p - 1) / (p v)) (Korthikanti 4.2.3)."""
    assert in_flight_micro_batches(Training()) == 1
    assert in_flight_micro_batches(Training(pipeline=8)) == 8
    assert in_flight_micro_batches(Training(pipeline=8, virtual_pipeline=2)) == 11.5  # 8 x (1 + 7/16)


def test_first_stage_of_a_1f1b_pipeline_holds_every_layers_activations() -> None:
    """Korthikanti 4.2.3: L/p layers x p micro-batches = L layers (96 x 34 sbh / 8), plus the
    embedding dropout mask sbh p / t (section 4.3): 10,267,656,192 + 25,165,824 bytes."""
    run = replace(PAPER_RUN, pipeline=8, sequence_parallel=True, recompute="selective")
    assert activation_bytes(PAPER["175B"], run) == pytest.approx(10_292_822_016, rel=1e-12)


def test_without_a_pipeline_the_output_layer_and_fp32_logits_count() -> None:
    """Section 4.3 with p = 1: 4 sbh / t (final norm and projection inputs) + 4 s b v / t."""
    run = replace(PAPER_RUN, sequence_parallel=True, recompute="selective")
    sbh, v = 2048 * 12288, 51200
    expected = 96 * 106_954_752 + sbh / 8 + 4 * sbh / 8 + 4 * 2048 * v / 8
    assert activation_bytes(PAPER["175B"], run) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Estimate and advice


def test_as_json_reports_decimal_gb_to_two_places() -> None:
    result = model_states(7.5e9, 64, 1, "fp16", H100)
    assert result.as_json() == {
        "weights": 15.0,
        "gradients": 15.0,
        "optimizer": 1.41,
        "states": 31.41,
        "activations": 0.0,
        "persistent": 0.0,
        "peak": 31.41,
        "allowance": 0.0,
        "fragmentation": 0.0,
        "total": 31.41,
        "phase": "stored",
        "gpu_memory": 80.0,
        "fits": True,
    }
    assert result.headroom_bytes == pytest.approx(76e9 - 31.40625e9)  # under the 5% headroom


@pytest.mark.parametrize("bad", [{"zero_stage": 4}, {"precision": "int8"}, {"recompute": "some"}, {"tensor": 0}])
def test_training_refuses_impossible_values(bad: dict) -> None:
    with pytest.raises(ValueError, match=f"^{next(iter(bad))} must"):
        Training(**bad)


# ---------------------------------------------------------------------------------------------
# The stacks' scenarios


# Recipe 002 as AI-Hypercomputer/gpu-recipes runs it (src/frameworks/a3mega/nemo-configs/
# gpt3-175b-256gpus-fp8.yaml): TP 4, PP 8, VP 2, SP, 256 GPUs (DP 8), micro-batch 1, seq 2048,
# fp8, megatron_amp_O2, distributed_fused_adam with grad_sync_dtype bf16, no recomputation;
# Transformer Engine attention (no stored scores).
GPT3_175B = Training(
    tensor=4,
    pipeline=8,
    virtual_pipeline=2,
    data=8,
    sequence_parallel=True,
    precision="fp8",
    master_weights=True,
    fp32_grads=False,
    zero_stage=1,
    micro_batch=1,
    seq_length=2048,
)


def test_gpt3_175b_needs_the_distributed_optimizer_on_h100() -> None:
    shape = model_shape("gpt3-175b")
    replicated = estimate(shape, replace(GPT3_175B, zero_stage=0), H100, headroom=0)
    assert replicated.weights + replicated.gradients + replicated.optimizer > H100  # 100.4 GB
    assert replicated.fits is False
    assert any(key == "zeroStage" and "distributed optimizer" in text for key, text in advice(replicated, replace(GPT3_175B, zero_stage=0)))
    # 72.1 GB with the backward's transients and the measured allowances (TE's FP8 GEMM inputs
    # saved at a byte): within 95% of 80e9 bytes; 76.6 GB counting them at 16 bits, which would not be.
    assert estimate(shape, GPT3_175B, H100).fits
    assert estimate(shape, GPT3_175B, H100).total < 72.2e9
    # Plain 1F1B holds 8, not 11.5, micro-batches: 64.2 GB.
    assert estimate(shape, replace(GPT3_175B, virtual_pipeline=None), H100).total < estimate(shape, GPT3_175B, H100).total - 7e9


GPT3_5B = Training(data=16, precision="bf16", micro_batch=4, seq_length=2048)


def test_gpt3_5b_fits_16_h100s_only_with_o2_distributed_adam_and_selective_recompute() -> None:
    """NeMo's megatron_gpt_config defaults (NeMo 23.05: megatron_amp_O2 False, fused_adam, no
    recomputation, unfused attention) hold fp32 weights: 16 bytes x 5.04e9 = 80.7 GB before any
    activation. O2 + distributed Adam + selective recomputation: 66.3 GB."""
    shape = model_shape("gpt3-5b")
    defaults = replace(GPT3_5B, master_weights=False, zero_stage=0, recompute="none", flash_attention=False)
    result = estimate(shape, defaults, H100)
    assert result.weights + result.gradients + result.optimizer > H100
    assert result.fits is False
    tuned = replace(defaults, master_weights=True, zero_stage=1, recompute="selective")
    assert estimate(shape, tuned, H100).fits
    assert advice(estimate(shape, tuned, H100), tuned) == []


def test_llama31_405b_fits_54_h200_nodes() -> None:
    """Recipe 000: TP 8, PP 18, VP 7, DP 3 (432 GPUs), seq 8192, micro-batch 1, bf16, distributed
    optimizer, no recomputation (NeMo's llama31_405b recipe sets none; Llama31Config405B none)."""
    run = Training(tensor=8, pipeline=18, virtual_pipeline=7, data=3, sequence_parallel=True, precision="bf16", zero_stage=1, micro_batch=1, seq_length=8192)
    assert run.gpus == 432
    result = estimate(model_shape("llama3.1-405b"), run, H200)
    assert result.fits  # 114.8 GB of 126.9
    # Attention that stored the 8192 x 8192 scores would not: the s^2 term is 10x the rest.
    assert estimate(model_shape("llama3.1-405b"), replace(run, flash_attention=False), H200).fits is False


def test_fp8_adds_a_cast_and_a_transpose_of_every_layer_weight() -> None:
    """The stated FP8 allowance: 2 bytes per transformer-layer weight on the GPU (TE weight caching)."""
    shape, run = model_shape("gpt3-175b"), replace(GPT3_175B, precision="bf16")
    extra = estimate(shape, GPT3_175B, H100).weights - estimate(shape, run, H100).weights
    assert extra == pytest.approx(2 * 12 * shape.layer_params / 4)  # 12 layers a stage, TP 4


# ---------------------------------------------------------------------------------------------
# FP8 activations: Transformer Engine saves the FP8 cast of each linear layer's input (1 byte),
# not its 16-bit input (NVIDIA/TransformerEngine v2.12 linear.py `saved_inputmat`, the quantized
# input; layernorm_linear.py the norm's FP8 output `ln_out` beside its 16-bit input; v1.8 alike).


def _sbh(training: Training, hidden: int) -> float:
    return training.seq_length * training.micro_batch * hidden


def test_fp8_saves_the_norm_outputs_and_the_fc2_input_at_a_byte_and_adds_a_cast_of_the_attention_output() -> None:
    """Flash attention keeps its 16-bit output, which the output projection saves again in FP8
    (+1); the QKV and fc1 inputs (the norms' outputs, -1 each) and the fc2 input (-1 x ffn/h) halve."""
    shape = model_shape("llama3.1-405b")
    fp8 = Training(tensor=4, data=16, sequence_parallel=True, precision="fp8", zero_stage=3, seq_length=8192)
    saved = layer_activation_bytes(shape, replace(fp8, precision="bf16")) - layer_activation_bytes(shape, fp8)
    assert saved == pytest.approx(_sbh(fp8, shape.hidden) / 4 * (2 - 1 + shape.ffn / shape.hidden), rel=1e-12)


@pytest.mark.parametrize("change", [{"recompute": "selective"}, {"flash_attention": False}])
def test_fp8_halves_the_projection_input_where_no_kernel_keeps_the_attention_output(change: dict) -> None:
    """Selective recomputation and unfused attention store no attention output of their own: the
    projection's FP8 input replaces the 16-bit one (GPT-3 175B as the A3 Mega stacks train it)."""
    shape, run = model_shape("gpt3-175b"), replace(GPT3_175B, **change)
    saved = layer_activation_bytes(shape, replace(run, precision="bf16")) - layer_activation_bytes(shape, run)
    assert saved == pytest.approx(_sbh(run, shape.hidden) / 4 * (2 + 1 + shape.ffn / shape.hidden), rel=1e-12)


def test_fp8_keeps_full_recomputation_at_the_16_bit_layer_input() -> None:
    shape, run = model_shape("gpt3-175b"), replace(GPT3_175B, recompute="full")
    assert layer_activation_bytes(shape, run) == layer_activation_bytes(shape, replace(run, precision="bf16"))


def test_fp8_params_hold_each_layer_weight_as_one_byte_and_gather_it_in_fp8() -> None:
    """FP8 primary weights (fp8_param_gather under Megatron-FSDP): 1 byte a layer weight, sharded,
    in place of bf16 + the FP8 cast and transpose; the embeddings stay bf16; the gathered unit is FP8."""
    shape = model_shape("llama3.1-405b")
    run = Training(tensor=4, data=16, sequence_parallel=True, precision="fp8", zero_stage=3, zero3="megatron-fsdp", seq_length=8192)
    layers, embeddings = shape.layers * shape.layer_params / 4, 2 * shape.embedding_params / 4
    assert estimate(shape, run, None).weights == pytest.approx((2 * embeddings + 4 * layers) / 16)
    assert estimate(shape, replace(run, fp8_params=True), None).weights == pytest.approx((2 * embeddings + layers) / 16)
    forward, _ = gathered_bytes(shape, run)
    assert gathered_bytes(shape, replace(run, fp8_params=True))[0] == pytest.approx(forward / 2)
    with pytest.raises(ValueError, match="fp8_params needs precision fp8"):
        replace(run, precision="bf16", fp8_params=True)


def test_offloaded_layers_leave_their_activations_off_the_gpu() -> None:
    """Megatron-Bridge --activation_offload_layers: the offloaded layers' activations wait in host
    memory, the rest stay (a4x-llama3-70b offloads 20 of Llama 3 70B's 80 layers)."""
    shape = model_shape("llama3-70b")
    kept = Training(data=64, zero_stage=3, seq_length=8192)
    offloaded = replace(kept, offloaded_layers=20)
    layer = layer_activation_bytes(shape, kept)
    assert activation_bytes(shape, kept) - activation_bytes(shape, offloaded) == pytest.approx(20 * layer)
    assert activation_bytes(shape, replace(kept, offloaded_layers=200)) == pytest.approx(activation_bytes(shape, kept) - 80 * layer)


# ---------------------------------------------------------------------------------------------
# Dropout: PyTorch stores no mask when p = 0 (pytorch/pytorch 92426d6 aten/src/ATen/native/
# Dropout.cpp `_dropout_impl` returns the input for p == 0; dec01e4 torch/_decomp/decompositions.py
# `dropout` the same under torch.compile), and Llama 3 trains with hidden_dropout =
# attention_dropout = 0 (NVIDIA/NeMo v2.4.0 nemo/collections/llm/gpt/model/llama.py Llama3Config).


def test_llama3_models_train_without_dropout_and_gpt3_with_it() -> None:
    assert not any(model_shape(m).dropout for m in ("llama3.1-8b", "llama3.1-70b", "llama3.1-405b"))
    assert model_shape("gpt3-175b").dropout


@pytest.mark.parametrize(("change", "expected"), TABLE_2_175B)
def test_table_2_without_dropout_drops_the_three_masks(change: dict, expected: int) -> None:
    """Korthikanti's 34 s b h holds two hidden dropout masks (s b h each) and the 5 a s / h scores
    a mask (a s^2 b) and its output (2 a s^2 b) that the value product reads instead of the softmax
    output: without dropout the layer stores 2 s b h and 3 a s / h less (Table 2 less those)."""
    shape, run = replace(PAPER["175B"], dropout=False), replace(PAPER_RUN, **change)
    sbh, scores, t = 2048 * 12288, 3 * 96 * 2048 / 12288, run.tensor
    if run.recompute == "full":
        masks = 0.0  # only the layer's input is kept
    elif run.sequence_parallel:
        masks = sbh * (2 + (0 if run.recompute == "selective" else scores)) / t
    else:
        masks = sbh * (2 + (0 if run.recompute == "selective" else scores / t))
    assert layer_activation_bytes(shape, run) == pytest.approx(expected - masks, rel=1e-12)


def test_without_dropout_the_first_stage_keeps_no_embedding_mask() -> None:
    """Korthikanti 4.3's embedding dropout mask, s b h per micro-batch in flight (/ t with
    sequence parallelism), is there only with dropout."""
    run = Training(tensor=8, pipeline=8, sequence_parallel=True, seq_length=2048)
    with_masks, without = PAPER["175B"], replace(PAPER["175B"], dropout=False)
    layers = 12 * 8 * (layer_activation_bytes(with_masks, run) - layer_activation_bytes(without, run))
    mask = 2048 * 12288 * 8 / 8
    assert activation_bytes(with_masks, run) - activation_bytes(without, run) == pytest.approx(layers + mask)


A4_LLAMA3_70B = Training(tensor=2, pipeline=4, virtual_pipeline=5, context=2, data=4, sequence_parallel=True, zero_stage=1, micro_batch=2, seq_length=8192)
B200 = 183359 * 2**20  # catalog b200


def test_a4_llama3_70b_as_upstream_runs_it_fits_b200() -> None:
    """AI-Hypercomputer/gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256
    runs TP 2, PP 4, CP 2, VP 5, micro-batch 2, seq 8192 on 64 B200s, through NeMo's
    set_primary_perf_configs (NVIDIA/NeMo v2.4.0 scripts/performance/helpers.py set_precision_configs:
    `recipe.trainer.plugins.grad_reduce_in_fp32 = False`, and for bf16
    `recipe.optim.config.use_precision_aware_optimizer = True`): 2-byte gradients, no fp32 copy,
    master weights as 16-bit remainders (4 + 10/d). With the recipe's fp32 reduction it would not
    fit: 6 + 12/d, the 174.5 GB the shipped stack once carried under memoryCheck warn."""
    upstream = replace(A4_LLAMA3_70B, fp32_grads=False, master_remainders=True)
    result = estimate(model_shape("llama3.1-70b"), upstream, B200)
    # 167.2 GB of 182.7: the peak is the last layer's MLP backward (rotated Q and K stored too)
    assert result.fits and result.total == pytest.approx(167.2e9, rel=1e-3)
    assert estimate(model_shape("llama3.1-70b"), A4_LLAMA3_70B, B200).fits is False
    # With dropout masks it would still fit; the masks were 6.3 GB of a layer-heavy first stage.
    masked = estimate(replace(model_shape("llama3.1-70b"), dropout=True), upstream, B200)
    assert masked.activations - estimate(model_shape("llama3.1-70b"), upstream, B200).activations == pytest.approx(6.3e9, rel=0.02)


def test_the_nvidia_benchmark_split_of_llama3_70b_fits_h100() -> None:
    """NVIDIA DGXC Benchmarking "NeMo Llama 3.1 Pretrain 25.04.01" (catalog.ngc.nvidia.com/orgs/
    nvidia/teams/dgxc-benchmarking/resources/nemo-llama31-dgxc-benchmarking-g, read 2026-11-25):
    70B bf16 on 64 H100 80GB at TP 4, PP 4, CP 2, VP 5, micro-batch 1, seq 8192."""
    run = replace(A4_LLAMA3_70B, tensor=4, data=2, micro_batch=1)
    assert run.gpus == 64
    assert estimate(model_shape("llama3.1-70b"), run, H100).fits


# ---------------------------------------------------------------------------------------------
# The peak by phase: each term as the code it is derived from holds it (core/memory.py docstring).


def _phase(result: Estimate, name: str) -> Phase:
    return next(p for p in result.phases if p.name == name)


LLAMA_8B_UNFUSED = Training(seq_length=4096, flash_attention=False, attention_buffer=True, recompute="selective", optimizer="torch-adamw-foreach")


def test_tensor_parallelism_shards_megatrons_attention_buffer_and_the_s_squared_backward() -> None:
    """The buffer is [b * heads/t, s, s] (dot_product_attention.py `get_tensor`), 2 bytes in bf16."""
    shape = model_shape("llama3.1-8b")
    one, two = estimate(shape, LLAMA_8B_UNFUSED, None), estimate(shape, replace(LLAMA_8B_UNFUSED, tensor=2), None)
    assert one.persistent == 2 * 32 * 4096**2 and two.persistent == one.persistent / 2
    assert estimate(shape, replace(LLAMA_8B_UNFUSED, flash_attention=True), None).persistent == 0


def test_fp32_softmax_backward_holds_12_b_a_s_squared_bytes_where_bf16_holds_8() -> None:
    """Under selective recomputation the scores are not stored, so the backward's difference is
    the attention backward alone: 12 - 8 = 4 bytes per score."""
    shape = model_shape("llama3.1-8b")
    bf16 = _phase(estimate(shape, LLAMA_8B_UNFUSED, None), "backward")
    fp32 = _phase(estimate(shape, replace(LLAMA_8B_UNFUSED, softmax_fp32=True), None), "backward")
    assert "attention backward" in bf16.what and fp32.bytes - bf16.bytes == pytest.approx(4 * 32 * 4096**2)


def test_fp32_softmax_stores_its_fp32_output_and_the_16_bit_copy() -> None:
    shape, run = model_shape("llama3.1-8b"), replace(LLAMA_8B_UNFUSED, recompute="none")
    extra = layer_activation_bytes(shape, replace(run, softmax_fp32=True)) - layer_activation_bytes(shape, run)
    assert extra == pytest.approx((6 - 2) * 32 * 4096**2)


@pytest.mark.parametrize(("optimizer", "per_param", "per_largest"), [("torch-adamw-foreach", 4, 0), ("torch-adamw-for-loop", 0, 8), ("te-fused-adam", 0, 0)])
def test_the_optimizer_steps_temporaries(optimizer: str, per_param: int, per_largest: int) -> None:
    """foreach: `_foreach_sqrt` of every fp32 exp_avg_sq the rank holds (sharded by the distributed
    optimizer); for-loop: `exp_avg_sq.sqrt() / bias_correction2_sqrt`, two fp32 temporaries of its
    largest tensor (Llama 3 8B's 128256 x 4096 embedding); fused: none."""
    shape, run = model_shape("llama3.1-8b"), Training(data=8, zero_stage=1, optimizer=optimizer)
    result = estimate(shape, run, None)
    extra = _phase(result, "optimizer step").bytes - result.states
    assert extra == pytest.approx(per_param * result.params / 8 + per_largest * 128256 * 4096 / 8)


def test_the_loss_term_is_the_last_stages_and_the_first_stage_is_estimated() -> None:
    shape = model_shape("llama3.1-8b")
    alone = estimate(shape, Training(seq_length=8192), None)
    staged = estimate(shape, Training(seq_length=8192, pipeline=4), None)
    assert _phase(alone, "forward").bytes == pytest.approx(alone.states + alone.activations + 2 * 8192 * 128256)
    assert _phase(staged, "forward").bytes == pytest.approx(staged.states + staged.activations)


def test_full_recomputation_rematerialises_the_last_layer_in_the_backward() -> None:
    """GPT-3 175B at TP 8: the backward holds the stored layer inputs and one whole layer again."""
    shape, run = model_shape("gpt3-175b"), Training(tensor=8, recompute="full", seq_length=2048)
    result = estimate(shape, run, None)
    whole = layer_activation_bytes(shape, replace(run, recompute="none"))
    backward = _phase(result, "backward")
    assert "rematerialised" in backward.what
    assert backward.bytes - (result.states + result.activations) > whole - 2 * 2048 * 12288 - 4 * 2048 * (12288 + 51200 / 8)


def test_rotary_embeddings_store_the_rotated_q_and_k() -> None:
    shape, run = model_shape("llama3.1-8b"), Training(seq_length=4096, tensor=2)
    extra = layer_activation_bytes(shape, run) - layer_activation_bytes(replace(shape, rotary=False), run)
    assert extra == pytest.approx(4096 * 4096 * 2 * (1 + 8 / 32) / 2)


def test_the_unfused_swiglu_stores_two_ffn_wide_tensors_more() -> None:
    shape, run = model_shape("llama3.1-8b"), Training(seq_length=4096)
    extra = layer_activation_bytes(shape, replace(run, fused_activation=False)) - layer_activation_bytes(shape, run)
    assert extra == pytest.approx(4096 * 2 * 2 * 14336)


def test_the_fit_adds_the_allowance_and_fragmentation_by_attention_kind() -> None:
    shape = model_shape("llama3.1-8b")
    flash, unfused = estimate(shape, Training(), H200), estimate(shape, LLAMA_8B_UNFUSED, H200)
    assert (flash.fragmentation, unfused.fragmentation) == (FRAGMENTATION["flash"], FRAGMENTATION["unfused"])
    assert flash.total == pytest.approx(flash.peak * (1 + FRAGMENTATION["flash"]) + OUTSIDE_ALLOCATOR_BYTES)
    assert flash.fits == (flash.total <= H200 * (1 - HEADROOM))


def test_zero_3_holds_gathered_weights_and_gradients_awaiting_their_reduce_scatter() -> None:
    """PyTorch FSDP (limit_all_gathers: two all-gathers in flight): two layers' weights in the
    forward, and one layer's gradient more in the backward; Megatron-FSDP: a layer and a prefetch
    of half its communication unit (at least 1e9 elements), and the whole unit of gradients queued
    for reduce-scatter. Neither before ZeRO-3."""
    shape = model_shape("llama3.1-70b")
    torch = Training(data=64, zero_stage=3, master_weights=False, seq_length=8192)
    layer = shape.layer_params
    assert gathered_bytes(shape, torch) == pytest.approx((2 * layer * 4, 2 * layer * 4 + layer * 4))
    megatron = replace(torch, master_weights=True, zero3="megatron-fsdp")
    unit = max(1e9, 2 * layer)
    assert gathered_bytes(shape, megatron) == pytest.approx(((layer + unit / 2) * 2, (layer + unit / 2) * 2 + unit * 4))
    assert gathered_bytes(shape, replace(torch, zero_stage=1)) == (0.0, 0.0)
    # The loss's backward comes before any layer's gradient: only the gathered weights are there.
    result = estimate(shape, megatron, None)
    loss = result.states + result.activations + gathered_bytes(shape, megatron)[0] + 2 * 8192 * 128256
    assert _phase(result, "forward").bytes == pytest.approx(loss)
