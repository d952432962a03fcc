"""Reusable component resources: each a whole capability, knowing no recipe.

GCP (`trainstack:gcp:*`): ProjectServices, PrimaryNetwork, GpuNicNetworks, GkeCluster (which
hands out its Kubernetes `provider`), NodeServiceAccount, GpuNodePool (its `node_selector` and
`tolerations`), CpuNodePool, CheckpointBucket, FilestoreShare, LustreInstance, NfsDisk, WorkloadImage.
Kubernetes (`trainstack:k8s:*`): Kueue, JobSet, GpuNetworks, GpuDirectInstallers,
NvidiaDriverInstaller, NvidiaDraDriver, GcsFuseVolume, LustreVolume, NfsVolume, NfsServer, WorkloadIdentity,
and a fleet's MultiKueueWorkerAccess (on a worker) and MultiKueueClusters (on its manager).

Each takes one documented, frozen Args dataclass of plain values (or the same as a dict, as the
Pulumi package passes them), checks it before registering anything (`components.args`), and is
ordered after what it needs with `opts.depends_on`. Machine facts come from
`trainstack.core.catalog`, by machine type name.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainstack.components.dra_driver import NvidiaDraDriver, NvidiaDraDriverArgs
    from trainstack.components.gcp_network import (
        GpuNicNetworks,
        GpuNicNetworksArgs,
        NetworkRef,
        NetworkSpec,
        PrimaryNetwork,
        PrimaryNetworkArgs,
    )
    from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
    from trainstack.components.gke_cluster import (
        AuthorizedNetwork,
        ClusterSpec,
        GkeCluster,
        GkeClusterArgs,
        Maintenance,
        MaintenanceExclusion,
        MaintenanceWindow,
    )
    from trainstack.components.gpudirect_installers import (
        GpuDirectInstallers,
        GpuDirectInstallersArgs,
        NvidiaDriverInstaller,
        NvidiaDriverInstallerArgs,
    )
    from trainstack.components.image import BuildSpec, ImageSpec, PreloadSpec, RegistryLogin, WorkloadImage, WorkloadImageArgs
    from trainstack.components.jobset import JobSet, JobSetArgs
    from trainstack.components.k8s_provider import (
        ClusterProviderArgs,
        Placement,
        cluster_provider,
    )
    from trainstack.components.kueue import (
        GpuFlavor,
        Kueue,
        KueueArgs,
        KueueSpec,
        PriorityClass,
        Requeuing,
        WaitForPodsReady,
    )
    from trainstack.components.multikueue import (
        MultiKueueClusters,
        MultiKueueClustersArgs,
        MultiKueueQueue,
        MultiKueueWorker,
        MultiKueueWorkerAccess,
        MultiKueueWorkerAccessArgs,
    )
    from trainstack.components.multinic import GpuNetworks, GpuNetworksArgs, NicAttachment
    from trainstack.components.node_pools import (
        Autoscaling,
        CpuNodePool,
        CpuNodePoolArgs,
        CpuPoolSpec,
        ExtraNetwork,
        GpuNodePool,
        GpuNodePoolArgs,
        GpuPoolSpec,
        NodeServiceAccount,
        NodeServiceAccountArgs,
        Reservation,
    )
    from trainstack.components.storage.filestore import FilestoreShare, FilestoreShareArgs
    from trainstack.components.storage.gcs import CheckpointBucket, CheckpointBucketArgs, GcsFuseVolume, GcsFuseVolumeArgs
    from trainstack.components.storage.lustre import LustreInstance, LustreInstanceArgs, LustreVolume, LustreVolumeArgs
    from trainstack.components.storage.nfs import NfsDisk, NfsDiskArgs, NfsServer, NfsServerArgs, NfsVolume, NfsVolumeArgs
    from trainstack.components.workload_identity import (
        WorkloadIdentity,
        WorkloadIdentityArgs,
    )

# Each public name -> its module. The package imports a module when a name of it is first used, so
# reading a stack file (whose sections take the components' defaults) loads one component, not all.
_HOME = {
    "AuthorizedNetwork": "trainstack.components.gke_cluster",
    "Autoscaling": "trainstack.components.node_pools",
    "BuildSpec": "trainstack.components.image",
    "CheckpointBucket": "trainstack.components.storage.gcs",
    "CheckpointBucketArgs": "trainstack.components.storage.gcs",
    "ClusterProviderArgs": "trainstack.components.k8s_provider",
    "ClusterSpec": "trainstack.components.gke_cluster",
    "CpuNodePool": "trainstack.components.node_pools",
    "CpuNodePoolArgs": "trainstack.components.node_pools",
    "CpuPoolSpec": "trainstack.components.node_pools",
    "ExtraNetwork": "trainstack.components.node_pools",
    "FilestoreShare": "trainstack.components.storage.filestore",
    "FilestoreShareArgs": "trainstack.components.storage.filestore",
    "GcsFuseVolume": "trainstack.components.storage.gcs",
    "GcsFuseVolumeArgs": "trainstack.components.storage.gcs",
    "GkeCluster": "trainstack.components.gke_cluster",
    "GkeClusterArgs": "trainstack.components.gke_cluster",
    "GpuDirectInstallers": "trainstack.components.gpudirect_installers",
    "GpuDirectInstallersArgs": "trainstack.components.gpudirect_installers",
    "GpuFlavor": "trainstack.components.kueue",
    "GpuNetworks": "trainstack.components.multinic",
    "GpuNetworksArgs": "trainstack.components.multinic",
    "GpuNicNetworks": "trainstack.components.gcp_network",
    "GpuNicNetworksArgs": "trainstack.components.gcp_network",
    "GpuNodePool": "trainstack.components.node_pools",
    "GpuNodePoolArgs": "trainstack.components.node_pools",
    "GpuPoolSpec": "trainstack.components.node_pools",
    "ImageSpec": "trainstack.components.image",
    "JobSet": "trainstack.components.jobset",
    "JobSetArgs": "trainstack.components.jobset",
    "Kueue": "trainstack.components.kueue",
    "KueueArgs": "trainstack.components.kueue",
    "KueueSpec": "trainstack.components.kueue",
    "LustreInstance": "trainstack.components.storage.lustre",
    "LustreInstanceArgs": "trainstack.components.storage.lustre",
    "LustreVolume": "trainstack.components.storage.lustre",
    "LustreVolumeArgs": "trainstack.components.storage.lustre",
    "Maintenance": "trainstack.components.gke_cluster",
    "MaintenanceExclusion": "trainstack.components.gke_cluster",
    "MaintenanceWindow": "trainstack.components.gke_cluster",
    "MultiKueueClusters": "trainstack.components.multikueue",
    "MultiKueueClustersArgs": "trainstack.components.multikueue",
    "MultiKueueQueue": "trainstack.components.multikueue",
    "MultiKueueWorker": "trainstack.components.multikueue",
    "MultiKueueWorkerAccess": "trainstack.components.multikueue",
    "MultiKueueWorkerAccessArgs": "trainstack.components.multikueue",
    "NetworkRef": "trainstack.components.gcp_network",
    "NetworkSpec": "trainstack.components.gcp_network",
    "NfsDisk": "trainstack.components.storage.nfs",
    "NfsDiskArgs": "trainstack.components.storage.nfs",
    "NfsServer": "trainstack.components.storage.nfs",
    "NfsServerArgs": "trainstack.components.storage.nfs",
    "NfsVolume": "trainstack.components.storage.nfs",
    "NfsVolumeArgs": "trainstack.components.storage.nfs",
    "NicAttachment": "trainstack.components.multinic",
    "NodeServiceAccount": "trainstack.components.node_pools",
    "NodeServiceAccountArgs": "trainstack.components.node_pools",
    "NvidiaDraDriver": "trainstack.components.dra_driver",
    "NvidiaDraDriverArgs": "trainstack.components.dra_driver",
    "NvidiaDriverInstaller": "trainstack.components.gpudirect_installers",
    "NvidiaDriverInstallerArgs": "trainstack.components.gpudirect_installers",
    "Placement": "trainstack.components.k8s_provider",
    "PreloadSpec": "trainstack.components.image",
    "PrimaryNetwork": "trainstack.components.gcp_network",
    "PrimaryNetworkArgs": "trainstack.components.gcp_network",
    "PriorityClass": "trainstack.components.kueue",
    "ProjectServices": "trainstack.components.gcp_services",
    "ProjectServicesArgs": "trainstack.components.gcp_services",
    "RegistryLogin": "trainstack.components.image",
    "Requeuing": "trainstack.components.kueue",
    "Reservation": "trainstack.components.node_pools",
    "WaitForPodsReady": "trainstack.components.kueue",
    "WorkloadIdentity": "trainstack.components.workload_identity",
    "WorkloadIdentityArgs": "trainstack.components.workload_identity",
    "WorkloadImage": "trainstack.components.image",
    "WorkloadImageArgs": "trainstack.components.image",
    "cluster_provider": "trainstack.components.k8s_provider",
}


def __getattr__(name: str) -> Any:
    """PEP 562: the public name `name`, from its module."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)


