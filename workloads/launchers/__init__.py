"""Framework launchers: one small module per framework, each with `problems(workload, machine)`
(what the framework would refuse, checked before anything is created) and `launch(job)` (a pure
function from the job to its launch command, environment and ConfigMap-served files). A new
framework is one module and one line in LAUNCHERS."""

from __future__ import annotations

from types import ModuleType

from trainstack.core import catalog, memory
from trainstack.core.config import Problem, WorkloadConfig
from trainstack.workloads.launchers import deepspeed, litgpt, megatron_bridge, nemo2, nemo_megatron
from trainstack.workloads.launchers.base import ConfigFiles, JobSpec, Launch

# Keys are the values of `trainstack:workload.framework`.
LAUNCHERS: dict[str, ModuleType] = {
    "nemo2": nemo2,
    "megatron-bridge": megatron_bridge,
    "nemo-megatron": nemo_megatron,
    "litgpt": litgpt,
    "deepspeed": deepspeed,
}


def problems(workload: WorkloadConfig, machine: catalog.Machine) -> list[Problem]:
    """What the workload's framework would refuse on `machine`."""
    found: list[Problem] = LAUNCHERS[workload.framework].problems(workload, machine)
    return found


def training(workload: WorkloadConfig, machine: catalog.Machine) -> memory.Training:
    """How the workload's framework holds it in GPU memory, for the fit estimate."""
    held: memory.Training = LAUNCHERS[workload.framework].training(workload, machine)
    return held


def global_batch(workload: WorkloadConfig, machine: catalog.Machine) -> int | None:
    """Sequences a training step: the stack's, else the framework's default where the launcher
    knows it (None where it does not)."""
    default = getattr(LAUNCHERS[workload.framework], "global_batch", None)
    return default(workload, machine) if default else workload.global_batch_size


def launch(job: JobSpec) -> Launch:
    """The launch of `job` by its framework's launcher."""
    launched: Launch = LAUNCHERS[job.workload.framework].launch(job)
    return launched


__all__ = ["LAUNCHERS", "ConfigFiles", "JobSpec", "Launch", "global_batch", "launch", "problems", "training"]
