"""What the layers hand each other: the GCP layer to the Kubernetes layer (`GcpPlatform`), the
Kubernetes layer to the platform (`KubernetesPlatform`), and the platform to a workload
(`Platform`). A workload knows its Platform, never the stack config behind it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from trainstack.components.gke_cluster import GkeCluster
from trainstack.components.node_pools import GpuNodePool
from trainstack.components.storage.kind import Store
from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork


@dataclass(frozen=True)
class GcpPlatform:
    """What the GCP layer built, as the Kubernetes layer needs it.

    Attributes:
        cluster: the GKE cluster component (its `provider` reaches the cluster).
        gpu_pools: the GPU node pool components, in config order (their `node_selector` and `tolerations`).
        node_pools: the GPU and CPU node pools (Kubernetes objects that need nodes wait on them).
        cpu_pool: the CPU pool the controllers run on; Kubernetes objects placed there wait
            for it alone, not for a GPU pool that may take long to fill.
        nic_networks: by GPU machine type, its extra NIC networks with the GCP VPC and subnet names behind each.
        image: the workload image reference (digest-pinned when built here).
        image_registry: the Artifact Registry repository the image was pushed to, if built here.
        storage: the shared storage its kind made (components/storage), which the Kubernetes layer mounts.
        outputs: stack outputs this layer contributes.
    """

    cluster: GkeCluster
    gpu_pools: list[GpuNodePool]
    node_pools: list[pulumi.Resource]
    cpu_pool: pulumi.Resource
    nic_networks: dict[str, list[tuple[NicNetwork, pulumi.Output[str], pulumi.Output[str]]]]
    image: pulumi.Output[str]
    storage: Store[Any, Any]
    image_registry: pulumi.Output[str] | None = None
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KubernetesPlatform:
    """What the Kubernetes layer built (or, for a workload stack, found), as a workload needs it.

    Attributes:
        provider: the explicit Kubernetes provider every object uses.
        namespace: the workload namespace.
        service_account: the workload's Kubernetes service account (Workload Identity).
        local_queue: the Kueue LocalQueue the job is submitted to.
        claim_name: the PersistentVolumeClaim of the shared storage.
        nics: the extra GPU NICs pods attach, in interface order (Kubernetes Network names).
        ready: resources every workload object waits for (controllers, queue, claim, networks).
        node_setup: per-node installers on the GPU pool (GPUDirect plugin, driver); the training
            job waits for them, other workload objects need not.
        topology_aware: whether the queue places jobs with Topology Aware Scheduling; a job
            may request a topology (`kueue.x-k8s.io/podset-*-topology`) only then, else Kueue
            never admits it.
        network_policy: whether the cluster enforces NetworkPolicy (Dataplane V2).
        dranet: the job's pods claim their RDMA NICs through GKE's DRANET (`nics` unused).
        companions: when `provider` is a MultiKueue manager's, the providers of the workers that
            could run the job, by worker name: MultiKueue copies only the job, so what its pods
            read and the policies they run under are made on each worker.
        outputs: stack outputs this layer contributes.
    """

    provider: pulumi.ProviderResource
    namespace: str
    service_account: str
    local_queue: str
    claim_name: str
    nics: Sequence[NicNetwork]
    ready: list[pulumi.Resource]
    node_setup: list[pulumi.Resource] = field(default_factory=list)
    topology_aware: bool = True
    network_policy: bool = False
    dranet: bool = False
    companions: dict[str, pulumi.ProviderResource] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Platform:
    """Everything a workload needs of what it runs on: built by this stack, read from a
    platform stack, or read from a cluster trainstack did not make.

    Attributes:
        project: the GCP project of the cluster.
        zone: the GPU pool's zone.
        machine: the GPU pool's machine record.
        gpu_pool, gpu_nodes: the GPU pool's name and its largest size.
        cpu_pool: the pool the supervisor and TensorBoard run on.
        node_selector, tolerations: what a pod needs to land on the GPU pool.
        storage_prefix: the job's own directory under `mount_path`, where it writes ('' for the
            storage's root).
        storage_kind, mount_path: the shared storage (`gcs`, `filestore`, `nfs`) and where jobs
            mount its claim.
        kubernetes: the Kubernetes layer.
        image: the workload image reference.
        node_pools: node pools a workload waits for (none when the platform was made elsewhere).
        outputs: stack outputs the platform contributes.
    """

    project: str
    zone: str
    machine: catalog.Machine
    gpu_pool: str
    gpu_nodes: int
    cpu_pool: str
    node_selector: Mapping[str, str]
    tolerations: Sequence[Mapping[str, str]]
    storage_kind: str
    mount_path: str
    kubernetes: KubernetesPlatform
    image: pulumi.Output[str]
    node_pools: list[pulumi.Resource] = field(default_factory=list)
    storage_prefix: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def storage_path(self) -> str:
        """Where the job keeps its logs and checkpoints."""
        return f"{self.mount_path}/{self.storage_prefix}" if self.storage_prefix else self.mount_path


@dataclass(frozen=True)
class Place:
    """Where the platform's components register: children of `parent`, named `<prefix>-<role>`
    (`Place()`: at the top of the stack, named by role, as before the platform was a component).

    Under a parent, each is aliased from the top-level resource it was before
    (`Alias(name=role, parent=ROOT_STACK_RESOURCE)`): the engine derives every descendant's old
    URN from that alias (pulumi/pulumi pkg/resource/deploy/step_generator.go `generateAliases`,
    `inheritedChildAlias`), so a live stack moves under the platform and replaces nothing.
    """

    parent: pulumi.Resource | None = None
    prefix: str = ""

    def name(self, role: str) -> str:
        return f"{self.prefix}-{role}" if self.parent is not None else role

    def opts(self, role: str, *more: pulumi.ResourceOptions | None, was: Sequence[str] = (), roles_were: Sequence[str] = ()) -> pulumi.ResourceOptions:
        """The options of the component playing `role`, merged with `more`; `was`: further
        top-level names it had; `roles_were`: roles it played before, here and at the top (a
        component once named by its place, keyed by its own name now)."""
        if self.parent is None:
            options = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=old) for old in (*was, *roles_were)] or None)
        else:
            aliases = [pulumi.Alias(name=old, parent=pulumi.ROOT_STACK_RESOURCE) for old in (role, *was, *roles_were)]
            aliases += [pulumi.Alias(name=self.name(old)) for old in roles_were]
            options = pulumi.ResourceOptions(parent=self.parent, aliases=aliases)
        for extra in more:
            options = pulumi.ResourceOptions.merge(options, extra)
        return options


TOP = Place()
"""The top of the stack: components named by their role alone."""
