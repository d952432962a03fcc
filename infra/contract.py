"""The platform contract: what a platform stack exports for the workload stacks that run on it.

Every platform stack exports one output, `platform` (this contract, versioned), and the secret
`kubeconfig`. A workload stack reads them through a StackReference (or, on a cluster trainstack
did not make, from its own config) and checks its workload against them before it registers a
resource. Version history: 1, the first (`pools`, every GPU pool with its queue, added
without a version change: a contract without it describes one pool).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from pydantic.alias_generators import to_camel

from trainstack.components.storage import KINDS
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError, Problem
from trainstack.infra.facts import JobPool, PlatformFacts
from trainstack.infra.stack import ExistingCluster, NetworkConfig, StackConfig

# The Kubernetes service account the workloads of a trainstack platform run as; the platform
# grants it its storage through Workload Identity.
WORKLOAD_SERVICE_ACCOUNT = "trainstack-workload"

CONTRACT_VERSION = 1
OUTPUT = "platform"
KUBECONFIG_OUTPUT = "kubeconfig"


@dataclass(frozen=True)
class Contract:
    """What a workload needs to know of its platform (exported camelCase, with `version`).

    Attributes:
        project, region, zone: where the GPU pool runs.
        cluster_name, cluster_location: the GKE cluster.
        gpu_machine_type, gpu_pool, gpu_nodes: the GPU pool (its maximum size).
        topology_aware: whether Kueue places jobs with Topology Aware Scheduling.
        cpu_pool: the pool controllers and the supervisor run on.
        local_queue, cluster_queue: the Kueue queues workloads are submitted to.
        network_names: the Kubernetes Network names of the extra NICs, in interface order.
        namespace, service_account: where workloads run, and as whom.
        storage_kind, storage_claim, mount_path: the shared storage claim and where jobs mount it.
        bucket: the checkpoint bucket (storage kind gcs), else None.
        image_registry: the Artifact Registry repository, when the platform has one.
        cluster_identity: the cluster instance (`GkeCluster.identity`); a workload stack's
            Kubernetes provider follows it. Absent from contracts of older platform stacks.
        priority_classes: the names of the platform's Kueue WorkloadPriorityClasses.
        pools: every GPU pool, in the order its queue tries them: `name`, `machineType`, `zone`,
            `nodes` (largest size), `queue` and `clusterQueue`, `topologyAware`, `provisioning`,
            `reservation` (affinity) and `networking` (`multi-network` or `dranet`; absent from
            older contracts: the machine's way). The flat GPU fields above describe the first
            queue's first pool. Absent from contracts of older platform stacks (one pool).
        pods_ready_timeout: Kueue's `waitForPodsReady.timeout` on the platform (a Go duration):
            how long it gives an admitted job to get every pod ready, scale-up included. A fleet's
            manager waits at least as long. Absent from contracts of older platform stacks.
        private_endpoint: whether the control plane has no public endpoint (no fleet manager can
            reach it). Absent from contracts of older platform stacks.
        admitted_fleets: the fleet stacks whose manager egress the control plane admits
            (`trainstack:cluster.admitFleets`). Absent from contracts of older platform stacks.
        any_address: whether the control plane admits any address (0.0.0.0/0, so any fleet's
            manager). Absent from contracts of older platform stacks.
    """

    project: str
    region: str
    zone: str
    cluster_name: str
    cluster_location: str
    gpu_machine_type: str
    gpu_pool: str
    gpu_nodes: int
    topology_aware: bool
    cpu_pool: str
    local_queue: str
    cluster_queue: str
    network_names: list[str]
    namespace: str
    service_account: str
    storage_kind: str
    storage_claim: str
    mount_path: str
    bucket: Any = None  # a str, or an Output[str] on the platform stack itself
    image_registry: Any = None
    cluster_identity: Any = None
    priority_classes: Any = None
    pools: Any = None
    pods_ready_timeout: Any = None
    private_endpoint: Any = None
    admitted_fleets: Any = None
    any_address: Any = None

    def to_output(self) -> dict[str, Any]:
        # Not dataclasses.asdict: it deep-copies, and a platform's bucket or registry is an Output.
        return {"version": CONTRACT_VERSION, **{to_camel(f.name): getattr(self, f.name) for f in fields(self)}}


def from_output(platform_stack: str, value: Any) -> Contract:
    """The contract a platform stack exported, or ConfigError naming the stack and the output."""
    where = f"platform stack {platform_stack!r}"
    if not isinstance(value, dict):
        raise ConfigError(platform_stack, [f"{where}: output {OUTPUT!r} is missing; is it a trainstack platform stack that has been deployed?"])
    version = value.get("version")
    if not isinstance(version, (int, float)) or version < CONTRACT_VERSION:
        raise ConfigError(
            platform_stack,
            [f"{where}: output {OUTPUT!r} has contract version {version!r}, older than {CONTRACT_VERSION}; run `pulumi up` on the platform stack first"],
        )
    missing = [to_camel(f.name) for f in fields(Contract) if to_camel(f.name) not in value and f.default is not None]
    if missing:
        raise ConfigError(platform_stack, [f"{where}: output {OUTPUT!r} lacks {', '.join(missing)}"])
    terms: dict[str, Any] = {f.name: value.get(to_camel(f.name)) for f in fields(Contract)}  # each present but the optional ones (above)
    if terms["storage_kind"] not in KINDS:
        raise ConfigError(platform_stack, [f"{where}: output {OUTPUT!r} names storage kind {terms['storage_kind']!r}, not one of {', '.join(KINDS)}"])
    terms["gpu_nodes"] = int(terms["gpu_nodes"])  # numbers cross a StackReference as doubles
    return Contract(**terms)


def of_platform(config: StackConfig, claim: str, bucket: Any, registry: Any, cluster_identity: Any, namespace: str) -> Contract:
    """The contract of a platform this stack builds (`namespace`: its workloads')."""
    pool = config.gpu_pool
    return Contract(
        project=config.project,
        region=config.region,
        zone=config.gpu_zones[0],
        cluster_name=config.cluster.name,
        cluster_location=config.region,
        gpu_machine_type=pool.machine_type,
        gpu_pool=pool.name,
        gpu_nodes=pool.max_nodes,
        topology_aware=pool.topology_aware,
        cpu_pool=config.cpu_pool.name,
        local_queue=config.local_queue,
        cluster_queue=config.cluster_queue,
        network_names=network_names(config, pool.machine_type),
        namespace=namespace,
        service_account=WORKLOAD_SERVICE_ACCOUNT,
        storage_kind=config.storage.kind,
        storage_claim=claim,
        mount_path=config.storage.mount_path,
        bucket=bucket,
        image_registry=registry,
        cluster_identity=cluster_identity,
        priority_classes=[pc.name for pc in config.kueue.priority_classes],
        pools=[
            {
                "name": p.name,
                "machineType": p.machine_type,
                "zone": (p.zones or [config.zone])[0],
                "nodes": p.max_nodes,
                "queue": queue.local_queue,
                "clusterQueue": queue.cluster_queue,
                "topologyAware": p.topology_aware,
                "provisioning": p.provisioning,
                "reservation": p.reservation.affinity,
                "networkNames": network_names(config, p.machine_type),
                "networking": "dranet" if p.dranet else "multi-network",
            }
            for queue in config.queues
            for p in queue.pools
        ],
        pods_ready_timeout=config.pods_ready_timeout,
        private_endpoint=config.cluster.private_endpoint,
        admitted_fleets=list(config.cluster.admit_fleets),
        any_address=config.cluster.open_to_any_address,
    )


def network_names(config: StackConfig, machine_type: str) -> list[str]:
    """The Kubernetes Network names of a machine's extra NICs on this platform, in interface order."""
    family = next((f for f in config.nic_families if f.machine.name == machine_type), None)
    return [n.name for n in catalog.nic_networks(family.machine, config.network.gpu_nic_cidr, family.prefix)] if family else []


def facts_on(terms: Contract, project: str | None, region: str | None) -> PlatformFacts:
    """What a workload stack knows of the platform it runs on (its contract): where its own
    resources go (its `project` and `region` if it sets them, else the platform's) and the job's pool."""
    pool = JobPool(catalog.machine(terms.gpu_machine_type), terms.gpu_nodes, terms.local_queue)
    return PlatformFacts(project or terms.project, region or terms.region, terms.zone, terms.cluster_name, pool)


def for_queue(terms: Contract, queue: str | None) -> Contract | None:
    """The contract as a job on `queue` sees it (None: the platform's default queue): the flat
    GPU fields become that queue's machine, first pool, largest pool and Topology Aware
    Scheduling (only where every pool has it), and `pools` its pools. None: no such queue."""
    name = queue or terms.local_queue
    if not terms.pools:
        return terms if name == terms.local_queue else None
    pools = [p for p in terms.pools if p["queue"] == name]
    if not pools:
        return None
    first = pools[0]
    machine = catalog.machine(first["machineType"])
    return replace(
        terms,
        zone=first["zone"],
        gpu_machine_type=first["machineType"],
        gpu_pool=first["name"],
        gpu_nodes=max(int(p["nodes"]) for p in pools),
        topology_aware=all(p["topologyAware"] for p in pools),
        local_queue=name,
        cluster_queue=first["clusterQueue"],
        network_names=first.get("networkNames", terms.network_names if machine.extra_nics else []),
        pools=pools,
    )


def queues(terms: Contract) -> list[str]:
    """The LocalQueues of the platform, in order."""
    return list(dict.fromkeys(p["queue"] for p in terms.pools)) if terms.pools else [terms.local_queue]


def of_existing(cluster: ExistingCluster) -> Contract:
    """The contract of a cluster trainstack did not make, as its workload stack describes it."""
    machine = catalog.machine(cluster.machine_type)
    names = cluster.network_names
    if names is None:
        names = [n.name for n in catalog.nic_networks(machine, NetworkConfig().gpu_nic_cidr)]
    region = cluster.zone.rsplit("-", 1)[0]
    return Contract(
        project=cluster.project,
        region=region,
        zone=cluster.zone,
        cluster_name=cluster.name,
        cluster_location=cluster.location,
        gpu_machine_type=cluster.machine_type,
        gpu_pool=cluster.gpu_pool,
        gpu_nodes=cluster.node_count,
        topology_aware=cluster.topology_aware,
        cpu_pool=cluster.cpu_pool,
        local_queue=cluster.local_queue,
        cluster_queue=cluster.local_queue,
        network_names=names,
        namespace=cluster.namespace,
        service_account=cluster.service_account,
        storage_kind=cluster.storage.kind,
        storage_claim=cluster.storage.claim_name,
        mount_path=cluster.storage.mount_path,
    )


def dranet(terms: Contract) -> bool:
    """Whether the contract's (first) pool reaches its RDMA NICs through DRANET (rules.uses_dranet)."""
    networking = terms.pools[0].get("networking") if terms.pools else None
    return rules.uses_dranet(catalog.machine(terms.gpu_machine_type), networking)


def nics(terms: Contract) -> list[catalog.NicNetwork]:
    """The platform's extra GPU NICs in interface order, under the names its Networks have (none
    a pod joins on DRANET)."""
    if dranet(terms):
        return []
    machine = catalog.machine(terms.gpu_machine_type)
    defaults = catalog.nic_networks(machine, NetworkConfig().gpu_nic_cidr)
    return [replace(nic, name=name) for nic, name in zip(defaults, terms.network_names, strict=True)]


def existing_problems(existing: ExistingCluster) -> list[Problem]:
    """How an existing cluster's description fails its machine: one Network name for each extra NIC."""
    machine = catalog.machine(existing.machine_type)
    if existing.network_names is not None and len(existing.network_names) != machine.extra_nics:
        return [
            Problem(
                ("trainstack:platform", "existingCluster", "networkNames"),
                existing.network_names,
                f"{machine.name} has {machine.extra_nics} extra NICs; name one Network for each, in interface order",
            )
        ]
    return []
