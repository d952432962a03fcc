"""The platform stack file: `stacks/Pulumi.<stack>.yaml` -> `StackConfig`.

Keys are the ones `pulumi config set --path` writes: `gcp:project`, `gcp:region`, `gcp:zone`
and objects under the `trainstack:` namespace in camelCase (`trainstack:gpuPool.nodeCount`).
Every model is strict and rejects unknown keys. A key's own rule is a core/rules.py rule on its
type; a section's rules between its keys are its resource's (core/resource_rules.py, which the
component's Args run too), re-keyed as the user writes them; a section a component owns is its
spec (the pools': components/node_pools.py) with its rules; the rules between sections are the
stack rules (`stack_*`, below StackConfig). `load` collects every violation into one ConfigError.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)
from pydantic_core import PydanticCustomError

from trainstack.components.gke_cluster import MASTER_IPV4_CIDR
from trainstack.components.image import ImageSpec
from trainstack.components.kueue import KueueSpec
from trainstack.components.node_pools import CpuPoolSpec, GpuMachineName, GpuPoolSpec
from trainstack.components.storage import KINDS, KindName
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.components.storage.gcs import BucketSpec
from trainstack.components.storage.kind import StorageKind
from trainstack.components.storage.lustre import LustreSpec
from trainstack.components.storage.nfs import NfsSpec
from trainstack.core import catalog, rules
from trainstack.core.errors import ABSENT, Problem, describe, key_path
from trainstack.core.spec import (
    INT32_MAX,
    AbsolutePath,
    Cidr,
    Dns1035Name,
    Duration,
    EnvName,
    GcpName,
    K8sName,
    NodePoolName,
    ProjectId,
    QualifiedStack,
    Quantity,
    RegionId,
    Section,
    UtcTime,
    ZoneId,
    by_pattern,
    by_rule,
    resource_errors,
    rule_errors,
    validated,
)

# ---------------------------------------------------------------------------------------------
# Sections


class AuthorizedNetwork(Section):
    """A network allowed to reach the control plane."""

    cidr_block: Cidr
    """An IPv4 range allowed to reach the control plane."""
    display_name: str = ""
    """A name for it in the cluster's settings."""


class MaintenanceWindow(Section):
    """When GKE may upgrade the cluster: a recurring window (RFC 3339 times, an RFC 5545 rule)."""

    start: UtcTime = "2026-01-03T03:00:00Z"
    """The first window's start (RFC 3339, UTC)."""
    end: UtcTime = "2026-01-03T11:00:00Z"
    """The first window's end, 4 to 24 hours after its start."""
    recurrence: Annotated[str, by_rule(rules.RECURRENCE)] = "FREQ=WEEKLY;BYDAY=SA,SU"
    """How the window recurs (an RFC 5545 rule)."""

    @model_validator(mode="after")
    def _rules(self) -> MaintenanceWindow:
        resource_errors(self, "maintenance_window")
        return self


class MaintenanceExclusion(Section):
    """A maintenance exclusion: GKE makes no upgrade of `scope` from `start` until the cluster's
    minor version reaches its end of support. Lift it by setting `enabled: false` and running
    `pulumi up` (or `gcloud container clusters update --remove-maintenance-exclusion`)."""

    enabled: bool = True
    """Whether the exclusion holds; false lets GKE make those upgrades again."""
    scope: Annotated[Literal["NO_MINOR_OR_NODE_UPGRADES", "NO_MINOR_UPGRADES", "NO_UPGRADES"], by_rule(rules.exclusion_scope)] = "NO_MINOR_OR_NODE_UPGRADES"
    """Which upgrades GKE holds back."""
    start: UtcTime = "2026-01-01T00:00:00Z"
    """When the exclusion starts (RFC 3339, UTC)."""


