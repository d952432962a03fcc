"""What a storage kind is to the platform: a `StorageKind` entry says which APIs it calls, whether
it peers with the cluster's VPC, what the cluster needs to mount it, how its GCP part is made on a
`StorageSite` and how a workload mounts it (`Mounting`). The platform holds what was made as one
`Store`. Each kind's module (gcs, filestore, lustre, nfs) defines its entry, next to its spec, its
GCP part and its volume; `components.storage.KINDS` lists them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import pulumi

from trainstack.components.gcp_services import ProjectServices
from trainstack.components.k8s_provider import Placement
from trainstack.core.spec import Section


class Volume(Protocol):
    """A kind's volume as the platform reads it: the claim pods mount."""

    @property
    def claim_name(self) -> str: ...
    @property
    def claim(self) -> pulumi.Resource: ...


@dataclass(frozen=True)
class StorageSite:
    """Where a stack's storage goes: what a kind's GCP part needs of the platform around it."""

    project: str
    region: str
    zone: str
    """The first GPU pool's zone, where zonal storage goes."""
    network: pulumi.Input[str]
    """The cluster's VPC, by name."""
    services: ProjectServices
    """The stack's APIs (a lookup waits for the one it calls)."""
    cluster: pulumi.Resource
    """The cluster: a Workload Identity grant waits for the identity pool it creates."""
    stack: str
    labels: dict[str, str]
    disposable: bool
    """`trainstack:storage.disposable`: `pulumi destroy` deletes the data too."""
    physical_name: Callable[[str], str]
    """A GCP name of this stack's (`StackContext.physical_name`)."""
    workload_namespace: str
    workload_service_account: str


@dataclass(frozen=True)
class Mounting:
    """Where a kind's volume goes: the claim pods mount, in `namespace`, on the cluster.

    `name(role)` and `opts(role, *more)` name and place a component playing `role` on the
    cluster; `placement` and `controller_nodes` are the CPU pool, where an in-cluster server runs;
    `network_policy`: the cluster enforces NetworkPolicy."""

    claim_name: str
    namespace: pulumi.Input[str]
    placement: Placement
    network_policy: bool
    controller_nodes: list[pulumi.Resource]
    name: Callable[[str], str]
    opts: Callable[..., pulumi.ResourceOptions]

    @property
    def claimed(self) -> dict[str, Any]:
        """The claimed-volume fields of a kind's volume Args (`ClaimedVolumeArgs`): the claim, its
        namespace, and the volume named as the claim."""
        return {"claim_name": self.claim_name, "namespace": self.namespace, "volume_name": self.claim_name}


S = TypeVar("S", bound=Section)
P = TypeVar("P", bound=pulumi.ComponentResource)


@dataclass(frozen=True)
class StorageKind(Generic[S, P]):
    """One `trainstack:storage.kind`.

    Attributes:
        name: the kind, as `trainstack:storage.kind` names it.
        block: the `trainstack:storage` key of its settings, read as `spec`.
        role: the role its GCP part plays (its Pulumi name on the platform).
        needs: the APIs its GCP part calls, which the stack enables.
        make: its GCP part from its settings, on a site, named and placed.
        output: the stack output that says where the data lives.
        mount: its volume of a store, claimed as the mounting says.
        peered: its instance peers with the cluster's VPC (Filestore DIRECT_PEERING, Managed
            Lustre's private services access), so while it is kept, the VPC must be kept too.
        cluster: the GkeClusterArgs features the cluster needs to mount it (a CSI driver).
        kept: what a person calls each resource type it keeps on destroy (the plan says so).
        fuse: pods mount it through the GCS FUSE sidecar (the pod annotation asks for it).
        bucket: the Cloud Storage bucket its part is, whose prefixes a job's own identity may be
            granted (kind gcs); None: the data is not in a bucket.
    """

    name: str
    block: str
    spec: type[S]
    role: str
    needs: tuple[str, ...]
    make: Callable[[S, StorageSite, str, pulumi.ResourceOptions], P]
    output: Callable[[P], tuple[str, pulumi.Output[Any]]]
    mount: Callable[[Store[S, P], Mounting], Volume]
    peered: bool = False
    cluster: Mapping[str, bool] = field(default_factory=dict)
    kept: Mapping[str, str] = field(default_factory=dict)
    fuse: bool = False
    bucket: Callable[[P], pulumi.Output[str]] | None = None

    def build(self, spec: S, site: StorageSite, name: str, opts: pulumi.ResourceOptions) -> Store[S, P]:
        """Register this kind's GCP part for `site` as `name`."""
        return Store(self, spec, site, self.make(spec, site, name, opts))


@dataclass(frozen=True)
class Store(Generic[S, P]):
    """What a kind's GCP part made, as the Kubernetes layer mounts it: the kind, its settings, the
    site it was made on and the part."""

    kind: StorageKind[S, P]
    spec: S
    site: StorageSite
    part: P

    @property
    def output(self) -> tuple[str, pulumi.Output[Any]]:
        return self.kind.output(self.part)

    @property
    def bucket(self) -> pulumi.Output[str] | None:
        """The bucket the data is in (kind gcs), else None."""
        return self.kind.bucket(self.part) if self.kind.bucket else None

    def mount(self, mounting: Mounting) -> Volume:
        """The volume pods mount this store by."""
        return self.kind.mount(self, mounting)
