"""Storage kind `nfs`: a zonal persistent disk (`NfsDisk`) that an in-cluster NFS server exports
(`NfsServer`), and the NFS volume pods mount an export by (`NfsVolume`, Filestore's too); its
section of `trainstack:storage` (`NfsSpec`, key `nfs`) and its registry entry (`KIND`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core
from pydantic import BaseModel

from trainstack.components import gcp_services as apis
from trainstack.components.args import Args, deprecated_keys
from trainstack.components.k8s_provider import Placement, metadata
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY
from trainstack.components.storage.kind import Mounting, StorageKind, StorageSite, Store
from trainstack.components.storage.volume import ClaimedVolume, ClaimedVolumeArgs, claim, retained
from trainstack.core import catalog, rules
from trainstack.core.spec import Section, bounded


class NfsSpec(Section):
    """An NFS server in the cluster, on a persistent disk (storage kind nfs)."""

    disk_type: Literal["pd-ssd", "pd-balanced"] = "pd-ssd"
    """The persistent disk's type."""
    disk_size_gb: Annotated[int, bounded(rules.PD_SIZE_GB)] = 1000
    """The disk's size in GB; a smaller size is a new, empty disk."""


PD_DRIVER = "pd.csi.storage.gke.io"
PD_ZONE_LABEL = "topology.gke.io/zone"  # the zone key of the PD CSI driver's topology


class NfsDiskAliases(Section):
    """The package's NfsDisk inputs before they took the spec's spelling: deprecated, accepted for
    one release (`NfsDiskArgs.spec_input`), then refused as unknown keys."""

    size_gb: int | None = None
    """Deprecated: use `diskSizeGb`."""


@dataclass(frozen=True)
class NfsDiskArgs(Args):
    """Arguments of NfsDisk: the disk as a stack file's `trainstack:storage.nfs` writes it, and where
    it goes."""

    spec: NfsSpec
    """The disk's type (one an NFS server's throughput wants: cloud.google.com/compute/docs/disks)
    and size."""
    project: str
    """The disk's project."""
    zone: str
    """The disk's zone (that of the node that serves it)."""
    name: str
    """The disk name."""
    disposable: bool = False
    """`pulumi destroy` deletes the disk and its data; otherwise destroy leaves it in the
    project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "zone": rules.ZONE_ID,
        "name": rules.GCP_NAME,
        "labels": rules.gcp_labels,
    }

    @classmethod
    def spec_aliases(cls) -> type[BaseModel]:
        return NfsDiskAliases

    @classmethod
    def spec_input(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The package's inputs of the spec, its deprecated `sizeGb` as `diskSizeGb`."""
        return deprecated_keys(raw, {("sizeGb",): ("diskSizeGb",)}, "NfsDiskArgs")


class NfsDisk(pulumi.ComponentResource):
    """A zonal persistent disk that an in-cluster NFS server exports.

    Its inputs are a stack file's `trainstack:storage.nfs` block and where it goes; the package input
    `sizeGb` is a deprecated spelling of `diskSizeGb`, accepted for one release."""

    disk: gcp.compute.Disk
    """The persistent disk."""
    name: pulumi.Output[str]
    """The disk's name."""

    def __init__(self, name: str, args: NfsDiskArgs, opts: pulumi.ResourceOptions | None = None):
        args = NfsDiskArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:NfsDisk", name, None, opts)
        kids = Children(self, name, opts)
        self.disk = gcp.compute.Disk(
            project=args.project,
            zone=args.zone,
            name=args.name,
            type=args.spec.disk_type,
            size=args.spec.disk_size_gb,
            labels=dict(args.labels),
            **kids.main(**retained(args.disposable)),
        )
        self.name = self.disk.name
        self.register_outputs({"name": self.name})


@dataclass(frozen=True)
class NfsVolumeArgs(ClaimedVolumeArgs):
    """An NFS export as a ReadWriteMany volume."""

    server: pulumi.Input[str]
    """The server's address, an Output of the resource that has it (a Filestore instance, the
    in-cluster server's Service), so the volume waits for it."""
    path: str
    """The exported path (`/share1` on Filestore; `/` on the in-cluster server, NFSv4)."""
    capacity: str
    """The export's size (a Kubernetes quantity, `1024Gi`)."""
    mount_options: list[str] = field(default_factory=list)
    """NFS client options; none: the client negotiates the highest version."""

    _checks = {**ClaimedVolumeArgs._checks, "path": rules.ABSOLUTE_PATH, "capacity": rules.QUANTITY}


class NfsVolume(ClaimedVolume):
    """A ReadWriteMany NFS volume and its claim."""

    def __init__(self, name: str, args: NfsVolumeArgs, opts: pulumi.ResourceOptions | None = None):
        args = NfsVolumeArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:NfsVolume", name, None, opts)
        self._bind(name, args, opts, args.capacity, {"nfs": core.NFSVolumeSourceArgs(server=args.server, path=args.path)}, args.mount_options)


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
        _, disk_claim = claim(
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


def _make(spec: NfsSpec, site: StorageSite, name: str, opts: pulumi.ResourceOptions) -> NfsDisk:
    """The persistent disk of the in-cluster NFS server, in the GPU zone."""
    args = NfsDiskArgs(
        spec=spec,
        project=site.project,
        zone=site.zone,
        name=site.physical_name("nfs"),
        disposable=site.disposable,
        labels=site.labels,
    )
    return NfsDisk(name, args, opts)


def _mount(store: Store[NfsSpec, NfsDisk], to: Mounting) -> NfsVolume:
    """The server on the CPU pool, scheduled into the disk's zone by its volume's zone affinity, and its export."""
    size = store.spec.disk_size_gb
    args = NfsServerArgs(
        store.part.name,
        store.site.project,
        store.site.zone,
        size,
        to.namespace,
        to.placement,
        network_policy=to.network_policy,
        name="nfs-server",  # its objects' names, as before the platform was a component
    )
    server = NfsServer(to.name("nfs-server"), args, opts=to.opts("nfs-server", pulumi.ResourceOptions(depends_on=to.controller_nodes)))
    export = NfsVolumeArgs(server=server.cluster_ip, path=NfsServer.export_path, capacity=f"{size}Gi", **to.claimed)
    return NfsVolume(to.name("storage"), export, opts=to.opts("storage"))


KIND = StorageKind(
    name="nfs",
    block="nfs",
    spec=NfsSpec,
    role="nfs-disk",
    needs=(apis.COMPUTE,),
    make=_make,
    output=lambda disk: ("nfsDisk", disk.name),
    mount=_mount,
    kept={"gcp:compute/disk:Disk": "the NFS disk"},
)
"""An NFS server in the cluster, on a persistent disk."""
