"""A fleet stack: several trainstack platforms behind one queue, with Kueue's MultiKueue.

`trainstack:fleet` names the worker platforms by their stacks; the stack makes a small CPU-only
manager cluster (`trainstack:cluster`, `trainstack:cpuPool`, `trainstack:network`) and reads each
worker through its versioned `platform` contract. The manager mirrors the workers: a queue per
machine type, of the name the workers give it, in their namespace; a job's machine decides which
workers get a copy of it. The fleet exports a `platform` contract of its own, so workload stacks
run on a fleet as on one platform: every worker's pools, each with its `worker`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trainstack.components.gke_cluster import AuthorizedNetwork
from trainstack.components.node_pools import CpuPoolSpec
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError, Problem
from trainstack.core.spec import Duration, K8sName, ProjectId, RegionId, Section, ZoneId, by_rule, rule_errors, validated
from trainstack.infra import contract
from trainstack.infra.facts import PlatformFacts
from trainstack.infra.stack import (
    ClusterConfig,
    Ephemeral,
    Labels,
    NetworkConfig,
    QualifiedStack,
    StackConfig,
)

# A platform stack's config: the platform's, or its stack file's (with its job).
Platform = TypeVar("Platform", bound=StackConfig)

KEY = "trainstack:fleet"
# The fleet's output of its manager's egress addresses (/32 CIDRs), which its workers admit.
EGRESS_OUTPUT = "egressAddresses"
# MultiKueueConfig.spec.clusters maxItems (Kueue v0.19.2 CRD).
MAX_WORKERS = 20


class FleetWorker(Section):
    """A worker platform: a trainstack platform stack the manager dispatches jobs to."""

    name: K8sName
    """Its MultiKueueCluster's name on the manager."""
    stack: QualifiedStack
    """The worker's platform stack, fully qualified (`<organization>/trainstack/<stack>`)."""
    credential_rotation: K8sName = "1"
    """Part of the name of the worker's token Secret: change it to rotate the manager's credential."""


class FleetConfig(Section):
    """`trainstack:fleet`: the workers, the preferred first (the incremental dispatcher tries
    them in this order), and how the manager dispatches."""

    workers: Annotated[list[FleetWorker], Field(min_length=1, max_length=MAX_WORKERS)]
    """The worker platforms, the preferred first."""
    dispatcher: Literal["incremental", "all-at-once"] = "incremental"
    """`incremental`: Kueue offers a job to the workers in this order, a few more at a time; `all-at-once`:
    to every worker at once."""
    pods_ready_timeout: Annotated[Duration, by_rule(rules.positive_duration)] | None = None
    """The manager's `waitForPodsReady.timeout`: how long a job admitted on a worker may take to get
    every pod ready before the manager evicts it and withdraws its copy. At least every worker's
    own (its pool's scale-up budget); unset: the longest of the workers'."""
    origin: K8sName | None = None
    """The `multiKueue.origin` label value marking this fleet's copies on its workers, whose garbage
    collector deletes only copies of its origin; unset: the manager's account name on the workers
    (`multikueue-<stack>`), so two fleets sharing a worker never delete each other's jobs."""

    @model_validator(mode="after")
    def _rules(self) -> FleetConfig:
        problems: list[Problem] = []
        for attribute in ("name", "stack"):
            seen: set[str] = set()
            for i, worker in enumerate(self.workers):
                value = getattr(worker, attribute)
                if value in seen:
                    problems.append(Problem(("workers", i, attribute), value, f"names a worker twice; each worker {attribute} once"))
                seen.add(value)
        rule_errors("FleetConfig", problems)
        return self


