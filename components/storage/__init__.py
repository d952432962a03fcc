"""Shared storage for checkpoints, logs and data, one module per kind (`gcs`, `filestore`,
`lustre`, `nfs`), each with its stack-file spec, its GCP part, its volume and its `StorageKind`
entry (components/storage/kind.py), listed here; and the stack file's `trainstack:storage` section
(`StorageSpec`): the kind and its block."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import model_validator

from trainstack.components.storage import filestore, gcs, lustre, nfs
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.components.storage.gcs import BucketSpec
from trainstack.components.storage.kind import StorageKind
from trainstack.components.storage.lustre import LustreSpec
from trainstack.components.storage.nfs import NfsSpec
from trainstack.core.errors import Problem
from trainstack.core.spec import AbsolutePath, Section, rule_errors

KindName = Literal["gcs", "filestore", "nfs", "lustre"]
"""What holds a stack's shared data: a Cloud Storage bucket, a Filestore instance, an NFS server on a disk, or a Managed Lustre instance."""

KINDS: dict[str, StorageKind[Any, Any]] = {kind.name: kind for kind in (gcs.KIND, filestore.KIND, nfs.KIND, lustre.KIND)}
"""Every storage kind by name, in `KindName`'s order."""


class StorageSpec(Section):
    """`trainstack:storage`: where checkpoints, logs and data live, mounted at `mountPath`."""

    kind: KindName
    """What holds the data: a Cloud Storage bucket (`gcs`, through gcsfuse), a Filestore instance, an NFS
    server on a persistent disk in the cluster, or a Managed Lustre instance."""
    mount_path: AbsolutePath = "/job-logs"
    """Where jobs mount it."""
    disposable: bool = False
    """false (the default): `pulumi destroy` leaves the bucket, share or disk and its data in the
    project and only forgets it; true: destroy deletes it with its data (benchmarks, CI)."""
    bucket: BucketSpec | None = None
    """The bucket's settings (kind `gcs`)."""
    filestore: FilestoreSpec | None = None
    """The Filestore instance's settings (kind `filestore`)."""
    nfs: NfsSpec | None = None
    """The NFS server's settings (kind `nfs`)."""
    lustre: LustreSpec | None = None
    """The Managed Lustre instance's settings (kind `lustre`)."""

    @model_validator(mode="after")
    def _rules(self) -> StorageSpec:
        problems = [
            Problem((block,), "...", f"is used only with kind {kind!r}, not {self.kind!r}")
            for kind, block in ((k.name, k.block) for k in KINDS.values())
            if kind != self.kind and getattr(self, block) is not None
        ]
        rule_errors("StorageSpec", problems)
        return self

    @property
    def of_kind(self) -> StorageKind[Any, Any]:
        """The kind's registry entry (components/storage)."""
        return KINDS[self.kind]

    @property
    def spec(self) -> Section:
        """The kind's settings, as written or its defaults."""
        return getattr(self, self.of_kind.block) or self.of_kind.spec()
