"""Shared storage for checkpoints, logs and data: a GCS bucket, a Filestore share, a Managed
Lustre instance, or a PD for an in-cluster NFS server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pulumi
import pulumi_gcp as gcp

from trainstack.components.args import Args, Problem, one_of
from trainstack.components.options import Children
from trainstack.core import catalog, resource_rules, rules

# Read, write, overwrite and delete objects (and HNS folders) without bucket admin rights.
OBJECT_USER_ROLE = "roles/storage.objectUser"
OBJECT_VIEWER_ROLE = "roles/storage.objectViewer"


def workload_identity_principal(project_number: str, project: str, namespace: str, service_account: str) -> str:
    """The IAM principal of a Kubernetes service account under Workload Identity Federation for
    GKE: IAM grants go straight to the KSA, with no Google service account to impersonate."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )


class Retention(TypedDict):
    """The resource option `retained` sets."""

    retain_on_delete: bool


def retained(disposable: bool) -> Retention:
    """The one rule for data (bucket, Filestore share, NFS disk): unless disposable, `pulumi
    destroy` leaves the resource and its data in the project and only forgets it, so the rest of
    the stack still goes. (Not `protect`, which would refuse the whole destroy.) Bring a kept one
    back into a new stack with `pulumi import`."""
    return Retention(retain_on_delete=not disposable)


@dataclass(frozen=True)
class CheckpointBucketArgs(Args):
    """Arguments of CheckpointBucket."""

    project: str
    """The bucket's project."""
    name: str
    """The globally unique bucket name."""
    location: str
    """A region, the cluster's (GCS FUSE performs best in-region; HNS requires it)."""
    hierarchical_namespace: bool = True
    """Real folders, atomic renames (checkpointing)."""
    uniform_access: bool = True
    """Uniform bucket-level access (IAM only, no ACLs)."""
    disposable: bool = False
    """`pulumi destroy` deletes it with its objects; otherwise destroy leaves it, with its
    objects, in the project (`retained`)."""
    object_users: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    """Principals granted `OBJECT_USER_ROLE` on the bucket, keyed by the grantee's own name (a
    Kubernetes account's `<namespace>.<account>`): the grant is `object-user-<key>`, so adding or
    removing one touches no other."""
    grant_after: list[Any] = field(default_factory=list)
    """Resources the grants wait for: a Workload Identity principal is valid only once the
    project's identity pool exists, which the first cluster creates."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {"project": rules.PROJECT_ID, "name": rules.bucket_name, "labels": rules.gcp_labels, "object_users": rules.grantees}

    def _cross(self) -> Iterator[Problem]:
        return resource_rules.check("bucket", self)


class CheckpointBucket(pulumi.ComponentResource):
    """A bucket for checkpoints and logs with public access prevention enforced."""

    bucket: gcp.storage.Bucket
    """The bucket."""
    name: pulumi.Output[str]
    """The bucket's name."""
    url: pulumi.Output[str]
    """`gs://<name>`."""

    def __init__(self, name: str, args: CheckpointBucketArgs, opts: pulumi.ResourceOptions | None = None):
        args = CheckpointBucketArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:CheckpointBucket", name, None, opts)
        kids = Children(self, name, opts)
        self.bucket = gcp.storage.Bucket(
            project=args.project,
            name=args.name,
            location=args.location.upper(),
            storage_class="STANDARD",
            hierarchical_namespace=gcp.storage.BucketHierarchicalNamespaceArgs(enabled=True) if args.hierarchical_namespace else None,
            uniform_bucket_level_access=args.uniform_access,
            public_access_prevention="enforced",
            force_destroy=args.disposable,
            labels=dict(args.labels),
            **kids.main(was="bucket", **retained(args.disposable)),
        )
        # Keyed by the grantee; grants were named by their place before (`object-user-<i>`):
        # aliased from the place each has at the upgrade.
        for i, (key, member) in enumerate(args.object_users.items()):
            gcp.storage.BucketIAMMember(
                **kids(f"object-user-{key}", *args.grant_after, was=f"object-user-{i}", roles_were=[f"object-user-{i}"]),
                bucket=self.bucket.name,
                role=OBJECT_USER_ROLE,
                member=member,
            )
        self.name = self.bucket.name
        self.url = self.bucket.url
        self.register_outputs({"name": self.name, "url": self.url})


