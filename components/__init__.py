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

from trainstack.components.dra_driver import NvidiaDraDriver, NvidiaDraDriverArgs
from trainstack.components.gcp_network import (
    GpuNicNetworks,
    GpuNicNetworksArgs,
    NetworkRef,
    PrimaryNetwork,
    PrimaryNetworkArgs,
)
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gcp_storage import (
    CheckpointBucket,
    CheckpointBucketArgs,
    FilestoreShare,
    FilestoreShareArgs,
    LustreInstance,
    LustreInstanceArgs,
    NfsDisk,
    NfsDiskArgs,
)
from trainstack.components.gke_cluster import (
    AuthorizedNetwork,
    GkeCluster,
    GkeClusterArgs,
    MaintenanceExclusion,
    MaintenanceWindow,
)
from trainstack.components.gpudirect_installers import (
    GpuDirectInstallers,
    GpuDirectInstallersArgs,
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
)
from trainstack.components.image import RegistryLogin, WorkloadImage, WorkloadImageArgs
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
    PriorityClass,
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
    ExtraNetwork,
    GpuNodePool,
    GpuNodePoolArgs,
    NodeServiceAccount,
    NodeServiceAccountArgs,
    Reservation,
)
from trainstack.components.volumes import (
    GcsFuseVolume,
    GcsFuseVolumeArgs,
    LustreVolume,
    LustreVolumeArgs,
    NfsServer,
    NfsServerArgs,
    NfsVolume,
    NfsVolumeArgs,
)
from trainstack.components.workload_identity import (
    WorkloadIdentity,
    WorkloadIdentityArgs,
)

__all__ = [
    "AuthorizedNetwork",
    "Autoscaling",
    "CheckpointBucket",
    "CheckpointBucketArgs",
    "ClusterProviderArgs",
    "CpuNodePool",
    "CpuNodePoolArgs",
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
    "JobSet",
    "JobSetArgs",
    "Kueue",
    "KueueArgs",
    "LustreInstance",
    "LustreInstanceArgs",
    "LustreVolume",
    "LustreVolumeArgs",
    "MaintenanceExclusion",
    "MaintenanceWindow",
    "MultiKueueClusters",
    "MultiKueueClustersArgs",
    "MultiKueueQueue",
    "MultiKueueWorker",
    "MultiKueueWorkerAccess",
    "MultiKueueWorkerAccessArgs",
    "NetworkRef",
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
    "PrimaryNetwork",
    "PrimaryNetworkArgs",
    "PriorityClass",
    "ProjectServices",
    "ProjectServicesArgs",
    "RegistryLogin",
    "Reservation",
    "WaitForPodsReady",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "WorkloadImage",
    "WorkloadImageArgs",
    "cluster_provider",
]
