"""What every storage kind shares: the rule for its data on destroy, the PersistentVolume
pre-bound to a PersistentVolumeClaim that pods mount, and the volume component each kind mounts
its store by (`ClaimedVolume`, with its `ClaimedVolumeArgs`).

Volumes are statically provisioned (no StorageClass: `storageClassName: ""`) and `Retain`: the
data belongs to the bucket, share, instance or disk the GCP part owns, never to the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import pulumi
from pulumi_kubernetes.core import v1 as core

from trainstack.components.args import Args
from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children
from trainstack.core import rules


class Retention(TypedDict):
    """The resource option `retained` sets."""

    retain_on_delete: bool


def retained(disposable: bool) -> Retention:
    """The one rule for data (bucket, Filestore share, NFS disk): unless disposable, `pulumi
    destroy` leaves the resource and its data in the project and only forgets it, so the rest of
    the stack still goes. (Not `protect`, which would refuse the whole destroy.) Bring a kept one
    back into a new stack with `pulumi import`."""
    return Retention(retain_on_delete=not disposable)


def claim(
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


@dataclass(frozen=True, kw_only=True)
class ClaimedVolumeArgs(Args):
    """What every kind's volume takes beside its source: the claim pods mount and where it lives."""

    claim_name: str
    """The claim pods mount (the volume takes the same name)."""
    namespace: pulumi.Input[str]
    """The claim's namespace. Checked when plain; an Output is not checked."""
    volume_name: str | None = None
    """The PersistentVolume's name, unique in the cluster; None: the component's name."""

    _checks = {"claim_name": rules.K8S_NAME, "namespace": rules.K8S_NAME, "volume_name": rules.K8S_NAME}


class ClaimedVolume(pulumi.ComponentResource):
    """A ReadWriteMany volume of a store and its claim (`claim`): each kind's volume component is
    one, with the kind's source."""

    claim_name: str
    """The claim pods mount."""
    volume: core.PersistentVolume
    """The PersistentVolume."""
    claim: core.PersistentVolumeClaim
    """The PersistentVolumeClaim bound to it."""

    def _bind(
        self, name: str, args: ClaimedVolumeArgs, opts: pulumi.ResourceOptions | None, capacity: str, source: dict, mount_options: Sequence[str] = ()
    ) -> None:
        """Register the volume with `source` (e.g. `{"nfs": ...}`) and `capacity`, and its claim."""
        self.claim_name = args.claim_name
        self.volume, self.claim = claim(
            Children(self, name, opts),
            "",
            args.claim_name,
            args.volume_name or name,
            args.claim_name,
            args.namespace,
            capacity,
            "ReadWriteMany",
            source,
            mount_options,
        )
        self.register_outputs({"claimName": self.claim_name})
