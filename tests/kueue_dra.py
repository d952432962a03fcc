"""Kueue 0.19.2's DRA accounting, ported: which resources a Workload's pods ask Kueue for, DRA
devices included, and whether a ClusterQueue covers them.

Ported rules (kubernetes-sigs/kueue v0.19.2, 8eab687):
- `ResourceMapper.PopulateFromConfiguration` (pkg/dra/mapper.go): each DeviceClass of
  `resources.deviceClassMappings[*].deviceClassNames` maps to that mapping's `name`; the first
  mapping naming a class wins. Nothing else fills the mapper (cmd/kueue/main.go).
- `countDevicesPerClass` (pkg/dra/claims.go): per request, `firstAvailable` is refused, `exactly` is
  required, `adminAccess` and allocation mode `All` are refused, `ExactCount` adds `count` devices
  to its DeviceClass.
- `GetResourceRequestsForResourceClaimTemplates` (same file): every claim of a pod that names a
  ResourceClaimTemplate is resolved; a DeviceClass the mapper does not know is a NotFound error
  (the Workload is marked inadmissible, pkg/controller/core/workload_controller.go); known ones add
  their device count to the pod's requests under the mapped name.
- `totalRequestsFromPodSets` (pkg/workload/workload.go): the pod's requests (limits standing in for
  missing requests, pkg/workload/resources.go `UseLimitsAsMissingRequestsInPod`) plus its DRA
  resources, times the PodSet's count.
- `findFlavorForPodSets` (pkg/scheduler/flavorassigner/flavorassigner.go): a requested resource
  no resource group covers is "unavailable in ClusterQueue"; one above every flavor's nominal
  quota never fits.

The API server's defaults are applied to the claim as Kueue reads it (resource.k8s.io/v1
ExactDeviceRequest: `allocationMode` ExactCount when unset, `count` 1 when unset, kubernetes/api
resource/v1/types.go).

DRANET's RDMA NICs are DRA devices like the IMEX channel: the pod's ResourceClaimTemplate (GKE's
`mrdma.google.com` DeviceClass, workloads/dranet.py) goes through the same accounting; Cluster Toolkit's
own template asks for them in allocation mode All (c765092 modules/compute/gke-node-pool/
resource-claim-template.yaml.tftpl), which countDevicesPerClass refuses. The DRA driver's channel
template is rendered from the upstream file of the driver version the machine runs (25.3.0 on A4X,
25.8.0 on A4X Max, which adds the channel config's `allocationMode`: the ComputeDomain's
`spec.channel.allocationMode`, `Single` by its CRD's default, which trainstack leaves unset).

Departures: CEL selectors against ResourceSlices, counter and capacity sources, and extended
resources backed by DRA are not ported (trainstack's claim has no selectors and its mapping no
sources); PodSets are JobSet replicated jobs, one PodSet each, counted `parallelism x replicas`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

UPSTREAM = Path(__file__).parent / "upstream"


def claim_template_file(version: str = "25.3.0") -> Path:
    """The DRA driver's channel claim template of chart `version`, as upstream ships it."""
    return UPSTREAM / f"nvidia-dra-driver-gpu-v{version}" / "compute-domain-workload-claim-template.tmpl.yaml"


# NVIDIA/k8s-dra-driver-gpu v25.3.0 cmd/compute-domain-controller/computedomain.go
# `computeDomainDefaultChannelDeviceClass`: what the controller fills into {{ .DeviceClassName }}.
DRIVER_CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"


class Inadmissible(Exception):
    """Kueue would mark the Workload inadmissible (or never find it a flavor), with this reason."""


def mapper(configuration: Mapping[str, Any]) -> dict[str, str]:
    """DeviceClass -> logical resource, from a Kueue Configuration (PopulateFromConfiguration)."""
    found: dict[str, str] = {}
    for mapping in (configuration.get("resources") or {}).get("deviceClassMappings") or []:
        for device_class in mapping["deviceClassNames"]:
            found.setdefault(device_class, mapping["name"])
    return found


def render_claim_template(namespace: str, name: str, version: str = "25.3.0") -> dict[str, Any]:
    """The ResourceClaimTemplate the DRA driver (chart `version`) makes for a ComputeDomain's channel
    `name`: its upstream template with the controller's values (the ComputeDomain's UID and the
    driver's name are opaque here)."""
    values = {
        "Namespace": namespace,
        "Name": name,
        "Finalizer": "resource.nvidia.com/computeDomain",
        "ComputeDomainLabelKey": "resource.nvidia.com/computeDomain",
        "ComputeDomainLabelValue": "uid",
        "TargetLabelKey": "resource.nvidia.com/computeDomainTarget",
        "TargetLabelValue": "Workload",
        "DeviceClassName": DRIVER_CHANNEL_CLASS,
        "DriverName": "compute-domain.nvidia.com",
        "ChannelConfig.APIVersion": "resource.nvidia.com/v1beta1",
        "ChannelConfig.Kind": "ComputeDomainChannelConfig",
        "ChannelConfig.DomainID": "uid",
        "ChannelConfig.AllocationMode": "Single",
    }
    text = re.sub(r"\{\{ \.([A-Za-z.]+) \}\}", lambda m: values[m.group(1)], claim_template_file(version).read_text())
    return yaml.safe_load(text)


