"""The Kubernetes layer of a stack: what runs in the cluster before a workload can.

config + GcpPlatform -> the provider, the workload namespace and service account, JobSet,
Kueue with its queues, the GPU NIC networks, the node installers and the shared storage.
"""

from __future__ import annotations

import pulumi

from trainstack.core import catalog
from trainstack.components.gpudirect_installers import (
    NODE_INSTALLED,
    GpuDirectInstallers,
    GpuDirectInstallersArgs,
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
)
from trainstack.components.jobset import JobSet, JobSetArgs
from trainstack.components.k8s_provider import NODE_POOL_LABEL, Placement
from trainstack.components.kueue import GpuFlavor, Kueue, KueueArgs, PriorityClass, WaitForPodsReady
from trainstack.components.multinic import GpuNetworks, GpuNetworksArgs, NicAttachment
from trainstack.components.volumes import (
    GcsFuseVolume,
    GcsFuseVolumeArgs,
    NfsServer,
    NfsServerArgs,
    NfsVolume,
    NfsVolumeArgs,
)
from trainstack.components.workload_identity import WorkloadIdentity, WorkloadIdentityArgs
from trainstack.core.config import KueueConfig, StackConfig
from trainstack.core.context import StackContext
from trainstack.infra.platform import GcpPlatform, KubernetesPlatform

# The claim training pods mount their shared storage from, whatever backs it. Its
# PersistentVolume keeps the same name (the name every stack's volume has had: renaming would
# replace the volume and its claim under running jobs).
CLAIM_NAME = "shared-storage"


def controller_placement(config: StackConfig) -> Placement:
    """The CPU pool, where the controllers and the NFS server run. GKE labels every node with
    its pool's name, so this needs no label of ours; the pool is untainted."""
    return Placement(node_selector={NODE_POOL_LABEL: config.cpu_pool.name})


def network_policy(config: StackConfig, gcp: GcpPlatform) -> bool:
    """Whether the cluster enforces NetworkPolicy: Dataplane V2, which multi-networking needs."""
    return bool(gcp.nic_networks) or config.cluster.dataplane_v2


def gpu_flavor(config: StackConfig) -> GpuFlavor:
    """The Kueue flavor of the stack's GPU pool."""
    pool = config.gpu_pool
    return GpuFlavor(name=pool.name, node_pool=pool.name, machine_type=pool.machine_type, nodes=pool.max_nodes, topology_aware=pool.topology_aware)


def kueue_args(
    kueue: KueueConfig, flavor: GpuFlavor, local_queue: str, cluster_queue: str, namespace: pulumi.Input[str], placement: Placement
) -> KueueArgs:
    """Kueue's arguments from `trainstack:kueue`, the GPU pool's flavor and the queue names."""
    wait = kueue.wait_for_pods_ready
    return KueueArgs(
        cluster_queue=cluster_queue,
        local_queue=local_queue,
        namespace=namespace,
        flavors=[flavor],
        topology_name=kueue.topology_name,
        wait_for_pods_ready=WaitForPodsReady(
            timeout=wait.timeout,
            block_admission=wait.block_admission,
            recovery_timeout=wait.recovery_timeout,
            requeue_timestamp=wait.requeuing_strategy.timestamp,
            backoff_limit_count=wait.requeuing_strategy.backoff_limit_count,
            backoff_base_seconds=wait.requeuing_strategy.backoff_base_seconds,
            backoff_max_seconds=wait.requeuing_strategy.backoff_max_seconds,
        ),
        priority_classes=[PriorityClass(pc.name, pc.value, pc.description) for pc in kueue.priority_classes],
        placement=placement,
    )


