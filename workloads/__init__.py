"""The recipes' workloads on a Platform, and the workload components for programs of your own.

`build(workload, platform)` composes the training job from the machine's GPUDirect profile
(catalog) and the framework's launcher, adds the resiliency supervisor and TensorBoard where the
workload asks for them, and returns the stack outputs a user needs next. It knows the Platform
(built here, read from a platform stack, or read from an existing cluster), not the stack config.
"""

from __future__ import annotations

from typing import Any

import pulumi
from trainstack.core import catalog
from trainstack.core.config import Problem, WorkloadConfig
from trainstack.infra.platform import Platform
from trainstack.workloads import fit, launchers, profiles
from trainstack.workloads.launchers.base import ConfigFiles, Launch
from trainstack.workloads.network_policy import JobNetworkPolicies, JobNetworkPoliciesArgs
from trainstack.workloads.supervisor import (
    ResiliencySupervisor,
    SupervisorArgs,
    SupervisorSettings,
)
from trainstack.workloads.tensorboard import TensorBoard, TensorBoardArgs
from trainstack.workloads.training_job import (
    MASTER_PORT,
    Dataset,
    Topology,
    TrainingJob,
    TrainingJobArgs,
    pod_hostname,
    pod_hosts,
)

__all__ = [
    "ConfigFiles",
    "Dataset",
    "JobNetworkPolicies",
    "JobNetworkPoliciesArgs",
    "Launch",
    "ResiliencySupervisor",
    "SupervisorArgs",
    "SupervisorSettings",
    "TensorBoard",
    "TensorBoardArgs",
    "Topology",
    "TrainingJob",
    "TrainingJobArgs",
    "build",
    "problems",
]


def problems(workload: WorkloadConfig, machine: catalog.Machine) -> list[Problem]:
    """What the workload's job cannot be on `machine`: its framework's rules, and pod names
    that are not DNS labels."""
    found = launchers.problems(workload, machine)
    if not found:  # the estimate needs a model and a split the launcher accepts
        found += fit.problems(workload, machine)
    last = pod_hostname(workload.name, workload.controller, workload.nodes - 1)  # the longest
    if len(last) > 63:
        found.append(
            (("trainstack:workload", "name"), workload.name, f"is too long for {workload.nodes} nodes: pod hostname {last!r} exceeds 63 characters")
        )
    return found


def build(workload: WorkloadConfig, platform: Platform) -> dict[str, Any]:
    """Register the workload's resources on `platform`; return its stack outputs (camelCase)."""
    machine = platform.machine
    kube = platform.kubernetes
    # Supervisor and TensorBoard wait for the platform's API objects and the nodes; only the
    # training job also waits for the per-node installers, so they run side by side.
    after = [*kube.ready, *platform.node_pools]
    opts = pulumi.ResourceOptions(providers=[kube.provider], depends_on=after)

    job = launchers.JobSpec(
        name=workload.name,
        gpus_per_node=machine.gpus_per_node,
        hosts=pod_hosts(workload.name, workload.controller, workload.nodes),
        master_port=MASTER_PORT,
        storage_path=platform.storage_path,
        workload=workload,
    )
    launch = launchers.launch(job)
    # Validation refused an explicit request on a queue without TAS; the default asks only where it can.
    topology = workload.topology if kube.topology_aware else None
    training = TrainingJob(
        "training-job",
        TrainingJobArgs(
            name=workload.name,
            namespace=kube.namespace,
            image=platform.image,
            machine=machine,
            nodes=workload.nodes,
            node_selector=platform.node_selector,
            tolerations=platform.tolerations,
            queue=kube.local_queue,
            service_account=kube.service_account,
            claim_name=kube.claim_name,
            mount_path=platform.mount_path,
            launch=launch,
            gpudirect=profiles.for_machine(machine, kube.nics),
            controller=workload.controller,
            max_restarts=workload.max_restarts,
            topology=Topology(topology.level, topology.mode) if topology else None,
            shared_memory=workload.shared_memory,
            gcsfuse=platform.storage_kind == "gcs",
            dataset=Dataset(workload.dataset.source, workload.dataset.path) if workload.dataset else None,
            env=workload.plain_env,
            run_id=workload.run_id,
            secret_env=workload.secret_env,
            priority_class=workload.priority_class,
        ),
        pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=kube.node_setup)),
    )
    outputs: dict[str, Any] = {
        "jobName": training.job_name,
        "watchJob": training.watch_command,
        "followLogs": training.logs_command,
        "logDir": launch.log_dir,
    }
    resiliency = workload.resiliency
    if resiliency.enabled:
        ResiliencySupervisor(
            "supervisor",
            SupervisorArgs(
                jobset=workload.name,
                namespace=kube.namespace,
                project=platform.project,
                cpu_pool=platform.cpu_pool,
                gpus_per_node=machine.gpus_per_node,
                nodes=workload.nodes,
                nodes_per_replica=workload.nodes_per_data_parallel_replica,
                gpu_tolerations=platform.tolerations,
                settings=SupervisorSettings(
                    heartbeat_polling_period_s=resiliency.heartbeat_polling_period_s,
                    heartbeat_timeout_s=resiliency.heartbeat_timeout_s,
                    max_in_job_restarts=resiliency.max_in_job_restarts,
                    max_workload_restarts=resiliency.max_workload_restarts,
                    workload_scaling=resiliency.workload_scaling,
                    pod_termination_threshold_s=resiliency.pod_termination_threshold_s,
                    workload_downtime_threshold_s=resiliency.workload_downtime_threshold_s,
                ),
            ),
            opts,
        )
    if kube.network_policy:
        JobNetworkPolicies(
            "network-policies",
            JobNetworkPoliciesArgs(
                job=workload.name,
                namespace=kube.namespace,
                controller=workload.controller,
                supervised=resiliency.enabled,
                tensorboard=workload.tensorboard,
            ),
            opts,
        )
    if workload.tensorboard:
        tensorboard = TensorBoard(
            "tensorboard",
            TensorBoardArgs(
                name=f"{workload.name}-tensorboard",
                namespace=kube.namespace,
                claim_name=kube.claim_name,
                mount_path=platform.mount_path,
                log_dir=launch.log_dir,
                node_pool=platform.cpu_pool,
            ),
            opts,
        )
        outputs["tensorboard"] = tensorboard.access_command
    return outputs
