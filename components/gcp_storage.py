"""Shared storage for checkpoints, logs and data: a GCS bucket, a Filestore share, or a PD for
an in-cluster NFS server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
from trainstack.components.options import Children

# Read, write, overwrite and delete objects (and HNS folders) without bucket admin rights.
OBJECT_USER_ROLE = "roles/storage.objectUser"


def workload_identity_principal(project_number: str, project: str, namespace: str, service_account: str) -> str:
    """The IAM principal of a Kubernetes service account under Workload Identity Federation for
    GKE: IAM grants go straight to the KSA, with no Google service account to impersonate."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )


def retained(disposable: bool) -> dict[str, bool]:
    """The one rule for data (bucket, Filestore share, NFS disk): unless disposable, `pulumi
    destroy` leaves the resource and its data in the project and only forgets it, so the rest of
    the stack still goes. (Not `protect`, which would refuse the whole destroy.) Bring a kept one
    back into a new stack with `pulumi import`."""
    return {"retain_on_delete": not disposable}


@dataclass(frozen=True)
class CheckpointBucketArgs:
    """Arguments of CheckpointBucket.

    Attributes:
        project: the bucket's project.
        name: the globally unique bucket name.
        location: a region, the cluster's (GCS FUSE performs best in-region; HNS requires it).
        hierarchical_namespace: real folders, atomic renames (checkpointing).
        uniform_access: uniform bucket-level access (IAM only, no ACLs).
        disposable: `pulumi destroy` deletes it with its objects; otherwise destroy leaves it,
            with its objects, in the project (`retained`).
        object_users: principals granted `OBJECT_USER_ROLE` on the bucket.
        grant_after: resources the grants wait for: a Workload Identity principal is valid only
            once the project's identity pool exists, which the first cluster creates.
        labels: GCP labels.
    """

    project: str
    name: str
    location: str
    hierarchical_namespace: bool = True
    uniform_access: bool = True
    disposable: bool = False
    object_users: Sequence[pulumi.Input[str]] = ()
    grant_after: Sequence[pulumi.Resource] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


class CheckpointBucket(pulumi.ComponentResource):
    """A bucket for checkpoints and logs with public access prevention enforced."""

    bucket: gcp.storage.Bucket
    name: pulumi.Output[str]
    url: pulumi.Output[str]

    def __init__(self, name: str, args: CheckpointBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:gcp:CheckpointBucket", name, None, opts)
        kids = Children(self, name, opts)
        self.bucket = gcp.storage.Bucket(
            project=args.project,
            name=args.name,
            location=args.location.upper(),
            storage_class="STANDARD",
            hierarchical_namespace=gcp.storage.BucketHierarchicalNamespaceArgs(enabled=True)
            if args.hierarchical_namespace
            else None,
            uniform_bucket_level_access=args.uniform_access,
            public_access_prevention="enforced",
            force_destroy=args.disposable,
            labels=dict(args.labels),
            **kids.main(was="bucket", **retained(args.disposable)),
        )
        for i, member in enumerate(args.object_users):
            gcp.storage.BucketIAMMember(
                **kids(f"object-user-{i}", *args.grant_after),
                bucket=self.bucket.name,
                role=OBJECT_USER_ROLE,
                member=member,
            )
        self.name = self.bucket.name
        self.url = self.bucket.url
        self.register_outputs({"name": self.name, "url": self.url})


@dataclass(frozen=True)
class FilestoreShareArgs:
    """Arguments of FilestoreShare.

    Attributes:
        project: the instance's project.
        name: the instance name.
        location: a zone for BASIC_HDD, BASIC_SSD and ZONAL; a region for REGIONAL and
            ENTERPRISE.
        tier: the Filestore service tier.
        capacity_gib: the share's size.
        share_name: the NFS export name (`/share1`).
        network: the VPC the instance peers with (the cluster's).
        disposable: `pulumi destroy` deletes the instance and its files; otherwise destroy
            leaves it in the project (`retained`).
        labels: GCP labels.
    """

    project: str
    name: str
    location: str
    tier: str
    capacity_gib: int
    share_name: str
    network: pulumi.Input[str]
    disposable: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)


class FilestoreShare(pulumi.ComponentResource):
    """A Filestore instance exporting one NFS share on the cluster's VPC.

    Attributes:
        ip: the instance's address; mount `<ip>:/<share_name>`.
        share_name: the export name.
    """

    instance: gcp.filestore.Instance
    ip: pulumi.Output[str]
    share_name: str

    def __init__(self, name: str, args: FilestoreShareArgs, opts: pulumi.ResourceOptions | None = None):
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
class NfsDiskArgs:
    """Arguments of NfsDisk.

    Attributes:
        project, zone: where the disk lives (the zone of the node that serves it).
        name: the disk name.
        disk_type: `pd-ssd` or `pd-balanced`.
        size_gb: the disk's size.
        disposable: `pulumi destroy` deletes the disk and its data; otherwise destroy leaves
            it in the project (`retained`).
        labels: GCP labels.
    """

    project: str
    zone: str
    name: str
    disk_type: str
    size_gb: int
    disposable: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)


class NfsDisk(pulumi.ComponentResource):
    """A zonal persistent disk that an in-cluster NFS server exports."""

    disk: gcp.compute.Disk
    name: pulumi.Output[str]

    def __init__(self, name: str, args: NfsDiskArgs, opts: pulumi.ResourceOptions | None = None):
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
