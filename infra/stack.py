"""The platform stack file: `stacks/Pulumi.<stack>.yaml` -> `StackConfig`.

Keys are the ones `pulumi config set --path` writes: `gcp:project`, `gcp:region`, `gcp:zone`
and objects under the `trainstack:` namespace in camelCase (`trainstack:gpuPool.nodeCount`).
Every model is strict and rejects unknown keys. A key's own rule is a core/rules.py rule on its
type; each section is the spec of the component that makes it (`GpuPoolSpec`, `ClusterSpec`,
`NetworkSpec`, `KueueSpec`, `ImageSpec`, `StorageSpec`, in components/), with the rules between
its keys as validators, and only what a stack file decides beyond the component added here (the
cluster's and the network's); the rules between sections are the stack rules (`stack_*`, below
StackConfig). The job (`trainstack:workload`) is the workload's section
(workloads/spec.py), which the stack file adds (app/deploy/stack_file.py, which loads it).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

from trainstack.components.gcp_network import ExistingNetwork, NetworkSpec
from trainstack.components.gke_cluster import ClusterName, ClusterSpec, Maintenance
from trainstack.components.image import ImageSpec
from trainstack.components.kueue import KueueSpec
from trainstack.components.node_pools import CpuPoolSpec, GpuMachineName, GpuPoolSpec
from trainstack.components.storage import KindName, StorageSpec
from trainstack.core import catalog, rules
from trainstack.core.errors import ABSENT, Problem, describe, key_path
from trainstack.core.spec import (
    AbsolutePath,
    Cidr,
    K8sName,
    NodePoolName,
    ProjectId,
    QualifiedStack,
    RegionId,
    Section,
    ZoneId,
    by_pattern,
    by_rule,
    rule_errors,
)
from trainstack.infra.facts import JobPool, PlatformFacts

# ---------------------------------------------------------------------------------------------
# Sections


ANY_ADDRESS = "0.0.0.0/0"


# The cluster's spec (components/gke_cluster.py) with the stack file's own policy, which the
# GkeCluster component does not apply to a program's args, as that would change what a program
# that worked makes or accepts: a control plane open to any address needs its explicit opt-in
# (`allowAnyAddress`; the component, as GKE, leaves an endpoint without authorized networks open);
# fleets are admitted by stack (`admitFleets`, read through StackReferences at `up`, which only a
# stack does); and the maintenance policy is on by default (the component's default is GKE's: none).
class ClusterConfig(ClusterSpec):
    """`trainstack:cluster`: the GKE Standard cluster (regional, in `gcp:region`)."""

    allow_any_address: bool = False
    """The explicit opt-in for `0.0.0.0/0` in authorizedNetworks."""
    admit_fleets: list[QualifiedStack] = []
    """Fleet stacks (`<organization>/trainstack/<stack>`) whose manager may reach this control plane:
    each one's exported `egressAddresses` join the authorized networks at `up` (read from the fleet
    stack, so a fleet's address never has to be copied here). `up` the fleet first; see README, fleets."""
    maintenance: Maintenance = Maintenance()
    """When GKE may upgrade the cluster on its own, and which upgrades it must not make."""

    @model_validator(mode="after")
    def _stack_rules(self) -> ClusterConfig:
        rule_errors("ClusterConfig", [*self._exposure(), *self._fleets()])
        return self

    def _fleets(self) -> Iterator[Problem]:
        """Fleets admitted at the public endpoint, each once, within GKE's count with the rest."""
        fleets = self.admit_fleets
        if fleets and self.private_endpoint:
            yield Problem(
                ("admitFleets",),
                fleets,
                "a fleet's manager reaches a worker at its public endpoint, which privateEndpoint: true removes; set privateEndpoint: false",
            )
        for i, name in enumerate(fleets):
            if name in fleets[:i]:
                yield Problem(("admitFleets", i), name, "names a fleet twice; each fleet once")
        if wrong := rules.authorized_networks(len(self.authorized_networks) + len(fleets) * rules.FLEET_EGRESS_ADDRESSES):
            yield Problem(("admitFleets",), fleets, f"with authorizedNetworks {wrong} (one address a fleet)")

    def _exposure(self) -> Iterator[Problem]:
        """The stack file's own opt-in to an open control plane (allowAnyAddress)."""
        if not self.authorized_networks:
            yield Problem(
                ("authorizedNetworks",),
                [],
                "list the networks that may reach the control plane (your VPN or CI ranges); to allow any address, list 0.0.0.0/0 and set allowAnyAddress: true",
            )
        for i, network in enumerate(self.authorized_networks):
            if not self.private_endpoint and network.cidr_block == ANY_ADDRESS and not self.allow_any_address:
                yield Problem(
                    ("authorizedNetworks", i, "cidrBlock"),
                    ANY_ADDRESS,
                    "opens the control plane to any address; narrow it, or set allowAnyAddress: true to accept that",
                )

    @property
    def open_to_any_address(self) -> bool:
        return any(n.cidr_block == ANY_ADDRESS for n in self.authorized_networks)


