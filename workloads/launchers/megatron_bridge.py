"""Megatron-Bridge (NeMo 26.02): its performance script, `scripts/performance/run_script.py`,
with the model's recipe and the split, batch, sequence length and precision the stack config
states, one process per GPU under torchrun, as the gpu-recipes nemo2602 recipes run it
(AI-Hypercomputer/gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/
launcher.sh: Megatron-Bridge cloned at a pinned commit into /opt, then torchrun of a wrapper that
reruns run_script.py with the same flags through nemo_run's LocalExecutor, which this launcher
skips). Flags and their choices: NVIDIA-NeMo/Megatron-Bridge f7a9428 scripts/performance/
argument_parser.py. The llama recipes write their run under `<working directory>/nemo_experiments`
(src/megatron/bridge/recipes/llama/llama3.py), so the launcher runs in a directory of the run on
the shared storage.

The A4X Max recipe (gpu-recipes 2e1fd5e training/a4x-max/llama3-1-405b/megatron-bridge-gke/nemo2602/
64gpus-fp8cs-seq8192-gbs64/recipe/launcher.sh) runs the same script at Megatron-Bridge 9c9dd84 with
`--gpu gb300`, `--compute_dtype fp8_cs` and `--config_variant v1`: each recipe's commit and config
variant are the recipe's (`RECIPES`); `precision: fp8` is the recipes' fp8 with current scaling, fp8_cs
(the script's choices at 9c9dd84 scripts/performance/argument_parser.py: bf16, fp8_cs, fp8_mx, fp8_sc,
nvfp4).

`zeroStage: 3` is Megatron-FSDP (`--use_megatron_fsdp`); `overrides` are further flags of the
script as `name=value` (`activation_offload_layers=20` -> `--activation_offload_layers=20`).
"""

from __future__ import annotations

from dataclasses import replace

from trainstack.core import catalog, memory
from trainstack.core.errors import Problem
from trainstack.workloads.launchers.base import (
    WORKLOAD,
    JobSpec,
    Launch,
    StackBatch,
    megatron_problems,
    model_problems,
    precision_problems,
    setting_problems,
    torchrun,
)
from trainstack.workloads.launchers.base import training as base_training
from trainstack.workloads.spec import WorkloadSpec

# Where the recipes' launcher.sh clones the tree.
REPOSITORY = "https://github.com/NVIDIA-NeMo/Megatron-Bridge.git"
HOME = "/opt/Megatron-Bridge"
SCRIPT = f"{HOME}/scripts/performance/run_script.py"
CUDA_COMPAT = "/usr/local/cuda/compat/lib"

# Model name (as the stack writes it) -> (--model_family_name, --model_recipe_name, the commit the
# recipe checks out, its --config_variant or None), as each recipe's launcher.sh passes them: the A4X
# llama3_70b recipe and the A4X Max llama3-1-405b recipe (module docstring).
RECIPES = {
    "llama3-70b": ("llama", "llama3_70b", "f7a9428f301fa17ac374d5e7166a63b0aa4771af", None),
    "llama3.1-405b": ("llama", "llama31_405b", "9c9dd848966322fc3ed7706747ec13219ef49dda", "v1"),
}
# trainstack GPU -> the script's --gpu (its choices: h100, b200, gb200, gb300, b300).
GPUS = {"gb200": "gb200", "gb300": "gb300", "b200": "b200", "h100": "h100"}
# trainstack precision -> the script's --compute_dtype (the recipes' fp8 is fp8_cs).
DTYPES = {"bf16": "bf16", "fp8": "fp8_cs"}
# The recipes' sequence length (the script's default comes from the model's recipe).
SEQ_LENGTH = 8192


