"""What every storage kind shares: the rule for its data on destroy, and the PersistentVolume
pre-bound to a PersistentVolumeClaim that pods mount.

Volumes are statically provisioned (no StorageClass: `storageClassName: ""`) and `Retain`: the
data belongs to the bucket, share, instance or disk the GCP part owns, never to the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import pulumi
from pulumi_kubernetes.core import v1 as core

from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children


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
