"""The rules between the fields of one resource (a GPU pool, its autoscaling and reservation, the
CPU pool, the cluster, a maintenance window, Kueue and its requeuing, storage), each defined once: the
component's Args (`components/`) and the stack config's section (`infra/stack.py`) call the same
function, so both doors refuse the same values with the same words.

A rule reads the resource through a Protocol named with the Args' field names and returns the
Problems it finds, keyed by the Args field path (`("reservation", "affinity")`); the config
re-keys them to the key as the user writes it (`reservation.affinity`, `upgrade.maxUnavailable`).
Each rule is independent of the others: `check` runs every rule of a resource, in any order.
A rule's text names other keys in words, not by either door's spelling.

Rules that span sections of a stack (zones in the region, address ranges, NIC families, queues,
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


class AutoscalingView(Protocol):
    @property
    def min_nodes(self) -> int: ...
    @property
    def max_nodes(self) -> int: ...


class ReservationView(Protocol):
    @property
    def affinity(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def project(self) -> str | None: ...


class GpuPoolView(Protocol):
    @property
    def machine_type(self) -> str: ...
    @property
    def node_count(self) -> int | None: ...
    @property
    def autoscaling(self) -> AutoscalingView | None: ...
    @property
    def zones(self) -> Sequence[str] | None: ...
    @property
    def compact(self) -> bool: ...
    @property
    def provisioning(self) -> str: ...
    @property
    def reservation(self) -> ReservationView: ...
    @property
    def max_run_duration(self) -> str | None: ...
    @property
    def max_surge(self) -> int: ...
    @property
    def max_unavailable(self) -> int: ...
    @property
    def networking(self) -> str | None: ...


class CpuPoolView(Protocol):
    @property
    def node_count(self) -> int: ...
    @property
    def zones(self) -> Sequence[str] | None: ...


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


class NamedView(Protocol):
    @property
    def name(self) -> str: ...


class KueueView(Protocol):
    @property
    def priority_classes(self) -> Sequence[NamedView]: ...


class RequeuingView(Protocol):
    @property
    def backoff_base_seconds(self) -> int: ...
    @property
    def backoff_max_seconds(self) -> int: ...


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


# --- GPU pool ----------------------------------------------------------------------------------

DWS = ("flex-start", "queued")
NO_RESERVATION = ("spot", *DWS)
"""The capacities whose VMs consume no reservation (GKE NodeConfig.reservationAffinity)."""


def default_affinity(provisioning: object) -> str:
    """The reservation affinity of a pool that names no reservation, at both doors (the stack
    file's pool and the GpuNodePool component): none for spot, flex-start and queued capacity,
    which cannot consume one (`no_reservation_for_spot_or_dws`), else any."""
    return "none" if provisioning in NO_RESERVATION else "any"


def _machine(pool: GpuPoolView) -> catalog.Machine | None:
    return catalog.MACHINES.get(pool.machine_type)


def _zones(pool: GpuPoolView | CpuPoolView) -> list[str]:
    return sorted(set(pool.zones or []))


@rule("gpu_pool")
def pool_size(pool: GpuPoolView) -> Iterator[Problem]:
    """A pool has a fixed size or autoscaler bounds, not both nor neither."""
    if (pool.node_count is None) == (pool.autoscaling is None):
        yield Problem(("node_count",), pool.node_count, "set exactly one of a fixed node count and autoscaling")


@rule("gpu_pool")
def pool_nodes_per_zone(pool: GpuPoolView) -> Iterator[Problem]:
    """GKE sizes a pool per zone."""
    if pool.node_count and (wrong := rules.nodes_per_zone(pool.node_count, _zones(pool))):
        yield Problem(("node_count",), pool.node_count, wrong)


@rule("gpu_pool")
def surge_or_unavailable(pool: GpuPoolView) -> Iterator[Problem]:
    """GKE upgrade settings: maxSurge and maxUnavailable cannot both be 0."""
    if pool.max_surge == 0 and pool.max_unavailable == 0:
        yield Problem(("max_unavailable",), 0, "cannot be 0 when the upgrade's surge is 0 too: an upgrade could replace no node")


@rule("gpu_pool")
def unavailable_below_size(pool: GpuPoolView) -> Iterator[Problem]:
    """An upgrade never takes a whole fixed-size pool (of more than one node) down at once."""
    if pool.node_count is not None and pool.max_unavailable >= pool.node_count > 1:
        yield Problem(
            ("max_unavailable",),
            pool.max_unavailable,
            f"must be less than the pool's node count ({pool.node_count}) so an upgrade never takes the whole pool down",
        )


@rule("gpu_pool")
def dws_autoscaled(pool: GpuPoolView) -> Iterator[Problem]:
    """DWS VMs are obtained by the autoscaler (GKE flex-start and queued provisioning)."""
    if pool.provisioning in DWS and pool.autoscaling is None:
        yield Problem(("autoscaling",), None, f"{pool.provisioning} provisioning needs autoscaling")


@rule("gpu_pool")
def queued(pool: GpuPoolView) -> Iterator[Problem]:
    """What a queued-provisioning pool needs beside its setting (rules.queued_pool)."""
    for wrong in rules.queued_pool(pool.provisioning, pool.autoscaling.min_nodes if pool.autoscaling else None, pool.compact):
        yield Problem(("provisioning",), pool.provisioning, wrong)


@rule("gpu_pool")
def run_duration(pool: GpuPoolView) -> Iterator[Problem]:
    """A maximum run duration only for DWS capacity, at most 7 days."""
    if pool.max_run_duration is not None and (wrong := rules.max_run_duration(pool.provisioning, pool.max_run_duration)):
        yield Problem(("max_run_duration",), pool.max_run_duration, wrong)


@rule("gpu_pool")
def no_reservation_for_spot_or_dws(pool: GpuPoolView) -> Iterator[Problem]:
    """Spot and DWS VMs consume no reservation (GKE NodeConfig.reservationAffinity)."""
    if pool.provisioning in NO_RESERVATION and pool.reservation.affinity != "none":
        yield Problem(("reservation", "affinity"), pool.reservation.affinity, f"{pool.provisioning} capacity cannot consume a reservation; set affinity none")


@rule("gpu_pool")
def compact_one_zone(pool: GpuPoolView) -> Iterator[Problem]:
    """A compact placement policy places nodes in one zone (GKE compact placement)."""
    if pool.compact and len(_zones(pool)) > 1:
        yield Problem(("zones",), pool.zones, "compact placement needs exactly one zone")


@rule("gpu_pool")
def compact_allowed(pool: GpuPoolView) -> Iterator[Problem]:
    """What forbids compact placement on this machine and capacity (rules.compact_placement)."""
    if pool.compact and (machine := _machine(pool)):
        for key, wrong in rules.compact_placement(machine, pool.provisioning, pool.reservation.affinity):
            yield Problem((key,), pool.provisioning if key == "provisioning" else pool.compact, wrong)


@rule("gpu_pool")
def nvlink_placed(pool: GpuPoolView) -> Iterator[Problem]:
    """A multi-node NVLink domain's pool is placed by its workload policy (rules.nvlink_placement)."""
    if (machine := _machine(pool)) and (wrong := rules.nvlink_placement(machine, pool.compact)):
        yield Problem(("compact",), pool.compact, wrong)


@rule("gpu_pool")
def reserved_only(pool: GpuPoolView) -> Iterator[Problem]:
    """A reservation-only machine's capacity (rules.reserved_capacity)."""
    if machine := _machine(pool):
        for key, wrong in rules.reserved_capacity(machine, pool.provisioning, pool.reservation.affinity):
            yield Problem(key, pool.provisioning if key == ("provisioning",) else pool.reservation.affinity, wrong)


@rule("gpu_pool")
def whole_nvlink_domains(pool: GpuPoolView) -> Iterator[Problem]:
    """Each size of a pool of a multi-node NVLink domain machine holds whole domains."""
    if (machine := _machine(pool)) is None:
        return
    sizes: dict[tuple[str, ...], int | None] = {("node_count",): pool.node_count}
    if pool.autoscaling:
        sizes |= {("autoscaling", "min_nodes"): pool.autoscaling.min_nodes, ("autoscaling", "max_nodes"): pool.autoscaling.max_nodes}
    for key, nodes in sizes.items():
        if nodes is not None and (wrong := rules.nvlink_domains(machine, nodes)):
            yield Problem(key, nodes, wrong)


@rule("gpu_pool")
def rdma_one_zone(pool: GpuPoolView) -> Iterator[Problem]:
    """An RDMA machine's pool is in one zone: its RDMA VPC is bound to one zone's RoCE network
    profile (catalog `rdma_subnets`)."""
    if (machine := _machine(pool)) and machine.rdma_subnets and pool.zones is not None and len(_zones(pool)) != 1:
        yield Problem(("zones",), pool.zones, f"{machine.name} needs exactly one zone: its RDMA VPC is bound to one zone's RoCE profile")


@rule("gpu_pool")
def dranet_networking(pool: GpuPoolView) -> Iterator[Problem]:
    """DRANET where the machine's record says how, and nothing else where it is the only way (rules.dranet_mode)."""
    if (machine := _machine(pool)) and (wrong := rules.dranet_mode(machine, pool.networking)):
        yield Problem(("networking",), pool.networking, wrong)


@rule("autoscaling")
def autoscaling_bounds(autoscaling: AutoscalingView) -> Iterator[Problem]:
    """The autoscaler's minimum is not above its maximum."""
    if wrong := rules.min_max(autoscaling.min_nodes, autoscaling.max_nodes):
        yield Problem(("min_nodes",), autoscaling.min_nodes, wrong)


@rule("reservation")
def reservation_name(reservation: ReservationView) -> Iterator[Problem]:
    """A reservation's name goes with affinity specific, and only with it (rules.reservation)."""
    for key, value, wrong in rules.reservation(reservation.affinity, reservation.name, reservation.project):
        yield Problem((key,), value, wrong)


# --- CPU pool ----------------------------------------------------------------------------------


@rule("cpu_pool")
def cpu_nodes_per_zone(pool: CpuPoolView) -> Iterator[Problem]:
    """GKE sizes a pool per zone."""
    if pool.zones and (wrong := rules.nodes_per_zone(pool.node_count, _zones(pool))):
        yield Problem(("node_count",), pool.node_count, wrong)


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


# --- Kueue -------------------------------------------------------------------------------------


@rule("requeuing")
def backoff(requeuing: RequeuingView) -> Iterator[Problem]:
    """Kueue's requeuing backoff: the longest not below the first."""
    if wrong := rules.at_least(requeuing.backoff_max_seconds, requeuing.backoff_base_seconds):
        yield Problem(("backoff_max_seconds",), requeuing.backoff_max_seconds, wrong)


@rule("kueue")
def unique_priority_classes(kueue: KueueView) -> Iterator[Problem]:
    """Kueue object names are unique: one WorkloadPriorityClass a name."""
    seen: set[str] = set()
    for i, priority_class in enumerate(kueue.priority_classes):
        if priority_class.name in seen:
            yield Problem(("priority_classes", i, "name"), priority_class.name, rules.duplicate("priority class"))
        seen.add(priority_class.name)


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