# The primary VPC's spec (components/gcp_network.py) with what only a stack decides: a VPC made
# elsewhere instead of one made here, and the range and flow logs of the GPU NIC networks.
class NetworkConfig(NetworkSpec):
    """`trainstack:network`: the primary VPC (created, or an existing one) and GPU NIC ranges."""

    existing: ExistingNetwork | None = None
    """A VPC made elsewhere, used instead of one the stack makes."""
    gpu_nic_cidr: Annotated[Cidr, by_rule(rules.NIC_CIDR)] = "192.168.0.0/16"
    """Extra GPU NIC subnets are carved from this /16 as consecutive /24s."""
    flow_logs: bool = False
    """VPC flow logs on the GPU NICs' gVNIC subnets (RDMA subnets carry RoCE, which flow logs do not see)."""

    def ranges(self) -> dict[str, str]:
        """The NIC range beside the primary ranges, which are the stack's only when it makes the VPC."""
        return {**(super().ranges() if self.existing is None else {}), "gpuNicCidr": self.gpu_nic_cidr}


# ---------------------------------------------------------------------------------------------
# The whole stack

# A stack's own labels: none may set the ones trainstack sets itself (rules.RESERVED_LABELS).
Labels = Annotated[dict[str, str], by_rule(rules.labels)]


class Ephemeral(Section):
    """`trainstack:ephemeral`: what `trainstack bench` sets on the stacks it creates: labels every
    resource `trainstack-ephemeral=true` and `trainstack-expires=<expires>`, so `trainstack reap`
    deletes the cluster once it has expired."""

    expires: Annotated[str, by_pattern(r"\d{4}-\d{2}-\d{2}t\d{4}z", "must be a UTC time as a label value, such as 2026-11-23t0630z")]
    """When the stack expires (UTC), as a label value."""


