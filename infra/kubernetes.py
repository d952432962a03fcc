"""The Kubernetes layer of a stack: what runs in the cluster before a workload can.

config + GcpPlatform -> the provider, the workload namespace and service account, JobSet,
Kueue with its queues, the GPU NIC networks, the node installers and the shared storage.
"""

from __future__ import annotations

import pulumi

from trainstack.components.dra_driver import NvidiaDraDriver, NvidiaDraDriverArgs
from trainstack.components.gpudirect_installers import (
    NODE_INSTALLED,
    GpuDirectInstallers,
    GpuDirectInstallersArgs,
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
)
from trainstack.components.jobset import JobSet, JobSetArgs
from trainstack.components.k8s_provider import NODE_POOL_LABEL, Placement
from trainstack.components.kueue import GpuFlavor, Kueue, KueueArgs, KueueSpec
from trainstack.components.multinic import GpuNetworks, GpuNetworksArgs, NicAttachment
from trainstack.components.node_daemons import MachineDaemonSets, MachineDaemonSetsArgs
from trainstack.components.storage.kind import Mounting, Volume
from trainstack.components.workload_identity import WorkloadIdentity, WorkloadIdentityArgs
from trainstack.core import catalog, names, rules
from trainstack.infra.context import StackContext
from trainstack.infra.platform import TOP, GcpPlatform, KubernetesPlatform, Place
from trainstack.infra.stack import StackConfig

# The claim training pods mount their shared storage from, whatever backs it. Its
# PersistentVolume keeps the same name (the name every stack's volume has had: renaming would
# replace the volume and its claim under running jobs).
CLAIM_NAME = "shared-storage"


def controller_placement(config: StackConfig) -> Placement:
    """The CPU pool, where the controllers and the NFS server run. GKE labels every node with
    its pool's name, so this needs no label of ours; the pool is untainted."""
    return Placement(node_selector={NODE_POOL_LABEL: config.cpu_pool.name})


def network_policy(config: StackConfig, gcp: GcpPlatform) -> bool:
    """Whether the cluster enforces NetworkPolicy: Dataplane V2, which multi-networking needs (on
    every cluster with a machine with extra NICs, DRANET or not: infra.gcp `_cluster`)."""
    return any(p.machine.extra_nics for p in config.pools) or config.cluster.dataplane_v2


def gpu_flavors(config: StackConfig) -> list[GpuFlavor]:
    """The Kueue flavors of the stack's GPU pools, queue by queue, each queue's in config order
    (KueueArgs takes a flavor of its main queue's name as one of the main queue)."""
    return [
        GpuFlavor(
            name=pool.name,
            node_pool=pool.name,
            machine_type=pool.machine_type,
            nodes=pool.max_nodes,
            topology_aware=pool.topology_aware,
            queued=pool.provisioning == "queued",
            autoscaled=pool.autoscaling is not None,
            dranet=pool.dranet,
            max_run_duration_s=int(rules.duration_seconds(pool.max_run_duration)) if pool.max_run_duration else None,
            queue=queue.local_queue,
        )
        for queue in config.queues
        for pool in queue.pools
    ]


def kueue_args(
    kueue: KueueSpec,
    flavors: list[GpuFlavor],
    local_queue: str,
    cluster_queue: str,
    namespace: pulumi.Input[str],
    placement: Placement,
    pods_ready_timeout: str | None = None,
) -> KueueArgs:
    """Kueue's arguments: `trainstack:kueue` with the main queue's names and the `waitForPodsReady`
    timeout the stack gets (StackConfig.pods_ready_timeout; None: as written), and the GPU pools' flavors."""
    wait = kueue.wait_for_pods_ready
    named = {
        "local_queue": local_queue,
        "cluster_queue": cluster_queue,
        "wait_for_pods_ready": wait.model_copy(update={"timeout": pods_ready_timeout or wait.timeout}),
    }
    return KueueArgs(spec=kueue.model_copy(update=named), namespace=namespace, flavors=flavors, placement=placement)


def _storage(
    place: Place,
    config: StackConfig,
    gcp: GcpPlatform,
    namespace: pulumi.Input[str],
    placement: Placement,
    on_cluster: pulumi.ResourceOptions,
    controller_nodes: list[pulumi.Resource],
) -> Volume:
    """The shared volume of `trainstack:storage.kind`, claimed as CLAIM_NAME: mounted as its kind mounts it (components/storage)."""
    mounting = Mounting(
        claim_name=CLAIM_NAME,
        namespace=namespace,
        placement=placement,
        network_policy=network_policy(config, gcp),
        controller_nodes=controller_nodes,
        name=place.name,
        opts=lambda role, *more: place.opts(role, on_cluster, *more),
    )
    return gcp.storage.mount(mounting)