@dataclass(frozen=True)
class FilestoreShareArgs(Args):
    """Arguments of FilestoreShare."""

    project: str
    """The instance's project."""
    name: str
    """The instance name."""
    location: str
    """A zone for BASIC_HDD, BASIC_SSD and ZONAL; a region for REGIONAL and ENTERPRISE."""
    tier: str
    """The Filestore service tier."""
    capacity_gib: int
    """The share's size."""
    share_name: str
    """The NFS export name (`/share1`)."""
    network: pulumi.Input[str]
    """The VPC the instance peers with (the cluster's)."""
    disposable: bool = False
    """`pulumi destroy` deletes the instance and its files; otherwise destroy leaves it in the
    project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "name": rules.GCP_NAME,
        "location": rules.LOCATION,
        "tier": one_of(*rules.FILESTORE_TIER_NAMES),
        "capacity_gib": rules.POSITIVE,
        "share_name": rules.SHARE_NAME,
        "labels": rules.gcp_labels,
    }

    def _cross(self) -> Iterator[Problem]:
        yield from resource_rules.check("filestore", self)
        # The stack's Filestore takes the location of its zone or region (infra/).
        if self.tier in rules.FILESTORE_TIER_NAMES and not rules.LOCATION(self.location) and (message := rules.filestore_location(self.tier, self.location)):
            yield Problem(("location",), self.location, message)


class FilestoreShare(pulumi.ComponentResource):
    """A Filestore instance exporting one NFS share on the cluster's VPC."""

    instance: gcp.filestore.Instance
    """The Filestore instance."""
    ip: pulumi.Output[str]
    """The instance's address; mount `<ip>:/<share_name>`."""
    share_name: str
    """The export name."""

    def __init__(self, name: str, args: FilestoreShareArgs, opts: pulumi.ResourceOptions | None = None):
        args = FilestoreShareArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:FilestoreShare", name, None, opts)
        kids = Children(self, name, opts)
        self.instance = gcp.filestore.Instance(
            project=args.project,
            name=args.name,
            location=args.location,
            tier=args.tier,
            file_shares=gcp.filestore.InstanceFileSharesArgs(name=args.share_name, capacity_gb=args.capacity_gib),
            networks=[gcp.filestore.InstanceNetworkArgs(network=args.network, modes=["MODE_IPV4"], connect_mode="DIRECT_PEERING")],
            labels=dict(args.labels),
            **kids.main(**retained(args.disposable)),
        )
        self.ip = self.instance.networks.apply(lambda nets: nets[0].ip_addresses[0])
        self.share_name = args.share_name
        self.register_outputs({"ip": self.ip, "share": self.share_name})