class StackConfig(BaseModel):
    """A platform stack's configuration, keyed exactly as in `stacks/Pulumi.<stack>.yaml` (the stack
    file adds its job: app/deploy/stack_file.py)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)

    project: ProjectId = Field(alias="gcp:project")
    """The GCP project the stack's resources are made in."""
    region: RegionId = Field(alias="gcp:region")
    """The cluster's region: its regional control plane, its subnet, and the zones its pools may use."""
    zone: ZoneId = Field(alias="gcp:zone")
    """The zone of every GPU pool that lists no `zones` (and so the CPU pool's default)."""
    cluster: ClusterConfig = Field(alias="trainstack:cluster")
    """The GKE cluster."""
    network: NetworkConfig = Field(NetworkConfig(), alias="trainstack:network")
    """The cluster's VPC and address ranges."""
    single_pool: GpuPoolSpec | None = Field(None, alias="trainstack:gpuPool")
    """One GPU pool; or several under `trainstack:gpuPools`: exactly one of the two keys."""
    pool_list: Annotated[list[GpuPoolSpec], Field(min_length=1, max_length=rules.MAX_FLAVORS)] | None = Field(None, alias="trainstack:gpuPools")
    """Several GPU pools, in the order Kueue tries them (a ResourceFlavor each); or one under
    `trainstack:gpuPool`."""
    cpu_pool: CpuPoolSpec = Field(CpuPoolSpec(), alias="trainstack:cpuPool")
    """The CPU pool the controllers run on."""
    storage: StorageSpec = Field(alias="trainstack:storage")
    """The shared storage jobs mount."""
    image: ImageSpec = Field(alias="trainstack:image")
    """The training image: built here, or prebuilt."""
    kueue: KueueSpec = Field(KueueSpec(), alias="trainstack:kueue")
    """Kueue's queues and admission settings."""
    labels: Labels = Field({}, alias="trainstack:labels")
    """GCP labels the stack's resources carry beside trainstack's own."""
    ephemeral: Ephemeral | None = Field(None, alias="trainstack:ephemeral")
    """Marks a stack `trainstack reap` deletes once it expires (`trainstack bench` sets it)."""

    @model_validator(mode="after")
    def _cross_section_rules(self) -> StackConfig:
        rule_errors("StackConfig", list(self._problems()))
        return self

    def _problems(self) -> Iterator[Problem]:
        """The stack rules: each independent of the others, in any order."""
        yield from stack_zone_in_region(self)
        yield from stack_one_pool_key(self)
        yield from stack_pool_names(self)
        yield from stack_nic_families(self)
        yield from stack_one_networking(self)
        yield from stack_one_dra_driver(self)
        yield from stack_driver_installer(self)
        yield from stack_queue_names(self)
        yield from stack_gke_minor(self)
        yield from stack_pool_zones_in_region(self)
        yield from stack_machine_zones(self)
        yield from stack_cpu_pool_inherited_zones(self)
        yield from stack_nfs_zone(self)
        yield from stack_master_range(self)
        yield from stack_node_ranges(self)
        yield from stack_nic_subnets(self)
        yield from stack_pods_ready_budget(self)
        yield from stack_lustre_version(self)
        yield from stack_preload_version(self)
        yield from stack_preload_build(self)
        yield from stack_lustre_network(self)
        yield from stack_hns_bucket_region(self)

    def warnings(self) -> list[str]:
        """What `validate` reports without refusing: each zone of the GPU and CPU pools (and
        `gcp:zone`) that the catalog's zone table does not list in a region it knows, and each GPU
        pool zone its machine's partial listing does not name (rules.machine_zone_named)."""
        keys: list[tuple[tuple[str | int, ...], str]] = [(("gcp:zone",), self.zone)]
        for section, zones in (*((self.pool_key(i), p.zones) for i, p in enumerate(self.pools)), (("trainstack:cpuPool",), self.cpu_pool.zones)):
            keys += [((*section, "zones", i), zone) for i, zone in enumerate(zones or [])]
        found = [describe((key, zone, wrong)) for key, zone in keys if (wrong := rules.zone_known(zone))]
        return found + [
            describe((key, zone, wrong)) for key, _, pool, zone in gpu_pool_zones(self) if (wrong := rules.machine_zone_named(pool.machine_type, zone))
        ]

    # Derived values components read, so no caller recomputes them.

    @property
    def vpc_mtu(self) -> int | None:
        """The MTU of the VPC trainstack creates (rules.primary_mtu); None: GCP's default."""
        return rules.primary_mtu([p.machine for p in self.pools], self.storage.kind)

    @property
    def _waiting_pools(self) -> list[str]:
        """The pools (as keys) whose jobs wait for the autoscaler under waitForPodsReady: autoscaled,
        with no ProvisioningRequest check (queued pools wait for theirs before admission)."""
        return [key_path(self.pool_key(i)) for i, p in enumerate(self.pools) if p.autoscaling is not None and p.provisioning != "queued"]

    @property
    def pods_ready_timeout(self) -> str:
        """Kueue's `waitForPodsReady.timeout`: as the stack writes it, else its default, raised to
        the scale-up budget (catalog SCALE_UP_BUDGET_SECONDS) where a pool waits for the autoscaler."""
        wait = self.kueue.wait_for_pods_ready
        if "timeout" in wait.model_fields_set or not self._waiting_pools:
            return wait.timeout
        return wait.timeout if rules.pods_ready_budget(wait.timeout, self._waiting_pools) is None else f"{catalog.SCALE_UP_BUDGET_SECONDS // 60}m"

    @property
    def pods_ready_budgets(self) -> list[tuple[str, str]]:
        """Kueue's pods-ready budgets a job's start must fit, as (key, Go duration): the timeout
        (`pods_ready_timeout`, counted from admission) first, then the recoveryTimeout where set."""
        wait = self.kueue.wait_for_pods_ready
        key = "trainstack:kueue.waitForPodsReady"
        return [(f"{key}.timeout", self.pods_ready_timeout), *([(f"{key}.recoveryTimeout", wait.recovery_timeout)] if wait.recovery_timeout else [])]

    def pool_key(self, index: int) -> tuple[str | int, ...]:
        """Where pool `index` is in the stack file, as the user wrote it."""
        return ("trainstack:gpuPool",) if self.single_pool is not None else ("trainstack:gpuPools", index)

    @property
    def pools(self) -> list[GpuPoolSpec]:
        """The GPU pools, in the order Kueue tries them."""
        return [self.single_pool] if self.single_pool is not None else list(self.pool_list or [])

    @property
    def gpu_pool(self) -> GpuPoolSpec:
        """The first GPU pool: where the NFS disk, the NIC VPCs' zone and the default queue follow."""
        return self.pools[0]

    @property
    def queues(self) -> list[Queue]:
        """One Kueue queue per GPU machine type, in the order of its first pool: the first takes
        `trainstack:kueue.localQueue`/`clusterQueue`, the others their machine's default name."""
        by_machine: dict[str, list[GpuPoolSpec]] = {}
        for pool in self.pools:
            by_machine.setdefault(pool.machine_type, []).append(pool)
        out = []
        for i, pools in enumerate(by_machine.values()):
            local = self.local_queue if i == 0 else pools[0].machine.default_queue
            out.append(Queue(local, self.cluster_queue if i == 0 else local, pools))
        return out

    def queue_of(self, name: str | None) -> Queue | None:
        """The queue named `name` (None: the first)."""
        return self.queues[0] if name is None else next((q for q in self.queues if q.local_queue == name), None)

    def job_queue_of(self, queue: str | None) -> Queue:
        """The queue the platform readies for its jobs: `queue` (a LocalQueue's name, as its job or a
        `TrainingPlatform` was told), else its first."""
        return self.queue_of(queue) or self.queues[0]

    def facts(self, queue: str | None = None) -> PlatformFacts:
        """What this platform's stack knows of it: its job pool is `job_queue_of(queue)`'s."""
        job = self.job_queue_of(queue)
        return PlatformFacts(self.project, self.region, self.gpu_zones[0], self.cluster.name, JobPool(job.machine, job.max_nodes, job.local_queue))

    @property
    def expires(self) -> str | None:
        """When the stack expires (`trainstack:ephemeral.expires`), if it does."""
        return self.ephemeral.expires if self.ephemeral else None

    @property
    def nic_families(self) -> list[NicFamily]:
        """The GPU machines with extra NICs, in config order: each gets its NIC VPCs (in its first
        pool's zone) and Networks; the first family's names are unprefixed, as they always were."""
        found: dict[str, NicFamily] = {}
        for pool in self.pools:
            if pool.nic_vpcs and pool.machine_type not in found:
                prefix = f"{pool.machine.gpudirect.value}-" if found else ""
                found[pool.machine_type] = NicFamily(pool.machine, prefix, (pool.zones or [self.zone])[0])
        return list(found.values())

    @property
    def gpu_zones(self) -> list[str]:
        return self.gpu_pool.zones or [self.zone]

    @property
    def all_gpu_zones(self) -> list[str]:
        """Every zone of every GPU pool, each once, in order."""
        return list(dict.fromkeys(z for p in self.pools for z in (p.zones or [self.zone])))

    @property
    def cpu_zones(self) -> list[str]:
        return self.cpu_pool.zones or self.gpu_zones

    @property
    def local_queue(self) -> str:
        return self.kueue.local_queue or self.gpu_pool.machine.default_queue

    @property
    def cluster_queue(self) -> str:
        return self.kueue.cluster_queue or self.local_queue