class Maintenance(Section):
    """`trainstack:cluster.maintenance`: a window for the upgrades GKE makes on its own, and an
    exclusion that keeps them off a running job's nodes (on by default: every node drain
    restarts a whole JobSet)."""

    window: MaintenanceWindow = MaintenanceWindow()
    """The recurring window GKE may upgrade in."""
    exclusion: MaintenanceExclusion = MaintenanceExclusion()
    """The upgrades GKE must not make (on by default)."""


ANY_ADDRESS = "0.0.0.0/0"


# A GKE cluster name: at most 40 lowercase letters, digits and '-', starting with a letter and
# ending with a letter or digit (GKE API v1 Cluster.name,
# cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster).
ClusterName = Annotated[str, Field(max_length=40), by_rule(rules.CLUSTER_NAME)]


class ClusterConfig(Section):
    """`trainstack:cluster`: the GKE Standard cluster (regional, in `gcp:region`)."""

    name: ClusterName
    """The GKE cluster's name."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    """The GKE release channel the cluster follows."""
    version_prefix: Annotated[str, by_rule(rules.VERSION_PREFIX)] | None = None
    """A minor version prefix such as "1.33." resolved against the versions GKE offers at deploy
    time; None: the release channel's default."""
    private_nodes: bool = True
    """Nodes get internal addresses only (egress through Cloud NAT)."""
    private_endpoint: bool = False
    """The control plane has no public endpoint."""
    master_ipv4_cidr: Annotated[Cidr, by_rule(rules.master_cidr)] = MASTER_IPV4_CIDR
    """The control plane's private /28 range."""
    authorized_networks: list[AuthorizedNetwork] = []
    """The networks that may reach the control plane; `0.0.0.0/0` needs allowAnyAddress."""
    allow_any_address: bool = False
    """The explicit opt-in for `0.0.0.0/0` in authorizedNetworks."""
    admit_fleets: list[QualifiedStack] = []
    """Fleet stacks (`<organization>/trainstack/<stack>`) whose manager may reach this control plane:
    each one's exported `egressAddresses` join the authorized networks at `up` (read from the fleet
    stack, so a fleet's address never has to be copied here). `up` the fleet first; see README, fleets."""
    deletion_protection: bool = True
    """GKE refuses to delete the cluster, and Pulumi protects it, while true."""
    maintenance: Maintenance = Maintenance()
    """When GKE may upgrade the cluster on its own, and which upgrades it must not make."""
    dataplane_v2: bool = False
    """Dataplane V2, which enforces the jobs' NetworkPolicies, on a cluster without extra NICs
    (clusters with them have it already). Fixed at creation: changing it replaces the cluster."""
    database_encryption_key: Annotated[str, by_rule(rules.KMS_KEY)] | None = None
    """Application-layer secrets encryption with this Cloud KMS key (CMEK), in gcp:region."""
    binary_authorization: Literal["off", "audit"] = "off"
    """audit: Binary Authorization evaluates every image against the project's policy; keep that
    policy in dry run (enforcementMode DRYRUN_AUDIT_LOG_ONLY) to log without blocking."""

    @model_validator(mode="after")
    def _rules(self) -> ClusterConfig:
        resource_errors(self, "cluster")
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


class ExistingNetwork(Section):
    """A VPC, subnet and secondary ranges made elsewhere."""

    network: str
    """The VPC's name."""
    subnetwork: str
    """The subnet's name."""
    pods_range_name: GcpName
    """The name of the subnet's secondary range for pods."""
    services_range_name: GcpName
    """The name of the subnet's secondary range for Services."""


