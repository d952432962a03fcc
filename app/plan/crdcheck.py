"""The custom resources a stack renders (Kueue, JobSet, GKE networking objects) against the CRD
schemas bundled in app/schemas/crds (the same versions the stack installs), as config problems:
a field over a CRD's maxLength or outside its enum is refused offline, naming the key that made
it, rather than by admission at deploy."""

from __future__ import annotations

import re

from trainstack.app.plan.recorder import Registration
from trainstack.app.schemas.validate import crd_for, validate_object
from trainstack.core.errors import Problem

# The config key each kind of custom resource comes from.
SOURCES: dict[str, tuple[str, ...]] = {
    "JobSet": ("trainstack:workload",),
    "ClusterQueue": ("trainstack:kueue", "clusterQueue"),
    "LocalQueue": ("trainstack:kueue", "localQueue"),
    "ResourceFlavor": ("trainstack:gpuPool",),
    "Topology": ("trainstack:kueue", "topologyName"),
    "WorkloadPriorityClass": ("trainstack:kueue", "priorityClasses"),
    "Network": ("trainstack:network", "gpuNicCidr"),
    "GKENetworkParamSet": ("trainstack:network", "gpuNicCidr"),
    "ComputeDomain": ("trainstack:workload", "nodes"),
    "MultiKueueConfig": ("trainstack:fleet", "workers"),
    "MultiKueueCluster": ("trainstack:fleet", "workers"),
}


def problems(registrations: list[Registration]) -> list[Problem]:
    """One problem per schema error of a rendered custom resource with a bundled CRD."""
    found: list[Problem] = []
    for reg in registrations:
        obj = reg.inputs
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not (reg.custom and isinstance(api_version, str) and isinstance(kind, str) and crd_for(api_version, kind)):
            continue
        name = (obj.get("metadata") or {}).get("name")
        for error in validate_object(obj):
            error = re.sub(r"'([^']{40})[^']{4,}'", r"'\1...'", error)  # a long value, shortened
            found.append(Problem(SOURCES.get(kind, ("(stack config)",)), name, f"renders {error}: refused by its CRD schema ({api_version})"))
    return found