# ---------------------------------------------------------------------------------------------
# Stack rules: the rules between a stack's sections (zones in the region, address ranges, NIC
# families, queues), which only the stack file has; each section's own rules are its spec's
# (components/); the job's against its queue are the workload's (workloads/spec.py).
# Each is independent of the others.


def stack_zone_in_region(config: StackConfig) -> Iterator[Problem]:
    """gcp:zone is a zone of gcp:region."""
    if wrong := rules.cluster_zone(config.region, config.zone, "gcp:region"):
        yield Problem(("gcp:zone",), config.zone, wrong)


def stack_one_pool_key(config: StackConfig) -> Iterator[Problem]:
    """One GPU pool key: gpuPool or gpuPools."""
    if config.single_pool is not None and config.pool_list is not None:
        yield Problem(("trainstack:gpuPools",), ABSENT, "set as well as trainstack:gpuPool; set exactly one of them (gpuPool: one pool, gpuPools: a list)")
    elif config.single_pool is None and config.pool_list is None:
        yield Problem(("trainstack:gpuPool",), ABSENT, "required key is missing (or trainstack:gpuPools, a list of pools)")


def stack_pool_names(config: StackConfig) -> Iterator[Problem]:
    """Node pool names are unique in the cluster."""
    seen: set[str] = set()
    for i, pool in enumerate(config.pools):
        if pool.name in seen or pool.name == config.cpu_pool.name:
            yield Problem((*config.pool_key(i), "name"), pool.name, "must differ from every other node pool's name")
        seen.add(pool.name)