def flags(job: JobSpec) -> tuple[str, ...]:
    """run_script.py's flags for the job, in the recipe's order."""
    workload = job.workload
    family, recipe, _, variant = RECIPES[workload.model]
    split = workload.parallelism
    tensor, pipeline, context = (split.tensor, split.pipeline, split.context) if split else (1, 1, 1)
    return (
        f"--model_family_name={family}",
        f"--model_recipe_name={recipe}",
        f"--gpu={GPUS[job.gpu]}",
        f"--num_gpus={job.world_size}",
        f"--gpus_per_node={job.gpus_per_node}",
        f"--compute_dtype={DTYPES[workload.precision]}",
        *((f"--config_variant={variant}",) if variant else ()),
        f"--seq_length={workload.seq_length or SEQ_LENGTH}",
        *((f"--global_batch_size={workload.global_batch_size}",) if workload.global_batch_size else ()),
        f"--micro_batch_size={workload.micro_batch_size or 1}",
        f"--tensor_model_parallel_size={tensor}",
        f"--pipeline_model_parallel_size={pipeline}",
        f"--context_parallel_size={context}",
        *((f"--virtual_pipeline_model_parallel_size={split.virtual_pipeline}",) if split and split.virtual_pipeline else ()),
        f"--use_megatron_fsdp={'true' if (workload.zero_stage if workload.zero_stage is not None else 3) == 3 else 'false'}",
        f"--max_steps={workload.steps}",
        *(f"--{override}" for override in workload.overrides),
    )


class MegatronBridge(StackBatch):
    """The Megatron-Bridge launcher (a `Launcher`)."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What the script would refuse: an unknown recipe, a GPU it has no --gpu for, a precision
        other than bf16 and fp8 (fp8_cs), sharding other than the distributed optimizer (1) or
        Megatron-FSDP (3), a split that does not fit."""
        found = [
            *model_problems("megatron-bridge", workload, RECIPES),
            *precision_problems("Megatron-Bridge", workload, tuple(DTYPES)),
            *setting_problems("Megatron-Bridge", workload, (1, 3)),
            *megatron_problems(workload, machine),
        ]
        if machine.gpu.name not in GPUS:
            found.append(
                Problem((WORKLOAD, "framework"), workload.framework, f"Megatron-Bridge has no --gpu for {machine.gpu.name}; it takes {', '.join(GPUS)}")
            )
        for i, override in enumerate(workload.overrides):
            name, _, value = override.partition("=")
            if name.startswith("-"):
                found.append(Problem((WORKLOAD, "overrides", i), override, "must be name=value, a flag of run_script.py without its dashes"))
            elif name == "activation_offload_layers" and not value.isdigit():
                found.append(Problem((WORKLOAD, "overrides", i), override, "activation_offload_layers takes a number of layers"))
        return found

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        """Megatron-FSDP shards weights, gradients and optimizer state over the data-parallel ranks
        (zeroStage 3, the recipe's: Megatron-FSDP's gathering, memory.Training.zero3), with bf16
        weights and fp32 master copies; the layers an
        `activation_offload_layers` override names keep their activations in host memory. Under
        fp8 the layers' weights are FP8 primary weights: the script's fp8_cs takes
        `bf16_with_fp8_current_scaling_mixed`, which sets `fp8_param_gather`, with no bf16 first
        and last layers (Megatron-Bridge 9c9dd84 scripts/performance/utils/precision.py
        `get_precision_config`, src/megatron/bridge/training/mixed_precision.py)."""
        held = replace(
            base_training(workload, machine, zero_stage=3, master_weights=True, seq_length=SEQ_LENGTH),
            zero3="megatron-fsdp",
            fp8_params=workload.precision == "fp8",
        )
        offloaded = dict(o.split("=", 1) for o in workload.overrides if "=" in o).get("activation_offload_layers", "0")
        return replace(held, offloaded_layers=int(offloaded)) if offloaded.isdigit() else held

    def launch(self, job: JobSpec) -> Launch:
        commit = RECIPES[job.workload.model][2]
        log_dir = f"{job.storage_path}/megatron-bridge"
        run_dir = f"{log_dir}/${{JOB_IDENTIFIER}}"
        return Launch(
            command=(*torchrun(job), SCRIPT, *flags(job)),
            log_dir=log_dir,
            setup=(
                # The recipe's launcher.sh puts the image's CUDA forward-compatibility libraries first.
                f'export LD_LIBRARY_PATH="{CUDA_COMPAT}:${{LD_LIBRARY_PATH}}"',
                f"rm -rf {HOME}",
                f"git clone {REPOSITORY} {HOME}",
                f"git -C {HOME} checkout {commit}",
                f"git -C {HOME} submodule update --init --recursive",
                f'mkdir -p "{run_dir}"',
                f'cd "{run_dir}"',
            ),
        )
