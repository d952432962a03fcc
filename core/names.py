"""Every name trainstack derives from a name the user gives, defined once, with the limit of the
longest thing derived from it.

GCP names that outgrow their limit are shortened deterministically (`shortened`); Kubernetes
names the controllers derive are checked (`workload_names`), since the controllers append their
suffixes after trainstack has rendered the object.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

# The JobSet's one replicated job; pods are `<jobset>-<replicated job>-<job index>-<pod index>`.
REPLICATED_JOB = "workload"
# JobSet v0.12.0 pkg/webhooks/jobset_webhook.go ValidateCreate: the longest pod name
# (placement.GenPodName) plus the 5 random characters of its generateName must be a DNS-1035 label.
JOBSET_POD_SUFFIX = "-abcde"
DNS_LABEL_MAX = 63  # Kubernetes apimachinery validation.DNS1035LabelMaxLength / LabelValueMaxLength
SUPERVISOR_SERVICES = ("actuator", "sensor", "controller")
# Cloud Storage: at most 63 characters without dots (cloud.google.com/storage/docs/buckets#naming).
BUCKET_MAX = 63


def shortened(name: str, max_length: int, keep: str = "") -> str:
    """`name` when it fits in `max_length`; else its head, a hash of the whole name and `keep`
    (a suffix that tells siblings apart), so two long names never shorten to the same one."""
    if len(name) <= max_length:
        return name.rstrip("-")
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    tail = f"-{digest}{keep}"
    return f"{name[: max_length - len(tail)].rstrip('-')}{tail}"


def physical(prefix: str, suffix: str, max_length: int = 63) -> str:
    """`<prefix>-<suffix>`, a GCP resource name of at most `max_length`: shortened keeping
    `-<suffix>`, so a stack's `nodes` and `builder` accounts stay apart under any prefix."""
    if not suffix:
        return shortened(prefix, max_length)
    name = f"{prefix}-{suffix}"
    return shortened(name, max_length, f"-{suffix}") if len(name) > max_length else name


def bucket(project: str, name: str) -> str:
    """`<project>-<name>` as a bucket name (names are global, so the project leads)."""
    return shortened(re.sub(r"[^a-z0-9-]", "-", f"{project}-{name}".lower()).strip("-"), BUCKET_MAX)


def gpu_pool_resource(pool: str) -> str:
    """The Pulumi name of the GPU pool named `pool`: from its name, never its position, so
    reordering `gpuPools` changes Kueue's flavor order and nothing else."""
    return f"gpu-pool-{pool}"


# The Pulumi name releases before pools were named by name gave the first GPU pool: it carries
# this alias so a live stack's first pool moves to its new name without being replaced.
FIRST_GPU_POOL_BEFORE = "gpu-pool"


def by_machine(role: str, index: int, machine_type: str) -> tuple[str, list[str]]:
    """The role of a machine type's `role` component (its NIC networks, its Networks, its GPUDirect
    installers), keyed by the machine, and the roles it played before: the first machine's was
    unsuffixed, so it is aliased from that (upgrade before removing or reordering a machine type's
    pools, as separate `up`s, or the alias lands on the machine that is first now)."""
    return f"{role}-{machine_type}", [role] if index == 0 else []


def pod_hostname(name: str, controller: str, index: int) -> str:
    """A job pod's hostname: JobSet's `<jobset>-<replicated job>-<job index>-<pod index>`, an
    Indexed Job's `<job>-<index>`."""
    return f"{name}-{REPLICATED_JOB}-0-{index}" if controller == "jobset" else f"{name}-{index}"


def supervisor_prefix(jobset: str) -> str:
    return f"{jobset}-supervisor"


def tensorboard(name: str) -> str:
    return f"{name}-tensorboard"


def workload_names(name: str, controller: str, nodes: int, supervisor: bool, tensorboard_on: bool) -> Iterator[tuple[str, str, int, str]]:
    """(what, name, limit, source) of every Kubernetes name derived from a workload's `name`,
    each at its longest (the last pod)."""
    last = pod_hostname(name, controller, nodes - 1)
    if controller == "jobset":
        yield (
            "pod name",
            last + JOBSET_POD_SUFFIX,
            DNS_LABEL_MAX,
            "JobSet v0.12.0's webhook: the longest pod name with its 5-character suffix is a DNS-1035 label",
        )
    yield "pod hostname", last, DNS_LABEL_MAX, "a pod hostname is a DNS-1123 label (Kubernetes ValidatePodSpec)"
    if supervisor:
        for service in SUPERVISOR_SERVICES:
            yield "supervisor Service", f"{supervisor_prefix(name)}-{service}", DNS_LABEL_MAX, "a Service name is a DNS-1035 label"
    if tensorboard_on:
        yield "TensorBoard Service", tensorboard(name), DNS_LABEL_MAX, "a Service name is a DNS-1035 label"


def too_long(name: str, controller: str, nodes: int, supervisor: bool = False, tensorboard_on: bool = False) -> str | None:
    """The rule a workload `name` breaks through the derived name furthest over its limit, or None."""
    what, derived, limit, source = max(workload_names(name, controller, nodes, supervisor, tensorboard_on), key=lambda d: len(d[1]) - d[2])
    if len(derived) > limit:
        return f"is too long for {nodes} nodes: {what} {derived!r} has {len(derived)} characters, over {limit} ({source})"
    return None