class NetworkConfig(Section):
    """`trainstack:network`: the primary VPC (created, or an existing one) and GPU NIC ranges."""

    existing: ExistingNetwork | None = None
    """A VPC made elsewhere, used instead of one the stack makes."""
    subnet_cidr: Cidr = "10.0.0.0/20"
    """The primary range of the subnet the stack makes (the nodes' addresses)."""
    pods_cidr: Cidr = "10.4.0.0/14"
    """The subnet's secondary range for pods."""
    services_cidr: Cidr = "10.8.0.0/20"
    """The subnet's secondary range for Services."""
    gpu_nic_cidr: Annotated[Cidr, by_rule(rules.NIC_CIDR)] = "192.168.0.0/16"
    """Extra GPU NIC subnets are carved from this /16 as consecutive /24s."""
    flow_logs: bool = False
    """VPC flow logs on the GPU NICs' gVNIC subnets (RDMA subnets carry RoCE, which flow logs do not see)."""

    @model_validator(mode="after")
    def _rules(self) -> NetworkConfig:
        ranges = {"gpuNicCidr": self.gpu_nic_cidr}
        if self.existing is None:  # the primary ranges are ours only when we create the VPC
            ranges = {"subnetCidr": self.subnet_cidr, "podsCidr": self.pods_cidr, "servicesCidr": self.services_cidr, **ranges}
        rule_errors("NetworkConfig", [Problem((key,), value, rule) for key, value, rule in rules.overlaps(ranges)])
        return self


# The largest GPU pool a config describes (rules.NODE_COUNT), so the most nodes a job can ask for.
MAX_POOL_NODES = rules.POOL_NODES_MAX


def _pool_sized(nodes: int) -> int:
    if nodes > MAX_POOL_NODES:
        raise PydanticCustomError("rule", "must be at most {n}: no GKE node pool holds more nodes (1000 a pool per zone)", {"n": MAX_POOL_NODES})
    return nodes


class StorageConfig(Section):
    """`trainstack:storage`: where checkpoints, logs and data live, mounted at `mountPath`."""

    kind: KindName
    """What holds the data: a Cloud Storage bucket (`gcs`, through gcsfuse), a Filestore instance, an NFS
    server on a persistent disk in the cluster, or a Managed Lustre instance."""
    mount_path: AbsolutePath = "/job-logs"
    """Where jobs mount it."""
    disposable: bool = False
    """false (the default): `pulumi destroy` leaves the bucket, share or disk and its data in the
    project and only forgets it; true: destroy deletes it with its data (benchmarks, CI)."""
    bucket: BucketSpec | None = None
    """The bucket's settings (kind `gcs`)."""
    filestore: FilestoreSpec | None = None
    """The Filestore instance's settings (kind `filestore`)."""
    nfs: NfsSpec | None = None
    """The NFS server's settings (kind `nfs`)."""
    lustre: LustreSpec | None = None
    """The Managed Lustre instance's settings (kind `lustre`)."""

    @model_validator(mode="after")
    def _rules(self) -> StorageConfig:
        problems = [
            Problem((block,), "...", f"is used only with kind {kind!r}, not {self.kind!r}")
            for kind, block in ((k.name, k.block) for k in KINDS.values())
            if kind != self.kind and getattr(self, block) is not None
        ]
        rule_errors("StorageConfig", problems)
        return self

    @property
    def of_kind(self) -> StorageKind[Any, Any]:
        """The kind's registry entry (components/storage)."""
        return KINDS[self.kind]

    @property
    def spec(self) -> Section:
        """The kind's settings, as written or its defaults."""
        return getattr(self, self.of_kind.block) or self.of_kind.spec()


class Secure(Section):
    """A secret value: `{secure: ...}` as `pulumi config set --secret` writes it in a stack file
    (the ciphertext, offline), or, under `pulumi up`, the value the engine decrypted. It stays a
    Pulumi secret all the way to the resource that uses it."""

    secure: str
    """The ciphertext `pulumi config set --secret` wrote, or the value the engine decrypted."""


class Profiling(Section):
    """An Nsight Systems capture of a step range."""

    enabled: bool = False
    """Capture an Nsight Systems profile."""
    start_step: Annotated[int, Field(ge=0)] = 0
    """The first step captured."""
    end_step: Annotated[int, Field(ge=0)] = 0
    """The step the capture ends at."""

    @model_validator(mode="after")
    def _rules(self) -> Profiling:
        rule_errors(
            "Profiling",
            [Problem(("endStep",), self.end_step, f"must be greater than startStep ({self.start_step})")]
            if self.enabled and self.end_step <= self.start_step
            else [],
        )
        return self


