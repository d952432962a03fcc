"""The recipes' workloads on a Platform, and the workload components for programs of your own.

`build(workload, platform)` composes the training job from the machine's GPUDirect profile
(catalog) and the framework's launcher, adds the resiliency supervisor and TensorBoard where the
workload asks for them, and returns the stack outputs a user needs next. It knows the Platform
(built here, read from a platform stack, or read from an existing cluster), not the stack config.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from trainstack.components.storage import KINDS
from trainstack.core import catalog, names, rules
from trainstack.core.errors import Problem, key_path
from trainstack.infra.platform import TOP, Place, Platform
from trainstack.infra.stack import NetworkConfig
from trainstack.workloads import fit, launchers, preflight, profiles
from trainstack.workloads.launchers.base import CONFIG_DIR, ConfigFiles, Launch
from trainstack.workloads.network_policy import JobNetworkPolicies, JobNetworkPoliciesArgs
from trainstack.workloads.pod import NVIDIA_DIR
from trainstack.workloads.spec import Dataset, WorkloadSpec
from trainstack.workloads.supervisor import (
    ResiliencySupervisor,
    SupervisorArgs,
    SupervisorSettings,
)
from trainstack.workloads.tensorboard import TensorBoard, TensorBoardArgs
from trainstack.workloads.training_job import (
    LOCAL_SSD_DIR,
    MASTER_PORT,
    Topology,
    TrainingJob,
    TrainingJobArgs,
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


def problems(workload: WorkloadSpec, machine: catalog.Machine, pods_ready: Sequence[tuple[str, str]] = ()) -> list[Problem]:
    """What the workload's job cannot be on `machine`: its framework's rules, its preflight's (against
    Kueue's pods-ready budgets where known: (key, duration) pairs), and names derived from its name
    (after every suffix the controllers add) over their limits."""
    found = launchers.problems(workload, machine) + preflight.problems(workload.preflight, machine, workload.nodes, pods_ready)
    if not found:  # the estimate needs a model and a split the launcher accepts
        found += fit.problems(workload, machine)
    if rule := names.too_long(workload.name, workload.controller, workload.nodes, workload.resiliency.enabled, workload.tensorboard):
        found.append(Problem(("trainstack:workload", "name"), workload.name, rule))
    return found


def container_mounts(machine: catalog.Machine) -> dict[str, str]:
    """The mount paths the training container has whatever the config says, and what mounts there."""
    parts = profiles.for_machine(machine, catalog.nic_networks(machine, NetworkConfig().gpu_nic_cidr))
    taken = {"/dev/shm": "shared memory", NVIDIA_DIR: "the NVIDIA libraries", CONFIG_DIR: "the launcher's config files"}
    taken |= {m["mountPath"]: f"GPUDirect ({machine.gpudirect.value})" for m in parts.volume_mounts}
    return taken | ({LOCAL_SSD_DIR: "the local SSDs"} if machine.local_ssds else {})


def mount_problems(workload: WorkloadSpec, machine: catalog.Machine, storage: tuple[tuple[str, ...], str]) -> list[Problem]:
    """User mount paths (the shared storage's, the dataset's) that another mount of the training
    container already has (Kubernetes refuses two volumeMounts at one mountPath)."""
    keys = {storage[0]: storage[1]}
    if workload.dataset:
        keys[("trainstack:workload", "dataset", "path")] = workload.dataset.path
    by_name = {key_path(loc): loc for loc in keys}
    mounts = {key_path(loc): path for loc, path in keys.items()}
    return [Problem(by_name[key], path, rule) for key, path, rule in rules.mount_paths(mounts, container_mounts(machine))]


def build(workload: WorkloadSpec, platform: Platform, place: Place = TOP) -> dict[str, Any]:
    """Register the workload's resources on `platform` at `place`; return its stack outputs (camelCase)."""
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
        gpu=machine.gpu.name,
    )
    launch = launchers.launch(job)
    # Validation refused an explicit request on a queue without TAS; the default asks only where it can.
    topology = workload.topology if kube.topology_aware else None
    training = TrainingJob(
        place.name("training-job"),
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
            gpudirect=profiles.for_machine(machine, kube.nics, host_monitor=workload.resiliency.enabled, dranet=kube.dranet),
            dranet=kube.dranet and not workload.resiliency.enabled,
            controller=workload.controller,
            max_restarts=workload.max_restarts,
            topology=Topology(topology.level, topology.mode) if topology else None,
            shared_memory=workload.shared_memory,
            gcsfuse=KINDS[platform.storage_kind].fuse,
            dataset=workload.dataset,
            env=workload.plain_env,
            run_id=workload.run_id,
            secret_env=workload.secret_env,
            priority_class=workload.priority_class,
            preflight=preflight.gate(workload.preflight, machine, workload.nodes),
            cpu_pool=platform.cpu_pool,
        ),
        place.opts("training-job", opts, pulumi.ResourceOptions(depends_on=kube.node_setup)),
        companions=kube.companions,
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
            place.name("supervisor"),
            SupervisorArgs(
                jobset=workload.name,
                namespace=kube.namespace,
                project=platform.project,
                cpu_pool=platform.cpu_pool,
                gpus_per_node=machine.gpus_per_node,
                nodes=workload.nodes,
                nodes_per_replica=workload.nodes_per_data_parallel_replica,
                gpu_tolerations=[dict(t) for t in platform.tolerations],
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
            place.opts("supervisor", opts),
        )
    if kube.network_policy:
        # Where the job's pods run: each worker of a MultiKueue manager, else this cluster.
        where: dict[str, pulumi.ResourceOptions | None] = {f"-{w}": pulumi.ResourceOptions(providers=[p]) for w, p in kube.companions.items()} or {"": None}
        for suffix, on_worker in where.items():
            JobNetworkPolicies(
                place.name(f"network-policies{suffix}"),
                JobNetworkPoliciesArgs(
                    job=workload.name,
                    namespace=kube.namespace,
                    controller=workload.controller,
                    supervised=resiliency.enabled,
                    tensorboard=workload.tensorboard,
                    deny_namespace=kube.namespace != "default",
                ),
                place.opts(f"network-policies{suffix}", opts, on_worker),
            )
    if workload.tensorboard:
        tensorboard = TensorBoard(
            place.name("tensorboard"),
            TensorBoardArgs(
                name=names.tensorboard(workload.name),
                namespace=kube.namespace,
                claim_name=kube.claim_name,
                mount_path=platform.mount_path,
                log_dir=launch.log_dir,
                node_pool=platform.cpu_pool,
            ),
            place.opts("tensorboard", opts),
        )
        outputs["tensorboard"] = tensorboard.access_command
    return outputs
