"""DeepSpeed (recipe 004): Stanford CRFM Mistral's `train.py` under the `deepspeed` launcher.

Each pod runs the launcher for its own node (`--no_ssh`, node rank = completion index), so no
SSH daemon or passwordless keys are needed. The hostfile names every pod by its stable DNS
name with one slot per GPU; the DeepSpeed JSON config (ZeRO stage 1, AdamW, warmup-decay) is
generated here. The image (built from `images/mistral`) has Mistral checked out at
/workspace/mistral and DeepSpeed >= 0.14 (the release that added `--no_ssh`).
"""

from __future__ import annotations

import json
from typing import Any

from trainstack.core import catalog, memory, models
from trainstack.core.errors import Problem
from trainstack.workloads.launchers.base import (
    CONFIG_DIR,
    NODE_RANK,
    ConfigFiles,
    JobSpec,
    Launch,
    StackBatch,
    model_problems,
    precision_problems,
)
from trainstack.workloads.launchers.base import training as base_training
from trainstack.workloads.spec import WorkloadSpec

MISTRAL_DIR = "/workspace/mistral"

# Model -> Mistral experiment config at the commit images/mistral pins (stanford-crfm/mistral
# bf9eff0). quinine resolves `inherit` relative to the config's folder, so only the top-level
# configs load (their datasets/, models/ and trainers/ sit beside them); the archived
# conf/archive/v1/tutorial-gpt2-micro.yaml inherits files that are not under conf/archive/v1/.
MODELS = {
    "gpt2-micro": "conf/mistral-micro.yaml",
    "gpt2-small": "conf/mistral-small.yaml",
}


# Mistral's DeepSpeed configs shard the optimizer (conf/deepspeed/z1-conf.json: ZeRO stage 1).
ZERO_STAGE = 1


def hostfile(job: JobSpec) -> str:
    """`<host> slots=<gpus>` per node, in node-rank order."""
    return "".join(f"{host} slots={job.gpus_per_node}\n" for host in job.hosts)


def ds_config(job: JobSpec) -> str:
    workload = job.workload
    # Under Hugging Face's Trainer every optimizer, schedule and batch value the training
    # arguments also set is "auto": the Trainer fills it in from Mistral's config (its
    # adam_beta2 0.999, learning rate, warm-up), where a literal that disagrees is refused
    # (transformers HfTrainerDeepSpeedConfig) and DeepSpeed asserts without batch sizes.
    config: dict[str, Any] = {
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
        "scheduler": {
            "type": "WarmupDecayLR",
            "params": {"total_num_steps": "auto", "warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto"},
        },
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "zero_optimization": {
            "stage": ZERO_STAGE if workload.zero_stage is None else workload.zero_stage,
            "allgather_partitions": True,
            "allgather_bucket_size": 200_000_000,
            "reduce_scatter": True,
            "reduce_bucket_size": 200_000_000,
            "overlap_comm": True,
            "contiguous_gradients": True,
        },
    }
    if workload.precision in ("fp16", "bf16"):
        config[workload.precision] = {"enabled": "auto"}
    return json.dumps(config, indent=2) + "\n"


class DeepSpeed(StackBatch):
    """The DeepSpeed launcher (a `Launcher`)."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What the DeepSpeed launcher cannot run: an unknown model, fp8."""
        return [*model_problems("deepspeed", workload, MODELS), *precision_problems("DeepSpeed", workload, ("fp16", "bf16", "fp32"))]

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        """DeepSpeed keeps fp32 master weights for fp16 and bf16 and steps the config's AdamW with
        its FusedAdam (deepspeedai/DeepSpeed edaa722 deepspeed/runtime/engine.py
        `_configure_basic_optimizer`: FusedAdam unless `torch_adam`); sequences are the model's context."""
        shape = models.model_shape(workload.model)
        return base_training(workload, machine, zero_stage=ZERO_STAGE, master_weights=True, seq_length=shape.max_seq_length, optimizer="deepspeed-fused-adam")

    def launch(self, job: JobSpec) -> Launch:
        workload = job.workload
        per_gpu = workload.micro_batch_size or 1
        runs = f"{job.storage_path}/artifacts/runs"
        return Launch(
            command=(
                "deepspeed",
                f"--hostfile={CONFIG_DIR}/hostfile",
                "--no_ssh",
                f"--node_rank={NODE_RANK}",
                f"--master_addr={job.master_addr}",
                f"--master_port={job.master_port}",
                "train.py",
                "--config",
                MODELS[workload.model],
                "--nnodes",
                str(job.nodes),
                "--nproc_per_node",
                str(job.gpus_per_node),
                "--effective_bsz",
                str(workload.global_batch_size or per_gpu * job.world_size),
                *(("--training_arguments.fp16", "true") if workload.precision == "fp16" else ()),
                *(("--training_arguments.bf16", "true") if workload.precision == "bf16" else ()),
                "--training_arguments.per_device_train_batch_size",
                str(per_gpu),
                "--training_arguments.max_steps",
                str(workload.steps),
                "--training_arguments.deepspeed",
                f"{CONFIG_DIR}/ds_config.json",
                "--artifacts.cache_dir",
                f"{job.storage_path}/artifacts/cache",
                "--artifacts.run_dir",
                runs,
                "--run_id",
                job.name,
                *workload.overrides,
            ),
            log_dir=runs,
            setup=(f'cd "{MISTRAL_DIR}"',),
            files=(ConfigFiles("deepspeed", CONFIG_DIR, {"hostfile": hostfile(job), "ds_config.json": ds_config(job)}),),
        )
