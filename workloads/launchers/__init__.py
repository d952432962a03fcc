"""Framework launchers: one small module per framework, each with a `Launcher` (base.py): its
`problems(workload, machine)` (what the framework would refuse, checked before anything is created),
`training` (how it holds the job in GPU memory), `global_batch`, and `launch(job)` (a pure function from
the job to its launch command, environment and ConfigMap-served files). A new framework is one module and
one line in LAUNCHERS."""

from __future__ import annotations

from trainstack.core import catalog, memory
from trainstack.core.errors import Problem
from trainstack.workloads.launchers import deepspeed, litgpt, megatron_bridge, nemo2, nemo_megatron
from trainstack.workloads.launchers.base import ConfigFiles, JobSpec, Launch, Launcher
from trainstack.workloads.spec import WorkloadSpec

# Keys are the values of `trainstack:workload.framework`.
LAUNCHERS: dict[str, Launcher] = {
    "nemo2": nemo2.NeMo2(),
    "megatron-bridge": megatron_bridge.MegatronBridge(),
    "nemo-megatron": nemo_megatron.NeMoMegatron(),
    "litgpt": litgpt.LitGpt(),
    "deepspeed": deepspeed.DeepSpeed(),
}


def problems(workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
    """What the workload's framework would refuse on `machine`."""
    return LAUNCHERS[workload.framework].problems(workload, machine)


def training(workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
    """How the workload's framework holds it in GPU memory, for the fit estimate."""
    return LAUNCHERS[workload.framework].training(workload, machine)


def global_batch(workload: WorkloadSpec, machine: catalog.Machine) -> int | None:
    """Sequences a training step: the stack's, else the framework's default where the launcher
    knows it (None where it does not)."""
    return LAUNCHERS[workload.framework].global_batch(workload, machine)


def launch(job: JobSpec) -> Launch:
    """The launch of `job` by its framework's launcher."""
    return LAUNCHERS[job.workload.framework].launch(job)


__all__ = ["LAUNCHERS", "ConfigFiles", "JobSpec", "Launch", "Launcher", "global_batch", "launch", "problems", "training"]
