"""Shared storage for training pods, as a PersistentVolume pre-bound to a PersistentVolumeClaim:
a Cloud Storage bucket through the GCS FUSE CSI driver, or an NFS export (a Filestore share,
or the in-cluster NFS server on a persistent disk that `NfsServer` runs).

Volumes are statically provisioned (no StorageClass: `storageClassName: ""`) and `Retain`: the
data belongs to the bucket, share or disk the GCP layer owns, never to the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core

from trainstack.components.args import Args
from trainstack.components.k8s_provider import Placement, metadata
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY
from trainstack.core import catalog, rules

GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
PD_DRIVER = "pd.csi.storage.gke.io"
PD_ZONE_LABEL = "topology.gke.io/zone"  # the zone key of the PD CSI driver's topology

# GCS FUSE mount options for checkpoints and logs (the checkpoints profile of gpu-recipes'
# gcs-fuse chart; cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-perf):
# implicit directories; metadata cached without expiry or size limit, no negative caching (a
# file another node just wrote is found), and no kernel list cache (a listing shows what other
# nodes wrote: gpu-recipes' gcs-fuse chart sets kernel-list-cache-ttl-secs:0). No streaming
# writes: the GKE-managed sidecar's gcsfuse version decides whether it has them, and the recipe
# pins its own sidecar instead.
GCSFUSE_MOUNT_OPTIONS = (
    "implicit-dirs",
    "metadata-cache:negative-ttl-secs:0",
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "file-system:kernel-list-cache-ttl-secs:0",
)
# The file cache (reads of checkpoints and data served from the node after the first read)
# lives in the gcsfuse sidecar's cache volume, on the node's ephemeral storage: local SSD on
# pools with ephemeral local SSD. Unlimited size; whole files cached on ranged reads; large files
# fetched in parallel or not, written out either way (gcsfuse 2.12+ turns it on with the file cache:
# catalog.startup).
GCSFUSE_FILE_CACHE_OPTIONS = (
    "file-cache:max-size-mb:-1",
    "file-cache:cache-file-for-range-read:true",
)


def gcsfuse_mount_options(file_cache: bool, parallel_downloads: bool) -> tuple[str, ...]:
    """The volume's gcsfuse mount options: the checkpoint profile, and the file cache's with parallel
    downloads on or off (which need the file cache)."""
    if not file_cache:
        return GCSFUSE_MOUNT_OPTIONS
    return (*GCSFUSE_MOUNT_OPTIONS, *GCSFUSE_FILE_CACHE_OPTIONS, f"{catalog.GCSFUSE_PARALLEL_DOWNLOADS_OPTION}:{str(parallel_downloads).lower()}")


def _claim(
    kids: Children,
    role: str,
    was: str,
    volume_name: str,
    claim_name: str,
    namespace: pulumi.Input[str],
    capacity: str,
    access_mode: str,
    source: dict,
    mount_options: Sequence[str] = (),
    node_affinity: core.VolumeNodeAffinityArgs | None = None,
) -> tuple[core.PersistentVolume, core.PersistentVolumeClaim]:
    """The PersistentVolume `volume_name` (cluster-wide) with `source` (e.g. `{"nfs": ...}`), and the
    claim `claim_name` in `namespace` bound to it and only it (claimRef one way, volumeName the
    other). Their Pulumi names are `<component>-<role>volume` and `-claim`, aliased from `<was>-…`."""
    # A bound volume's claimRef cannot move to another claim (the new claim never binds while the
    # reference names the old one's uid, and a Retain volume whose claim is gone stays Released:
    # kubernetes.io/docs/concepts/storage/persistent-volumes#retain), so a new claimRef makes a new
    # volume, deleted first (its name is fixed). Retain: the store's bytes are never touched.
    volume = core.PersistentVolume(
        **kids(f"{role}volume", was=f"{was}-volume", replace_on_changes=["spec.claimRef"], delete_before_replace=True),
        metadata=metadata(volume_name),
        spec=core.PersistentVolumeSpecArgs(
            access_modes=[access_mode],
            capacity={"storage": capacity},
            persistent_volume_reclaim_policy="Retain",
            storage_class_name="",
            mount_options=list(mount_options) or None,
            claim_ref=core.ObjectReferenceArgs(namespace=namespace, name=claim_name),
            node_affinity=node_affinity,
            **source,
        ),
    )
    # A static claim's request cannot change: growing needs a StorageClass that resizes, shrinking
    # is forbidden (kubernetes plugin/pkg/admission/storage/persistentvolume/resize/admission.go;
    # ValidatePersistentVolumeClaimUpdate). The store is resized by its GCP resource; the volume's
    # capacity follows it, the claim keeps the size it was bound with.
    claim = core.PersistentVolumeClaim(
        **kids(f"{role}claim", volume, was=f"{was}-claim", ignore_changes=["spec.resources.requests.storage"]),
        metadata=metadata(claim_name, namespace),
        spec=core.PersistentVolumeClaimSpecArgs(
            access_modes=[access_mode],
            resources=core.VolumeResourceRequirementsArgs(requests={"storage": capacity}),
            storage_class_name="",
            volume_name=volume_name,
        ),
    )
    return volume, claim


@dataclass(frozen=True)
class GcsFuseVolumeArgs(Args):
    """A bucket mounted through the GCS FUSE CSI driver.

    Pods mounting it need the `gke-gcsfuse/volumes: "true"` annotation (the driver injects its
    sidecar) and a service account the bucket grants access to.
    """

    bucket: pulumi.Input[str]
    """The bucket name (an Output of the bucket, so the volume waits for it). Checked when plain;
    an Output is not checked."""
    claim_name: str
    """The claim pods mount (the volume takes the same name)."""
    namespace: pulumi.Input[str]
    """The claim's namespace. Checked when plain; an Output is not checked."""
    file_cache: bool = False
    """Cache file contents on the node (see GCSFUSE_FILE_CACHE_OPTIONS)."""
    parallel_downloads: bool = True
    """With the file cache, download large files with many workers into it (gcsfuse_mount_options)."""
    capacity: str = "2048Gi"
    """Nominal: Kubernetes requires one; a bucket has no size."""
    volume_name: str | None = None
    """The PersistentVolume's name, unique in the cluster; None: the component's name."""

    _checks = {
        "bucket": rules.bucket_name,
        "claim_name": rules.K8S_NAME,
        "namespace": rules.K8S_NAME,
        "capacity": rules.QUANTITY,
        "volume_name": rules.K8S_NAME,
    }