__all__ = [
    "AuthorizedNetwork",
    "Autoscaling",
    "BuildSpec",
    "CheckpointBucket",
    "CheckpointBucketArgs",
    "ClusterProviderArgs",
    "ClusterSpec",
    "CpuNodePool",
    "CpuNodePoolArgs",
    "CpuPoolSpec",
    "ExtraNetwork",
    "FilestoreShare",
    "FilestoreShareArgs",
    "GcsFuseVolume",
    "GcsFuseVolumeArgs",
    "GkeCluster",
    "GkeClusterArgs",
    "GpuDirectInstallers",
    "GpuDirectInstallersArgs",
    "GpuFlavor",
    "GpuNetworks",
    "GpuNetworksArgs",
    "GpuNicNetworks",
    "GpuNicNetworksArgs",
    "GpuNodePool",
    "GpuNodePoolArgs",
    "GpuPoolSpec",
    "ImageSpec",
    "JobSet",
    "JobSetArgs",
    "Kueue",
    "KueueArgs",
    "KueueSpec",
    "LustreInstance",
    "LustreInstanceArgs",
    "LustreVolume",
    "LustreVolumeArgs",
    "Maintenance",
    "MaintenanceExclusion",
    "MaintenanceWindow",
    "MultiKueueClusters",
    "MultiKueueClustersArgs",
    "MultiKueueQueue",
    "MultiKueueWorker",
    "MultiKueueWorkerAccess",
    "MultiKueueWorkerAccessArgs",
    "NetworkRef",
    "NetworkSpec",
    "NfsDisk",
    "NfsDiskArgs",
    "NfsServer",
    "NfsServerArgs",
    "NfsVolume",
    "NfsVolumeArgs",
    "NicAttachment",
    "NodeServiceAccount",
    "NodeServiceAccountArgs",
    "NvidiaDraDriver",
    "NvidiaDraDriverArgs",
    "NvidiaDriverInstaller",
    "NvidiaDriverInstallerArgs",
    "Placement",
    "PreloadSpec",
    "PrimaryNetwork",
    "PrimaryNetworkArgs",
    "PriorityClass",
    "ProjectServices",
    "ProjectServicesArgs",
    "RegistryLogin",
    "Requeuing",
    "Reservation",
    "WaitForPodsReady",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "WorkloadImage",
    "WorkloadImageArgs",
    "cluster_provider",
]
