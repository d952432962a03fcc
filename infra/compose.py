"""A platform stack composed: its GCP layer, then its Kubernetes layer on it, and what a workload needs
of the result (the Platform)."""

from __future__ import annotations

from pathlib import Path

from trainstack.components.image import ImageSpec
from trainstack.components.k8s_provider import ACCELERATOR_LABEL
from trainstack.core.errors import Problem
from trainstack.infra import contract, gcp, kubernetes
from trainstack.infra.context import StackContext
from trainstack.infra.platform import TOP, Place, Platform
from trainstack.infra.stack import StackConfig


def problems(image: ImageSpec, root: Path) -> list[Problem]:
    """Rules of the platform layer beyond the config model (they read the project's files)."""
    return gcp.problems(image, root)


def build(ctx: StackContext, config: StackConfig, place: Place = TOP) -> Platform:
    """Register the platform `config` of `ctx`'s stack at `place` and return what a workload needs."""
    gcp_layer = gcp.build(ctx, config, place)
    kube = kubernetes.build(ctx, config, gcp_layer, place)
    terms = contract.of_platform(
        config, kube.claim_name, gcp_layer.storage.bucket, gcp_layer.image_registry, gcp_layer.cluster.identity, ctx.workload_namespace
    )
    queue = config.job_queue_of(ctx.queue)
    pool = queue.pools[0]
    first = gcp_layer.gpu_pools[config.pools.index(pool)]
    return Platform(
        project=config.project,
        zone=(pool.zones or [config.zone])[0],
        machine=pool.machine,
        gpu_pool=pool.name,
        gpu_nodes=queue.max_nodes,
        cpu_pool=config.cpu_pool.name,
        # One pool: its selector. Several: the machine's alone; Kueue adds the pool of the flavor
        # it admits the job on (the flavor's nodeLabels), so the job never pins a pool itself.
        node_selector=first.node_selector if len(queue.pools) == 1 else {ACCELERATOR_LABEL: pool.machine.accelerator},
        tolerations=first.tolerations,
        storage_kind=config.storage.kind,
        mount_path=config.storage.mount_path,
        kubernetes=kube,
        image=gcp_layer.image,
        node_pools=gcp_layer.node_pools,
        outputs={**gcp_layer.outputs, **kube.outputs, contract.OUTPUT: terms.to_output()},
    )
