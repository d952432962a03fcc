"""Shared storage for checkpoints, logs and data, one module per kind (`gcs`, `filestore`,
`lustre`, `nfs`), each with its stack-file spec, its GCP part, its volume and its `StorageKind`
entry (components/storage/kind.py), listed here."""

from __future__ import annotations

from typing import Any, Literal

from trainstack.components.storage import filestore, gcs, lustre, nfs
from trainstack.components.storage.kind import StorageKind

KindName = Literal["gcs", "filestore", "nfs", "lustre"]
"""What holds a stack's shared data: a Cloud Storage bucket, a Filestore instance, an NFS server on a disk, or a Managed Lustre instance."""

KINDS: dict[str, StorageKind[Any, Any]] = {kind.name: kind for kind in (gcs.KIND, filestore.KIND, nfs.KIND, lustre.KIND)}
"""Every storage kind by name, in `KindName`'s order."""