def stack_nic_families(config: StackConfig) -> Iterator[Problem]:
    """One machine type of each GPUDirect stack with extra NICs: their NIC networks share names."""
    stacks: dict[str, str] = {}
    for pool in config.pools:
        if pool.machine.extra_nics:
            other = stacks.setdefault(pool.machine.gpudirect.value, pool.machine_type)
            if other != pool.machine_type:
                yield Problem(
                    ("trainstack:gpuPools",),
                    [other, pool.machine_type],
                    f"two machine types with GPUDirect {pool.machine.gpudirect.value} on one cluster: their NIC networks would share names",
                )


def stack_one_networking(config: StackConfig) -> Iterator[Problem]:
    """The pools of one machine type reach their NICs one way: its job's pods are written once for its queue."""
    ways: dict[str, bool] = {}
    for i, pool in enumerate(config.pools):
        if ways.setdefault(pool.machine_type, pool.dranet) != pool.dranet:
            yield Problem(
                (*config.pool_key(i), "networking"), pool.networking, f"must match the other {pool.machine_type} pools': one networking per machine type"
            )


def stack_one_dra_driver(config: StackConfig) -> Iterator[Problem]:
    """The NVIDIA DRA driver is one release per cluster: the machines whose ComputeDomains it serves need one version."""
    charts = {p.machine.dra_driver.version: p.machine_type for p in config.pools if p.machine.dra_driver}
    if len(charts) > 1:
        yield Problem(
            ("trainstack:gpuPools",), sorted(charts.values()), f"need NVIDIA DRA driver versions {', '.join(sorted(charts))}; one release serves a cluster"
        )


def stack_driver_installer(config: StackConfig) -> Iterator[Problem]:
    """The driver installer DaemonSet is one per cluster, for one accelerator."""
    drivers = sorted({p.machine.accelerator for p in config.pools if p.gpu_driver == "daemonset"})
    if len(drivers) > 1:
        yield Problem(("trainstack:gpuPools",), drivers, "gpuDriver daemonset on one accelerator per cluster: the installer DaemonSet is one per cluster")


def stack_queue_names(config: StackConfig) -> Iterator[Problem]:
    """Each machine type has a queue of its own."""
    names = [q.local_queue for q in config.queues] if config.pools else []
    for name in sorted({n for n in names if names.count(n) > 1}):
        yield Problem(
            ("trainstack:kueue", "localQueue"),
            name,
            "two machine types would share this queue; each machine type has a queue of its own (set trainstack:kueue.localQueue)",
        )


def stack_gke_minor(config: StackConfig) -> Iterator[Problem]:
    """The cluster's version is one every pool's machine runs on (the first pool that needs more)."""
    for i, pool in enumerate(config.pools):
        if wrong := rules.gke_minor(pool.machine, config.cluster.version_prefix, dranet=pool.dranet):
            yield Problem(("trainstack:cluster", "versionPrefix"), config.cluster.version_prefix, f"{wrong} ({key_path((*config.pool_key(i), 'machineType'))})")
            break


def stack_pool_zones_in_region(config: StackConfig) -> Iterator[Problem]:
    """Every pool's zones are zones of gcp:region."""
    for section, zones in (*((config.pool_key(i), p.zones) for i, p in enumerate(config.pools)), (("trainstack:cpuPool",), config.cpu_pool.zones)):
        for i, zone in enumerate(zones or []):
            if wrong := rules.cluster_zone(config.region, zone, "gcp:region"):
                yield Problem((*section, "zones", i), zone, wrong)


