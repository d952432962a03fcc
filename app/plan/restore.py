"""Checkpoint restore, modelled: what a resumed job reads before its first step, and how fast.

A job that checkpoints (`trainstack:workload.checkpointInterval`) resumes from its run's newest
checkpoint on every restart and on an `up` that keeps its runId. The checkpoint holds the model's
states: Adam's weights (16-bit with fp32 masters, or fp32) and optimizer states, per parameter as
core/memory.bytes_per_param counts them, less the gradients; one copy, read in shards by the job's
nodes (a distributed checkpoint: each node reads its share). Each node reads at its storage's rate
(catalog.startup): a gcsfuse mount with or without parallel downloads, or its share of a Managed
Lustre instance's throughput. Filestore and NFS have no rate: not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.app.deploy.stack_file import JobContext
from trainstack.components.storage.gcs import BucketSpec
from trainstack.components.storage.lustre import LustreSpec
from trainstack.core import catalog, memory, models
from trainstack.core.errors import CatalogError
from trainstack.infra.stack import StackConfig
from trainstack.workloads import launchers
from trainstack.workloads.spec import WorkloadSpec


@dataclass(frozen=True)
class Restore:
    """A resumed job's checkpoint: its bytes, the job's nodes, how each reads it, and whether the
    stack's mount downloads in parallel as configured."""

    checkpoint_bytes: float
    nodes: int
    storage: str
    configured_parallel: bool
    lustre_bytes_per_s: float | None = None  # the instance's whole throughput (storage lustre)

    def node_bytes_per_s(self, parallel: bool) -> float:
        """A node's read rate: gcsfuse's with or without parallel downloads; Lustre's share."""
        if self.lustre_bytes_per_s is not None:
            return self.lustre_bytes_per_s / self.nodes
        return catalog.GCSFUSE_READ_BYTES_PER_S / (1.0 if parallel else catalog.GCSFUSE_PARALLEL_SPEEDUP)

    def seconds(self, parallel: bool) -> float:
        """The restore's seconds: each node's share of the checkpoint at its read rate."""
        return self.checkpoint_bytes / self.nodes / self.node_bytes_per_s(parallel)


def checkpoint_bytes(workload: WorkloadSpec, machine: catalog.Machine) -> float | None:
    """The job's checkpoint size: its model's parameters times Adam's weight and optimizer bytes
    each (None for a model the catalog has no shape of)."""
    try:
        shape = models.model_shape(workload.model)
    except CatalogError:
        return None
    training = launchers.training(workload, machine)
    per = memory.bytes_per_param(training.precision, master_weights=training.master_weights, master_remainders=training.master_remainders)
    return float(shape.params) * (per.weights + per.optimizer)


def restore(ctx: JobContext) -> Restore | None:
    """The job's restore on a resume, or None: no checkpoints, no model shape, or storage with no rate."""
    workload = ctx.workload
    if workload is None or workload.checkpoint_interval is None:
        return None
    size = checkpoint_bytes(workload, ctx.machine)
    if size is None:
        return None
    config, kind = ctx.stack_file, ""
    if isinstance(config, StackConfig):
        kind = str(config.storage.kind)
        spec = config.storage.spec
        parallel = isinstance(spec, BucketSpec) and spec.parallel
        throughput = spec.throughput * 1e6 * spec.capacity_gib / 1024 if isinstance(spec, LustreSpec) else None
    else:  # a workload stack: its platform's storage; its mount options are not known here
        kind = ctx.contract.storage_kind if ctx.contract else ""
        parallel, throughput = False, None
        if kind == "lustre":
            return None
    if kind not in ("gcs", "lustre"):
        return None
    return Restore(size, workload.nodes, kind, parallel, throughput)
