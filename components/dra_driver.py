"""NVIDIA's DRA Driver for GPUs, for its ComputeDomains only (IMEX across a multi-node NVLink
domain), installed from its pinned upstream chart as Cluster Toolkit installs it on GKE
(GoogleCloudPlatform/cluster-toolkit 1047080 modules/management/kubectl-apply/main.tf
install_nvidia_dra_driver values, and examples/gke-a4x/nvidia-dra-driver.yaml for the namespace
and its ResourceQuota)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, Placement, controller_release, metadata
from trainstack.components.node_pools import GPU_TAINT, gpu_tolerations
from trainstack.components.options import Children
from trainstack.core import catalog, rules

# The chart's pods take the system-node-critical priority class (its values.yaml
# priorityClassName). GKE Standard ships a kube-system ResourceQuota scoped to the
# system-*-critical classes, after which Kubernetes admits such pods only in namespaces with a
# matching quota (NVIDIA/aicr#921); Toolkit's examples/gke-a4x/nvidia-dra-driver.yaml creates
# this one (pods 100).
_CRITICAL = ["system-node-critical", "system-cluster-critical"]
_CRITICAL_PODS = "100"


def values(machine: catalog.Machine, placement: Placement) -> dict[str, object]:
    """The chart's values: its image as the catalog pins it, GKE's driver root, GPU allocation off
    (GKE's device plugin keeps serving nvidia.com/gpu), the controller off the GPU nodes (on the controller pool), the kubelet
    plugin on the machine's nodes, tolerating their taints."""

    def on(*requirements: dict[str, object]) -> dict[str, object]:
        terms = [{"matchExpressions": list(requirements)}]
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}

    image = catalog.image(machine.dra_driver_image or "nvidia-dra-driver")  # the chart's own, named so its platforms are checked
    return {
        "image": {"repository": image.repository, "tag": image.tag},
        "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia",
        "resources": {"gpus": {"enabled": False}},
        "controller": {
            "affinity": on({"key": GPU_TAINT.key, "operator": "DoesNotExist"}),
            "nodeSelector": dict(placement.node_selector),
        },
        "kubeletPlugin": {
            "affinity": on(
                {"key": ACCELERATOR_LABEL, "operator": "In", "values": [machine.accelerator]},
                {"key": "kubernetes.io/arch", "operator": "In", "values": [machine.architecture]},
            ),
            "tolerations": gpu_tolerations(machine),
        },
    }


@dataclass(frozen=True)
class NvidiaDraDriverArgs(Args):
    """The machine whose nodes join ComputeDomains, and where the controller runs."""

    machine_type: str
    """A GPU machine with a multi-node NVLink domain (`a4x-highgpu-4g`)."""
    placement: Placement = field(default_factory=Placement)
    """Where the controller runs (the controller pool)."""
    chart: catalog.HelmChart | None = None
    """The pinned chart, whose CRD serves catalog.COMPUTE_DOMAIN_API; None: the machine's (catalog
    `dra_driver`: 25.3.0 on A4X, 25.8.0 on A4X Max)."""

    _checks = {"machine_type": rules.gpu_machine}

    def _cross(self) -> Iterator[Problem]:
        if catalog.machine(self.machine_type).accelerator_topology is None:
            yield Problem(("machine_type",), self.machine_type, "has no multi-node NVLink domain: its GPUs join no ComputeDomain")


class NvidiaDraDriver(pulumi.ComponentResource):
    """The DRA driver's namespace (with the quota GKE needs for its critical pods) and release.
    A ComputeDomain depends on `release`, ready once the controller and kubelet plugins are."""

    release: k8s.helm.v3.Release
    """The driver's Helm release."""

    def __init__(self, name: str, args: NvidiaDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        args = NvidiaDraDriverArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:NvidiaDraDriver", name, None, opts)
        kids = Children(self, name, opts)
        machine = catalog.machine(args.machine_type)
        chart = args.chart or machine.dra_driver or catalog.DRA_DRIVER_CHART
        namespace = k8s.core.v1.Namespace(**kids("namespace"), metadata=metadata(chart.namespace))
        quota = k8s.core.v1.ResourceQuota(
            **kids("quota", namespace),
            metadata=metadata(f"{chart.namespace}-quota", chart.namespace),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard={"pods": _CRITICAL_PODS},
                scope_selector=k8s.core.v1.ScopeSelectorArgs(
                    match_expressions=[k8s.core.v1.ScopedResourceSelectorRequirementArgs(operator="In", scope_name="PriorityClass", values=_CRITICAL)]
                ),
            ),
        )
        self.release = controller_release(kids.main(quota), chart, values(machine, args.placement))
        self.register_outputs({"version": chart.version})