class FleetStackConfig(BaseModel):
    """A fleet stack's configuration, keyed as in `stacks/Pulumi.<stack>.yaml`: the manager's
    project, region, cluster, CPU pool and network, and the workers."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)

    project: ProjectId = Field(alias="gcp:project")
    """The manager's project."""
    region: RegionId = Field(alias="gcp:region")
    """The manager cluster's region."""
    zone: ZoneId = Field(alias="gcp:zone")
    """The zone of the manager's CPU pool when it lists no zones."""
    cluster: ClusterConfig = Field(alias="trainstack:cluster")
    """The manager's GKE cluster."""
    network: NetworkConfig = Field(NetworkConfig(), alias="trainstack:network")
    """The manager's VPC (a fleet makes its own)."""
    cpu_pool: CpuPoolSpec = Field(CpuPoolSpec(), alias="trainstack:cpuPool")
    """The manager's CPU pool (a manager has no GPU pool)."""
    fleet: FleetConfig = Field(alias="trainstack:fleet")  # KEY: a type checker reads an alias only as a literal
    """The worker platforms and how jobs are dispatched to them."""
    labels: Labels = Field({}, alias="trainstack:labels")
    """GCP labels the stack's resources carry beside trainstack's own."""
    ephemeral: Ephemeral | None = Field(None, alias="trainstack:ephemeral")
    """Marks a stack `trainstack reap` deletes once it expires (`trainstack bench` sets it)."""

    @model_validator(mode="after")
    def _cross_section_rules(self) -> FleetStackConfig:
        problems: list[Problem] = []
        if wrong := rules.cluster_zone(self.region, self.zone, "gcp:region"):
            problems.append(Problem(("gcp:zone",), self.zone, wrong))
        network = self.network
        if network.existing is not None:
            problems.append(Problem(("trainstack:network", "existing"), network.existing.network, "a fleet makes its manager's own VPC"))
        if not self.cluster.private_nodes:
            problems.append(
                Problem(
                    ("trainstack:cluster", "privateNodes"),
                    False,
                    "a fleet's manager reaches its workers from its Cloud NAT addresses (reserved, exported as egressAddresses); "
                    "public nodes egress from their own ephemeral addresses, which no worker authorizes; set privateNodes: true",
                )
            )
        rule_errors("FleetStackConfig", problems)
        return self

    @property
    def cpu_zones(self) -> list[str]:
        return self.cpu_pool.zones or [self.zone]

    def facts(self) -> PlatformFacts:
        """What the fleet's stack knows of its manager: where it is; it has no GPU pool of its own."""
        return PlatformFacts(self.project, self.region, self.zone, self.cluster.name, None)

    @property
    def expires(self) -> str | None:
        """When the stack expires (`trainstack:ephemeral.expires`), if it does."""
        return self.ephemeral.expires if self.ephemeral else None


def is_fleet(raw: dict[str, Any]) -> bool:
    """Whether a raw stack config is a fleet stack's: it has `trainstack:fleet`, even null (which
    the fleet's model then refuses, naming the key, as it refuses any other value)."""
    return KEY in raw


def load(stack: str, raw: dict[str, Any]) -> FleetStackConfig:
    """A fleet stack's config, or ConfigError with every problem, each naming its key."""
    return validated(stack, raw, FleetStackConfig)


@dataclass(frozen=True)
class Worker:
    """A worker as the manager sees it: its config entry and its platform's contract."""

    config: FleetWorker
    terms: contract.Contract
    index: int

    @property
    def key(self) -> tuple[str | int, ...]:
        return (KEY, "workers", self.index, "stack")

    @property
    def cluster(self) -> str:
        """The worker's cluster instance (a platform's `clusterIdentity`), else its path."""
        terms = self.terms
        return terms.cluster_identity or f"projects/{terms.project}/locations/{terms.cluster_location}/clusters/{terms.cluster_name}"


def kubeconfig_output(worker: str) -> str:
    """The fleet's secret output of a worker's kubeconfig: a job on the fleet makes its files
    and policies on the workers with it."""
    return f"kubeconfig-{worker}"