def _defaulted(request: Mapping[str, Any]) -> dict[str, Any]:
    exactly = dict(request["exactly"])
    exactly.setdefault("allocationMode", "ExactCount")
    if exactly["allocationMode"] == "ExactCount":
        exactly.setdefault("count", 1)
    return {**request, "exactly": exactly}


def devices_per_class(claim_spec: Mapping[str, Any]) -> dict[str, int]:
    """countDevicesPerClass: devices of each DeviceClass one claim asks for."""
    out: dict[str, int] = {}
    for i, request in enumerate(claim_spec.get("devices", {}).get("requests", [])):
        if "firstAvailable" in request:
            raise Inadmissible(f"devices.requests[{i}]: FirstAvailable device selection is not supported")
        if "exactly" not in request:
            raise Inadmissible(f"devices.requests[{i}]: Exactly must be set if FirstAvailable is nil")
        exactly = _defaulted(request)["exactly"]
        if exactly.get("adminAccess"):
            raise Inadmissible(f"devices.requests[{i}].exactly.adminAccess: AdminAccess is not supported")
        if exactly["allocationMode"] != "ExactCount":
            raise Inadmissible(f"devices.requests[{i}].exactly.allocationMode: {exactly['allocationMode']} is not supported")
        if exactly.get("deviceClassName"):
            out[exactly["deviceClassName"]] = out.get(exactly["deviceClassName"], 0) + int(exactly["count"])
    return out


def dra_requests(pod_spec: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]], classes: Mapping[str, str]) -> dict[str, int]:
    """One pod's DRA resources as Kueue counts them (GetResourceRequestsForResourceClaimTemplates);
    `templates` are the namespace's ResourceClaimTemplates by name."""
    out: dict[str, int] = {}
    for j, claim in enumerate(pod_spec.get("resourceClaims", [])):
        name = claim.get("resourceClaimTemplateName")
        if name is None:
            continue
        if name not in templates:  # an API error: Kueue retries (an internal error), it never admits meanwhile
            raise Inadmissible(f"resourceClaims[{j}]: ResourceClaimTemplate {name} not found")
        for device_class, count in devices_per_class(templates[name]["spec"]["spec"]).items():
            if device_class not in classes:
                raise Inadmissible(f"resourceClaims[{j}].resourceClaimTemplateName: DeviceClass {device_class} is not mapped in DRA configuration")
            out[classes[device_class]] = out.get(classes[device_class], 0) + count
    return out


_UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "m": 0.001}


def quantity(value: int | str) -> float:
    """A Kubernetes quantity (`500Gi`, `2`, `100m`) as a number."""
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(value))
    assert match, f"not a Kubernetes quantity: {value!r}"
    number, unit = match.groups()
    return float(number) * _UNITS[unit]


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, float]:
    """A pod's requests with limits standing in for missing requests: the containers' sum, at least
    each ordinary init container's (sidecars, restartPolicy Always, run beside the containers)."""

    def requests(container: Mapping[str, Any]) -> dict[str, float]:
        resources = container.get("resources") or {}
        merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        return {k: quantity(v) for k, v in merged.items()}

    inits = pod_spec.get("initContainers", [])
    running = [*pod_spec["containers"], *(c for c in inits if c.get("restartPolicy") == "Always")]
    total: dict[str, float] = {}
    for container in running:
        for k, v in requests(container).items():
            total[k] = total.get(k, 0) + v
    for container in (c for c in inits if c.get("restartPolicy") != "Always"):
        for k, v in requests(container).items():
            total[k] = max(total.get(k, 0), v)
    return total


def pod_sets(job: Mapping[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(name, pod count, pod spec) of each PodSet of a JobSet's or a batch Job's Workload."""
    if "replicatedJobs" not in job["spec"]:
        yield "main", job["spec"].get("parallelism", 1), job["spec"]["template"]["spec"]
        return
    for replicated in job["spec"]["replicatedJobs"]:
        spec = replicated["template"]["spec"]
        yield replicated["name"], spec.get("parallelism", 1) * replicated.get("replicas", 1), spec["template"]["spec"]


def workload_requests(job: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]], configuration: Mapping[str, Any]) -> dict[str, float]:
    """Everything a JobSet's or Job's Workload asks of its ClusterQueue (totalRequestsFromPodSets, summed)."""
    classes = mapper(configuration)
    total: dict[str, float] = {}
    for _, count, spec in pod_sets(job):
        per_pod = pod_requests(spec)
        for name, n in dra_requests(spec, templates, classes).items():
            per_pod[name] = per_pod.get(name, 0) + n
        for name, amount in per_pod.items():
            total[name] = total.get(name, 0) + amount * count
    return total


def fits_somewhere(requests: Mapping[str, float], cluster_queue_spec: Mapping[str, Any]) -> list[str]:
    """The flavors whose nominal quota holds `requests`; Inadmissible when a resource is not covered."""
    groups = cluster_queue_spec["resourceGroups"]
    for name in requests:
        if not any(name in g["coveredResources"] for g in groups):
            raise Inadmissible(f"resource {name} unavailable in ClusterQueue")
    fitting = []
    for group in groups:
        for flavor in group["flavors"]:
            quota = {r["name"]: quantity(r["nominalQuota"]) for r in flavor["resources"]}
            if all(requests[r] <= quota[r] for r in group["coveredResources"] if r in requests):
                fitting.append(flavor["name"])
    return fitting
