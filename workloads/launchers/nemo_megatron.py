"""NeMo Megatron (NeMo 1.x, recipes 001 and 002): `megatron_gpt_pretraining.py` under torchrun,
configured by a generated Hydra config served from a ConfigMap, plus the stack's overrides.

The generated config lists NeMo's own `megatron_gpt_config` (shipped in the image next to the
script) as its default and sets only the model's shape and the run's facts on top, so every
key the image's code reads exists in the image's version of it. Data defaults to NeMo's mock
dataset; a stack points `model.data` at real data with overrides.
"""

from __future__ import annotations

from typing import Any

import yaml

from trainstack.core import catalog, memory, models
from trainstack.core.errors import Problem
from trainstack.workloads.launchers.base import (
    CONFIG_DIR,
    NODE_RANK,
    ConfigFiles,
    JobSpec,
    Launch,
    StackBatch,
    megatron_problems,
    model_problems,
    setting_problems,
    torchrun,
)
from trainstack.workloads.launchers.base import training as base_training
from trainstack.workloads.spec import WorkloadSpec

NEMO_EXAMPLES = "/opt/NeMo/examples/nlp/language_modeling"
ENTRYPOINT = f"{NEMO_EXAMPLES}/megatron_gpt_pretraining.py"

# The models this launcher has recipes for; their shapes are trainstack.core.models'.
MODELS = ("gpt3-5b", "gpt3-175b")


def model_config(name: str) -> dict[str, Any]:
    """The shape keys of NeMo's megatron_gpt_config for model `name`."""
    shape = models.model_shape(name)
    return {
        "num_layers": shape.layers,
        "hidden_size": shape.hidden,
        "ffn_hidden_size": shape.ffn,
        "num_attention_heads": shape.heads,
        "init_method_std": shape.init_method_std,
    }


# trainer.precision per config precision; fp8 trains in bf16 with Transformer Engine FP8 GEMMs.
_TRAINER_PRECISION = {"bf16": "bf16", "fp8": "bf16", "fp16": 16, "fp32": 32}


# NeMo's megatron_gpt_config defaults (examples/nlp/language_modeling/conf): 2048-token
# sequences, megatron_amp_O2 off (fp32 weights under autocast), fused_adam (not distributed),
# no activation recomputation. A stack sets zeroStage, masterWeights and recompute to change them.
SEQ_LENGTH = 2048


def memory_settings(workload: WorkloadSpec) -> dict[str, Any]:
    """The model keys that decide how NeMo holds model states and activations, each stated."""
    # The distributed optimizer as recipe 002 runs it (gpu-recipes src/frameworks/nemo-configs/
    # gpt3-175b-256gpus-fp8.yaml): overlapped gradient and parameter sync in 220 MB buckets,
    # gradients reduced and kept in bf16.
    optim: dict[str, Any] = (
        {"name": "distributed_fused_adam", "bucket_cap_mb": 220, "overlap_grad_sync": True, "overlap_param_sync": True, "grad_sync_dtype": "bf16"}
        if workload.zero_stage == 1
        else {"name": "fused_adam"}
    )
    settings: dict[str, Any] = {"megatron_amp_O2": bool(workload.master_weights), "optim": optim}
    if workload.recompute in ("selective", "full"):
        settings["activations_checkpoint_granularity"] = workload.recompute
        if workload.recompute == "full":
            settings |= {"activations_checkpoint_method": "uniform", "activations_checkpoint_num_layers": 1}
    return settings


