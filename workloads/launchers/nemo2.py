"""NeMo 2.0 (recipe 000): a generated pretraining script built on NeMo's own recipe for the
model, launched by torchrun, or under the resiliency supervisor by its launcher (a torchrun
wrapper that reports to the node's host monitor and lets the controller rescale the job).

The script sets what the stack config says (steps, checkpoint interval, batch, sequence length,
parallelism, precision) and, as gpu-recipes' NeMo 2.0 recipes do, NeMo's performance scripts'
precision settings (GRADIENTS_IN_FP32, precision_aware_optimizer); it keeps the NeMo recipe's
defaults for the rest. Its mock dataset is NeMo's default for pretraining recipes.
"""

from __future__ import annotations

from trainstack.core import catalog, memory
from trainstack.core.errors import Problem
from trainstack.core.rules import duration_seconds
from trainstack.workloads import supervisor
from trainstack.workloads.launchers import resilient_script
from trainstack.workloads.launchers.base import (
    CONFIG_DIR,
    JOB_ID,
    NODE_RANK,
    ConfigFiles,
    JobSpec,
    Launch,
    megatron_problems,
    model_problems,
    precision_problems,
    setting_problems,
    torchrun,
)
from trainstack.workloads.launchers.base import training as base_training
from trainstack.workloads.spec import WorkloadSpec

# Model name (as the stack writes it) -> module of `nemo.collections.llm.recipes`.
RECIPES = {
    "llama3.1-405b": "llama31_405b",
    "llama3.1-70b": "llama31_70b",
    "llama3.1-8b": "llama31_8b",
    "llama3-70b": "llama3_70b",
    "llama3-8b": "llama3_8b",
}

# Recipes whose trainer counts the embedding and the loss as pipeline layers (one each):
# account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split default to True
# in NVIDIA/NeMo v2.4.0 nemo/collections/llm/recipes/llama31_405b.py `trainer` (since v2.2.0).
# The generated script keeps the recipe's trainer; the resilient script builds its own strategy
# without them (resilient_script.py), so there the layers split alone.
ACCOUNTED_LAYERS = {"llama31_405b": 2}

# NeMo's precision plugins (nemo.collections.llm.recipes.precision.mixed_precision); bf16 is
# every recipe's default.
_PRECISION_PLUGINS = {"fp8": "bf16_with_fp8_mixed", "fp16": "fp16_mixed"}

SCRIPT = "train.py"

# Rank heartbeat timeouts of the fault-tolerance launcher: generous, since loading a 405B
# checkpoint takes minutes (the resiliency recipe uses 1800 s for both).
FT_HEARTBEAT_TIMEOUT_S = 1800


# The recipes' defaults (nemo.collections.llm.recipes: llama31_*.pretrain_recipe): sequences of
# 8192 tokens, Megatron's distributed optimizer with bf16 weights and fp32 master copies, no
# activation recomputation.
SEQ_LENGTH = 8192

# How the generated script reduces gradients. gpu-recipes' NeMo 2.0 recipes (AI-Hypercomputer/
# gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe/
# llama3-1-70b-bf16-seq8192-gbs256-gpus64.py) pass NeMo's recipe through its performance helpers,
# set_primary_perf_configs -> set_perf_optimization_configs -> set_precision_configs (NVIDIA/NeMo
# v2.4.0, the nemo:25.07 image's release, scripts/performance/helpers.py; unchanged on r2.4.0
# 6489229), which sets `recipe.trainer.plugins.grad_reduce_in_fp32 = False` whatever the precision
# (after choosing bf16_with_fp8_mixed for fp8), where the recipes' bf16_mixed plugin says True
# (nemo/collections/llm/recipes/precision/mixed_precision.py). The plugin's value is the one that
# counts: MegatronStrategy writes it over the strategy's DDP config (nemo/lightning/pytorch/
# strategies/megatron_strategy.py:450, update_config_with_dtype_overrides), so the recipe's
# `ddp.grad_reduce_in_fp32=True` (recipes/llama31_70b.py `trainer`) is overwritten. The
# resilient script keeps its upstream's plugin default (True; gpu-recipes 27b47e7 training/
# a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/train.py:274 MegatronMixedPrecision
# (precision="bf16-mixed"), as resilient_script.py).
GRADIENTS_IN_FP32 = False


def _accounted_layers(workload: WorkloadSpec) -> int | None:
    """Pipeline layers beyond the model's own (ACCOUNTED_LAYERS); None without a recipe."""
    recipe = RECIPES.get(workload.model)
    if recipe is None:
        return None
    return 0 if workload.resiliency.enabled else ACCOUNTED_LAYERS.get(recipe, 0)