class TopologyRequest(Section):
    """Kueue Topology Aware Scheduling: pack the job's pods within one topology domain."""

    mode: Literal["preferred", "required"] = "preferred"
    """`preferred`: pack the pods where Kueue can; `required`: admit the job only where one domain holds
    every pod."""
    level: Literal[
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    ] = "kubernetes.io/hostname"
    """The topology level (a node label) the pods are packed within; the default as recipe 000 (gpu-recipes
    values.yaml tasSettings)."""


class Resiliency(Section):
    """The resiliency supervisor (recipe 000): host monitors report faults, the controller
    hot-swaps faulty nodes and restarts or rescales the job by data-parallel replicas."""

    enabled: bool = False
    """Run the supervisor beside the job."""
    heartbeat_polling_period_s: Annotated[int, Field(ge=1)] = 15
    """How often it polls the workers, in seconds."""
    heartbeat_timeout_s: Annotated[int, Field(ge=1)] = 30
    """Seconds without a heartbeat after which a worker counts as hung."""
    max_in_job_restarts: Annotated[int, Field(ge=0)] = 0
    """In-process restarts before the job is restarted; 0: none."""
    max_workload_restarts: Annotated[int, Field(ge=0)] = 0
    """Job restarts before a faulty node is hot-swapped; 0: at once."""
    nodes_per_data_parallel_replica: Annotated[int, Field(ge=1)] | None = None
    """Nodes one data-parallel replica spans; default: all the job's nodes."""
    min_data_parallel_replicas: Annotated[int, Field(ge=1)] = 1
    """The fewest data-parallel replicas the job shrinks to."""
    workload_scaling: bool = True
    """Drop or add whole data-parallel replicas as nodes fail or return."""
    pod_termination_threshold_s: Annotated[int, Field(ge=1)] = 60
    """How long a pod may take to terminate before the supervisor acts, in seconds."""
    workload_downtime_threshold_s: Annotated[int, Field(ge=1)] = 180
    """How long the job may stay down before the supervisor acts, in seconds."""


class Parallelism(Section):
    """How the model is split across GPUs (Megatron-style); unset keys keep the framework's default."""

    tensor: Annotated[int, Field(ge=1)] = 1
    """Tensor-parallel size: the GPUs each layer is split over."""
    pipeline: Annotated[int, Field(ge=1)] = 1
    """Pipeline-parallel size: the stages the layers are split into."""
    virtual_pipeline: Annotated[int, Field(ge=2)] | None = None
    """Virtual pipeline size: model chunks per pipeline stage (the interleaved schedule)."""
    context: Annotated[int, Field(ge=1)] = 1
    """Context-parallel size: the GPUs each sequence is split over."""
    sequence_parallel: bool = False
    """Sequence parallelism within the tensor-parallel group."""

    @model_validator(mode="after")
    def _rules(self) -> Parallelism:
        problems: list[Problem] = []
        if self.virtual_pipeline is not None and self.pipeline == 1:
            problems.append(Problem(("virtualPipeline",), self.virtual_pipeline, "interleaving needs pipeline > 1"))
        if self.sequence_parallel and self.tensor == 1:
            problems.append(Problem(("sequenceParallel",), True, "sequence parallelism needs tensor > 1"))
        rule_errors("Parallelism", problems)
        return self

    @property
    def model_parallel_size(self) -> int:
        """GPUs one model replica spans."""
        return self.tensor * self.pipeline * self.context


class Dataset(Section):
    """Training data copied from Cloud Storage to node-local disk before the job starts."""

    source: Annotated[str, by_rule(rules.GCS_URI)]
    """The Cloud Storage URI copied."""
    path: AbsolutePath = "/data"
    """Where it is copied, on the node's local disk (a path in the container)."""