def config(job: JobSpec, exp_dir: str) -> dict[str, Any]:
    """The Hydra config: NeMo's defaults, then this run's shape, batch, steps and logging."""
    workload: WorkloadSpec = job.workload
    seq = workload.seq_length or SEQ_LENGTH
    model: dict[str, Any] = {
        **model_config(workload.model),
        **memory_settings(workload),
        "encoder_seq_length": seq,
        "max_position_embeddings": seq,
        **({"micro_batch_size": workload.micro_batch_size} if workload.micro_batch_size else {}),
        **({"global_batch_size": workload.global_batch_size} if workload.global_batch_size else {}),
    }
    if parallelism := workload.parallelism:
        model |= {
            "tensor_model_parallel_size": parallelism.tensor,
            "pipeline_model_parallel_size": parallelism.pipeline,
            "virtual_pipeline_model_parallel_size": parallelism.virtual_pipeline,
            "context_parallel_size": parallelism.context,
            "sequence_parallel": parallelism.sequence_parallel,
        }
    if workload.precision == "fp8":
        model |= {"transformer_engine": True, "fp8": True, "fp8_hybrid": True, "fp8_amax_history_len": 1024, "fp8_amax_compute_algo": "max"}
    if workload.profiling.enabled:
        model["nsys_profile"] = {
            "enabled": True,
            "start_step": workload.profiling.start_step,
            "end_step": workload.profiling.end_step,
            "ranks": [0],
            "gen_shape": False,
        }
    model["data"] = {"data_impl": "mock", "data_prefix": [], "seq_length": seq}
    checkpointing = workload.checkpoint_interval is not None
    exp_manager: dict[str, Any] = {
        "explicit_log_dir": f"{exp_dir}/{job.name}",
        "name": job.name,
        "create_checkpoint_callback": checkpointing,
        "resume_if_exists": checkpointing,
        "resume_ignore_no_checkpoint": True,
        "log_step_timing": True,
    }
    if checkpointing:
        exp_manager["checkpoint_callback_params"] = {"every_n_train_steps": workload.checkpoint_interval}
    return {
        "defaults": ["megatron_gpt_config", "_self_"],
        "trainer": {
            "num_nodes": job.nodes,
            "devices": job.gpus_per_node,
            "precision": _TRAINER_PRECISION[workload.precision],
            "max_steps": workload.steps,
            "val_check_interval": workload.steps,
            "log_every_n_steps": 1,
        },
        "exp_manager": exp_manager,
        "model": model,
    }


class NeMoMegatron(StackBatch):
    """The NeMo-Megatron launcher (a `Launcher`)."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What NeMo Megatron would refuse: an unknown model, a split that does not fit, sharding
        beyond its distributed optimizer."""
        return [
            *model_problems("nemo-megatron", workload, MODELS),
            *megatron_problems(workload, machine),
            *setting_problems("NeMo Megatron", workload, (0, 1)),
        ]

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        # distributed_fused_adam reduces and keeps gradients in grad_sync_dtype (bf16 here); it and
        # fused_adam are apex's fused multi-tensor Adams (NeMo's optimizer registry).
        distributed = workload.zero_stage == 1
        return base_training(
            workload,
            machine,
            zero_stage=0,
            master_weights=False,
            seq_length=SEQ_LENGTH,
            fp32_grads=False if distributed else None,
            optimizer="apex-fused-adam",
        )

    def launch(self, job: JobSpec) -> Launch:
        workload = job.workload
        exp_dir = f"{job.storage_path}/nemo-experiments"
        config_name = f"{workload.model}.yaml"
        profiling = workload.profiling
        nsys = (
            (
                "nsys",
                "profile",
                "--sample=none",
                "--trace=nvtx,cuda",
                "--capture-range=cudaProfilerApi",
                "--capture-range-end=stop",
                f"--output={exp_dir}/{job.name}/noderank-{NODE_RANK}",
                "--force-overwrite=true",
            )
            if profiling.enabled
            else ()
        )
        return Launch(
            command=(
                *nsys,
                *torchrun(job),
                ENTRYPOINT,
                f"--config-path={CONFIG_DIR}",
                f"--config-name={config_name}",
                f"hydra.searchpath=[file://{NEMO_EXAMPLES}/conf]",
                *workload.overrides,
            ),
            env={
                "EXP_DIR": exp_dir,
                "NVTE_FWD_LAYERNORM_SM_MARGIN": "8",
                "NVTE_BWD_LAYERNORM_SM_MARGIN": "8",
            },
            log_dir=exp_dir,
            setup=(f'mkdir -p "{exp_dir}/{job.name}"',),
            files=(ConfigFiles("nemo-config", CONFIG_DIR, {config_name: yaml.safe_dump(config(job, exp_dir), sort_keys=False)}),),
        )
