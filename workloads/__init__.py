"""The recipes' workloads, wired from the stack config onto the platform.

`build` composes the training job from the machine's GPUDirect profile (catalog) and the
framework's launcher, adds the resiliency supervisor and TensorBoard where the config asks for
them, and returns the stack outputs a user needs next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi

from trainstack.context import StackContext
from trainstack.workloads import launchers, profiles
from trainstack.workloads.supervisor import ResiliencySupervisor, SupervisorArgs
from trainstack.workloads.tensorboard import TensorBoard, TensorBoardArgs
from trainstack.workloads.training_job import MASTER_PORT, TrainingJob, TrainingJobArgs, pod_hosts

if TYPE_CHECKING:
    from trainstack.infra.platform import Platform


def build(ctx: StackContext, platform: Platform) -> dict[str, Any]:
    """Register the workload's resources; return its stack outputs (camelCase names)."""
    config = ctx.config
    workload = config.workload
    machine = config.gpu_pool.machine
    kube = platform.kubernetes
    # Supervisor and TensorBoard wait for the platform's API objects and the nodes; only the
    # training job also waits for the per-node installers, so they run side by side.
    after = [*kube.ready, *platform.node_pools]
    opts = pulumi.ResourceOptions(providers=[kube.provider])

    job = launchers.JobSpec(
        name=workload.name,
        gpus_per_node=machine.gpus_per_node,
        hosts=pod_hosts(workload.name, workload.controller, workload.nodes),
        master_port=MASTER_PORT,
        storage_path=config.storage.mount_path,
        workload=workload,
    )
    launch = launchers.launch(job)
    training = TrainingJob(
        "training-job",
        TrainingJobArgs(
            name=workload.name,
            namespace=kube.namespace,
            image=platform.image,
            machine=machine,
            nodes=workload.nodes,
            node_pool=config.gpu_pool.name,
            queue=kube.local_queue,
            service_account=kube.service_account,
            claim_name=kube.claim_name,
            mount_path=config.storage.mount_path,
            launch=launch,
            gpudirect=profiles.for_machine(machine, kube.network_names),
            controller=workload.controller,
            max_restarts=workload.max_restarts,
            topology=workload.topology,
            shared_memory=workload.shared_memory,
            gcsfuse=config.storage.kind == "gcs",
            dataset=workload.dataset,
            env=workload.env,
            after=[*after, *kube.node_setup],
        ),
        opts,
    )
    outputs: dict[str, Any] = {
        "jobName": training.job_name,
        "watchJob": training.watch_command,
        "followLogs": training.logs_command,
        "logDir": launch.log_dir,
    }
    if workload.resiliency.enabled:
        ResiliencySupervisor(
            "supervisor",
            SupervisorArgs(
                jobset=workload.name,
                namespace=kube.namespace,
                project=config.project,
                cpu_pool=config.cpu_pool.name,
                gpus_per_node=machine.gpus_per_node,
                nodes=workload.nodes,
                nodes_per_replica=workload.nodes_per_data_parallel_replica,
                settings=workload.resiliency,
                after=after,
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
                mount_path=config.storage.mount_path,
                log_dir=launch.log_dir,
                node_pool=config.cpu_pool.name,
                after=after,
            ),
            opts,
        )
        outputs["tensorboard"] = tensorboard.access_command
    return outputs
