"""Shared storage for checkpoints, logs and data, one module per kind: `gcs`, `filestore`, `lustre`, `nfs`."""
