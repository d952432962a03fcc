"""`TrainingWorkload`: a recipe's job as one component, from the stack file's `trainstack:workload`
section as data (framework, model, parallelism, nodes, steps, ...) and the platform it runs on,
checked by the stack file's rules (the section's model, the job against its pool, queue and
storage, the framework's launcher, the GPU memory fit) before anything registers."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import ValidationError

from trainstack import workloads
from trainstack.components.image import ImageSpec
from trainstack.core import catalog
from trainstack.core.errors import ABSENT, Problem
from trainstack.core.spec import plain, problem_of
from trainstack.infra.platform import Place, Platform
from trainstack.infra.training_platform import TrainingPlatform, input_error
from trainstack.workloads import platforms
from trainstack.workloads.spec import WorkloadSpec, workload_problems

TYPE = "trainstack:index:TrainingWorkload"

JOBS: ContextVar[list[tuple[WorkloadSpec, catalog.Machine]] | None] = ContextVar("trainstack_jobs", default=None)
"""Where the offline plan of a program of your own (app/plan/program_dir.py) collects each job the
program made: its checked workload and its platform's machine, for the plan's GPU memory fit."""


@dataclass(frozen=True)
class TrainingWorkloadArgs:
    """A job: the stack file's `trainstack:workload` and the platform it runs on."""

    workload: Any
    """The stack file's `trainstack:workload` (camelCase keys as a stack file writes them; in Python also a WorkloadSpec)."""
    platform: Any
    """The TrainingPlatform the job runs on (in a package program, a TrainingPlatform of the same program; in Python also a Platform)."""


class TrainingWorkload(pulumi.ComponentResource):
    """A training job of a recipe (its JobSet, resiliency supervisor, network policies and
    TensorBoard) on a TrainingPlatform."""

    job_name: pulumi.Output[str]
    """The JobSet's name."""
    watch_job: pulumi.Output[str]
    """A kubectl command that watches the job."""
    follow_logs: pulumi.Output[str]
    """A kubectl command that follows the job's logs."""
    log_dir: pulumi.Output[str]
    """Where the job writes its logs and checkpoints."""
    queue: pulumi.Output[str]
    """The Kueue LocalQueue the job is submitted to."""

    def __init__(self, name: str, args: TrainingWorkloadArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if isinstance(args, dict):  # the package's provider passes the inputs as a dict
            args = TrainingWorkloadArgs(**args)
        on = args.platform
        if not isinstance(on, TrainingPlatform | Platform):
            raise input_error(
                "TrainingWorkload",
                [Problem(("platform",), ABSENT, f"a {type(on).__name__} is no TrainingPlatform of this program (pass the TrainingPlatform itself)")],
            )
        platform: Platform = on.built if isinstance(on, TrainingPlatform) else on
        workload = checked(args.workload, platform, on.image_config if isinstance(on, TrainingPlatform) else None)
        super().__init__(TYPE, name, None, opts)
        if (jobs := JOBS.get()) is not None:
            jobs.append((workload, platform.machine))
        self.stack_outputs: dict[str, Any] = workloads.build(workload, platform, Place(self, name))
        """The stack outputs the shipped program exports."""
        self.job_name = pulumi.Output.from_input(self.stack_outputs["jobName"])
        self.watch_job = pulumi.Output.from_input(self.stack_outputs["watchJob"])
        self.follow_logs = pulumi.Output.from_input(self.stack_outputs["followLogs"])
        self.log_dir = pulumi.Output.from_input(self.stack_outputs["logDir"])
        self.queue = pulumi.Output.from_input(platform.kubernetes.local_queue)
        self.register_outputs(
            {"jobName": self.job_name, "watchJob": self.watch_job, "followLogs": self.follow_logs, "logDir": self.log_dir, "queue": self.queue}
        )


def checked(section: Any, platform: Platform, image: ImageSpec | None) -> WorkloadSpec:
    """The workload section, validated, and checked against `platform` as a stack file's is."""
    try:
        workload = section if isinstance(section, WorkloadSpec) else WorkloadSpec.model_validate(plain(section), by_alias=True, by_name=True)
    except ValidationError as exc:
        raise input_error("TrainingWorkload", [problem_of(e, WorkloadSpec, ("workload",)) for e in exc.errors(include_url=False)]) from None
    machine = platform.machine
    sources = {"nodes": "platform", "machine": "platform", "storage": "platform", "topology": "platform"}
    found: list[Problem] = list(workload_problems(workload, machine, platform.gpu_nodes, platform.storage_kind, platform.kubernetes.topology_aware, sources))
    if workload.nodes <= platform.gpu_nodes:
        found += workloads.problems(workload, machine)
        found += workloads.mount_problems(workload, machine, (("platform", "mountPath"), platform.mount_path))
        if image is not None:
            found += platforms.problems(workload, machine, image, ("platform",))
    if found:
        raise input_error("TrainingWorkload", found)
    return workload