def precision_aware_optimizer(workload: WorkloadSpec) -> bool:
    """Whether the generated script turns on Megatron's precision-aware optimizer: NeMo's
    set_precision_configs does for bf16 (`recipe.optim.config.use_precision_aware_optimizer = True`,
    helpers.py as GRADIENTS_IN_FP32), and Megatron-core takes it only with the distributed
    optimizer (NVIDIA/Megatron-LM core_v0.13.0 megatron/core/optimizer/optimizer_config.py
    __post_init__ asserts use_distributed_optimizer). Never under the supervisor: the resilient
    script builds its own OptimizerConfig without it, as its upstream."""
    distributed = workload.zero_stage in (None, 1)  # None: the recipe's distributed_fused_adam
    return workload.precision == "bf16" and distributed and not workload.resiliency.enabled


def _supervised(job: JobSpec, script: str) -> tuple[str, ...]:
    """The resiliency library's launcher with exactly the flags of the image's era (gpu-recipes
    5014bf9 src/launchers/grl-nemo-20-launcher-a3u.sh with the `...-A3Mega-20250605` image, whose
    launcher parses no more: AI-Hypercomputer/resiliency 02c17b7). It finds the host monitor at
    HOST_DAEMON_PORT (`launch` sets it), not through a flag."""
    return (
        "python3",
        "resiliency/launcher.py",
        "--use-supervisor",
        f"--ft-param-initial_rank_heartbeat_timeout={FT_HEARTBEAT_TIMEOUT_S}",
        f"--ft-param-rank_heartbeat_timeout={FT_HEARTBEAT_TIMEOUT_S}",
        f"--nproc-per-node={job.gpus_per_node}",
        f"--nnodes={job.nodes}",
        f"--node_rank={NODE_RANK}",
        f"--rdzv_id={JOB_ID}",
        f"--master_addr={job.master_addr}",
        f"--master_port={job.master_port}",
        f"--max-restarts={job.workload.resiliency.max_in_job_restarts}",
        script,
    )


def resilient_flags(job: JobSpec, exp_dir: str) -> tuple[str, ...]:
    """The resilient script's flags: the run as the stack states it, and checkpointing as the
    upstream resiliency recipe runs it (gpu-recipes 27b47e7 .../nemo-pretraining-gke-resiliency/
    values.yaml defaultArguments: --max-runtime=86400 --enable-dist-ckpt --enable-async-ckpt
    --enable-optimized-async-ckpt --enable-fault-tolerance --enable-gc --topk-ckpt=-1
    --ckpt-threads-per-rank=1 --checkpoint-interval=20)."""
    workload = job.workload
    split = workload.parallelism
    return (
        f"--recipe={RECIPES[workload.model]}",
        f"--num-nodes={job.nodes}",
        f"--gpus-per-node={job.gpus_per_node}",
        *(
            (f"--tensor={split.tensor}", f"--pipeline={split.pipeline}", f"--context={split.context}")
            + ((f"--virtual-pipeline={split.virtual_pipeline}",) if split.virtual_pipeline else ())
            + (("--sequence-parallel",) if split.sequence_parallel else ())
            if split
            else ()
        ),
        f"--micro-batch-size={workload.micro_batch_size or 1}",
        *((f"--global-batch-size={workload.global_batch_size}",) if workload.global_batch_size else ()),
        *((f"--seq-length={workload.seq_length}",) if workload.seq_length else ()),
        f"--max-steps={workload.steps}",
        f"--max-runtime={int(duration_seconds(workload.max_runtime))}",
        f"--log-dir={exp_dir}",
        f"--ckpt-dir={job.storage_path}/checkpoints",
        f"--job-name={JOB_ID}",
        "--topk-ckpt=-1",
        f"--checkpoint-interval={workload.checkpoint_interval or workload.steps}",
        "--ckpt-threads-per-rank=1",
        "--tokenizer-path=tokenizer.model",  # in the image's working directory, as upstream
        "--enable-dist-ckpt",
        "--enable-async-ckpt",
        "--enable-optimized-async-ckpt",
        "--enable-fault-tolerance",
        "--enable-gc",
    )


def _recompute_lines(recompute: str | None) -> list[str]:
    """Megatron-core's activation recomputation on the recipe's model config."""
    if recompute is None:
        return []
    if recompute == "none":
        return ["recipe.model.config.recompute_granularity = None"]
    lines = [f"recipe.model.config.recompute_granularity = {recompute!r}"]
    if recompute == "full":
        lines += ['recipe.model.config.recompute_method = "uniform"', "recipe.model.config.recompute_num_layers = 1"]
    return lines


