"""The JobSet controller, installed from its pinned upstream chart on the controller pool."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args
from trainstack.components.k8s_provider import Placement, controller_release
from trainstack.components.options import Children
from trainstack.core import catalog


@dataclass(frozen=True)
class JobSetArgs(Args):
    """The JobSet controller."""

    placement: Placement = field(default_factory=Placement)
    """Where the controller runs (chart values `controller.nodeSelector` and
    `controller.tolerations`, JobSet v0.12.0)."""
    chart: catalog.HelmChart = catalog.JOBSET_CHART
    """The pinned chart; its CRDs serve catalog.JOBSET_API."""


class JobSet(pulumi.ComponentResource):
    """The JobSet controller and CRDs. Anything that creates a JobSet depends on `release`,
    which is ready only once the controller (and so its webhook) is."""

    release: k8s.helm.v3.Release
    """The controller's Helm release."""
    version: str
    """The chart version installed."""

    def __init__(self, name: str, args: JobSetArgs, opts: pulumi.ResourceOptions | None = None):
        args = JobSetArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:JobSet", name, None, opts)
        values = {"controller": args.placement.pod_fields()}
        self.release = controller_release(Children(self, name, opts).main(), args.chart, values)
        self.version = args.chart.version
        self.register_outputs({"version": self.version})
