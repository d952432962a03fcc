"""The rules between the fields of one resource (the cluster, a maintenance window, Kueue and its
requeuing, storage), each defined once: the component's Args (`components/`) and the stack config's section (`infra/stack.py`) call the same
function, so both doors refuse the same values with the same words.

A rule reads the resource through a Protocol named with the Args' field names and returns the
Problems it finds, keyed by the Args field path (`("authorized_networks", 0, "cidr_block")`); the
config re-keys them to the key as the user writes it (`authorizedNetworks[0].cidrBlock`).
Each rule is independent of the others: `check` runs every rule of a resource, in any order.
A rule's text names other keys in words, not by either door's spelling.

The node pools own their spec and its rules (components/node_pools.py). Rules that span sections of a stack (zones in the region, address ranges, NIC families, queues,
the workload against its pool) are not here: they are the stack's own (`infra/stack.py`
StackConfig, `stack_*`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from trainstack.core import catalog, rules
from trainstack.core.errors import Problem

Check = Callable[..., Iterable[Problem]]
# The rules of each resource, by resource and rule name (`check` looks them up as it runs).
RULES: dict[str, dict[str, Check]] = {}


def rule(resource: str) -> Callable[[Check], Check]:
    """Register a function as one of `resource`'s rules."""

    def register(func: Check) -> Check:
        RULES.setdefault(resource, {})[func.__name__] = func
        return func

    return register


def check(resource: str, item: object) -> Iterator[Problem]:
    """Every Problem of `item` under each of `resource`'s rules."""
    for found in RULES[resource].values():
        yield from found(item)


# --- views: what each rule reads, named as the Args name it ------------------------------------


class ClusterView(Protocol):
    @property
    def private_nodes(self) -> bool: ...
    @property
    def private_endpoint(self) -> bool: ...
    @property
    def authorized_networks(self) -> Sequence[NetworkView]: ...


class NetworkView(Protocol):
    @property
    def cidr_block(self) -> str: ...


class WindowView(Protocol):
    @property
    def start(self) -> str: ...
    @property
    def end(self) -> str: ...
    @property
    def recurrence(self) -> str: ...


class BucketView(Protocol):
    @property
    def hierarchical_namespace(self) -> bool: ...
    @property
    def uniform_access(self) -> bool: ...


class FilestoreView(Protocol):
    @property
    def tier(self) -> str: ...
    @property
    def capacity_gib(self) -> int: ...


class LustreView(Protocol):
    @property
    def throughput(self) -> int: ...
    @property
    def capacity_gib(self) -> int: ...


# --- cluster -----------------------------------------------------------------------------------


@rule("cluster")
def private_endpoint_nodes(cluster: ClusterView) -> Iterator[Problem]:
    """GKE PrivateClusterConfig: a private endpoint needs private nodes."""
    if cluster.private_endpoint and not cluster.private_nodes:
        yield Problem(("private_endpoint",), True, "a private endpoint needs private nodes")


@rule("cluster")
def authorized_network_count(cluster: ClusterView) -> Iterator[Problem]:
    """No more authorized networks than GKE takes."""
    if wrong := rules.authorized_networks(len(cluster.authorized_networks)):
        yield Problem(("authorized_networks",), "...", wrong)


@rule("cluster")
def private_endpoint_ranges(cluster: ClusterView) -> Iterator[Problem]:
    """A private endpoint takes only internal authorized networks."""
    for i, network in enumerate(cluster.authorized_networks):
        if cluster.private_endpoint and (wrong := rules.private_endpoint_network(network.cidr_block)):
            yield Problem(("authorized_networks", i, "cidr_block"), network.cidr_block, wrong)


@rule("maintenance_window")
def window(window: WindowView) -> Iterator[Problem]:
    """A window of 4 to 24 hours that allows GKE's 48 hours in 32 days."""
    if wrong := rules.window_length(window.start, window.end) or rules.maintenance_availability(window.start, window.end, window.recurrence):
        yield Problem(("end",), window.end, wrong)


# --- storage -----------------------------------------------------------------------------------


@rule("bucket")
def hns_uniform(bucket: BucketView) -> Iterator[Problem]:
    """Cloud Storage: a hierarchical namespace needs uniform bucket-level access."""
    if bucket.hierarchical_namespace and not bucket.uniform_access:
        yield Problem(("uniform_access",), False, rules.HNS_NEEDS_UNIFORM_ACCESS)


@rule("filestore")
def filestore_size(filestore: FilestoreView) -> Iterator[Problem]:
    """A capacity the Filestore tier takes."""
    if filestore.tier in rules.FILESTORE_TIER_NAMES and (wrong := rules.filestore_capacity(filestore.tier, filestore.capacity_gib)):
        yield Problem(("capacity_gib",), filestore.capacity_gib, wrong)


@rule("lustre")
def lustre_size(lustre: LustreView) -> Iterator[Problem]:
    """A capacity the Managed Lustre throughput tier takes."""
    if lustre.throughput in catalog.LUSTRE_TIERS and (wrong := rules.lustre_capacity(lustre.throughput, lustre.capacity_gib)):
        yield Problem(("capacity_gib",), lustre.capacity_gib, wrong)
