"""LitGPT (recipe 003): the OpenWebText pretraining script of the LitGPT GKE sample, one
process per GPU under torchrun (Lightning detects torchelastic and takes ranks from it).

The image (built from `images/litgpt`) holds the script at `/opt/lit-gpt/pretrain/
openwebtext_trainer.py`; it reads `train.bin`/`val.bin` from /data (copied there from
`trainstack:workload.dataset`) and its sizes from the environment: NNODES, MODEL_NAME,
BATCH_SIZE (per GPU), MICRO_BATCH_SIZE and MAX_ITERS. It writes `out/` under the working
directory, which this launcher puts on the shared storage.
"""

from __future__ import annotations

from trainstack.core import catalog, memory, models
from trainstack.core.errors import Problem
from trainstack.workloads.launchers.base import (
    WORKLOAD,
    JobSpec,
    Launch,
    StackBatch,
    model_problems,
    precision_problems,
    setting_problems,
    torchrun,
)
from trainstack.workloads.launchers.base import training as base_training
from trainstack.workloads.spec import WorkloadSpec

ENTRYPOINT = "/opt/lit-gpt/pretrain/openwebtext_trainer.py"

# Lightning precision per config precision: the lit-gpt-demo trainer's own default, bf16-mixed
# (ai-infra-cluster-provisioning 26e3b34 sample_workloads/lit-gpt-demo).
_PRECISION = {"bf16": "bf16-mixed", "fp16": "16-mixed", "fp32": "32-true"}


# lit_gpt/config.py names at the pinned commit that trainstack has shapes for (trainstack.core.models).
MODELS = ("pythia-6.9b",)


def _batch(workload: WorkloadSpec, gpus: int) -> tuple[int, int]:
    """(sequences per GPU per step, micro-batch)."""
    micro = workload.micro_batch_size or 1
    return (workload.global_batch_size or gpus * micro) // gpus, micro


class LitGpt(StackBatch):
    """The LitGPT launcher (a `Launcher`)."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What LitGPT's trainer cannot run: a precision it has no mode for, a batch that does not
        split into whole micro-batches per GPU."""
        found = [
            *model_problems("litgpt", workload, MODELS),
            *precision_problems("LitGPT", workload, tuple(_PRECISION)),
            *setting_problems("LitGPT (FSDP)", workload, (3,)),
        ]
        gpus = machine.gpus(workload.nodes)
        per_gpu, micro = _batch(workload, gpus)
        if per_gpu < micro or per_gpu % micro or (workload.global_batch_size or 0) % gpus:
            found.append(
                Problem(
                    (WORKLOAD, "globalBatchSize"),
                    workload.global_batch_size,
                    f"over {gpus} GPUs must give each GPU a positive multiple of microBatchSize ({micro})",
                )
            )
        return found

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        """The trainer shards weights, gradients and optimizer state with FSDP (full shard: ZeRO-3)
        over every GPU, checkpointing every Block (full recomputation) on more than one GPU a
        node, and steps torch's AdamW with foreach=False (Lightning-AI/litgpt 6178c7c
        pretrain/openwebtext_trainer.py `main`'s FSDPStrategy(activation_checkpointing_policy={Block})
        and `configure_optimizers`); sequences are the model's block size."""
        shape = models.model_shape(workload.model)
        # Mixed precision keeps fp32 weights and autocasts (Lightning's bf16-mixed / 16-mixed).
        return base_training(
            workload,
            machine,
            zero_stage=3,
            master_weights=False,
            seq_length=shape.max_seq_length,
            recompute="full" if machine.gpus(1) > 1 else "none",
            optimizer="torch-adamw-for-loop",
        )

    def launch(self, job: JobSpec) -> Launch:
        workload = job.workload
        per_gpu, micro = _batch(workload, job.world_size)
        log_dir = f"{job.storage_path}/litgpt"
        run_dir = f"{log_dir}/{job.name}"
        return Launch(
            command=(*torchrun(job), ENTRYPOINT, f"--devices={job.gpus_per_node}", f"--precision={_PRECISION[workload.precision]}"),
            env={
                "MODEL_NAME": workload.model,
                "BATCH_SIZE": str(per_gpu),
                "MICRO_BATCH_SIZE": str(micro),
                "MAX_ITERS": str(workload.steps),
            },
            log_dir=log_dir,
            setup=(f'mkdir -p "{run_dir}"', f'cd "{run_dir}"'),
        )
