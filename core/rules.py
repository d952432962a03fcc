"""The rules a value must follow, defined once: the stack config's pydantic types (infra/stack.py)
and the components' Args checks (components/args.py) call these same functions.

A rule returns None for a good value, else what is wrong with it (the message a user reads). Each
cites its source beside it.
"""

import ipaddress
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from trainstack.core import catalog

Rule = Callable[[Any], str | None]


@dataclass(frozen=True)
class Pattern:
    """A rule that the whole text matches `regex` (and, given `max_length`, is at most that long)."""

    regex: str
    message: str
    max_length: int | None = None
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.regex))

    def __call__(self, value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be a string"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must be at most {self.max_length} characters"
        return None if self.compiled.fullmatch(value) else self.message


@dataclass(frozen=True)
class Bounds:
    """An inclusive range of integers and where it comes from."""

    low: int | None
    high: int | None
    source: str

    @property
    def message(self) -> str:
        """What a value out of range reads (both doors, and the config reference)."""
        if self.high is None:
            return f"must be at least {self.low} ({self.source})"
        if self.low is None:
            return f"must be at most {self.high} ({self.source})"
        return f"must be between {self.low} and {self.high} ({self.source})"

    def __call__(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return self.message
        return None


# --- names -------------------------------------------------------------------------------------

# Kubernetes object names: DNS-1123 labels
# (kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
K8S_NAME = Pattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", "must be a DNS-1123 label: lowercase letters, digits and '-'", 63)
# DNS-1035 labels: a Service name and a GKE node pool name start with a letter (same page,
# #rfc-1035-label-names).
DNS1035_NAME = Pattern(r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a DNS-1035 label: a lowercase letter, then lowercase letters, digits and '-'", 63)
# GKE node pool names: 1-40 characters, a lowercase letter first, no '-' last (`gcloud container
# node-pools create` NAME; the pool's name also prefixes its instance groups and VM names).
NODE_POOL_NAME = Pattern(
    r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a GKE node pool name: a lowercase letter, then lowercase letters, digits and '-', at most 40 characters", 40
)
# GCP resource names (RFC 1035; terraform-provider-google verify.ValidateGCEName).
GCP_NAME = Pattern(r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a GCP resource name: a lowercase letter, then lowercase letters, digits and '-'", 63)
# GKE cluster names: at most 40 characters (cloud.google.com/kubernetes-engine/docs/how-to/creating-a-regional-cluster).
CLUSTER_NAME = Pattern(r"[a-z]([-a-z0-9]*[a-z0-9])?", "must start with a letter, use lowercase letters, digits and '-', and be at most 40 characters", 40)
# terraform-provider-google verify.ValidateProjectID (cloud.google.com/resource-manager/docs/creating-managing-projects).
PROJECT_ID = Pattern(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", "must be a GCP project ID: 6-30 lowercase letters, digits or '-'")
# Compute Engine region and zone names (cloud.google.com/compute/docs/regions-zones): a zone is its
# region, '-' and a letter, or an AI zone's `ai<n><letter>` (us-central1-ai1a, whose parent zone is
# us-central1-a; docs.cloud.google.com/compute/docs/regions-zones/ai-zones, read 2026-11-25).
REGION_ID = Pattern(r"[a-z]+-[a-z]+\d+", "must be a GCP region such as us-central1")
ZONE_ID = Pattern(r"[a-z]+-[a-z]+\d+-(ai\d+)?[a-z]", "must be a GCP zone such as us-central1-b (or an AI zone such as us-central1-ai1a)")
# A GKE location: a region (regional cluster) or a zone.
LOCATION = Pattern(r"[a-z]+-[a-z]+\d+(-(ai\d+)?[a-z])?", "must be a GCP region or zone such as us-central1 or us-central1-c")


# A grantee's key among a resource's IAM grants (WorkloadImageArgs.readers,
# CheckpointBucketArgs.object_users): the child's name is `reader-<key>`, so the key is the
# grantee's own identity (an account id, `<namespace>.<account>`), never its place in a list.
GRANTEE_KEY = Pattern(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", "must be a grantee's name: lowercase letters, digits, '-' and '.'", 100)


def grantees(value: Any) -> str | None:
    """IAM members keyed by their grantee's own name (GRANTEE_KEY), each key once."""
    if not isinstance(value, dict):
        return "must be a mapping of each grantee's name to its IAM member"
    return next((f"key {key!r} {wrong}" for key in value if (wrong := GRANTEE_KEY(key))), None)


def region_of(zone: str) -> str:
    """The region of a zone name (`us-central1-b`, `us-central1-ai1a` -> `us-central1`)."""
    return zone.rpartition("-")[0]


# Every zone the table lists, for any machine: the zones it knows exist.
_TABLE_ZONES = frozenset().union(*catalog.MACHINE_ZONES.values())


def machine_zone(machine_type: str, zone: str) -> str | None:
    """A zone that can hold `machine_type`, by the catalog's dated table (catalog.MACHINE_ZONES).
    Refused only where the table is sure: a zone it lists (for some GPU machine) in a region that
    offers this machine in none of its zones. Whatever the table does not know passes: a zone or
    region new since it was read (an AI zone such as us-central1-ai1a), a machine without a row,
    and a zone of a region that offers the machine in another zone. The table is one snapshot: a
    zone that gained the machine since must not be refused with no way round, and GKE itself
    refuses a pool in a zone without it."""
    offered = catalog.MACHINE_ZONES.get(machine_type)
    if offered is None or zone not in _TABLE_ZONES or any(region_of(z) == region_of(zone) for z in offered):
        return None
    return (
        f"{region_of(zone)} offers no {machine_type} ({catalog.MACHINE_ZONES_SOURCE}, read {catalog.MACHINE_ZONES_AS_OF}); "
        f"it is offered in {', '.join(sorted(offered))}"
    )


def machine_zone_named(machine_type: str, zone: str) -> str | None:
    """A warning, not a refusal: a zone that the catalog's partial listing of a machine without a
    row in MACHINE_ZONES (catalog.MACHINE_ZONES_NAMED: A4X Max) does not name. The listing is an
    undated third-party copy that omits regions, so it cannot refuse; the reservation fixes the
    zone, and GKE refuses a pool outside it only after the networks are made."""
    named = catalog.MACHINE_ZONES_NAMED.get(machine_type)
    if named is None or zone in named:
        return None
    return (
        f"is not a zone the one listing found names for {machine_type}: {', '.join(sorted(named))} "
        f"({catalog.MACHINE_ZONES_NAMED_SOURCE}, read {catalog.MACHINE_ZONES_NAMED_AS_OF}; partial and undated); "
        "check that your reservation is in this zone"
    )


def zone_known(zone: str) -> str | None:
    """A warning, not a refusal: a zone the catalog's dated table does not list, in a region it
    lists other zones of (`us-central1-z`), is a typo or a zone opened since the table was read;
    GKE would refuse a pool in a zone that does not exist only after the networks exist. A region
    the table knows nothing of passes without a word (the table lists GPU zones only)."""
    if zone in _TABLE_ZONES:
        return None
    known = sorted(z for z in _TABLE_ZONES if region_of(z) == region_of(zone))
    if not known:
        return None
    return (
        f"is not a zone the catalog's table lists in {region_of(zone)} ({catalog.MACHINE_ZONES_SOURCE}, read "
        f"{catalog.MACHINE_ZONES_AS_OF}; it knows {', '.join(known)}); check the name: GKE refuses a zone without "
        "the machine only after the networks are made"
    )


# Service account IDs (terraform-provider-google serviceaccount ValidateRFC1035Name(6, 30)).
ACCOUNT_ID_MAX = 30
ACCOUNT_ID = Pattern(
    rf"[a-z]([-a-z0-9]{{4,{ACCOUNT_ID_MAX - 2}}}[a-z0-9])",
    f"must be a service account ID: 6-{ACCOUNT_ID_MAX} lowercase letters, digits or '-', starting with a letter",
)
# Filestore file share names (cloud.google.com/filestore/docs/reference/rest/v1/projects.locations.instances#FileShareConfig).
SHARE_NAME = Pattern(r"[a-z][a-z0-9_]{0,15}", "must be 1-16 lowercase letters, digits or '_', starting with a letter")
# An environment variable name a shell and every runtime accept (a C identifier; POSIX.1-2017 8.1).
ENV_NAME = Pattern(r"[A-Za-z_][A-Za-z0-9_]*", "must be an environment variable name: letters, digits and '_', not starting with a digit")
# Docker image tags (distribution/reference: [\w][\w.-]{0,127}).
# An image tag by the grammar of github.com/distribution/reference (regexp.go): ASCII only.
IMAGE_TAG_REGEX = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
IMAGE_TAG = Pattern(IMAGE_TAG_REGEX, "must be a valid image tag: up to 128 ASCII letters, digits, '_', '.' or '-', not starting with '.' or '-'")
# A Lustre file system name: at most 8 letters and digits, starting with a letter
# (pulumi-gcp lustre.Instance `filesystem`; Managed Lustre CSI driver reference, `filesystem`).
LUSTRE_FILESYSTEM = Pattern(r"[A-Za-z][A-Za-z0-9]{0,7}", "must be 1-8 letters or digits, starting with a letter")
# Secret Manager secret IDs (cloud.google.com/secret-manager/docs/reference/rest/v1/projects.secrets/create).
# A node pool's secondary boot disk image (GKE SecondaryBootDisk.disk_image; the GKE docs' `projects/PROJECT_ID/global/images/DISK_IMAGE_NAME`).
DISK_IMAGE = Pattern(
    r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?", "must be a disk image path: projects/<project>/global/images/<name>"
)
SECRET_ID = Pattern(r"[A-Za-z0-9_-]{1,255}", "must be a Secret Manager secret ID: 1-255 letters, digits, '_' or '-'")
# Artifact Registry repository IDs (cloud.google.com/artifact-registry/docs/repositories/create-repos).
REPOSITORY_ID = Pattern(r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a repository ID: a lowercase letter, then lowercase letters, digits and '-'", 63)
# The machine types `gcloud builds submit --machine-type` accepts (Cloud Build BuildOptions.MachineType).
CLOUD_BUILD_MACHINES = frozenset({"e2-medium", "e2-highcpu-8", "e2-highcpu-32", "n1-highcpu-8", "n1-highcpu-32"})


def cloud_build_machine(value: Any) -> str | None:
    """A machine type Cloud Build offers."""
    return None if value in CLOUD_BUILD_MACHINES else f"is not a Cloud Build machine type; use one of {', '.join(sorted(CLOUD_BUILD_MACHINES))}"


def accelerator(value: Any) -> str | None:
    """A GKE accelerator type of a catalog machine (its `cloud.google.com/gke-accelerator` label)."""
    known = sorted({m.accelerator for m in catalog.MACHINES.values()})
    return None if value in known else f"must be one of {', '.join(known)}"


# A path in a container (Kubernetes VolumeMount.mountPath is absolute).
ABSOLUTE_PATH = Pattern(r"/[^\s]*", "must be an absolute path")
# Cloud Storage URIs (gs://<bucket>[/<object path>]).
GCS_URI = Pattern(r"gs://[a-z0-9][-a-z0-9_.]*[a-z0-9](/\S*)?", "must be a gs:// URI")


def env_names(value: Any) -> str | None:
    """Environment variable names as keys of a mapping (ENV_NAME each)."""
    for key in value:
        if message := ENV_NAME(key):
            return f"key {key!r} {message}"
    return None


# Go durations as Kueue and the Kubernetes API parse them (pkg.go.dev/time#ParseDuration).
DURATION = Pattern(r"(?:\d+(?:\.\d+)?(?:h|m|s|ms))+", "must be a duration such as 90s, 10m or 1h30m")
# Kubernetes resource quantities (kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
QUANTITY = Pattern(r"\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?", "must be a Kubernetes quantity such as 500Gi")


# GKE release channels (terraform-provider-google container release_channel.channel).
RELEASE_CHANNEL_NAMES = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
# A GKE minor version prefix, resolved with the container engine versions lookup (version_prefix).
# A Cloud KMS key's resource name (cloud.google.com/kms/docs/resource-hierarchy#keys).
KMS_KEY = Pattern(r"projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+", "must be a Cloud KMS key: projects/P/locations/L/keyRings/R/cryptoKeys/K")
VERSION_PREFIX = Pattern(r"1\.\d{2}\.", "must be a minor version prefix such as 1.33. (GKE picks the patch)")
# GKE maintenance recurrences: RFC 5545 RRULEs (cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions).
RECURRENCE = Pattern(
    r"FREQ=(DAILY|WEEKLY)(;BYDAY=(MO|TU|WE|TH|FR|SA|SU)(,(MO|TU|WE|TH|FR|SA|SU))*)?",
    "must be an RFC 5545 rule such as FREQ=WEEKLY;BYDAY=SA,SU (days MO TU WE TH FR SA SU)",
)
# GKE: a maintenance policy allows at least 48 hours of maintenance in a 32-day rolling window,
# counting only contiguous windows of 4 hours or more (cloud.google.com/kubernetes-engine/docs/how-to/
# maintenance-windows-and-exclusions, "Considerations when configuring a maintenance window", read
# 2026-11-25). A weekly day recurs 4 or 5 times in any 32 days (32 = 4 x 7 + 4): 4 is the floor.
MAINTENANCE_HOURS, MAINTENANCE_DAYS = 48, 32


def maintenance_availability(start: str, end: str, recurrence: str) -> str | None:
    """At least 48 hours of maintenance in every 32 days: a window recurs at least 4 times on each
    of its BYDAY days in them; without BYDAY, a daily one 32 times, a weekly one 4 times."""
    hours = (utc(end) - utc(start)).total_seconds() / 3600
    days = recurrence.partition("BYDAY=")[2]
    weeks = MAINTENANCE_DAYS // 7  # BYDAY limits even a daily rule to its days (RFC 5545)
    times = weeks * len(set(days.split(","))) if days else (MAINTENANCE_DAYS if recurrence.startswith("FREQ=DAILY") else weeks)
    if hours * times < MAINTENANCE_HOURS:
        return f"allows {hours * times:g} h of maintenance in 32 days; GKE requires at least {MAINTENANCE_HOURS} h: lengthen the window or add days"
    return None


def exclusion_scope(value: Any) -> str | None:
    """trainstack's exclusion lasts until the end of the minor version's support, which GKE allows
    for NO_MINOR_UPGRADES and NO_MINOR_OR_NODE_UPGRADES only: a NO_UPGRADES exclusion lasts at most
    30 days (GKE maintenance exclusions; terraform-provider-google end_time_behavior UNTIL_END_OF_SUPPORT)."""
    if value == "NO_UPGRADES":
        return "lasts at most 30 days in GKE, and trainstack's exclusion runs until the end of support; use NO_MINOR_OR_NODE_UPGRADES or NO_MINOR_UPGRADES"
    return None


def utc(value: str) -> datetime:
    """An RFC 3339 UTC time as GKE maintenance policies write it."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")


def utc_time(value: Any) -> str | None:
    """An RFC 3339 UTC time (GKE MaintenanceWindow.startTime/endTime)."""
    try:
        utc(value)
    except (TypeError, ValueError):
        return "must be an RFC 3339 UTC time such as 2026-01-03T03:00:00Z"
    return None


def window_length(start: str, end: str) -> str | None:
    """A maintenance window of 4 to 24 hours (GKE needs at least 4 hours a recurring window)."""
    hours = (utc(end) - utc(start)).total_seconds() / 3600
    return None if 4 <= hours <= 24 else f"must be 4 to 24 hours after start (it is {hours:g} h): GKE needs at least 4 hours a window"


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


def master_cidr(value: Any) -> str | None:
    """GKE private clusters take a /28 for the control plane (PrivateClusterConfig.masterIpv4CidrBlock)."""
    return None if str(value).endswith("/28") else "must be a /28 (GKE's control plane range)"


# GCP reserves 4 addresses of every subnet's primary range (cloud.google.com/vpc/docs/subnets#unusable-ip-addresses-in-every-subnet).
SUBNET_RESERVED = 4
# GKE gives each node a pods range of twice its maximum pods rounded up to a power of two: the
# default 110 pods a node take a /24 (cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr).
MAX_PODS_PER_NODE = 110
# GKE: at most 50 authorized networks. The API's MasterAuthorizedNetworksConfig.cidrBlocks defines
# "up to 50" with no exception (google.container.v1 as Google's client references carry it,
# cloud.google.com/dotnet/docs/reference/Google.Cloud.Container.V1/3.5.0/
# Google.Cloud.Container.V1.MasterAuthorizedNetworksConfig), and the how-to's Limitations open
# with "Public clusters can have up to 50" (cloud.google.com/kubernetes-engine/docs/how-to/
# authorized-networks), both read 2026-11-25; hashicorp/terraform-provider-google@e03b762
# google/services/container/resource_container_cluster.go sets no MaxItems on cidr_blocks and
# leaves the limit to the API. The 100 for private clusters that earlier copies gave could not be
# read in any stored copy, so every cluster is held to the API's 50.
AUTHORIZED_NETWORKS = 50
# The addresses a fleet's manager egresses from (components.gcp_network `egress_address`): the
# authorized networks a worker gives each fleet it admits (trainstack:cluster.admitFleets).
FLEET_EGRESS_ADDRESSES = 1


def node_range_prefix(max_pods_per_node: int) -> int:
    """The prefix of one node's pods range (flexible-pod-cidr: 2 x max pods, a power of two)."""
    return 32 - (2 * max_pods_per_node - 1).bit_length()


def pods_range_fits(pods_cidr: str, max_nodes: int, max_pods_per_node: int = MAX_PODS_PER_NODE) -> str | None:
    """A pods range holds a per-node range for every node the pools may have."""
    per_node = node_range_prefix(max_pods_per_node)
    holds = 2 ** max(per_node - ipaddress.IPv4Network(pods_cidr).prefixlen, 0)
    if holds < max_nodes:
        return f"holds the pods of {holds} nodes (a /{per_node} each for {max_pods_per_node} pods a node), fewer than the pools' {max_nodes}; widen it"
    return None


def subnet_fits(prefix: int, max_nodes: int, what: str = "the pools'") -> str | None:
    """A subnet's primary range (a /`prefix`) holds an address for every node, less GCP's 4 reserved ones."""
    holds = 2 ** (32 - prefix) - SUBNET_RESERVED
    if holds < max_nodes:
        return f"holds {holds} node addresses (GCP reserves {SUBNET_RESERVED}), fewer than {what} {max_nodes} nodes; widen it"
    return None


def authorized_networks(count: int) -> str | None:
    """No more authorized networks than GKE takes."""
    return f"lists {count} networks; GKE takes at most {AUTHORIZED_NETWORKS}" if count > AUTHORIZED_NETWORKS else None


def private_endpoint_network(cidr_block: str) -> str | None:
    """A control plane with only its private endpoint is reachable from internal addresses only:
    GKE refuses a public authorized network ('is not a reserved network, which is required for
    private endpoints')."""
    net = ipaddress.IPv4Network(cidr_block)
    return None if net.is_private and net.prefixlen > 0 else "is a public range; a private endpoint takes only internal (RFC 1918 or other reserved) ranges"


# GPU NIC subnets are consecutive /24s of one /16 (catalog.nic_networks; at most 9 NICs a machine).
NIC_SUBNET_PREFIX = 24
NIC_CIDR = Pattern(r".*/16", "must be a /16; GPU NIC subnets are carved from it as /24s")


def overlaps(ranges: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(key, value, rule) for each range that is not a network, or overlaps an earlier one (GCP
    refuses overlapping primary and secondary ranges in a VPC)."""
    nets: dict[str, ipaddress.IPv4Network] = {}
    for key, value in ranges.items():
        try:
            nets[key] = ipaddress.IPv4Network(value)
        except ValueError:
            yield key, value, "is not a network address: host bits are set or an octet exceeds 255"
    keys = list(nets)
    for i, key in enumerate(keys):
        for other in keys[:i]:
            if nets[key].overlaps(nets[other]):
                yield key, ranges[key], f"overlaps {other} ({ranges[other]})"


def bucket_name(value: Any) -> str | None:
    """Cloud Storage bucket naming rules (cloud.google.com/storage/docs/buckets#naming)."""
    if not isinstance(value, str):
        return "must be a string"
    if not (3 <= len(value) <= 222 and re.fullmatch(r"[a-z0-9][-a-z0-9_.]*[a-z0-9]", value)):
        return "must be a valid bucket name: 3-63 lowercase letters, digits, '-', '_' or '.' (up to 222 with dots), starting and ending with a letter or digit"
    if max(len(part) for part in value.split(".")) > 63:
        return "must be at most 63 characters, or, with dots, at most 63 between dots"
    if re.search(r"\.\.|-\.|\.-", value):
        return "must not hold two dots in a row or a dash next to a dot"
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
    if not isinstance(value, dict):
        return "must be a mapping of label keys to values"
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
    """A GPU machine type trainstack knows (core/catalog/machines.py MACHINES)."""
    return None if isinstance(value, str) and value in catalog.MACHINES else f"unknown GPU machine type; known: {', '.join(sorted(catalog.MACHINES))}"


def cpu_machine(value: Any) -> str | None:
    """A CPU machine type trainstack knows (core/catalog/machines.py CPU_MACHINES)."""
    return None if isinstance(value, str) and value in catalog.CPU_MACHINES else f"unknown CPU machine type; known: {', '.join(sorted(catalog.CPU_MACHINES))}"


# --- numbers -----------------------------------------------------------------------------------

INT32_MAX = 2**31 - 1  # Kubernetes integer fields are int32
# GKE: at most 1000 nodes a node pool per zone (cloud.google.com/kubernetes-engine/quotas).
# A ClusterQueue resource group holds at most 64 flavors (Kueue v0.19.2 CRD clusterqueues
# spec.resourceGroups[].flavors maxItems): one per GPU pool of a queue.
MAX_FLAVORS = 64
POOL_NODES_MAX = 1000  # GKE: nodes a pool per zone
NODE_COUNT = Bounds(0, POOL_NODES_MAX, "GKE allows at most 1000 nodes a pool per zone")
AUTOSCALING_MAX = Bounds(1, 1000, "GKE allows at most 1000 nodes a pool per zone")
CPU_NODE_COUNT = Bounds(1, 100, "a controller pool needs a node and trainstack caps it at 100")
# Boot disks: GKE's node pool minimum is 10 GB; a GPU node's images and drivers need 100 GB;
# a persistent disk is at most 64 TiB (cloud.google.com/compute/docs/disks#pdspecs).
GPU_BOOT_DISK_GB = Bounds(100, 65536, "a GPU node's images need 100 GB; a persistent disk holds at most 64 TiB")
CPU_BOOT_DISK_GB = Bounds(10, 65536, "GKE's minimum boot disk is 10 GB; a persistent disk holds at most 64 TiB")
PD_SIZE_GB = Bounds(10, 65536, "a persistent disk holds 10 GB to 64 TiB")
NON_NEGATIVE = Bounds(0, None, "a count")
# GKE NodePool.UpgradeSettings max_surge, max_unavailable: int32s, but a pool holds at most
# POOL_NODES_MAX nodes a zone, so no more can surge or be unavailable.
UPGRADE_NODES = Bounds(0, POOL_NODES_MAX, "a pool holds at most 1000 nodes a zone")
POSITIVE = Bounds(1, None, "a count of at least one")
INT32 = Bounds(-INT32_MAX - 1, INT32_MAX, "a Kubernetes int32")
# TCP ports (RFC 793; Kubernetes ContainerPort and the GCP firewall take 1-65535).
PORT = Bounds(1, 65535, "a TCP port")


FILESTORE_TIER_NAMES = tuple(catalog.FILESTORE_TIERS)
# Tiers whose instances live in a zone; the others in a region (cloud.google.com/filestore/docs/service-tiers).
ZONAL_FILESTORE_TIERS = frozenset({"BASIC_HDD", "BASIC_SSD", "ZONAL"})


# Namespaces a workload must not run in, nor trainstack create: Kubernetes reserves `kube-`
# (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces), GKE manages `gke-` and
# `gmp-` ones (GKE managed namespaces, Managed Service for Prometheus), and Kueue and JobSet's
# charts install their controllers in kueue-system and jobset-system.
RESERVED_NAMESPACES = frozenset({"kueue-system", "jobset-system"})
RESERVED_NAMESPACE_PREFIXES = ("kube-", "gke-", "gmp-")


def workload_namespace(value: Any) -> str | None:
    """A namespace of one's own: not Kubernetes', GKE's or the controllers'."""
    if value in RESERVED_NAMESPACES or str(value).startswith(RESERVED_NAMESPACE_PREFIXES):
        return "is a system namespace (kube-*, gke-*, gmp-*, kueue-system, jobset-system); run the workload in a namespace of its own"
    return None


def pinned_image(value: Any) -> str | None:
    """A prebuilt image names a tag or a digest: without one every node pulls whatever `latest`
    is when it starts, so the pods of one job may run different images."""
    last = str(value).rsplit("/", 1)[-1]
    return None if ":" in last or "@" in last else "names no tag or digest; pin one, such as nvcr.io/nvidia/nemo:24.07"


def topology_admissible(mode: str, level: str, nodes: int) -> str | None:
    """Kueue admits a `required` topology only where one domain of `level` holds every pod; a
    host holds one training pod (each takes all its GPUs), so a multi-node job can never be
    required on one host (Kueue Topology Aware Scheduling)."""
    if mode == "required" and nodes > 1 and level in ("kubernetes.io/hostname", "cloud.google.com/gce-topology-host"):
        return f"requires all {nodes} pods on one host, which holds one; Kueue would never admit it: use a block or subblock level, or mode preferred"
    return None


def mount_paths(mounts: dict[str, str], taken: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(key, path, rule) of each user mount whose path another mount of the container already
    has: Kubernetes refuses two volumeMounts at one mountPath (ValidateVolumeMounts, 'must be unique')."""
    seen = dict(taken)
    for key, path in mounts.items():
        normal = path.rstrip("/") or "/"
        if normal in seen:
            yield key, path, f"is already the mount path of {seen[normal]} in the training container"
        seen.setdefault(normal, key)


def duplicate(kind: str) -> str:
    """Kubernetes object names are unique in their kind (and namespace)."""
    return f"is already used by another {kind}"


# DWS flex-start VMs run at most 7 days (cloud.google.com/kubernetes-engine/docs/concepts/dws;
# terraform-provider-google node_config max_run_duration, e.g. "604800s").
MAX_RUN_DURATION_S = 7 * 24 * 3600


def max_run_duration(provisioning: str, value: str) -> str | None:
    """A pool's `maxRunDuration`: only for DWS capacity, and at most 7 days."""
    if provisioning not in ("flex-start", "queued"):
        return f"applies only to flex-start or queued provisioning, not {provisioning}"
    if duration_seconds(value) > MAX_RUN_DURATION_S:
        return f"must be at most 7 days ({MAX_RUN_DURATION_S}s): GKE reclaims DWS VMs by then"
    return None


def compact_placement(machine: catalog.Machine, provisioning: str, reservation_affinity: str) -> list[tuple[str, str]]:
    """(key, rule) of what forbids a COMPACT placement policy on a pool: the machine (catalog
    `compact_placement`), flex-start on machines before A3 Ultra (Cluster Toolkit gke-node-pool
    main.tf precondition `^(a3-ultragpu-|a4-|h4d-)`), and a specific reservation, whose own
    deployment places its VMs (Cluster Toolkit's A3 Ultra and A3 Mega blueprints set no policy),
    except on a machine whose NVLink domain's workload policy places them, which Toolkit's
    gke-a4x applies to a specific reservation's pool (1047080 examples/gke-a4x/gke-a4x.yaml)."""
    found = []
    if provisioning == "flex-start" and not machine.compact_with_flex_start:
        found.append(("provisioning", f"GKE allows compact placement with flex-start on A3 Ultra and newer, not on {machine.name}"))
    if not machine.compact_placement:
        found.append(("placement", f"{machine.name} does not support compact placement"))
    if reservation_affinity == "specific" and machine.accelerator_topology is None:
        found.append(
            (
                "placement",
                "a specific reservation is placed by its own deployment (dense/compact); GKE rejects a placement policy with it here: place the pool without one",
            )
        )
    return found


def queued_pool(provisioning: str, min_nodes: int | None, compact: bool) -> list[str]:
    """What a DWS queued-provisioning pool needs beside its setting: autoscaling from 0 (GKE's
    `--enable-queued-provisioning --num-nodes=0`, cloud.google.com/kubernetes-engine/docs/how-to/
    provisioningrequest; Cluster Toolkit gke-node-pool main.tf precondition "autoscaling_total_min_nodes
    should be 0") and no compact placement for GPUs (same file: "placement_policy cannot be COMPACT
    when enable_queued_provisioning is true, unless using TPUs")."""
    if provisioning != "queued":
        return []
    found = []
    if min_nodes not in (None, 0):
        found.append(f"queued provisioning needs an autoscaling minimum of 0 nodes, not {min_nodes}: nodes come only through a ProvisioningRequest")
    if compact:
        found.append("queued provisioning takes no compact placement policy on GPU machines; place the pool without one")
    return found


def duration_seconds(value: str) -> float:
    """Seconds in a Go-style duration string such as `1h30m`."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value))


def positive_duration(value: Any) -> str | None:
    """Kueue rejects a zero waitForPodsReady timeout (apis/config/v1beta2 validation)."""
    return None if duration_seconds(str(value)) > 0 else "must be longer than 0s; Kueue rejects a zero timeout"


def pods_ready_budget(timeout: str, waiting: list[str]) -> str | None:
    """A job admitted on a pool that must first scale up, with no ProvisioningRequest check to
    wait for the nodes (`waiting`: those pools), gets all its pods ready within
    `waitForPodsReady.timeout` or Kueue evicts it, which withdraws the scale-up too: the timeout
    must hold the scale-up and the image pull (catalog SCALE_UP_BUDGET_SECONDS, its parts sourced)."""
    budget = catalog.SCALE_UP_BUDGET_SECONDS
    if duration_seconds(timeout) >= budget:
        return None
    return (
        f"must be at least {budget // 60}m: {', '.join(waiting)} scale{'s' if len(waiting) == 1 else ''} up for each job with no "
        "ProvisioningRequest to wait for the nodes, and Kueue evicts a job whose pods are not all ready by then (which "
        "also withdraws the scale-up): node boot, GPU driver and image pull need that long"
    )


def at_least(value: int, floor: int) -> str | None:
    """A maximum not below its base (Kueue requeuing backoff: backoffMaxSeconds >= backoffBaseSeconds)."""
    return f"must be at least the first backoff ({floor})" if value < floor else None


def filestore_capacity(tier: str, capacity_gib: int) -> str | None:
    """A capacity a Filestore tier takes: in one of its ranges, on a step of it (core/catalog/storage.py
    FILESTORE_TIERS, from cloud.google.com/filestore/docs/service-tiers and its tier pages)."""
    return _tier_capacity(catalog.FILESTORE_TIERS[tier], capacity_gib, f"tier {tier}")


def lustre_throughput(value: Any) -> str | None:
    """A Managed Lustre throughput tier (core/catalog/storage.py LUSTRE_TIERS), in MB/s per TiB."""
    return (
        None if value in catalog.LUSTRE_TIERS and not isinstance(value, bool) else f"must be one of {', '.join(map(str, catalog.LUSTRE_TIERS))} (MB/s per TiB)"
    )


def lustre_capacity(throughput: int, capacity_gib: int) -> str | None:
    """A capacity a Managed Lustre throughput tier takes (core/catalog/storage.py LUSTRE_TIERS)."""
    return _tier_capacity(catalog.LUSTRE_TIERS[throughput], capacity_gib, f"throughput {throughput} MB/s per TiB")


def _tier_capacity(tier: catalog.StorageTier, capacity_gib: int, what: str) -> str | None:
    if any(low <= capacity_gib <= high and (capacity_gib - low) % step == 0 for low, high, step in tier.ranges):
        return None
    takes = " or ".join(f"{low} to {high} GiB" + (f" in steps of {step}" if step > 1 else "") for low, high, step in tier.ranges)
    return f"{what} takes {takes}"


def cluster_zone(location: str, zone: str, region_key: str = "the cluster's region") -> str | None:
    """A zone of the cluster's region: GKE places a cluster's nodes in the zones of its location's
    region (a zonal cluster's extra node locations included; NodePool.locations)."""
    region = location if not REGION_ID(location) else region_of(location)
    return None if region_of(zone) == region else f"must be a zone of {region_key} ({region})"


def filestore_location(tier: str, location: str) -> str | None:
    """A zonal tier's instance takes a zone, the others a region."""
    if tier in ZONAL_FILESTORE_TIERS:
        return ZONE_ID(location) and f"tier {tier} is zonal: {ZONE_ID(location)}"
    return REGION_ID(location) and f"tier {tier} is regional: {REGION_ID(location)}"


# A specific reservation, optionally one of its blocks and sub-blocks: GKE's
# compute.googleapis.com/reservation-name value `<reservation>[/reservationBlocks/<block>
# [/reservationSubBlocks/<sub-block>]]` (Cluster Toolkit 1047080 modules/compute/gke-node-pool/
# reservation_definitions.tf; xpk 367c838 src/xpk/core/reservation.py), each part a GCE name.
_GCE = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_NAME = Pattern(
    rf"{_GCE}(/reservationBlocks/{_GCE}(/reservationSubBlocks/{_GCE})?)?",
    "must be a reservation name, optionally with /reservationBlocks/<block> (and /reservationSubBlocks/<sub-block>), each a GCP resource name",
)


def reservation(affinity: str, name: str | None, project: str | None) -> Iterator[tuple[str, Any, str]]:
    """(key, value, rule) of a reservation affinity that GKE refuses: SPECIFIC_RESERVATION needs
    the reservation's name, and the other affinities take none (NodeConfig.reservationAffinity)."""
    if affinity == "specific" and not name:
        yield "name", None, "affinity 'specific' needs the reservation's name"
    if affinity != "specific" and (name or project):
        yield "name", name or project, f"a reservation name is used only with affinity 'specific', not {affinity!r}"


# Cloud Storage: a hierarchical namespace needs uniform bucket-level access (cloud.google.com/storage/docs/hns-overview).
HNS_NEEDS_UNIFORM_ACCESS = "a hierarchical-namespace bucket needs uniform bucket-level access"


def nodes_per_zone(node_count: int, zones: Sequence[str]) -> str | None:
    """GKE sizes a pool per zone (NodePool.node_count is per zone), so the total divides evenly."""
    if zones and node_count % len(zones):
        return f"must be a multiple of the number of zones ({len(zones)}); GKE puts an equal share of the nodes in each zone"
    return None


def min_max(low: int, high: int) -> str | None:
    """A lower bound not above its upper bound (GKE rejects total_min_node_count > total_max_node_count)."""
    return f"must not exceed the maximum ({high})" if low > high else None


def reserved_capacity(machine: catalog.Machine, provisioning: str, reservation_affinity: str) -> list[tuple[tuple[str, ...], str]]:
    """(key, rule) of what a reservation-only machine (catalog `reservation_only`, the provider's rule:
    A4X, A4X Max) refuses: spot or DWS capacity, or on-demand capacity that consumes no reservation."""
    if not machine.reservation_only:
        return []
    why = f"{machine.name} VMs come only from reserved capacity ({machine.reservation_only})"
    if provisioning != "on-demand":
        return [(("provisioning",), f"{why}, not {provisioning}; consume the reservation (provisioning on-demand)")]
    if reservation_affinity == "none":
        return [(("reservation", "affinity"), f"{why}; name it with affinity specific (or any)")]
    return []


def nvlink_placement(machine: catalog.Machine, compact: bool) -> str | None:
    """A pool of a machine with a multi-node NVLink domain is placed by its HIGH_THROUGHPUT
    workload policy (accelerator topology, catalog `accelerator_topology`), as Cluster Toolkit's
    gke-a4x places every A4X pool (1047080 examples/gke-a4x/gke-a4x.yaml workload_policy)."""
    if machine.accelerator_topology is not None and not compact:
        return f"{machine.name} pools are placed by their NVLink domain's workload policy (accelerator topology {machine.accelerator_topology}); place the pool compact"
    return None


def nvlink_domains(machine: catalog.Machine, nodes: int) -> str | None:
    """A pool of a machine with a multi-node NVLink domain holds whole domains (catalog
    `nvlink_domain_nodes`: 18 A4X nodes share one 72-GPU NVLink domain), so no domain is split
    between pools or left part empty."""
    size = machine.nvlink_domain_nodes
    if size is None or nodes % size == 0:
        return None
    below = nodes - nodes % size
    sizes = f"{below} or {below + size}" if below else f"{size}"
    return f"must be a whole number of NVLink domains: {machine.name} has {size} nodes in each ({machine.accelerator_topology} GPUs); use {sizes}"


def gke_minor(machine: catalog.Machine, version_prefix: str | None, dranet: bool = False) -> str | None:
    """A cluster for a machine with a minimum GKE minor (catalog `min_gke_minor`) asks for that
    minor or a newer one: the release channel's default may be older. Where the floor is a patch
    (catalog `min_gke_version`; DRANET's, catalog.DRANET_MIN_GKE, for a pool on it), the prefix
    reaches it (`version_floor`)."""
    if machine.min_gke_minor is not None:
        want = tuple(int(n) for n in machine.min_gke_minor.split("."))
        if version_prefix is None or _version(version_prefix)[:2] < want:
            return f"{machine.name} needs GKE {machine.min_gke_minor} or newer; set a version prefix of {machine.min_gke_minor}. or later"
    if machine.min_gke_version is not None:
        driver = f" (GPU driver {machine.gpu_driver_version}, which GKE installs from it)" if machine.gpu_driver_version else ""
        if wrong := version_floor(f"{machine.name}{driver}", machine.min_gke_version, version_prefix):
            return wrong
    if dranet:
        return version_floor(f"DRANET on {machine.name}", catalog.DRANET_MIN_GKE, version_prefix)
    return None


def _version(text: str) -> tuple[int, ...]:
    """The numbers of a GKE version or prefix, in order (`1.34.3-gke.1318000` -> 1, 34, 3, 1318000)."""
    return tuple(int(n) for n in re.findall(r"[0-9]+", text))


def version_floor(what: str, floor: str, version_prefix: str | None) -> str | None:
    """A version prefix reaches a GKE version floor: it resolves, when the cluster is made, to the
    newest version GKE offers with it (GkeClusterArgs `version_prefix`), so a prefix at or above the
    floor's numbers as far as it goes (`1.34.` or `1.35.` for 1.34.3-gke.1318000) does, and one
    below them (`1.33.`) does not; without a prefix the release channel's default decides, which nothing
    here can know before the cluster exists (as rules.lustre_gke_version)."""
    have = _version(version_prefix or "")
    if version_prefix is None or have < _version(floor)[: len(have)]:
        minor = ".".join(floor.split(".")[:2])
        return f"{what} needs GKE {floor} or newer; set a version prefix of {minor}. or later"
    return None


NETWORKING = ("multi-network", "dranet")  # how a pool's pods reach its extra NICs


def uses_dranet(machine: catalog.Machine, networking: str | None) -> bool:
    """Whether a pool of `machine` with `networking` (None: the machine's way) reaches its RDMA NICs
    through GKE's DRANET: when asked, or on a machine with no other way (`Dranet.required`)."""
    return networking == "dranet" or (networking is None and machine.dranet is not None and machine.dranet.required)


def dranet_mode(machine: catalog.Machine, networking: str | None) -> str | None:
    """A pool reaches its RDMA NICs through GKE's DRANET only on a machine whose record says how
    (catalog `dranet`), and must where the machine has no other way (`Dranet.required`: A4X Max)."""
    if networking == "dranet" and machine.dranet is None:
        known = ", ".join(sorted(m.name for m in catalog.MACHINES.values() if m.dranet))
        return f"{machine.name} has no DRANET networking in the catalog (machines with it: {known}); use multi-network"
    if networking == "multi-network" and machine.dranet is not None and machine.dranet.required:
        return f"{machine.name} reaches its RDMA NICs only through DRANET (its blueprint labels the pool for GKE's DRANET driver); use dranet"
    return None


def dranet_dataplane(dranet: bool, dataplane_v2: bool) -> str | None:
    """GKE's DRANET runs only on a cluster with Dataplane V2 (docs.cloud.google.com/kubernetes-engine/
    docs/how-to/allocate-network-resources-dra; Cluster Toolkit c765092 modules/compute/gke-node-pool
    check `dranet_requirements`: `is_dataplane_v2_enabled`)."""
    if dranet and not dataplane_v2:
        return "a cluster with DRANET pools needs Dataplane V2 (datapath ADVANCED_DATAPATH); GKE runs DRANET on no other"
    return None


def _minor(version_prefix: str) -> tuple[int, int]:
    major, minor = version_prefix.rstrip(".").split(".")[:2]
    return int(major), int(minor)


def lustre_gke_version(version_prefix: str | None) -> str | None:
    """Managed Lustre on port 988, without the legacy port, needs GKE nodes at
    catalog.LUSTRE_PORT_988_MIN_GKE or newer. A version prefix of that minor or a later one
    resolves, when the cluster is made, to the newest version GKE offers with it (GkeClusterArgs
    `version_prefix`), which is that version or a later patch; without a prefix the release
    channel's default decides, which nothing here can know before the cluster exists."""
    floor = catalog.LUSTRE_PORT_988_MIN_GKE
    minor = ".".join(floor.split(".")[:2])
    if version_prefix is None or _minor(version_prefix) < _minor(minor):
        return f"Managed Lustre on port 988 needs GKE nodes at {floor} or newer; set a version prefix of {minor}. or later"
    return None


def preload_gke_version(version_prefix: str | None) -> str | None:
    """Secondary boot disks with preloaded images need GKE nodes at catalog.SECONDARY_BOOT_DISK_MIN_GKE
    or newer; as for Lustre (lustre_gke_version), a version prefix of that minor or a later one
    guarantees it, the release channel's default cannot be known before the cluster exists."""
    floor = catalog.SECONDARY_BOOT_DISK_MIN_GKE
    minor = ".".join(floor.split(".")[:2])
    if version_prefix is None or _minor(version_prefix) < _minor(minor):
        return f"container images preloaded on secondary boot disks need GKE nodes at {floor} or newer; set a version prefix of {minor}. or later"
    return None


_ARTIFACT_REGISTRY_HOST = re.compile(r"[a-z0-9-]+-docker\.pkg\.dev/")


def streamable_image(reference: str) -> str | None:
    """GKE streams only images in Artifact Registry (catalog.startup): a `<location>-docker.pkg.dev` reference."""
    if _ARTIFACT_REGISTRY_HOST.match(reference):
        return None
    return (
        f"GKE image streaming serves only images in Artifact Registry, not {reference.split('/')[0]}: build the image here "
        "(trainstack:image.build copies its base, NGC's included, into the stack's repository) or copy it to a <region>-docker.pkg.dev repository"
    )


def primary_mtu(machines: Sequence[catalog.Machine], storage_kind: str) -> int | None:
    """The MTU of the VPC trainstack creates for a cluster: catalog.JUMBO_MTU where RDMA
    machines or Managed Lustre use it, else None (GCP's default, 1460). A live VPC keeps the MTU
    it was made with (components.gcp_network.PrimaryNetwork ignores later changes)."""
    if storage_kind == "lustre" or any(m.gpudirect == catalog.GpuDirect.RDMA for m in machines):
        return catalog.JUMBO_MTU
    return None


# A VPC's MTU: 1300 to 8896 bytes (terraform-provider-google 017d2f5 resource_compute_network.go `mtu`).
MTU = Bounds(1300, catalog.JUMBO_MTU, "a VPC's MTU, as GCP allows it")


def pipeline_split(layers: int, pipeline: int, virtual: int | None, extra_layers: int = 0) -> str | None:
    """Megatron-core's even pipeline split (NVIDIA/Megatron-LM d98e8a6
    megatron/core/transformer/transformer_block.py get_num_layers_to_build, asserted when it
    builds the model): the layers, plus one each for the embedding and the loss where the recipe
    counts them as layers (`extra_layers`: account_for_embedding_in_pipeline_split,
    account_for_loss_in_pipeline_split), divide by the pipeline size, and each stage's layers
    divide by the virtual pipeline size (the interleaved schedule's model chunks per stage)."""
    counted = layers + extra_layers
    what = f"{layers} layers" + (f" and the embedding and loss ({counted})" if extra_layers else "")
    if counted % pipeline:
        return f"{what} do not divide into {pipeline} pipeline stages; Megatron-core splits them evenly"
    per_stage = counted // pipeline
    if virtual is not None and per_stage % virtual:
        return f"each of the {pipeline} pipeline stages holds {per_stage} layers, which do not divide into {virtual} virtual-pipeline chunks; Megatron-core needs them to"
    return None


def tensor_split(heads: int, kv_heads: int, tensor: int) -> str | None:
    """Megatron-core's even tensor-parallel split of attention (NVIDIA/Megatron-LM f41b4fd
    megatron/core/transformer/attention.py Attention.__init__: `divide(num_attention_heads,
    world_size)` and `divide(num_query_groups, world_size)`, where megatron/core/utils.py `divide`
    asserts the numerator divisible): the query heads and the key/value groups both divide by the
    tensor-parallel size, or the model is never built."""
    if heads % tensor:
        return f"its {heads} attention heads do not divide over {tensor} tensor-parallel GPUs; Megatron-core splits them evenly"
    if kv_heads % tensor:
        return f"its {kv_heads} key/value groups do not divide over {tensor} tensor-parallel GPUs; Megatron-core splits them evenly"
    return None


def host_monitor_reachable(machine: catalog.Machine) -> str | None:
    """The resiliency supervisor's trainers report to the node's host monitor, whose client the
    launcher builds from ports alone, no address (AI-Hypercomputer/resiliency 02c17b7
    third_party/nvidia-resiliency-ext/launcher.py setup_goodput_client: HOST_DAEMON_PORT and a
    worker port per local rank), so a trainer must share the node's network namespace. trainstack
    runs trainers there only on RDMA machines, as the resiliency recipe does on A3 Ultra
    (gpu-recipes 27b47e7 .../nemo-pretraining-gke-resiliency/values.yaml `network.hostNetwork:
    true`; workloads.profiles.for_machine); the TCPX and TCPXO profiles (A3 High, A3 Mega) and
    machines without GPUDirect run trainers on the pod network, where localhost is the pod's own."""
    if machine.gpudirect == catalog.GpuDirect.RDMA:
        return None
    return (
        f"the supervisor's trainers reach the node's host monitor at localhost, and {machine.name} trainers run off the "
        f"host network (GPUDirect {machine.gpudirect.value}); use an RDMA machine (A3 Ultra, A4, A4X) or resiliency.enabled: false"
    )