@dataclass(frozen=True)
class NfsDiskArgs(Args):
    """Arguments of NfsDisk."""

    project: str
    """The disk's project."""
    zone: str
    """The disk's zone (that of the node that serves it)."""
    name: str
    """The disk name."""
    disk_type: str
    """`pd-ssd` or `pd-balanced`."""
    size_gb: int
    """The disk's size."""
    disposable: bool = False
    """`pulumi destroy` deletes the disk and its data; otherwise destroy leaves it in the
    project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "zone": rules.ZONE_ID,
        "name": rules.GCP_NAME,
        # The disk types an NFS server's throughput wants (cloud.google.com/compute/docs/disks).
        "disk_type": one_of("pd-ssd", "pd-balanced"),
        "size_gb": rules.PD_SIZE_GB,
        "labels": rules.gcp_labels,
    }


class NfsDisk(pulumi.ComponentResource):
    """A zonal persistent disk that an in-cluster NFS server exports."""

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
            type=args.disk_type,
            size=args.size_gb,
            labels=dict(args.labels),
            **kids.main(**retained(args.disposable)),
        )
        self.name = self.disk.name
        self.register_outputs({"name": self.name})


@dataclass(frozen=True)
class LustreInstanceArgs(Args):
    """Arguments of LustreInstance."""

    project: str
    """The instance's project (the VPC's)."""
    zone: str
    """The instance's zone: the GPU nodes' (Managed Lustre is zonal)."""
    instance_id: str
    """The instance's ID; also starts its address range's and firewall rule's names."""
    network: pulumi.Input[str]
    """The cluster's VPC, by name: the instance is reached over private services access on it."""
    capacity_gib: int
    """The file system's size (core/catalog/storage.py LUSTRE_TIERS: minimum and step by throughput)."""
    throughput: int = 1000
    """Per-unit storage throughput, MB/s per TiB: 125, 250, 500 or 1000, fixed at creation."""
    filesystem: str = "lustrefs"
    """The Lustre file system name: 1-8 letters or digits, starting with a letter."""
    disposable: bool = False
    """`pulumi destroy` deletes the instance, its files and its address range; otherwise destroy
    leaves them in the project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "zone": rules.ZONE_ID,
        "instance_id": rules.GCP_NAME,
        "capacity_gib": rules.POSITIVE,
        "throughput": rules.lustre_throughput,
        "filesystem": rules.LUSTRE_FILESYSTEM,
        "labels": rules.gcp_labels,
    }

    def _cross(self) -> Iterator[Problem]:
        return resource_rules.check("lustre", self)


class LustreInstance(pulumi.ComponentResource):
    """A Managed Lustre instance on the cluster's VPC, with the private services access it is
    reached through (a VPC_PEERING range and the Service Networking connection) and a firewall
    rule admitting LNet from that range. Mount it with LustreVolume."""

    instance: gcp.lustre.Instance
    """The Managed Lustre instance."""
    ip: pulumi.Output[str]
    """The instance's LNet address (from its mount point `<ip>@tcp:/<filesystem>`)."""
    volume_handle: pulumi.Output[str]
    """`<project>/<zone>/<instance>`, the CSI driver's static volume handle."""

    def __init__(self, name: str, args: LustreInstanceArgs, opts: pulumi.ResourceOptions | None = None):
        args = LustreInstanceArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:LustreInstance", name, None, opts)
        kids = Children(self, name, opts)
        keep = retained(args.disposable)
        network = pulumi.Output.concat("projects/", args.project, "/global/networks/", args.network)
        peering_range = gcp.compute.GlobalAddress(
            **kids("psa-range", **keep),
            project=args.project,
            name=f"{args.instance_id}-psa",
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            prefix_length=catalog.LUSTRE_PSA_PREFIX,
            network=network,
            # Labels update in place (setLabels): terraform-provider-google@e03b762
            # google/services/compute/resource_compute_global_address.go:188,426.
            labels=dict(args.labels),
        )
        peering = gcp.servicenetworking.Connection(
            **kids("psa", **keep),
            network=network,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[peering_range.name],
        )
        gcp.compute.Firewall(
            **kids("lnet"),
            project=args.project,
            name=f"{args.instance_id}-lnet",
            network=args.network,
            direction="INGRESS",
            source_ranges=[pulumi.Output.concat(peering_range.address, f"/{catalog.LUSTRE_PSA_PREFIX}")],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(catalog.LUSTRE_LNET_PORT)])],
            description="Managed Lustre's LNet traffic from its private services access range",
        )
        self.instance = gcp.lustre.Instance(
            **kids.main(peering, **keep),
            project=args.project,
            location=args.zone,
            instance_id=args.instance_id,
            network=network,
            filesystem=args.filesystem,
            capacity_gib=str(args.capacity_gib),  # the provider types it as a string
            per_unit_storage_throughput=str(args.throughput),
            labels=dict(args.labels),
        )
        self.ip = self.instance.mount_point.apply(lambda point: point.split("@", 1)[0] if point else "")
        self.volume_handle = pulumi.Output.concat(args.project, "/", args.zone, "/", args.instance_id)
        self.register_outputs({"ip": self.ip, "volumeHandle": self.volume_handle})
