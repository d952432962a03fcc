"""Storage kind `gcs`: a Cloud Storage bucket for checkpoints and logs (`CheckpointBucket`),
mounted through the GCS FUSE CSI driver (`GcsFuseVolume`); its section of `trainstack:storage`
(`BucketSpec`, key `bucket`) and its registry entry (`KIND`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import pulumi
import pulumi_gcp as gcp
from pulumi_kubernetes.core import v1 as core
from pydantic import model_validator

from trainstack.components import gcp_services as apis
from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.components.storage.kind import Mounting, StorageKind, StorageSite, Store
from trainstack.components.storage.volume import ClaimedVolume, ClaimedVolumeArgs, retained
from trainstack.core import catalog, names, rules
from trainstack.core.errors import ABSENT
from trainstack.core.spec import Section, by_rule, rule_errors


class BucketSpec(Section):
    """The Cloud Storage bucket (storage kind gcs)."""

    name: Annotated[str, by_rule(rules.bucket_name)] | None = None
    """The bucket's name; default: `<project>-<stack>`."""
    location: str | None = None
    """The bucket's location; default: `gcp:region`."""
    hierarchical_namespace: bool = True
    """A hierarchical namespace (real folders)."""
    uniform_access: bool = True
    """Uniform bucket-level access: IAM alone grants access, no object ACLs."""
    file_cache: bool = False
    """The gcsfuse file cache on the nodes' local SSD."""
    parallel_downloads: bool | None = None
    """gcsfuse downloads a large file (a checkpoint's shard) with many workers into the file cache, so a
    resumed job restores faster (catalog.startup); needs fileCache. Unset: on with the file cache."""

    @model_validator(mode="after")
    def _rules(self) -> BucketSpec:
        rule_errors("BucketSpec", list(self._problems()))
        return self

    def _problems(self) -> Iterator[Problem]:
        """The rules between the bucket's keys, each independent of the others."""
        # Cloud Storage: a hierarchical namespace needs uniform bucket-level access.
        if self.hierarchical_namespace and not self.uniform_access:
            yield Problem(("uniformAccess",), False, rules.HNS_NEEDS_UNIFORM_ACCESS)
        # gcsfuse downloads in parallel into its file cache.
        if self.parallel_downloads and not self.file_cache:
            yield Problem(("parallelDownloads",), True, "gcsfuse downloads in parallel into its file cache, which it needs: set fileCache: true")

    @property
    def parallel(self) -> bool:
        """Whether the mount downloads large files in parallel."""
        return self.file_cache if self.parallel_downloads is None else self.parallel_downloads


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


GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"

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


@dataclass(frozen=True)
class CheckpointBucketArgs(Args):
    """Arguments of CheckpointBucket: the bucket as a stack file's `trainstack:storage.bucket` writes
    it, its name and location given, and where it goes."""

    spec: BucketSpec
    """The bucket: its globally unique name and its location (a region, the cluster's: GCS FUSE
    performs best in-region; HNS requires it) are required here (the stack file's defaults are the
    stack's); `fileCache` and `parallelDownloads` are the mount's (GcsFuseVolume)."""
    project: str
    """The bucket's project."""
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

    _checks = {"project": rules.PROJECT_ID, "labels": rules.gcp_labels, "object_users": rules.grantees}

    @classmethod
    def spec_required(cls) -> tuple[str, ...]:
        return ("name", "location")

    @property
    def name(self) -> str:
        """The bucket's name."""
        return self.spec.name or ""

    @property
    def location(self) -> str:
        """The bucket's location."""
        return self.spec.location or ""

    def _cross(self) -> Iterator[Problem]:
        # The stack file's defaults (`<project>-<stack>`, gcp:region) are the stack's.
        for key in self.spec_required():
            if getattr(self.spec, key) is None:
                yield Problem((key,), ABSENT, "required key is missing")


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
            hierarchical_namespace=gcp.storage.BucketHierarchicalNamespaceArgs(enabled=True) if args.spec.hierarchical_namespace else None,
            uniform_bucket_level_access=args.spec.uniform_access,
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
class GcsFuseVolumeArgs(ClaimedVolumeArgs):
    """A bucket mounted through the GCS FUSE CSI driver.

    Pods mounting it need the `gke-gcsfuse/volumes: "true"` annotation (the driver injects its
    sidecar) and a service account the bucket grants access to.
    """

    bucket: pulumi.Input[str]
    """The bucket name (an Output of the bucket, so the volume waits for it). Checked when plain;
    an Output is not checked."""
    file_cache: bool = False
    """Cache file contents on the node (see GCSFUSE_FILE_CACHE_OPTIONS)."""
    parallel_downloads: bool = True
    """With the file cache, download large files with many workers into it (gcsfuse_mount_options)."""
    capacity: str = "2048Gi"
    """Nominal: Kubernetes requires one; a bucket has no size."""

    _checks = {**ClaimedVolumeArgs._checks, "bucket": rules.bucket_name, "capacity": rules.QUANTITY}


class GcsFuseVolume(ClaimedVolume):
    """A ReadWriteMany GCS FUSE volume and its claim."""

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
        self._bind(name, args, opts, args.capacity, {"csi": csi}, gcsfuse_mount_options(args.file_cache, args.parallel_downloads))


def _make(spec: BucketSpec, site: StorageSite, name: str, opts: pulumi.ResourceOptions) -> CheckpointBucket:
    """A bucket the workload's Kubernetes account may use (granted once the cluster made its identity pool)."""
    project = site.project
    project_number = gcp.organizations.get_project_output(
        project_id=project, opts=pulumi.InvokeOutputOptions(depends_on=site.services.need(apis.CLOUD_RESOURCE_MANAGER))
    ).number
    namespace, account = site.workload_namespace, site.workload_service_account
    principal = project_number.apply(lambda number: workload_identity_principal(number, project, namespace, account))
    args = CheckpointBucketArgs(
        spec=spec.model_copy(update={"name": spec.name or names.bucket(project, site.stack), "location": spec.location or site.region}),
        project=project,
        disposable=site.disposable,
        object_users={f"{namespace}.{account}": principal},
        grant_after=[site.cluster],
        labels=site.labels,
    )
    return CheckpointBucket(name, args, opts)


def _mount(store: Store[BucketSpec, CheckpointBucket], to: Mounting) -> GcsFuseVolume:
    args = GcsFuseVolumeArgs(
        bucket=store.part.name,
        file_cache=store.spec.file_cache,
        parallel_downloads=store.spec.parallel,
        **to.claimed,
    )
    return GcsFuseVolume(to.name("storage"), args, opts=to.opts("storage"))


KIND = StorageKind(
    name="gcs",
    block="bucket",
    spec=BucketSpec,
    role="bucket",
    needs=(apis.STORAGE,),
    make=_make,
    output=lambda bucket: ("bucketUrl", bucket.url),
    mount=_mount,
    kept={"gcp:storage/bucket:Bucket": "the bucket"},
    fuse=True,
    bucket=lambda bucket: bucket.name,
)
"""A Cloud Storage bucket, mounted through gcsfuse."""