class GcsFuseVolume(pulumi.ComponentResource):
    """A ReadWriteMany GCS FUSE volume and its claim."""

    claim_name: str
    """The claim pods mount."""
    volume: k8s.core.v1.PersistentVolume
    """The PersistentVolume."""
    claim: k8s.core.v1.PersistentVolumeClaim
    """The PersistentVolumeClaim bound to it."""

    def __init__(self, name: str, args: GcsFuseVolumeArgs, opts: pulumi.ResourceOptions | None = None):
        args = GcsFuseVolumeArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:GcsFuseVolume", name, None, opts)
        csi = core.CSIPersistentVolumeSourceArgs(
            driver=GCSFUSE_DRIVER,
            volume_handle=args.bucket,
            volume_attributes={
                # Mounts skip the driver's IAM pre-check: at 50+ nodes it is a burst of
                # calls that can be throttled; a real access problem still fails the mount.
                "skipCSIBucketAccessCheck": "true",
                # Fill the (unlimited, never expiring) metadata cache when mounting.
                "gcsfuseMetadataPrefetchOnMount": "true",
            },
        )
        options = gcsfuse_mount_options(args.file_cache, args.parallel_downloads)
        self.claim_name = args.claim_name
        self.volume, self.claim = _claim(
            Children(self, name, opts),
            "",
            args.claim_name,
            args.volume_name or name,
            args.claim_name,
            args.namespace,
            args.capacity,
            "ReadWriteMany",
            {"csi": csi},
            options,
        )
        self.register_outputs({"claimName": self.claim_name})


@dataclass(frozen=True)
class LustreVolumeArgs(Args):
    """A Managed Lustre instance as a ReadWriteMany volume (a static PersistentVolume of GKE's
    Managed Lustre CSI driver, which the cluster enables: GkeClusterArgs.lustre_csi)."""

    volume_handle: pulumi.Input[str]
    """`<project>/<zone>/<instance>` (LustreInstance.volume_handle)."""
    ip: pulumi.Input[str]
    """The instance's LNet address (LustreInstance.ip), an Output so the volume waits for it."""
    filesystem: str
    """The Lustre file system name."""
    claim_name: str
    """The claim pods mount."""
    namespace: pulumi.Input[str]
    """The claim's namespace. Checked when plain; an Output is not checked."""
    capacity_gib: int
    """The instance's size."""
    volume_name: str | None = None
    """The PersistentVolume's name, unique in the cluster; None: the component's name."""

    _checks = {
        "filesystem": rules.LUSTRE_FILESYSTEM,
        "claim_name": rules.K8S_NAME,
        "namespace": rules.K8S_NAME,
        "capacity_gib": rules.POSITIVE,
        "volume_name": rules.K8S_NAME,
    }


