"""The platform of a stack, composed from components: config -> GCP layer -> Kubernetes layer."""

from __future__ import annotations

from trainstack.context import StackContext
from trainstack.infra import gcp, kubernetes
from trainstack.infra.platform import Platform


def check(ctx: StackContext) -> None:
    """Rules beyond the config model (they read the checkout); ConfigError before any resource."""
    gcp.check(ctx)


def build(ctx: StackContext) -> Platform:
    """Register the platform's resources and return what a workload needs."""
    gcp_layer = gcp.build(ctx)
    return Platform(gcp=gcp_layer, kubernetes=kubernetes.build(ctx, gcp_layer))
