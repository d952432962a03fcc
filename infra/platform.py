"""The contract between layers: what the GCP layer hands the Kubernetes layer, and what the
platform hands a workload. Names of the GPU NIC networks are derived here, once, from the
machine's catalog record, so VPCs, Kubernetes Network objects and pod annotations agree."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi

from trainstack import catalog


@dataclass(frozen=True)
class NicNetwork:
    """One extra GPU NIC network.

    Attributes:
        name: the Kubernetes `Network` / `GKENetworkParamSet` name pods reference
            (`gvnic-1`, `rdma-0`..`rdma-7` on A3 Ultra; `vpc1`..`vpc8` on A3 Mega/High).
        kind: `gvnic` (its own VPC and subnet) or `rdma` (a subnet of the shared RDMA VPC).
        interface: the pod interface name it becomes (`eth1`, `eth2`, ...).
        cidr: the subnet's range, a /24 of `trainstack:network.gpuNicCidr`.
    """

    name: str
    kind: Literal["gvnic", "rdma"]
    interface: str
    cidr: str


def nic_networks(machine: catalog.Machine, gpu_nic_cidr: str) -> list[NicNetwork]:
    """The extra NIC networks a machine needs, in interface order."""
    subnets = ipaddress.ip_network(gpu_nic_cidr).subnets(new_prefix=24)
    rdma = machine.gpudirect == catalog.GpuDirect.RDMA
    nets: list[NicNetwork] = []
    for i in range(machine.gvnic_networks):
        name = f"gvnic-{i + 1}" if rdma else f"vpc{i + 1}"
        nets.append(NicNetwork(name, "gvnic", f"eth{len(nets) + 1}", str(next(subnets))))
    for i in range(machine.rdma_subnets):
        nets.append(NicNetwork(f"rdma-{i}", "rdma", f"eth{len(nets) + 1}", str(next(subnets))))
    return nets


@dataclass(frozen=True)
class GcpPlatform:
    """What the GCP layer built, as the Kubernetes layer and the workload need it.

    Attributes:
        cluster: the GKE cluster resource (for explicit ordering).
        cluster_name, cluster_location, endpoint: the cluster's identity.
        kubeconfig: a kubeconfig (secret) authenticating with gke-gcloud-auth-plugin.
        node_pools: the GPU and CPU node pools (Kubernetes objects that need nodes wait on them).
        nic_networks: the extra NIC networks with the GCP VPC and subnet names behind each.
        bucket_name: the checkpoint/log bucket (storage kind gcs), else None.
        filestore_ip, filestore_share: the Filestore export (kind filestore), else None.
        nfs_disk_name: the PD for the NFS server (kind nfs), else None.
        image: the workload image reference (digest-pinned when built here).
        image_registry: the Artifact Registry repository the image was pushed to, if built here.
        outputs: stack outputs this layer contributes.
        cpu_pool: the CPU pool the controllers run on; Kubernetes objects placed there wait
            for it alone, not for a GPU pool that may take long to fill (None: every pool).
    """

    cluster: pulumi.Resource
    cluster_name: pulumi.Output[str]
    cluster_location: str
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    node_pools: list[pulumi.Resource]
    nic_networks: list[tuple[NicNetwork, pulumi.Output[str], pulumi.Output[str]]]
    image: pulumi.Output[str]
    bucket_name: pulumi.Output[str] | None = None
    filestore_ip: pulumi.Output[str] | None = None
    filestore_share: str | None = None
    nfs_disk_name: pulumi.Output[str] | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    image_registry: pulumi.Output[str] | None = None
    cpu_pool: pulumi.Resource | None = None


@dataclass(frozen=True)
class KubernetesPlatform:
    """What the Kubernetes layer built, as a workload needs it.

    Attributes:
        provider: the explicit Kubernetes provider every object uses.
        namespace: the workload namespace.
        service_account: the workload's Kubernetes service account (Workload Identity).
        local_queue: the Kueue LocalQueue the job is submitted to.
        claim_name: the PersistentVolumeClaim of the shared storage.
        network_names: the Kubernetes Network names of the extra NICs, in interface order.
        ready: resources every workload object waits for (controllers, queue, claim, networks).
        node_setup: per-node installers on the GPU pool (GPUDirect plugin, driver); the training
            job waits for them, other workload objects need not.
        outputs: stack outputs this layer contributes.
        topology_aware: whether the queue places jobs with Topology Aware Scheduling; a job
            may request a topology (`kueue.x-k8s.io/podset-*-topology`) only then, else Kueue
            never admits it.
    """

    provider: pulumi.ProviderResource
    namespace: str
    service_account: str
    local_queue: str
    claim_name: str
    network_names: list[str]
    ready: list[pulumi.Resource]
    node_setup: list[pulumi.Resource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    topology_aware: bool = True


@dataclass(frozen=True)
class Platform:
    """What a workload runs on: a Kubernetes layer, its image and the nodes it waits for.

    Attributes:
        kubernetes: the Kubernetes layer (built here, or read from a platform stack).
        image: the workload image reference.
        node_pools: node pools a workload waits for (none when the platform was made elsewhere).
        gcp: the GCP layer, when this stack built it.
        extra_outputs: further stack outputs (the platform contract).
    """

    kubernetes: KubernetesPlatform
    image: pulumi.Output[str]
    node_pools: list[pulumi.Resource] = field(default_factory=list)
    gcp: GcpPlatform | None = None
    extra_outputs: dict[str, Any] = field(default_factory=dict)

    def outputs(self) -> dict[str, Any]:
        return {**(self.gcp.outputs if self.gcp else {}), **self.kubernetes.outputs, **self.extra_outputs}