def gpu_pool_zones(config: StackConfig) -> Iterator[tuple[tuple[str | int, ...], int, GpuPoolSpec, str]]:
    """Each GPU pool's zones with the key that sets each (its own `zones`, else `gcp:zone`), and the pool's index."""
    for i, pool in enumerate(config.pools):
        keys: list[tuple[str | int, ...]] = [(*config.pool_key(i), "zones", j) for j in range(len(pool.zones))] if pool.zones else [("gcp:zone",)]
        for key, zone in zip(keys, pool.zones or [config.zone], strict=True):
            yield key, i, pool, zone


def stack_machine_zones(config: StackConfig) -> Iterator[Problem]:
    """Every GPU pool's zones offer its machine (rules.machine_zone)."""
    for key, i, pool, zone in gpu_pool_zones(config):
        if not rules.cluster_zone(config.region, zone) and (wrong := rules.machine_zone(pool.machine_type, zone)):
            yield Problem(key, zone, f"cannot hold {key_path(config.pool_key(i))}.machineType: {wrong}")


def stack_cpu_pool_inherited_zones(config: StackConfig) -> Iterator[Problem]:
    """A CPU pool without zones of its own takes the first GPU pool's, and divides over them."""
    if config.pools and config.cpu_pool.zones is None and config.cpu_pool.node_count % len(config.gpu_zones):
        yield Problem(
            ("trainstack:cpuPool", "nodeCount"),
            config.cpu_pool.node_count,
            f"must be a multiple of the number of zones it inherits from the GPU pool ({len(config.gpu_zones)}); set trainstack:cpuPool.zones or change nodeCount",
        )


def stack_nfs_zone(config: StackConfig) -> Iterator[Problem]:
    """The NFS server runs on the CPU pool, in its disk's zone."""
    if config.pools and config.storage.kind == "nfs" and config.gpu_zones[0] not in config.cpu_zones:
        yield Problem(
            ("trainstack:cpuPool", "zones"),
            config.cpu_zones,
            f"must include {config.gpu_zones[0]}, the zone of the NFS server's disk, or the server cannot start",
        )


def stack_master_range(config: StackConfig) -> Iterator[Problem]:
    """The control plane's range overlaps none of the VPC's ranges the stack makes (the network's
    own overlaps are trainstack:network's rule)."""
    network = config.network
    if network.existing is None:  # the primary ranges are ours only when we create the VPC
        ranges = {"subnetCidr": network.subnet_cidr, "podsCidr": network.pods_cidr, "servicesCidr": network.services_cidr}
        for key, value, rule in rules.overlaps({**ranges, "master": config.cluster.master_ipv4_cidr}):
            if key == "master":
                yield Problem(("trainstack:cluster", "masterIpv4Cidr"), value, rule.replace("overlaps ", "overlaps trainstack:network."))


def stack_node_ranges(config: StackConfig) -> Iterator[Problem]:
    """The ranges the stack makes hold every node the pools may have."""
    network = config.network
    nodes = sum(p.max_nodes for p in config.pools) + config.cpu_pool.node_count
    if network.existing is None:
        if wrong := rules.pods_range_fits(network.pods_cidr, nodes):
            yield Problem(("trainstack:network", "podsCidr"), network.pods_cidr, wrong)
        if wrong := rules.subnet_fits(ipaddress.IPv4Network(network.subnet_cidr).prefixlen, nodes):
            yield Problem(("trainstack:network", "subnetCidr"), network.subnet_cidr, wrong)


def stack_nic_subnets(config: StackConfig) -> Iterator[Problem]:
    """A NIC family's pools share its NIC subnets (/24s), which hold all their nodes."""
    for family in config.nic_families:
        pools = [(i, p) for i, p in enumerate(config.pools) if p.machine_type == family.machine.name]
        family_nodes = sum(p.max_nodes for _, p in pools)
        if wrong := rules.subnet_fits(rules.NIC_SUBNET_PREFIX, family_nodes, f"the {family.machine.name} pools'"):
            i, first = pools[0]
            yield Problem(
                (*config.pool_key(i), "nodeCount" if first.node_count else "autoscaling"),
                family_nodes,
                f"each GPU NIC subnet (a /24) {wrong.replace('; widen it', '')}",
            )


