"""The JobSet controller, installed from its pinned upstream chart on the controller pool."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from trainstack.core import catalog
from trainstack.components.k8s_provider import Placement, controller_release
from trainstack.components.options import Children


@dataclass(frozen=True)
class JobSetArgs:
    """The JobSet controller.

    Attributes:
        placement: where the controller runs (chart values `controller.nodeSelector` and
            `controller.tolerations`, JobSet v0.12.0).
        chart: the pinned chart; its CRDs serve catalog.JOBSET_API.
    """

    placement: Placement = Placement()
    chart: catalog.HelmChart = catalog.JOBSET_CHART


class JobSet(pulumi.ComponentResource):
    """The JobSet controller and CRDs. Anything that creates a JobSet depends on `release`,
    which is ready only once the controller (and so its webhook) is."""

    def __init__(self, name: str, args: JobSetArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:k8s:JobSet", name, None, opts)
        values = {"controller": args.placement.pod_fields()}
        self.release = controller_release(Children(self, name, opts).main(), args.chart, values)
        self.version = args.chart.version
        self.register_outputs({"version": self.version})