class LustreVolume(pulumi.ComponentResource):
    """A ReadWriteMany Managed Lustre volume and its claim."""

    claim_name: str
    """The claim pods mount."""

    def __init__(self, name: str, args: LustreVolumeArgs, opts: pulumi.ResourceOptions | None = None):
        args = LustreVolumeArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:LustreVolume", name, None, opts)
        csi = core.CSIPersistentVolumeSourceArgs(
            driver=catalog.LUSTRE_CSI_DRIVER,
            volume_handle=args.volume_handle,
            volume_attributes={"ip": args.ip, "filesystem": args.filesystem},
        )
        self.claim_name = args.claim_name
        self.volume, self.claim = _claim(
            Children(self, name, opts),
            "",
            args.claim_name,
            args.volume_name or name,
            args.claim_name,
            args.namespace,
            f"{args.capacity_gib}Gi",
            "ReadWriteMany",
            {"csi": csi},
        )
        self.register_outputs({"claimName": self.claim_name})


@dataclass(frozen=True)
class NfsVolumeArgs(Args):
    """An NFS export as a ReadWriteMany volume."""

    server: pulumi.Input[str]
    """The server's address, an Output of the resource that has it (a Filestore instance, the
    in-cluster server's Service), so the volume waits for it."""
    path: str
    """The exported path (`/share1` on Filestore; `/` on the in-cluster server, NFSv4)."""
    claim_name: str
    """The claim pods mount (the volume takes the same name)."""
    namespace: pulumi.Input[str]
    """The claim's namespace. Checked when plain; an Output is not checked."""
    capacity: str
    """The export's size (a Kubernetes quantity, `1024Gi`)."""
    mount_options: list[str] = field(default_factory=list)
    """NFS client options; none: the client negotiates the highest version."""
    volume_name: str | None = None
    """The PersistentVolume's name, unique in the cluster; None: the component's name."""

    _checks = {
        "path": rules.ABSOLUTE_PATH,
        "claim_name": rules.K8S_NAME,
        "namespace": rules.K8S_NAME,
        "capacity": rules.QUANTITY,
        "volume_name": rules.K8S_NAME,
    }


class NfsVolume(pulumi.ComponentResource):
    """A ReadWriteMany NFS volume and its claim."""

    claim_name: str
    """The claim pods mount."""
    volume: k8s.core.v1.PersistentVolume
    """The PersistentVolume."""
    claim: k8s.core.v1.PersistentVolumeClaim
    """The PersistentVolumeClaim bound to it."""

    def __init__(self, name: str, args: NfsVolumeArgs, opts: pulumi.ResourceOptions | None = None):
        args = NfsVolumeArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:NfsVolume", name, None, opts)
        nfs = core.NFSVolumeSourceArgs(server=args.server, path=args.path)
        self.claim_name = args.claim_name
        self.volume, self.claim = _claim(
            Children(self, name, opts),
            "",
            args.claim_name,
            args.volume_name or name,
            args.claim_name,
            args.namespace,
            args.capacity,
            "ReadWriteMany",
            {"nfs": nfs},
            args.mount_options,
        )
        self.register_outputs({"claimName": self.claim_name})


@dataclass(frozen=True)
class NfsServerArgs(Args):
    """An NFS server exporting a persistent disk."""

    disk_name: pulumi.Input[str]
    """The Compute Engine disk (an Output of it), in `zone` of `project`. Checked when plain; an
    Output is not checked."""
    project: str
    """The disk's project."""
    zone: str
    """The disk's zone; the server runs in that zone."""
    size_gb: int
    """The disk's size."""
    namespace: pulumi.Input[str]
    """Where the server, its Service and its disk claim live. Checked when plain; an Output is
    not checked."""
    placement: Placement = field(default_factory=Placement)
    """Which nodes may run the server (it must be a pool with nodes in `zone`)."""
    name: str | None = None
    """The Deployment's and Service's name (the disk's volume and claim: `<name>-disk`); None: the
    component's name."""
    network_policy: bool = False
    """Admit NFS (its ports only) from any address by NetworkPolicy, for a namespace whose ingress
    is denied by default: the kubelets mount from their nodes' addresses, which no pod selector
    matches."""

    _checks = {
        "disk_name": rules.GCP_NAME,
        "project": rules.PROJECT_ID,
        "zone": rules.ZONE_ID,
        "size_gb": rules.PD_SIZE_GB,
        "namespace": rules.K8S_NAME,
        "name": rules.DNS1035_NAME,
    }


