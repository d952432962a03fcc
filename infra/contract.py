"""The platform contract: what a platform stack exports for the workload stacks that run on it.

Every platform stack exports one output, `platform` (this contract, versioned), and the secret
`kubeconfig`. A workload stack reads them through a StackReference (or, on a cluster trainstack
did not make, from its own config) and checks its workload against them before it registers a
resource. Version history: 1, the first.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pydantic.alias_generators import to_camel

from trainstack import catalog
from trainstack.config import ExistingCluster, NetworkConfig, StackConfig, WorkloadStackConfig, load
from trainstack.context import WORKLOAD_SERVICE_ACCOUNT
from trainstack.errors import ConfigError
from trainstack.infra.platform import nic_networks

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
    terms = {f.name: value.get(to_camel(f.name)) for f in fields(Contract)}
    terms["gpu_nodes"] = int(terms["gpu_nodes"])  # numbers cross a StackReference as doubles
    return Contract(**terms)


def of_platform(config: StackConfig, claim: str, bucket: str | None, registry: str | None) -> Contract:
    """The contract of a platform this stack builds."""
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
        topology_aware=pool.autoscaling is None,
        cpu_pool=config.cpu_pool.name,
        local_queue=config.local_queue,
        cluster_queue=config.cluster_queue,
        network_names=[n.name for n in nic_networks(pool.machine, config.network.gpu_nic_cidr)],
        namespace=config.workload_namespace,
        service_account=WORKLOAD_SERVICE_ACCOUNT,
        storage_kind=config.storage.kind,
        storage_claim=claim,
        mount_path=config.storage.mount_path,
        bucket=bucket,
        image_registry=registry,
    )


def of_existing(cluster: ExistingCluster) -> Contract:
    """The contract of a cluster trainstack did not make, as its workload stack describes it."""
    machine = catalog.machine(cluster.machine_type)
    names = cluster.network_names
    if names is None:
        names = [n.name for n in nic_networks(machine, NetworkConfig().gpu_nic_cidr)]
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
        topology_aware=True,
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


def effective_config(stack: str, config: WorkloadStackConfig, contract: Contract, source: str) -> StackConfig:
    """The whole-stack config a workload stack amounts to on `contract`'s platform, validated:
    its workload is checked against the platform's pool, machine and storage (ConfigError)."""
    workload = config.workload.model_dump(by_alias=True, exclude_unset=True)
    problems = []
    if config.workload.namespace != "default" and config.workload.namespace != contract.namespace:
        problems.append(
            f"trainstack:workload.namespace = {config.workload.namespace!r}: the platform's storage and service account are in {contract.namespace!r} ({source})"
        )
    workload["namespace"] = contract.namespace
    raw: dict[str, Any] = {
        "gcp:project": config.project or contract.project,
        "gcp:region": config.region or contract.region,
        "gcp:zone": contract.zone,
        "trainstack:cluster": {"name": contract.cluster_name},
        "trainstack:gpuPool": {
            "name": contract.gpu_pool,
            "machineType": contract.gpu_machine_type,
            "nodeCount": contract.gpu_nodes,
            "placement": "none",
        },
        "trainstack:cpuPool": {"name": contract.cpu_pool, "nodeCount": 1},
        "trainstack:storage": {"kind": contract.storage_kind, "mountPath": contract.mount_path},
        "trainstack:image": config.image.model_dump(by_alias=True, exclude_unset=True),
        "trainstack:kueue": {"localQueue": contract.local_queue, "clusterQueue": contract.cluster_queue},
        "trainstack:workload": workload,
        "trainstack:labels": dict(config.labels),
    }
    try:
        effective = load(stack, raw)
    except ConfigError as exc:
        problems += [p.replace("(trainstack:gpuPool)", f"({source})") for p in exc.problems]
    if problems:
        raise ConfigError(stack, problems)
    assert isinstance(effective, StackConfig)
    return effective
