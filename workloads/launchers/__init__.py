"""Framework launchers: one small module per framework, each a pure function from the job to
its launch command, environment and ConfigMap-served files. A new framework is one module
and one line in LAUNCHERS."""

from __future__ import annotations

from collections.abc import Callable

from trainstack.workloads.launchers import deepspeed, litgpt, nemo2, nemo_megatron
from trainstack.workloads.launchers.base import ConfigFiles, JobSpec, Launch

Launcher = Callable[[JobSpec], Launch]

# Keys are the values of `trainstack:workload.framework`.
LAUNCHERS: dict[str, Launcher] = {
    "nemo2": nemo2.launch,
    "nemo-megatron": nemo_megatron.launch,
    "litgpt": litgpt.launch,
    "deepspeed": deepspeed.launch,
}


def launch(job: JobSpec) -> Launch:
    """The launch of `job` by its framework's launcher."""
    return LAUNCHERS[job.workload.framework](job)


__all__ = ["LAUNCHERS", "ConfigFiles", "JobSpec", "Launch", "launch"]