def build(ctx: StackContext, config: StackConfig, gcp: GcpPlatform, place: Place = TOP) -> KubernetesPlatform:
    """Register the Kubernetes layer of `ctx`'s stack (`config`) on the cluster `gcp` built, at `place`."""
    provider = gcp.cluster.provider
    on_cluster = pulumi.ResourceOptions(providers=[provider])
    controller_nodes = [gcp.cpu_pool] if gcp.cpu_pool is not None else list(gcp.node_pools)
    on_controller_nodes = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=controller_nodes))
    placement = controller_placement(config)

    identity = WorkloadIdentity(
        place.name("workload-identity"),
        WorkloadIdentityArgs(namespace=ctx.workload_namespace, service_account=ctx.workload_service_account),
        opts=place.opts("workload-identity", on_cluster),
    )
    jobset = JobSet(place.name("jobset"), JobSetArgs(placement=placement), opts=place.opts("jobset", on_controller_nodes))
    kueue = Kueue(
        place.name("kueue"),
        kueue_args(config.kueue, gpu_flavors(config), config.local_queue, config.cluster_queue, identity.namespace, placement, config.pods_ready_timeout),
        opts=place.opts("kueue", on_controller_nodes),
    )
    # IMEX for a machine whose NVLink spans nodes: the DRA driver serves its ComputeDomains.
    nvlink = next((p.machine for p in config.pools if p.machine.accelerator_topology), None)
    dra = (
        NvidiaDraDriver(place.name("nvidia-dra-driver"), NvidiaDraDriverArgs(nvlink.name, placement), opts=place.opts("nvidia-dra-driver", on_controller_nodes))
        if nvlink
        else None
    )
    storage = _storage(place, config, gcp, identity.namespace, placement, on_cluster, controller_nodes)
    ready: list[pulumi.Resource] = [
        identity.service_account,
        jobset.release,
        *kueue.objects,
        storage.claim,
        *([dra.release] if dra else []),
    ]

    queue = config.job_queue_of(ctx.queue)
    # Networks for pods to join, but not on DRANET, where pods claim the NICs.
    dranet = {p.machine_type for p in config.pools if p.dranet}
    for i, (machine_type, nets) in enumerate((m, n) for m, n in gcp.nic_networks.items() if m not in dranet):
        role, roles_were = names.by_machine("gpu-networks", i, machine_type)
        networks = GpuNetworks(
            place.name(role),
            GpuNetworksArgs([NicAttachment(nic.name, nic.kind, vpc, subnet) for nic, vpc, subnet in nets]),
            opts=place.opts(role, on_cluster, roles_were=roles_were),
        )
        if machine_type == queue.machine.name:
            ready += networks.objects

    # Node installers wait for the GPU pool: a DaemonSet is ready once it runs on every node,
    # so a job that waits for them starts on nodes that have their plugin and driver.
    on_gpu_nodes = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=list(gcp.node_pools)))
    # One installer set per machine type with a node-installed GPUDirect stack, selecting that
    # machine's accelerator; the job waits only for its own machine's.
    node_setup: list[pulumi.Resource] = []
    machines = list(dict.fromkeys(p.machine_type for p in config.pools))
    for i, machine_type in enumerate(m for m in machines if catalog.machine(m).gpudirect in NODE_INSTALLED):
        role, roles_were = names.by_machine("gpudirect", i, machine_type)
        installers = GpuDirectInstallers(place.name(role), GpuDirectInstallersArgs(machine_type), opts=place.opts(role, on_gpu_nodes, roles_were=roles_were))
        if machine_type == queue.machine.name:
            node_setup += installers.daemonsets
    # The DaemonSets a machine's nodes need beside those (catalog `node_daemonsets`: asapd-lite on A4X Max).
    for machine_type in (m for m in machines if catalog.machine(m).node_daemonsets):
        daemons = MachineDaemonSets(
            place.name(f"node-daemons-{machine_type}"), MachineDaemonSetsArgs(machine_type), opts=place.opts(f"node-daemons-{machine_type}", on_gpu_nodes)
        )
        if machine_type == queue.machine.name:
            node_setup += daemons.daemonsets
    driven = next((p for p in config.pools if p.gpu_driver == "daemonset"), None)  # one accelerator a cluster (validated)
    if driven is not None:
        driver = NvidiaDriverInstaller(
            place.name("nvidia-driver"), NvidiaDriverInstallerArgs(driven.machine.accelerator), opts=place.opts("nvidia-driver", on_gpu_nodes)
        )
        if driven.machine.accelerator == queue.machine.accelerator:
            node_setup.append(driver.daemonset)

    return KubernetesPlatform(
        provider=provider,
        namespace=ctx.workload_namespace,
        service_account=ctx.workload_service_account,
        local_queue=queue.local_queue,
        claim_name=storage.claim_name,
        nics=[] if queue.machine.name in dranet else [nic for nic, _, _ in gcp.nic_networks.get(queue.machine.name, [])],
        dranet=queue.machine.name in dranet,
        ready=ready,
        node_setup=node_setup,
        topology_aware=queue.topology_aware,
        network_policy=network_policy(config, gcp),
        outputs={
            "localQueue": config.local_queue,
            "clusterQueue": config.cluster_queue,
            "workloadNamespace": ctx.workload_namespace,
            "storageClaim": storage.claim_name,
            "kueueVersion": catalog.KUEUE_CHART.version,
            "jobsetVersion": catalog.JOBSET_CHART.version,
        },
    )