def training_script(workload: WorkloadSpec) -> str:
    """The Python script every rank runs: NeMo's recipe for the model, adjusted by the config."""
    lines = [
        f'"""NeMo 2.0 pretraining of {workload.model}; generated by trainstack from the stack config."""',
        "",
        "import os",
        "",
        "import nemo_run as run",
        "from nemo.collections import llm",
    ]
    plugin = _PRECISION_PLUGINS.get(workload.precision)
    if plugin:
        lines.append(f"from nemo.collections.llm.recipes.precision.mixed_precision import {plugin}")
    lines += [
        "",
        "# torchrun (or the resiliency launcher, after a rescale) sets the actual world size.",
        'gpus_per_node = int(os.environ["LOCAL_WORLD_SIZE"])',
        f"recipe = llm.{RECIPES[workload.model]}.pretrain_recipe(",
        '    name=os.environ["JOB_IDENTIFIER"],',
        '    dir=os.environ["EXP_DIR"],',
        '    num_nodes=int(os.environ["WORLD_SIZE"]) // gpus_per_node,',
        "    num_gpus_per_node=gpus_per_node,",
        ")",
        f"recipe.trainer.max_steps = {workload.steps}",
    ]
    if workload.checkpoint_interval:
        lines.append(f"recipe.log.ckpt.every_n_train_steps = {workload.checkpoint_interval}")
    if workload.global_batch_size:
        lines.append(f"recipe.data.global_batch_size = {workload.global_batch_size}")
    if workload.micro_batch_size:
        lines.append(f"recipe.data.micro_batch_size = {workload.micro_batch_size}")
    if workload.seq_length:
        lines.append(f"recipe.data.seq_length = {workload.seq_length}")
        lines.append(f"recipe.model.config.seq_length = {workload.seq_length}")
    if parallelism := workload.parallelism:
        strategy = {
            "tensor_model_parallel_size": parallelism.tensor,
            "pipeline_model_parallel_size": parallelism.pipeline,
            "virtual_pipeline_model_parallel_size": parallelism.virtual_pipeline,
            "context_parallel_size": parallelism.context,
            "sequence_parallel": parallelism.sequence_parallel,
        }
        lines += [f"recipe.trainer.strategy.{key} = {value!r}" for key, value in strategy.items()]
    if workload.zero_stage is not None:
        lines.append(f"recipe.optim.config.use_distributed_optimizer = {workload.zero_stage == 1}")
    lines += _recompute_lines(workload.recompute)
    if plugin:
        lines.append(f"recipe.trainer.plugins = {plugin}()")
    lines.append(f"recipe.trainer.plugins.grad_reduce_in_fp32 = {GRADIENTS_IN_FP32}")
    if precision_aware_optimizer(workload):
        lines.append("recipe.optim.config.use_precision_aware_optimizer = True")
    lines += ["", "run.run(recipe, direct=True)", ""]
    return "\n".join(lines)


class NeMo2:
    """The NeMo 2.0 launcher (a `Launcher`)."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What NeMo 2.0 would refuse: an unknown recipe, fp32, a split that does not fit, sharding
        beyond Megatron's distributed optimizer."""
        return [
            *model_problems("nemo2", workload, RECIPES),
            *precision_problems("NeMo 2.0", workload, ("bf16", "fp16", "fp8")),
            *megatron_problems(workload, machine, _accounted_layers(workload)),
            *setting_problems("NeMo 2.0", workload, (0, 1)),
        ]

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        """As the script runs it: the generated script reduces 16-bit gradients (GRADIENTS_IN_FP32)
        and, with the precision-aware optimizer, hands them to the optimizer uncast and keeps master
        weights as 16-bit remainders; otherwise Megatron's optimizer casts them to an fp32 copy. The
        resilient script reduces in fp32 (its plugin's default)."""
        aware = precision_aware_optimizer(workload)
        return base_training(
            workload,
            machine,
            zero_stage=1,
            master_weights=True,
            seq_length=SEQ_LENGTH,
            fp32_grads=None if workload.resiliency.enabled else GRADIENTS_IN_FP32,
            fp32_grad_copy=not aware,
            master_remainders=aware,
        )

    def global_batch(self, workload: WorkloadSpec, machine: catalog.Machine) -> int | None:
        """Sequences a step: the stack's, or, under the supervisor, one micro-batch per GPU (the
        resilient script's default, as upstream); None: the NeMo recipe's own."""
        if workload.global_batch_size or not workload.resiliency.enabled:
            return workload.global_batch_size
        return (workload.micro_batch_size or 1) * machine.gpus(workload.nodes)

    def launch(self, job: JobSpec) -> Launch:
        workload = job.workload
        exp_dir = f"{job.storage_path}/nemo-experiments"
        script = f"{CONFIG_DIR}/{SCRIPT}"
        if workload.resiliency.enabled:
            command = (*_supervised(job, script), *resilient_flags(job, exp_dir))
            text = resilient_script.SCRIPT
        else:
            command, text = (*torchrun(job), script), training_script(workload)
        return Launch(
            command=command,
            env={
                "EXP_DIR": exp_dir,
                **({"HOST_DAEMON_PORT": str(supervisor.HOST_MONITOR_PORT)} if workload.resiliency.enabled else {}),
                # Leave SMs to communication kernels (NeMo's guidance for pipeline parallelism).
                "NVTE_FWD_LAYERNORM_SM_MARGIN": "8",
                "NVTE_BWD_LAYERNORM_SM_MARGIN": "8",
            },
            log_dir=exp_dir,
            files=(ConfigFiles("nemo2", CONFIG_DIR, {SCRIPT: text}),),
        )