class Preflight(Section):
    """The preflight: checks of the job's own nodes and fabric in its pods before the trainer starts
    (workloads/preflight.py); `true`/`false` for all defaults, or on with keys overridden."""

    enabled: bool = True
    """Run it; off: the trainer starts as soon as its pods do."""
    dcgm_level: Literal[0, 1, 2, 3] = 2
    """The DCGM diagnostic's level (`dcgmi diag -r`; 2: about two minutes); 0: none."""
    fabric: bool | None = None
    """The NCCL test across the nodes; unset: on every multi-node job whose machine has a GPUDirect stack
    and an nccl-tests image."""
    bus_bandwidth: Annotated[float, Field(gt=0)] | None = None
    """The bus bandwidth (GB/s) the NCCL test must reach; unset: the machine's mark (the catalog's)."""
    collectives: list[Literal["all_gather", "all_reduce"]] = ["all_gather", "all_reduce"]
    """The collectives measured."""
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    """Whole-job restarts a failed preflight may take (after Kueue replaced the node it tainted), on top
    of maxRestarts."""


def _preflight_switch(value: Any) -> Any:
    return {"enabled": value} if isinstance(value, bool) else value


class WorkloadConfig(Section):
    """`trainstack:workload`: the training job."""

    name: Dns1035Name
    """The job's name: its JobSet (or Job), its pods' DNS subdomain and, with runId, its run's identity."""
    namespace: Annotated[K8sName, by_rule(rules.workload_namespace)] = "trainstack"
    """The stack's own namespace, created with Pod Security labels. Stacks made before it was the
    default set `namespace: default`: moving a live job's namespace replaces its objects."""
    framework: Literal["nemo2", "megatron-bridge", "nemo-megatron", "litgpt", "deepspeed"]
    """The training framework; its launcher builds each pod's command."""
    model: str
    """The model trained, by the name its framework's recipe knows (core/models.py gives its shape for the
    memory estimate)."""
    nodes: Annotated[int, Field(ge=1), AfterValidator(_pool_sized)]  # bounded before anything scales with it
    """The nodes the job runs on, one pod each."""
    steps: Annotated[int, Field(ge=1)]
    """Training steps."""
    checkpoint_interval: Annotated[int, Field(ge=1)] | None = None
    """Steps between checkpoints; unset: the framework's default."""
    precision: Literal["bf16", "fp8", "fp16", "fp32"] = "bf16"
    """The training precision."""
    global_batch_size: Annotated[int, Field(ge=1)] | None = None
    """The global batch size; unset: the framework's default."""
    micro_batch_size: Annotated[int, Field(ge=1)] | None = None
    """The micro batch size of each GPU; unset: the framework's default."""
    seq_length: Annotated[int, Field(ge=1)] | None = None
    """The sequence length; unset: the framework's default."""
    profiling: Profiling = Profiling()
    """An Nsight Systems capture of a step range."""
    overrides: list[str] = []
    """Further `key=value` settings handed to the framework's launcher."""
    env: dict[EnvName, str | Secure] = {}
    """Environment variables of the training container, applied last; a `{secure: ...}` value stays a
    Pulumi secret and reaches the pods through a Kubernetes Secret."""
    max_restarts: Annotated[int, Field(ge=0, le=INT32_MAX)] = 0
    """Whole-job restarts (JobSet) or pod retries (Job)."""
    controller: Literal["jobset", "job"] = "jobset"
    """`jobset`: a JobSet; `job`: an Indexed batch Job and its headless Service."""
    topology: TopologyRequest | None = TopologyRequest()
    """Kueue Topology Aware Scheduling for the job's pods: the default (`{}`, preferred at
    kubernetes.io/hostname) applies where the queue has Topology Aware Scheduling and asks for nothing
    where it has none; null: never."""
    parallelism: Parallelism | None = None
    """How the model is split over the GPUs; unset: the framework's own default split."""
    dataset: Dataset | None = None
    """Training data copied to node-local disk before the job starts."""
    shared_memory: Quantity = "250Gi"
    """The size of each pod's /dev/shm."""
    resiliency: Resiliency = Resiliency()
    """The resiliency supervisor."""
    tensorboard: bool = False
    """Run TensorBoard on the job's logs in the shared file system."""
    run_id: K8sName | None = None
    """The run's identity (JOB_IDENTIFIER = <name>-<runId>): its logs and checkpoints, and what an
    automatic resume picks up. Keep it to resume a run; change it to start a new one."""
    max_runtime: Duration = "24h"
    """A cap on the run's wall time (the resilient NeMo 2.0 script's --max-runtime)."""
    queue: K8sName | None = None
    """The LocalQueue the job is submitted to, which picks the machine it runs on (one queue per
    GPU machine type); default: the first pool's."""
    priority_class: K8sName | None = None
    """A WorkloadPriorityClass of the platform's Kueue (label kueue.x-k8s.io/priority-class)."""
    zero_stage: Annotated[int, Field(ge=0, le=3)] | None = None
    """How model states are sharded over data-parallel ranks: 1 the optimizer (Megatron/NeMo's distributed
    optimizer, DeepSpeed ZeRO-1), 2 gradients too, 3 weights too (DeepSpeed, FSDP); unset: the
    framework's default (see its launcher)."""
    master_weights: bool | None = None
    """Keep 16-bit weights with fp32 master copies (NeMo megatron_amp_O2); unset: the framework's default."""
    recompute: Literal["none", "selective", "full"] | None = None
    """Recompute activations in the backward pass: none, selected ones, or all; unset: the framework's
    default."""
    memory_check: Literal["error", "warn", "off"] = "error"
    """The GPU memory estimate before anything is created: error (refuse), warn, or off."""
    preflight: Annotated[Preflight, BeforeValidator(_preflight_switch)] = Preflight()
    """The preflight gate: node checks and an NCCL test on the job's own nodes before the trainer starts."""
    own_identity: bool = True
    """A workload stack on a trainstack platform: the job runs as a service account of its own
    that may write only <bucket>/<name>/, where it keeps its logs and checkpoints, so no other
    job can overwrite them. Off: the platform's shared account and the bucket's root."""

    @model_validator(mode="after")
    def _rules(self) -> WorkloadConfig:
        problems: list[Problem] = []
        if self.checkpoint_interval is not None and self.checkpoint_interval > self.steps:
            problems.append(Problem(("checkpointInterval",), self.checkpoint_interval, f"must not exceed steps ({self.steps})"))
        if self.profiling.enabled and self.profiling.end_step > self.steps:
            problems.append(Problem(("profiling", "endStep"), self.profiling.end_step, f"must not exceed steps ({self.steps})"))
        for i, override in enumerate(self.overrides):
            if "=" not in override:
                problems.append(Problem(("overrides", i), override, "must be key=value"))
        if self.resiliency.enabled and self.controller != "jobset":
            problems.append(Problem(("controller",), self.controller, "the resiliency supervisor acts on JobSets; use controller: jobset"))
        rule_errors("WorkloadConfig", problems)
        return self

    @property
    def plain_env(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if isinstance(v, str)}

    @property
    def secret_env(self) -> dict[str, str]:
        return {k: v.secure for k, v in self.env.items() if isinstance(v, Secure)}

    def replica_problems(self) -> list[Problem]:
        """How the supervisor's data-parallel replicas fail to fit `nodes` (keys relative to
        `trainstack:workload`). Checked with the cross-section rules, after `nodes` is known
        to fit the GPU pool, so that a wrong node count reports the pool's limit first."""
        resiliency = self.resiliency
        if not resiliency.enabled:
            return []
        problems: list[Problem] = []
        per_replica = self.nodes_per_data_parallel_replica
        if self.nodes % per_replica:
            problems.append(
                Problem(("resiliency", "nodesPerDataParallelReplica"), per_replica, f"must divide nodes ({self.nodes}) into whole data-parallel replicas")
            )
        elif resiliency.min_data_parallel_replicas > self.nodes // per_replica:
            problems.append(
                Problem(
                    ("resiliency", "minDataParallelReplicas"),
                    resiliency.min_data_parallel_replicas,
                    f"must not exceed the {self.nodes // per_replica} replicas {self.nodes} nodes hold",
                )
            )
        return problems

    @property
    def nodes_per_data_parallel_replica(self) -> int:
        """Nodes one data-parallel replica spans (all nodes unless the supervisor says otherwise)."""
        return self.resiliency.nodes_per_data_parallel_replica or self.nodes

    @property
    def data_parallel_replicas(self) -> int:
        return self.nodes // self.nodes_per_data_parallel_replica


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
    """A whole stack's configuration, keyed exactly as in `stacks/Pulumi.<stack>.yaml`."""

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
    storage: StorageConfig = Field(alias="trainstack:storage")
    """The shared storage jobs mount."""
    image: ImageSpec = Field(alias="trainstack:image")
    """The training image: built here, or prebuilt."""
    kueue: KueueSpec = Field(KueueSpec(), alias="trainstack:kueue")
    """Kueue's queues and admission settings."""
    workload: WorkloadConfig | None = Field(None, alias="trainstack:workload")
    """The training job. Absent: a platform-only stack (the platform of recipes, for workload stacks to run
    on)."""
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
        yield from stack_workload_queue(self)
        yield from stack_workload_on_its_queue(self)
        yield from stack_workload_priority(self)

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
    def workload_namespace(self) -> str:
        """Where workloads run: the workload's namespace, or `default` on a platform-only stack."""
        return self.workload.namespace if self.workload else "default"

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

    @property
    def job_queue(self) -> Queue:
        """The queue this stack's job is submitted to (`trainstack:workload.queue`; the first
        queue on a platform stack or by default). Validation refuses an unknown name."""
        return self.queue_of(self.workload.queue if self.workload else None) or self.queues[0]

    def queue_of(self, name: str | None) -> Queue | None:
        """The queue named `name` (None: the first)."""
        return self.queues[0] if name is None else next((q for q in self.queues if q.local_queue == name), None)

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
# families, queues, the workload against its pool), which only the stack file has; each section's
# own rules are its resource's (core/resource_rules.py). Each is independent of the others.


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