_NFS_PORTS = {"nfs": 2049, "mountd": 20048, "rpcbind": 111}


class NfsServer(pulumi.ComponentResource):
    """A one-replica NFS server Deployment on a persistent disk (PD CSI volume, zone-pinned by
    the volume's node affinity) and a ClusterIP Service in front of it. The kubelet mounts NFS
    from the node, without cluster DNS, so clients use `cluster_ip`.
    """

    cluster_ip: pulumi.Output[str]
    """The Service's cluster IP (an NFS volume made from it waits for the Service, which Pulumi
    reports ready once the server pod is)."""
    export_path: str = "/"
    """The NFSv4 path of the export."""

    def __init__(self, name: str, args: NfsServerArgs, opts: pulumi.ResourceOptions | None = None):
        args = NfsServerArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:NfsServer", name, None, opts)
        kids = Children(self, name, opts)
        server = args.name or name
        disk = pulumi.Output.concat("projects/", args.project, "/zones/", args.zone, "/disks/", args.disk_name)
        zone_affinity = core.VolumeNodeAffinityArgs(
            required=core.NodeSelectorArgs(
                node_selector_terms=[
                    core.NodeSelectorTermArgs(match_expressions=[core.NodeSelectorRequirementArgs(key=PD_ZONE_LABEL, operator="In", values=[args.zone])])
                ]
            )
        )
        csi = core.CSIPersistentVolumeSourceArgs(driver=PD_DRIVER, volume_handle=disk, fs_type="ext4")
        _, disk_claim = _claim(
            kids,
            "disk-",
            f"{server}-disk",
            f"{server}-disk",
            f"{server}-disk",
            args.namespace,
            f"{args.size_gb}Gi",
            "ReadWriteOnce",
            {"csi": csi},
            node_affinity=zone_affinity,
        )
        labels = {"app.kubernetes.io/name": server}
        image = catalog.image("nfs-server")
        deployment = k8s.apps.v1.Deployment(
            **kids.main(was=server),
            metadata=metadata(server, args.namespace, labels),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=1,
                # The disk attaches to one node at a time: stop the old server before the new.
                strategy=k8s.apps.v1.DeploymentStrategyArgs(type="Recreate"),
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
                template=core.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels),
                    spec=core.PodSpecArgs(
                        automount_service_account_token=False,  # it serves files, never calls the API
                        security_context=POD_SECURITY,
                        node_selector=dict(args.placement.node_selector) or None,
                        tolerations=[dict(t) for t in args.placement.tolerations] or None,
                        containers=[
                            core.ContainerArgs(
                                name="nfs-server",
                                image=image.ref,
                                ports=[core.ContainerPortArgs(name=port, container_port=n) for port, n in _NFS_PORTS.items()],
                                # The kernel NFS server needs the host's privileges.
                                security_context=core.SecurityContextArgs(privileged=True),
                                volume_mounts=[core.VolumeMountArgs(name="export", mount_path="/exports")],
                            )
                        ],
                        volumes=[
                            core.VolumeArgs(
                                name="export",
                                persistent_volume_claim=core.PersistentVolumeClaimVolumeSourceArgs(claim_name=disk_claim.metadata.name),
                            )
                        ],
                    ),
                ),
            ),
        )
        service = core.Service(
            **kids("service", deployment, was=f"{server}-service"),
            metadata=metadata(server, args.namespace, labels),
            spec=core.ServiceSpecArgs(
                type="ClusterIP",
                selector=labels,
                ports=[core.ServicePortArgs(name=port, port=number, protocol="TCP") for port, number in _NFS_PORTS.items()],
            ),
        )
        if args.network_policy:
            k8s.networking.v1.NetworkPolicy(
                **kids("ingress", was=kids.name("ingress")),
                metadata=metadata(server, args.namespace, labels),
                spec=k8s.networking.v1.NetworkPolicySpecArgs(
                    pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
                    policy_types=["Ingress"],
                    ingress=[
                        k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                            from_=[k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr="0.0.0.0/0"))],
                            ports=[k8s.networking.v1.NetworkPolicyPortArgs(port=n, protocol="TCP") for n in _NFS_PORTS.values()],
                        )
                    ],
                ),
            )
        self.cluster_ip: pulumi.Output[str] = service.spec.apply(lambda spec: spec.cluster_ip)
        self.register_outputs({"clusterIp": self.cluster_ip})