def stack_pods_ready_budget(config: StackConfig) -> Iterator[Problem]:
    """Kueue's waitForPodsReady timeout, as written, holds a pool's scale-up."""
    wait = config.kueue.wait_for_pods_ready
    if config._waiting_pools and "timeout" in wait.model_fields_set and (wrong := rules.pods_ready_budget(wait.timeout, config._waiting_pools)):
        yield Problem(("trainstack:kueue", "waitForPodsReady", "timeout"), wait.timeout, wrong)


def stack_lustre_version(config: StackConfig) -> Iterator[Problem]:
    """Managed Lustre needs a cluster version its port-988 driver runs on."""
    if config.storage.kind == "lustre" and (wrong := rules.lustre_gke_version(config.cluster.version_prefix)):
        yield Problem(("trainstack:cluster", "versionPrefix"), config.cluster.version_prefix, f"{wrong} (trainstack:storage.kind lustre)")


def stack_preload_version(config: StackConfig) -> Iterator[Problem]:
    """Container images preloaded from a secondary boot disk need a cluster version that has them."""
    if config.image.preload is not None and (wrong := rules.preload_gke_version(config.cluster.version_prefix)):
        yield Problem(("trainstack:cluster", "versionPrefix"), config.cluster.version_prefix, f"{wrong} (trainstack:image.preload)")


def stack_preload_build(config: StackConfig) -> Iterator[Problem]:
    """A preload disk image built here is built on a VM in the stack's zone, on its VPC and subnet by
    name in its project (gke-disk-image-builder makes `projects/<project>/global/networks/<name>`)."""
    existing = config.network.existing
    if config.image.preload is not None and config.image.preload.build and existing is not None:
        for key in ("network", "subnetwork"):
            value = getattr(existing, key)
            if "/" in value:
                rule = "the preload disk image's builder VM takes a VPC and subnet by name in the stack's project (trainstack:image.preload.build)"
                yield Problem(("trainstack:network", "existing", key), value, rule)


def stack_lustre_network(config: StackConfig) -> Iterator[Problem]:
    """Managed Lustre peers with the stack's own VPC."""
    if config.storage.kind == "lustre" and config.network.existing is not None:
        yield Problem(
            ("trainstack:storage", "kind"),
            "lustre",
            "Managed Lustre peers with the stack's own VPC (private services access made here); with trainstack:network.existing, mount your instance through trainstack:platform.existingCluster",
        )


def stack_hns_bucket_region(config: StackConfig) -> Iterator[Problem]:
    """A hierarchical-namespace bucket is in the cluster's region."""
    bucket = config.storage.bucket
    if config.storage.kind == "gcs" and bucket and bucket.location and bucket.hierarchical_namespace and bucket.location.lower() != config.region:
        yield Problem(
            ("trainstack:storage", "bucket", "location"),
            bucket.location,
            f"a hierarchical-namespace bucket must be in the cluster's region ({config.region})",
        )


@dataclass(frozen=True)
class NicFamily:
    """A GPU machine's extra NICs on one cluster: `prefix` starts their Network names."""

    machine: catalog.Machine
    prefix: str
    zone: str


@dataclass(frozen=True)
class Queue:
    """A Kueue queue of the stack: its names, and the GPU pools (one machine type) it tries in order."""

    local_queue: str
    cluster_queue: str
    pools: list[GpuPoolSpec]

    @property
    def machine(self) -> catalog.Machine:
        return self.pools[0].machine

    @property
    def max_nodes(self) -> int:
        """The most nodes one job can have: Kueue admits a job's pods on one flavor (pool)."""
        return max(p.max_nodes for p in self.pools)

    @property
    def topology_aware(self) -> bool:
        """Topology Aware Scheduling only where every pool has it: a job that asks for a
        topology is never admitted on a flavor without one."""
        return all(p.topology_aware for p in self.pools)


# ---------------------------------------------------------------------------------------------
# Workload stacks: a workload on a platform made elsewhere


class ExistingStorage(Section):
    """The shared storage of an existing cluster: a claim in the workload namespace."""

    kind: KindName
    """What holds the data behind the claim."""
    claim_name: K8sName
    """The PersistentVolumeClaim jobs mount, in the workload namespace."""
    mount_path: AbsolutePath = "/job-logs"
    """Where jobs mount it."""


