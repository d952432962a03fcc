"""The platform of a stack: built here from components (config -> GCP layer -> Kubernetes layer),
or, for a workload stack, read from a platform stack or an existing cluster."""

from __future__ import annotations

from trainstack.context import StackContext
from trainstack.infra import contract, gcp, kubernetes, remote
from trainstack.infra.platform import Platform


def check(ctx: StackContext) -> None:
    """Rules beyond the config model (they read the checkout); ConfigError before any resource."""
    gcp.check(ctx)


def build(ctx: StackContext) -> Platform:
    """Register the platform's resources (none for a workload stack) and return what a workload needs."""
    if ctx.platform is not None:
        return remote.build(ctx)
    gcp_layer = gcp.build(ctx)
    kube = kubernetes.build(ctx, gcp_layer)
    terms = contract.of_platform(ctx.config, kube.claim_name, gcp_layer.bucket_name, gcp_layer.image_registry)
    return Platform(
        kubernetes=kube,
        image=gcp_layer.image,
        node_pools=gcp_layer.node_pools,
        gcp=gcp_layer,
        extra_outputs={contract.OUTPUT: terms.to_output()},
    )