@dataclass(frozen=True)
class FleetQueue:
    """A queue of the fleet: one machine type, the workers that have it (in dispatch order) and
    their pools (each with its `worker`)."""

    name: str
    machine_type: str
    workers: list[str]
    pools: list[dict[str, Any]]

    @property
    def nodes(self) -> int:
        """The manager's quota in nodes: every worker pool's at its largest (Kueue's MultiKueue
        concept page: the manager's quota should equal the workers' total)."""
        return sum(int(p["nodes"]) for p in self.pools)

    @property
    def topology_aware(self) -> bool:
        return all(p["topologyAware"] for p in self.pools)


def workers_of(config: FleetStackConfig, outputs: dict[str, Any]) -> list[Worker]:
    """Each worker with its contract read from `outputs` (stack name -> its `platform` output);
    ConfigError naming the worker whose contract is missing or too old."""
    found, errors = [], []
    for i, entry in enumerate(config.fleet.workers):
        try:
            found.append(Worker(entry, contract.from_output(entry.stack, outputs.get(entry.stack)), i))
        except ConfigError as exc:
            errors += [f"{KEY}.workers[{i}].stack = {entry.stack!r}: {p}" for p in exc.problems]
    if errors:
        raise ConfigError("fleet", errors)
    return found


def queues(workers: list[Worker]) -> list[FleetQueue]:
    """The fleet's queues, in order of first appearance among the workers."""
    by_name: dict[str, FleetQueue] = {}
    for worker in workers:
        for pool in _pools(worker.terms):
            queue = by_name.setdefault(pool["queue"], FleetQueue(pool["queue"], pool["machineType"], [], []))
            if worker.config.name not in queue.workers:
                queue.workers.append(worker.config.name)
            queue.pools.append({**pool, "worker": worker.config.name, "workerCluster": worker.cluster})
    return list(by_name.values())


def _pools(terms: contract.Contract) -> list[dict[str, Any]]:
    """A platform's pools; a contract from before `pools` describes its one pool."""
    return (
        list(terms.pools)
        if terms.pools
        else [
            {
                "name": terms.gpu_pool,
                "machineType": terms.gpu_machine_type,
                "zone": terms.zone,
                "nodes": terms.gpu_nodes,
                "queue": terms.local_queue,
                "clusterQueue": terms.cluster_queue,
                "topologyAware": terms.topology_aware,
                "provisioning": None,
                "reservation": None,
                "networkNames": terms.network_names,
            }
        ]
    )


def problems(workers: list[Worker]) -> Iterator[Problem]:
    """How the workers fail to mirror one another, so a job made on the manager runs on any of
    them that has its machine: MultiKueue creates the job in the namespace and with the queue
    label it has on the manager (Kueue v0.19.2 docs, tasks/manage/setup_multikueue: the workers
    mirror the manager's namespaces and LocalQueues)."""
    first = workers[0]
    for worker in workers[1:]:
        for attribute, what in (
            ("namespace", "runs jobs in namespace"),
            ("service_account", "runs jobs as service account"),
            ("storage_claim", "mounts the storage claim"),
            ("mount_path", "mounts its storage at"),
        ):
            mine, theirs = getattr(worker.terms, attribute), getattr(first.terms, attribute)
            if mine != theirs:
                yield Problem(
                    worker.key,
                    worker.config.stack,
                    f"{what} {mine!r}, {first.config.name} {theirs!r}: a job runs unchanged on every worker, so they must agree",
                )
    machines: dict[str, tuple[str, str]] = {}
    queue_machine: dict[str, tuple[str, str]] = {}
    for worker in workers:
        for pool in _pools(worker.terms):
            machine, queue = pool["machineType"], pool["queue"]
            other = machines.setdefault(machine, (queue, worker.config.name))
            if other[0] != queue:
                yield Problem(
                    worker.key,
                    worker.config.stack,
                    f"queues {machine} jobs in {queue!r}, {other[1]} in {other[0]!r}: a job's copy needs the manager's queue name on every worker of its machine",
                )
            mtype = queue_machine.setdefault(queue, (machine, worker.config.name))
            if mtype[0] != machine:
                yield Problem(
                    worker.key,
                    worker.config.stack,
                    f"queue {queue!r} is for {machine}, on {mtype[1]} for {mtype[0]}: one queue a machine type, or a job would reach a worker without its machine",
                )
    for queue in queues(workers):
        names = {tuple(p.get("networkNames") or []) for p in queue.pools}
        if len(names) > 1:
            yield Problem(
                (KEY, "workers"),
                sorted(queue.workers),
                f"the {queue.machine_type} workers name their GPU NIC networks differently ({sorted(names)}): a job attaches them by name",
            )