class ExistingCluster(Section):
    """A GKE cluster trainstack did not make (Cluster Toolkit, the console): what a workload
    needs to know of it. The cluster itself is read with the provider's lookup."""

    project: ProjectId
    """The cluster's project."""
    location: Annotated[str, by_rule(rules.LOCATION)]
    """The cluster's location: a region, or a zone."""
    name: ClusterName
    """The cluster's name."""
    zone: ZoneId
    """The zone of its GPU pool."""
    machine_type: GpuMachineName
    """Its GPU pool's machine type."""
    node_count: Annotated[int, Field(ge=1, le=rules.NODE_COUNT.high)]
    """Its GPU pool's nodes: the most a job can have."""
    gpu_pool: NodePoolName
    """The GPU node pool's name: pods select it."""
    cpu_pool: NodePoolName
    """The CPU pool the supervisor (and controllers, if installed here) run on."""
    local_queue: K8sName
    """The Kueue LocalQueue jobs are submitted to."""
    namespace: Annotated[K8sName, by_rule(rules.workload_namespace)] = "default"
    """Where jobs run."""
    service_account: K8sName = "default"
    """The Kubernetes service account jobs run as."""
    network_names: list[K8sName] | None = None
    """The Kubernetes Network names of the GPU NICs, in interface order; default: the names trainstack
    gives them."""
    storage: ExistingStorage
    """Its shared storage claim."""
    topology_aware: bool = False
    """Whether its Kueue flavor places jobs with Topology Aware Scheduling (has a topologyName)."""
    install_kueue: bool = False
    """Install Kueue here; false: it is assumed present."""
    install_job_set: bool = False
    """Install JobSet here; false: it is assumed present."""

    @model_validator(mode="after")
    def _rules(self) -> ExistingCluster:
        wrong = rules.cluster_zone(self.location, self.zone)
        rule_errors("ExistingCluster", [Problem(("zone",), self.zone, wrong)] if wrong else [])
        return self


class PlatformRef(Section):
    """`trainstack:platform`: where a workload stack runs."""

    stack: Annotated[str, by_pattern(r"[\w.-]+/[\w.-]+/[\w.-]+", "must be a fully qualified stack name: organization/project/stack")] | None = None
    """The platform stack's fully qualified name (`<organization>/trainstack/<stack>`)."""
    existing_cluster: ExistingCluster | None = None
    """A cluster trainstack did not make, described here; instead of stack."""

    @model_validator(mode="after")
    def _rules(self) -> PlatformRef:
        rule_errors(
            "PlatformRef",
            [Problem(("stack",), self.stack, "set exactly one of stack (a trainstack platform stack) and existingCluster")]
            if (self.stack is None) == (self.existing_cluster is None)
            else [],
        )
        return self


class WorkloadStackConfig(BaseModel):
    """A workload stack's platform side: where its job runs, its image and its labels (the stack
    file adds the job: app/deploy/stack_file.py)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)

    platform: PlatformRef = Field(alias="trainstack:platform")
    """Where the job runs: a platform stack, or a cluster trainstack did not make."""
    image: ImageSpec = Field(alias="trainstack:image")
    """The training image: built here, or prebuilt."""
    labels: Labels = Field({}, alias="trainstack:labels")
    """GCP labels the stack's resources carry beside trainstack's own."""
    project: ProjectId | None = Field(None, alias="gcp:project")
    """The project of the registry an image built here is pushed to; default: the platform's."""
    region: RegionId | None = Field(None, alias="gcp:region")
    """The region of that registry; default: the platform's."""

    @model_validator(mode="after")
    def _rules(self) -> WorkloadStackConfig:
        image = self.image
        chosen = [(key, value) for key, value in (("streaming", image.streaming), ("preload", image.preload)) if value]
        rule_errors(
            "WorkloadStackConfig",
            [
                Problem(("trainstack:image", key), value if key == "streaming" else image.preload and image.preload.named, _POOLS_ELSEWHERE)
                for key, value in chosen
            ],
        )
        return self


_POOLS_ELSEWHERE = "configures the GPU node pools, which a workload stack does not make: set it on the platform stack"