def _storage(
    config: StackConfig,
    gcp: GcpPlatform,
    namespace: pulumi.Input[str],
    placement: Placement,
    opts: pulumi.ResourceOptions,
    controller_nodes: list[pulumi.Resource],
) -> GcsFuseVolume | NfsVolume:
    """The shared volume of `trainstack:storage.kind`, claimed as CLAIM_NAME."""
    storage = config.storage
    if storage.kind == "gcs":
        if gcp.bucket_name is None:
            raise ValueError("storage kind 'gcs' needs the GCP layer's bucket (GcpPlatform.bucket_name)")
        return GcsFuseVolume(
            "storage",
            GcsFuseVolumeArgs(
                gcp.bucket_name, CLAIM_NAME, namespace, file_cache=storage.bucket_config.file_cache, volume_name=CLAIM_NAME
            ),
            opts=opts,
        )
    if storage.kind == "filestore":
        if gcp.filestore_ip is None or gcp.filestore_share is None:
            raise ValueError("storage kind 'filestore' needs the GCP layer's Filestore export (GcpPlatform.filestore_ip, filestore_share)")
        share = storage.filestore_config
        return NfsVolume(
            "storage",
            NfsVolumeArgs(gcp.filestore_ip, f"/{gcp.filestore_share}", CLAIM_NAME, namespace, f"{share.capacity_gib}Gi", volume_name=CLAIM_NAME),
            opts=opts,
        )
    if gcp.nfs_disk_name is None:
        raise ValueError("storage kind 'nfs' needs the GCP layer's disk (GcpPlatform.nfs_disk_name)")
    disk = storage.nfs_config
    # infra.gcp makes the disk in the GPU pool's first zone; the server (on the CPU pool) is
    # scheduled there by its volume's zone affinity.
    server = NfsServer(
        "nfs-server",
        NfsServerArgs(
            gcp.nfs_disk_name, config.project, config.gpu_zones[0], disk.disk_size_gb, namespace, placement,
            network_policy=network_policy(config, gcp),
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=controller_nodes)),
    )
    return NfsVolume(
        "storage",
        NfsVolumeArgs(server.cluster_ip, NfsServer.export_path, CLAIM_NAME, namespace, f"{disk.disk_size_gb}Gi", volume_name=CLAIM_NAME),
        opts=opts,
    )


def build(ctx: StackContext, config: StackConfig, gcp: GcpPlatform) -> KubernetesPlatform:
    """Register the Kubernetes layer of `ctx`'s stack (`config`) on the cluster `gcp` built."""
    provider = gcp.cluster.provider
    on_cluster = pulumi.ResourceOptions(providers=[provider])
    controller_nodes = [gcp.cpu_pool] if gcp.cpu_pool is not None else list(gcp.node_pools)
    on_controller_nodes = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=controller_nodes))
    placement = controller_placement(config)

    identity = WorkloadIdentity(
        "workload-identity",
        WorkloadIdentityArgs(namespace=config.workload_namespace, service_account=ctx.workload_service_account),
        opts=on_cluster,
    )
    jobset = JobSet("jobset", JobSetArgs(placement=placement), opts=on_controller_nodes)
    kueue = Kueue(
        "kueue",
        kueue_args(config.kueue, gpu_flavor(config), config.local_queue, config.cluster_queue, identity.namespace, placement),
        opts=on_controller_nodes,
    )
    storage = _storage(config, gcp, identity.namespace, placement, on_cluster, controller_nodes)
    ready: list[pulumi.Resource] = [
        identity.service_account,
        jobset.release,
        *kueue.objects,
        storage.claim,
    ]

    if gcp.nic_networks:
        networks = GpuNetworks(
            "gpu-networks",
            GpuNetworksArgs([NicAttachment(nic.name, nic.kind, vpc, subnet) for nic, vpc, subnet in gcp.nic_networks]),
            opts=on_cluster,
        )
        ready += networks.objects

    # Node installers wait for the GPU pool: a DaemonSet is ready once it runs on every node,
    # so a job that waits for them starts on nodes that have their plugin and driver.
    on_gpu_nodes = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=list(gcp.node_pools)))
    machine = config.gpu_pool.machine
    node_setup: list[pulumi.Resource] = []
    if machine.gpudirect in NODE_INSTALLED:
        installers = GpuDirectInstallers("gpudirect", GpuDirectInstallersArgs(machine.name), opts=on_gpu_nodes)
        node_setup += installers.daemonsets
    if config.gpu_pool.gpu_driver == "daemonset":
        driver = NvidiaDriverInstaller("nvidia-driver", NvidiaDriverInstallerArgs(machine.accelerator), opts=on_gpu_nodes)
        node_setup.append(driver.daemonset)

    return KubernetesPlatform(
        provider=provider,
        namespace=config.workload_namespace,
        service_account=ctx.workload_service_account,
        local_queue=config.local_queue,
        claim_name=storage.claim_name,
        nics=[nic for nic, _, _ in gcp.nic_networks],
        ready=ready,
        node_setup=node_setup,
        topology_aware=config.gpu_pool.topology_aware,
        network_policy=network_policy(config, gcp),
        outputs={
            "localQueue": config.local_queue,
            "clusterQueue": config.cluster_queue,
            "workloadNamespace": config.workload_namespace,
            "storageClaim": storage.claim_name,
            "kueueVersion": catalog.KUEUE_CHART.version,
            "jobsetVersion": catalog.JOBSET_CHART.version,
        },
    )