def stack_workload_queue(config: StackConfig) -> Iterator[Problem]:
    """The workload's queue is one of the stack's."""
    if config.workload is not None and config.pools and config.queue_of(config.workload.queue) is None:
        yield Problem(
            ("trainstack:workload", "queue"), config.workload.queue, f"is not a queue of this stack ({', '.join(q.local_queue for q in config.queues)})"
        )


def stack_workload_on_its_queue(config: StackConfig) -> Iterator[Problem]:
    """The workload fits the machines, nodes, storage and topology of its queue's pools."""
    queue = config.queue_of(config.workload.queue) if config.workload is not None and config.pools else None
    if config.workload is None or queue is None:
        return
    first = queue.pools[0]
    first_key = key_path(config.pool_key(config.pools.index(first)))
    topology = (
        f"{first.machine_type} nodes carry no GKE topology labels"
        if not first.machine.topology_labels
        else f"{first_key}.autoscaling: an autoscaled pool has no nodes to place on"
    )
    sources = {"nodes": first_key, "machine": f"{first_key}.machineType", "storage": "trainstack:storage.kind", "topology": topology}
    yield from workload_problems(config.workload, queue.machine, queue.max_nodes, config.storage.kind, queue.topology_aware, sources)


def stack_workload_priority(config: StackConfig) -> Iterator[Problem]:
    """The workload's priority class is one the platform defines."""
    if config.workload is not None:
        yield from priority_problems(config.workload, [pc.name for pc in config.kueue.priority_classes], "trainstack:kueue.priorityClasses")


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