def worker_budget(worker: Worker) -> str:
    """How long a worker gives an admitted job to get every pod ready (its contract's
    `podsReadyTimeout`); for a contract from before it, the scale-up budget (catalog
    SCALE_UP_BUDGET_SECONDS), the longest a trainstack platform derives."""
    return worker.terms.pods_ready_timeout or f"{catalog.SCALE_UP_BUDGET_SECONDS // 60}m"


def pods_ready_timeout(config: FleetStackConfig, workers: list[Worker]) -> str:
    """The manager's `waitForPodsReady.timeout`: the fleet's own, else the longest worker's. The
    manager's timer runs from the worker's admission too (Kueue v0.19.2
    pkg/controller/core/workload_controller.go, PodsReady mirrored from the worker's JobSet by
    pkg/controller/jobs/jobset/jobset_multikueue_adapter.go), and at its end the manager evicts the
    job and deactivates the worker's copy (pkg/controller/admissionchecks/multikueue/workload.go)."""
    return config.fleet.pods_ready_timeout or max((worker_budget(w) for w in workers), key=rules.duration_seconds)


def admits(worker: Worker, stack: str) -> bool | None:
    """Whether `worker`'s control plane admits fleet stack `stack`'s egress: open to any address,
    or naming the fleet in `trainstack:cluster.admitFleets` (by its stack's name: a fleet reads its
    own name, not its organization, offline); None for a contract from before it said (its owner
    may have listed the addresses by hand)."""
    terms = worker.terms
    if terms.admitted_fleets is None:
        return None
    return bool(terms.any_address) or any(name.rsplit("/", 1)[-1] == stack for name in terms.admitted_fleets)


def egress_name(stack: str) -> str:
    """The display name of a fleet's egress among a worker's authorized networks."""
    return f"fleet {stack.rsplit('/', 1)[-1]} manager"


def admit_egress(config: Platform, egress: dict[str, list[str]]) -> Platform:
    """A worker platform's config with the egress CIDRs of each fleet it admits (`egress`: fleet stack
    -> its exported CIDRs) among its authorized networks: its own first, then each fleet's in the
    order `admitFleets` names them. Their count is checked with the file (one a fleet,
    ClusterConfig._fleets), and the cluster's component checks them again."""
    cluster = config.cluster
    extra = [
        AuthorizedNetwork.model_validate({"cidrBlock": cidr, "displayName": egress_name(name)})
        for name in cluster.admit_fleets
        for cidr in egress.get(name) or []
    ]
    if not extra:
        return config
    return config.model_copy(update={"cluster": cluster.model_copy(update={"authorized_networks": [*cluster.authorized_networks, *extra]})})


