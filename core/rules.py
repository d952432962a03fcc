"""The rules a value must follow, defined once: the stack config's pydantic types (core/config.py)
and the components' Args checks (components/args.py) call these same functions.

A rule returns None for a good value, else what is wrong with it (the message a user reads). Each
cites its source beside it.
"""

import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trainstack.core import catalog

Rule = Callable[[Any], str | None]


def pattern(regex: str, message: str, max_length: int | None = None) -> Rule:
    """A rule that the whole text matches `regex` (and, given `max_length`, is at most that long)."""
    compiled = re.compile(regex)

    def rule(value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be a string"
        if max_length is not None and len(value) > max_length:
            return f"must be at most {max_length} characters"
        return None if compiled.fullmatch(value) else message

    return rule


@dataclass(frozen=True)
class Bounds:
    """An inclusive range of integers and where it comes from."""

    low: int | None
    high: int | None
    source: str

    def __call__(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            if self.high is None:
                return f"must be at least {self.low} ({self.source})"
            if self.low is None:
                return f"must be at most {self.high} ({self.source})"
            return f"must be between {self.low} and {self.high} ({self.source})"
        return None


# --- names -------------------------------------------------------------------------------------

# Kubernetes object names: DNS-1123 labels
# (kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
K8S_NAME = pattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", "must be a DNS-1123 label: lowercase letters, digits and '-'", 63)
# DNS-1035 labels: a Service name and a GKE node pool name start with a letter (same page,
# #rfc-1035-label-names).
DNS1035_NAME = pattern(
    r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a DNS-1035 label: a lowercase letter, then lowercase letters, digits and '-'", 63
)
# GCP resource names (RFC 1035; terraform-provider-google verify.ValidateGCEName).
GCP_NAME = pattern(r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a GCP resource name: a lowercase letter, then lowercase letters, digits and '-'", 63)
# GKE cluster names: at most 40 characters (cloud.google.com/kubernetes-engine/docs/how-to/creating-a-regional-cluster).
CLUSTER_NAME = pattern(
    r"[a-z]([-a-z0-9]*[a-z0-9])?", "must start with a letter, use lowercase letters, digits and '-', and be at most 40 characters", 40
)
# terraform-provider-google verify.ValidateProjectID (cloud.google.com/resource-manager/docs/creating-managing-projects).
PROJECT_ID = pattern(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", "must be a GCP project ID: 6-30 lowercase letters, digits or '-'")
# Compute Engine region and zone names (cloud.google.com/compute/docs/regions-zones).
REGION_ID = pattern(r"[a-z]+-[a-z]+\d+", "must be a GCP region such as us-central1")
ZONE_ID = pattern(r"[a-z]+-[a-z]+\d+-[a-z]", "must be a GCP zone such as us-central1-b")
# A GKE location: a region (regional cluster) or a zone.
LOCATION = pattern(r"[a-z]+-[a-z]+\d+(-[a-z])?", "must be a GCP region or zone such as us-central1")
# Service account IDs (terraform-provider-google serviceaccount ValidateRFC1035Name(6, 30)).
ACCOUNT_ID = pattern(r"[a-z]([-a-z0-9]{4,28}[a-z0-9])", "must be a service account ID: 6-30 lowercase letters, digits or '-', starting with a letter")
# Filestore file share names (cloud.google.com/filestore/docs/reference/rest/v1/projects.locations.instances#FileShareConfig).
SHARE_NAME = pattern(r"[a-z][a-z0-9_]{0,15}", "must be 1-16 lowercase letters, digits or '_', starting with a letter")
# An environment variable name a shell and every runtime accept (a C identifier; POSIX.1-2017 8.1).
ENV_NAME = pattern(r"[A-Za-z_][A-Za-z0-9_]*", "must be an environment variable name: letters, digits and '_', not starting with a digit")
# Docker image tags (distribution/reference: [\w][\w.-]{0,127}).
IMAGE_TAG = pattern(r"[\w][\w.-]{0,127}", "must be a valid image tag")
# A path in a container (Kubernetes VolumeMount.mountPath is absolute).
ABSOLUTE_PATH = pattern(r"/[^\s]*", "must be an absolute path")
# Go durations as Kueue and the Kubernetes API parse them (pkg.go.dev/time#ParseDuration).
DURATION = pattern(r"(?:\d+(?:\.\d+)?(?:h|m|s|ms))+", "must be a duration such as 90s, 10m or 1h30m")
# Kubernetes resource quantities (kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
QUANTITY = pattern(r"\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?", "must be a Kubernetes quantity such as 500Gi")


def cidr(value: Any) -> str | None:
    """An IPv4 network with a prefix length, on its prefix boundary (as GCP subnet and GKE
    master ranges are; terraform-provider-google verify.ValidateIpCidrRange)."""
    if not isinstance(value, str):
        return "must be a string"
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        reason = "its host bits are set (not on a boundary of its prefix)" if "host bits" in str(exc) else "not an IPv4 network"
        return f"must be an IPv4 CIDR block such as 10.0.0.0/20: {reason}"
    if "/" not in value:
        return "must be an IPv4 CIDR block with a prefix length, such as 10.0.0.0/20"
    return None


def bucket_name(value: Any) -> str | None:
    """Cloud Storage bucket naming rules (cloud.google.com/storage/docs/buckets#naming)."""
    if not isinstance(value, str):
        return "must be a string"
    if not re.fullmatch(r"[a-z0-9][-a-z0-9_.]{1,61}[a-z0-9]", value):
        return "must be a valid bucket name: 3-63 lowercase letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    if value.startswith("goog") or "google" in value or "g00gle" in value:
        return "must not begin with 'goog' or contain 'google' (Cloud Storage reserves them)"
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", value):
        return "must not look like an IP address"
    return None


# Labels trainstack sets itself on every resource of a stack.
MANAGED_BY = ("managed-by", "trainstack")
STACK_LABEL = "trainstack-stack"
EPHEMERAL = ("trainstack-ephemeral", "true")
EXPIRES_LABEL = "trainstack-expires"
RESERVED_LABELS = frozenset({MANAGED_BY[0], STACK_LABEL, EPHEMERAL[0], EXPIRES_LABEL})
MAX_USER_LABELS = 64 - len(RESERVED_LABELS)  # GCP allows 64 labels a resource


def labels(value: Any) -> str | None:
    """A stack's own GCP labels: GCP's rules, and none of trainstack's reserved keys."""
    return gcp_labels(value, RESERVED_LABELS, MAX_USER_LABELS)


def gcp_labels(value: Any, reserved: frozenset[str] = frozenset(), limit: int = 64) -> str | None:
    """GCP labels (cloud.google.com/compute/docs/labeling-resources#requirements): at most 64 a
    resource, keys and values of lowercase letters, digits, '_' and '-'."""
    if len(value) > limit:
        return f"at most {limit} labels: GCP allows 64 and trainstack sets 4" if reserved else f"at most {limit} labels (GCP's limit)"
    for key, label in value.items():
        if key in reserved:
            return f"label '{key}' is trainstack's own (it marks what `trainstack reap` may delete)"
        if not isinstance(key, str) or not re.fullmatch(r"[a-z][a-z0-9_-]{0,62}", key):
            return f"label key '{key}' must start with a lowercase letter and hold at most 63 lowercase letters, digits, '_' or '-'"
        if not isinstance(label, str) or not re.fullmatch(r"[a-z0-9_-]{0,63}", label):
            return f"label value '{label}' may hold at most 63 lowercase letters, digits, '_' or '-'"
    return None


def gpu_machine(value: Any) -> str | None:
    """A GPU machine type trainstack knows (core/catalog.py MACHINES)."""
    return None if value in catalog.MACHINES else f"unknown GPU machine type; known: {', '.join(sorted(catalog.MACHINES))}"


def cpu_machine(value: Any) -> str | None:
    """A CPU machine type trainstack knows (core/catalog.py CPU_MACHINES)."""
    return None if value in catalog.CPU_MACHINES else f"unknown CPU machine type; known: {', '.join(sorted(catalog.CPU_MACHINES))}"


# --- numbers -----------------------------------------------------------------------------------

INT32_MAX = 2**31 - 1  # Kubernetes integer fields are int32
# GKE: at most 1000 nodes a node pool per zone (cloud.google.com/kubernetes-engine/quotas).
NODE_COUNT = Bounds(0, 1000, "GKE allows at most 1000 nodes a pool per zone")
AUTOSCALING_MAX = Bounds(1, 1000, "GKE allows at most 1000 nodes a pool per zone")
CPU_NODE_COUNT = Bounds(1, 100, "a controller pool needs a node and trainstack caps it at 100")
# Boot disks: GKE's node pool minimum is 10 GB; a GPU node's images and drivers need 100 GB;
# a persistent disk is at most 64 TiB (cloud.google.com/compute/docs/disks#pdspecs).
GPU_BOOT_DISK_GB = Bounds(100, 65536, "a GPU node's images need 100 GB; a persistent disk holds at most 64 TiB")
CPU_BOOT_DISK_GB = Bounds(10, 65536, "GKE's minimum boot disk is 10 GB; a persistent disk holds at most 64 TiB")
PD_SIZE_GB = Bounds(10, 65536, "a persistent disk holds 10 GB to 64 TiB")
NON_NEGATIVE = Bounds(0, None, "a count")
POSITIVE = Bounds(1, None, "a count of at least one")
INT32 = Bounds(-INT32_MAX - 1, INT32_MAX, "a Kubernetes int32")
# TCP ports (RFC 793; Kubernetes ContainerPort and the GCP firewall take 1-65535).
PORT = Bounds(1, 65535, "a TCP port")


def filestore_capacity(tier: str, capacity_gib: int) -> str | None:
    """A Filestore tier's capacity range (core/catalog.py FILESTORE_TIERS, from
    cloud.google.com/filestore/docs/service-tiers)."""
    limits = catalog.FILESTORE_TIERS.get(tier)
    if limits is None:
        return f"unknown Filestore tier; known: {', '.join(catalog.FILESTORE_TIERS)}"
    if not limits.min_gib <= capacity_gib <= limits.max_gib:
        return f"tier {tier} takes {limits.min_gib} to {limits.max_gib} GiB"
    return None


def nodes_per_zone(node_count: int, zones: Sequence[str], key: str = "nodeCount") -> str | None:
    """GKE sizes a pool per zone (NodePool.node_count is per zone), so the total divides evenly."""
    if zones and node_count % len(zones):
        return f"must be a multiple of the number of zones ({len(zones)}); GKE puts {key}/zones nodes in each zone"
    return None


def min_max(low: int, high: int, high_key: str = "maxNodes") -> str | None:
    """A lower bound not above its upper bound (GKE rejects total_min_node_count > total_max_node_count)."""
    return f"must not exceed {high_key} ({high})" if low > high else None