def priority_problems(workload: WorkloadConfig, known: list[str], source: str) -> Iterator[Problem]:
    """The workload's priority class, unless the platform's Kueue has it."""
    if workload.priority_class is not None and workload.priority_class not in known:
        yield Problem(
            ("trainstack:workload", "priorityClass"),
            workload.priority_class,
            f"is not a priority class of the platform ({source}: {', '.join(known) or 'none'})",
        )


def workload_problems(
    workload: WorkloadConfig,
    machine: catalog.Machine,
    max_nodes: int,
    storage_kind: str,
    topology_aware: bool,
    sources: dict[str, str],
) -> Iterator[Problem]:
    """Rules between a workload and the GPU pool, queue and storage it runs on. `sources` names
    where the pool's `nodes`, `machine`, `storage` and `topology` come from, as the user wrote
    them (`trainstack:gpuPool`, `trainstack:platform.existingCluster.nodeCount`, a platform stack)."""
    if workload.topology is not None and "topology" in workload.model_fields_set and not topology_aware:
        yield Problem(
            ("trainstack:workload", "topology"),
            workload.topology.level,
            f"the queue has no Topology Aware Scheduling ({sources['topology']}), so Kueue would never admit a job asking for a topology; set topology: null",
        )
    if workload.topology is not None and (wrong := rules.topology_admissible(workload.topology.mode, workload.topology.level, workload.nodes)):
        yield Problem(("trainstack:workload", "topology", "mode"), workload.topology.mode, wrong)
    if workload.nodes > max_nodes:
        yield Problem(("trainstack:workload", "nodes"), workload.nodes, f"exceeds the GPU pool's maximum of {max_nodes} nodes ({sources['nodes']})")
    else:
        for loc, value, rule in workload.replica_problems():
            yield Problem(("trainstack:workload", *loc), value, rule)
    gpu = machine.gpu
    if workload.precision not in gpu.peak_tflops and workload.precision != "fp32":
        yield Problem(
            ("trainstack:workload", "precision"),
            workload.precision,
            f"{machine.name} ({gpu.name}) has no {workload.precision} tensor cores ({sources['machine']})",
        )
    if workload.resiliency.enabled and workload.framework != "nemo2":
        yield Problem(("trainstack:workload", "resiliency", "enabled"), True, "the resiliency supervisor drives NeMo 2.0 jobs only (framework: nemo2)")
    elif workload.resiliency.enabled and (wrong := rules.host_monitor_reachable(machine)):
        yield Problem(("trainstack:workload", "resiliency", "enabled"), True, f"{wrong} ({sources['machine']})")
    if workload.tensorboard and KINDS[storage_kind].fuse:
        yield Problem(
            ("trainstack:workload", "tensorboard"),
            True,
            f"TensorBoard reads the shared file system; it needs storage kind filestore or nfs ({sources['storage']})",
        )


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
    """A workload stack: the workload layer only, on a trainstack platform stack or an existing
    cluster. It creates no network, cluster or node pool."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)

    platform: PlatformRef = Field(alias="trainstack:platform")
    """Where the job runs: a platform stack, or a cluster trainstack did not make."""
    image: ImageSpec = Field(alias="trainstack:image")
    """The training image: built here, or prebuilt."""
    workload: WorkloadConfig = Field(alias="trainstack:workload")
    """The training job."""
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


# ---------------------------------------------------------------------------------------------
# Loading and reporting


def load(stack: str, raw: dict[str, Any]) -> StackConfig | WorkloadStackConfig:
    """Validate a stack's raw config (keys as in its YAML) or raise ConfigError with every problem.
    A config with `trainstack:platform` is a workload stack; any other is a platform stack."""
    if "trainstack:platform" in raw:
        return validated(stack, raw, WorkloadStackConfig)
    return validated(stack, raw, StackConfig)