def reach_problems(config: FleetStackConfig, workers: list[Worker], stack: str) -> Iterator[Problem]:
    """What keeps the manager (fleet stack `stack`) from running a job on a worker: an endpoint it
    cannot reach, or a budget shorter than the worker's, which kills every job still starting there."""
    own = config.fleet.pods_ready_timeout
    for worker in workers:
        if admits(worker, stack) is False and not worker.terms.private_endpoint:
            yield Problem(
                worker.key,
                worker.config.stack,
                f"does not admit this fleet's manager: its control plane authorizes only its own networks, not this fleet's {EGRESS_OUTPUT}; "
                f"add <organization>/<project>/{stack} to the worker's trainstack:cluster.admitFleets and `up` it (README, fleets: the first deployment)",
            )
        if worker.terms.private_endpoint:
            yield Problem(
                worker.key,
                worker.config.stack,
                "has no public endpoint (trainstack:cluster.privateEndpoint: true): the manager's Kueue reaches a worker at its "
                "public endpoint (the VPCs are not peered), so it could never dispatch there; set privateEndpoint: false on the worker",
            )
    longer = [(w.config.name, worker_budget(w)) for w in workers if own is not None and rules.duration_seconds(own) < rules.duration_seconds(worker_budget(w))]
    if longer:
        names = ", ".join(f"{name}'s {budget}" for name, budget in longer)
        yield Problem(
            (KEY, "podsReadyTimeout"),
            own,
            f"is shorter than {names} (a worker's waitForPodsReady timeout: its pools' scale-up budget): the manager would evict "
            f"every job still starting there and requeue it forever; set at least {max((b for _, b in longer), key=rules.duration_seconds)}, or leave it unset",
        )


def fleet_contract(config: FleetStackConfig, workers: list[Worker], cluster_identity: Any, priority_classes: list[str]) -> contract.Contract:
    """The contract a fleet exports: the manager's cluster and queues, every worker's pools
    (each with its `worker`), the workers' common namespace, account and storage claim, and the
    manager's `priority_classes` every worker has too (a job's copy keeps its class's label)."""
    found = queues(workers)
    first, terms = found[0], workers[0].terms
    pool = first.pools[0]
    return contract.Contract(
        project=config.project,
        region=config.region,
        zone=pool["zone"],
        cluster_name=config.cluster.name,
        cluster_location=config.region,
        gpu_machine_type=first.machine_type,
        gpu_pool=pool["name"],
        gpu_nodes=max(int(p["nodes"]) for p in first.pools),
        topology_aware=first.topology_aware,
        cpu_pool=config.cpu_pool.name,
        local_queue=first.name,
        cluster_queue=first.name,
        network_names=list(pool.get("networkNames") or []),
        namespace=terms.namespace,
        service_account=terms.service_account,
        storage_kind=terms.storage_kind,
        storage_claim=terms.storage_claim,
        mount_path=terms.mount_path,
        cluster_identity=cluster_identity,
        priority_classes=[n for n in priority_classes if all(w.terms.priority_classes is None or n in w.terms.priority_classes for w in workers)],
        pools=[{**p, "clusterQueue": q.name} for q in found for p in q.pools],
        pods_ready_timeout=pods_ready_timeout(config, workers),
        private_endpoint=config.cluster.private_endpoint,
    )


def of_fleet(terms: contract.Contract) -> bool:
    """Whether a contract is a fleet's (its pools name their workers)."""
    return bool(terms.pools) and all("worker" in p for p in terms.pools)


def candidates(terms: contract.Contract, nodes: int) -> list[dict[str, Any]]:
    """The worker pools of a job's queue (`terms` narrowed to it) that can hold `nodes` nodes, in
    dispatch order."""
    return [
        {"worker": p["worker"], "pool": p["name"], "machineType": p["machineType"], "zone": p["zone"], "nodes": int(p["nodes"]), "capacity": _capacity(p)}
        for p in terms.pools or []
        if int(p["nodes"]) >= nodes
    ]


def _capacity(pool: dict[str, Any]) -> str:
    """A contract pool's capacity: its provisioning (spot, flex-start, queued), else reservation or on-demand."""
    if pool.get("provisioning") in ("spot", "flex-start", "queued"):
        return pool["provisioning"]
    return "reservation" if pool.get("reservation") in ("specific", "any") else "on-demand"
