"""Kueue, installed from its pinned upstream chart and configured for all-or-nothing,
topology-aware admission of GPU jobs, with the queue objects jobs are submitted to.

`KueueSpec` is the stack file's `trainstack:kueue` with its rules; `KueueArgs` is that spec, its
queues named, plus the flavors, namespace and placement the stack derives.

The whole manager `Configuration` goes in as chart values (the chart's value replaces its
default document, so it is rendered complete, mirroring the chart's defaults at the pinned
version). The queue objects are created only once the release is ready, and so only once
Kueue's webhooks answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pydantic import BaseModel, BeforeValidator, model_validator
from pydantic_core import PydanticCustomError

from trainstack.components.args import Args, KeyPath, Problem, deprecated_keys, not_empty, one_of
from trainstack.components.k8s_provider import (
    MANAGED_BY,
    NODE_POOL_LABEL,
    Placement,
    controller_release,
    metadata,
)
from trainstack.components.node_pools import gpu_pool_selector, gpu_tolerations
from trainstack.components.options import ChildArgs, Children
from trainstack.core import catalog, rules
from trainstack.core.errors import ABSENT
from trainstack.core.spec import Duration, K8sName, Section, bounded, by_rule, rule_errors

TOPOLOGY_NAME = "gke-default"  # the Topology the flavors name, unless the stack file sets one

# The levels of GKE's node topology labels, widest first (cloud.google.com/kubernetes-engine/
# docs/concepts/topology-aware-scheduling). Nodes without a level's label share one domain
# at that level, so the same topology also serves pools without dense placement.
GKE_TOPOLOGY_LEVELS = (
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
    "cloud.google.com/gce-topology-host",
    "kubernetes.io/hostname",
)
GPU_RESOURCE = "nvidia.com/gpu"
# GKE taints the nodes of a queued-provisioning pool with this (Cluster Toolkit gke-node-pool
# main.tf: "GKE automatically applies the taint"); a queued flavor's pods tolerate it.
QUEUED_TOLERATION = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
# Kueue's ProvisioningRequest admission check controller and GKE's DWS provisioning class
# (kueue v0.19.2 apis/kueue/v1beta2 ProvisioningRequestControllerName; GKE "Run a large-scale
# workload with flex-start with queued provisioning").
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
# The MultiKueue admission check controller and the dispatchers of a MultiKueue manager (kueue
# v0.19.2 apis/kueue/v1beta2 MultiKueueControllerName; apis/config/v1beta2 configuration_types.go
# MultiKueueDispatcherModeAllAtOnce, MultiKueueDispatcherModeIncremental).
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
ALL_AT_ONCE_DISPATCHER = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
INCREMENTAL_DISPATCHER = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
# The IMEX channel's DeviceClass, and the resource Kueue counts it as (catalog, with sources).
CHANNEL_RESOURCE = catalog.COMPUTE_DOMAIN_CHANNEL_RESOURCE
# DRANET's RDMA NICs, likewise (workloads.dranet claims them).
MRDMA_RESOURCE = catalog.MRDMA_RESOURCE
# Kueue integrations enabled. Each one puts Kueue's webhook in the path of creating that kind
# (failurePolicy Fail), so only what trainstack submits: `pod`, `deployment` or `statefulset`
# would make every pod or Deployment creation wait on the Kueue controller.
FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")
# Pod-template annotation carrying the Configuration's hash: a changed Configuration rolls the
# controller, and the plan shows that it will. (The chart also hashes its ConfigMap; ours is
# visible in the release's values, so an offline plan diff shows the roll.)
CONFIG_HASH_ANNOTATION = "trainstack/config-sha256"


class Requeuing(Section):
    """How Kueue requeues a workload evicted for not getting its pods ready in time."""

    # Kueue 0.19.2 apis/config/v1beta2 RequeuingStrategy.
    timestamp: Literal["Eviction", "Creation"] = "Eviction"
    """What the requeuing backoff counts from: the eviction or the job's creation."""
    backoff_limit_count: Annotated[int, bounded(rules.NON_NEGATIVE)] | None = None
    """Requeues before the job is deactivated; unset: requeue forever."""
    backoff_base_seconds: Annotated[int, bounded(rules.POSITIVE)] = 60
    """The first requeue's backoff in seconds, doubled at each requeue."""
    backoff_max_seconds: Annotated[int, bounded(rules.POSITIVE)] = 3600
    """The longest backoff in seconds."""

    @model_validator(mode="after")
    def _rules(self) -> Requeuing:
        # Kueue's requeuing backoff: the longest not below the first.
        if wrong := rules.at_least(self.backoff_max_seconds, self.backoff_base_seconds):
            rule_errors("Requeuing", [Problem(("backoffMaxSeconds",), self.backoff_max_seconds, wrong)])
        return self

    def configuration(self) -> dict[str, Any]:
        """The `requeuingStrategy` block."""
        block: dict[str, Any] = {"timestamp": self.timestamp}
        if self.backoff_limit_count is not None:
            block["backoffLimitCount"] = self.backoff_limit_count
        return block | {"backoffBaseSeconds": self.backoff_base_seconds, "backoffMaxSeconds": self.backoff_max_seconds}


class WaitForPodsReady(Section):
    """Kueue all-or-nothing admission (config.kueue.x-k8s.io/v1beta2 `waitForPodsReady`)."""

    timeout: Annotated[Duration, by_rule(rules.positive_duration)] = "10m"
    """How long an admitted job may take to get all its pods ready before Kueue evicts and requeues it;
    unset on a stack whose pools scale up for a job, it is raised to the scale-up budget (30m)."""
    recovery_timeout: Duration | None = None
    """How long a running job may have a pod not ready before it is requeued; unset: Kueue uses timeout;
    `0s`: never."""
    block_admission: bool = True
    """Admit nothing else while a job's pods get ready, so two large jobs never hold half the nodes each."""
    requeuing_strategy: Requeuing = Requeuing()
    """How an evicted job is requeued."""

    def configuration(self) -> dict[str, Any]:
        """The `waitForPodsReady` block. Kueue 0.19.2 fills in and applies the block whether the
        Configuration has it or not (apis/config/v1beta2/defaults.go), so it is always written
        out: what the stack says is what Kueue does."""
        block: dict[str, Any] = {"timeout": self.timeout, "blockAdmission": self.block_admission}
        if self.recovery_timeout is not None:
            block["recoveryTimeout"] = self.recovery_timeout
        block["requeuingStrategy"] = self.requeuing_strategy.configuration()
        return block


def _always_on(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError(
            "rule", "Kueue 0.19.2 applies waitForPodsReady whatever the config says (its defaults fill it in); set its timeout instead of null"
        )
    return value


class PriorityClass(Section):
    """A Kueue WorkloadPriorityClass: jobs that name it get its value."""

    name: K8sName
    """The class's name, as a job's priorityClass names it."""
    value: Annotated[int, bounded(rules.INT32)]
    """Its priority (a WorkloadPriorityClass value is an int32); a higher one preempts a lower in the
    queue."""
    description: str = ""
    """What it is for."""


class KueueSpec(Section):
    """`trainstack:kueue`: queue names and admission settings."""

    local_queue: K8sName | None = None
    """The LocalQueue of the first GPU machine type's jobs; default: the machine's own (`a3-ultra`,
    `a3-mega`, ...)."""
    cluster_queue: K8sName | None = None
    """The ClusterQueue holding that queue's quota; default: the local queue's name."""
    topology_name: K8sName = TOPOLOGY_NAME
    """The Kueue Topology for Topology Aware Scheduling."""
    wait_for_pods_ready: Annotated[WaitForPodsReady, BeforeValidator(_always_on)] = WaitForPodsReady()
    """All-or-nothing admission: Kueue evicts and requeues an admitted job whose pods are not all ready in
    time. Kueue 0.19.2 applies it whether the Configuration has the block or not
    (apis/config/v1beta2/defaults.go), so trainstack always writes it: the config says what runs."""
    priority_classes: list[PriorityClass] = [
        PriorityClass(name="training-high", value=1000, description="Production training"),
        PriorityClass(name="training-low", value=100, description="Benchmarks and experiments"),
    ]
    """The WorkloadPriorityClasses jobs may name."""

    @model_validator(mode="after")
    def _rules(self) -> KueueSpec:
        # Kueue object names are unique: one WorkloadPriorityClass a name.
        seen: set[str] = set()
        problems = []
        for i, priority_class in enumerate(self.priority_classes):
            if priority_class.name in seen:
                problems.append(Problem(("priorityClasses", i, "name"), priority_class.name, rules.duplicate("priority class")))
            seen.add(priority_class.name)
        rule_errors("KueueSpec", problems)
        return self


@dataclass(frozen=True)
class GpuFlavor(Args):
    """A GPU node pool as a Kueue ResourceFlavor, with the quota its nodes give."""

    name: str
    """The ResourceFlavor's name."""
    node_pool: str
    """The GKE node pool's name (its nodes' `cloud.google.com/gke-nodepool`)."""
    machine_type: str
    """The pool's GPU machine type (`a3-megagpu-8g`)."""
    nodes: int
    """The most nodes the pool can have (its size, or its autoscaling maximum)."""
    topology_aware: bool = True
    """Place admitted jobs with Topology Aware Scheduling. TAS assigns pods to nodes that exist,
    so it suits a pool of fixed size; a pool that scales up for a job (from zero) would never be
    scaled up for one it cannot place, unless a ProvisioningRequest admission check provisions
    the nodes first."""

    queued: bool = False
    """The pool is a DWS queued-provisioning pool: jobs admitted on this flavor wait for a
    ProvisioningRequest (an admission check on this flavor only) and tolerate the pool's taint."""
    max_run_duration_s: int | None = None
    """How long GKE keeps a queued pool's nodes (the ProvisioningRequest's `maxRunDurationSeconds`);
    None: GKE's default (7 days)."""
    queue: str | None = None
    """The LocalQueue (and ClusterQueue of the same name) whose flavors this one is of; None: the
    Kueue's main queue. One queue per machine type: a job is built for one machine."""
    any_pool: bool = False
    """Select nodes by the machine alone, not `node_pool`: a MultiKueue manager's flavor, which
    every worker pool of the machine satisfies (Kueue still starts the manager's local copy with
    the flavor's labels: v0.19.2 pkg/controller/jobframework/reconciler.go startJob)."""
    autoscaled: bool = False
    """The pool autoscales: a job admitted here may wait for nodes the autoscaler has yet to make.
    Without a ProvisioningRequest check (`queued`) that wait counts against `waitForPodsReady`."""
    dranet: bool = False
    """The pool's pods claim its RDMA NICs through GKE's DRANET: Kueue counts them (`MRDMA_RESOURCE`)."""

    _checks = {
        "name": rules.K8S_NAME,
        "node_pool": rules.DNS1035_NAME,
        "machine_type": rules.gpu_machine,
        "nodes": rules.NODE_COUNT,
        "max_run_duration_s": rules.POSITIVE,
        "queue": rules.K8S_NAME,
    }

    @property
    def machine(self) -> catalog.Machine:
        """The machine's catalog record."""
        return catalog.machine(self.machine_type)

    def node_labels(self) -> dict[str, str]:
        selector = gpu_pool_selector(self.node_pool, self.machine)
        return {k: v for k, v in selector.items() if k != NODE_POOL_LABEL} if self.any_pool else selector

    def tolerations(self) -> list[dict[str, str]]:
        """What Kueue adds to the pods it admits on this flavor."""
        return [*gpu_tolerations(self.machine), *([QUEUED_TOLERATION] if self.queued else [])]

    def check_name(self) -> str:
        """The name of this flavor's ProvisioningRequestConfig and AdmissionCheck (cluster-wide,
        as the flavor's own name is)."""
        return f"{self.name}-provisioning"

    def quota(self) -> dict[str, int | str]:
        """Nominal quota: the whole pool at its largest (GPUs, vCPUs and memory of every node).
        On a machine whose NVLink spans nodes, also one IMEX channel a node: each training pod (one
        a node) claims its ComputeDomain's channel, which Kueue counts as `CHANNEL_RESOURCE`. On
        DRANET, every RDMA NIC of every node, which the pods claim (`MRDMA_RESOURCE`)."""
        quota: dict[str, int | str] = {
            "cpu": self.machine.vcpus * self.nodes,
            "memory": f"{self.machine.memory_gb * self.nodes}Gi",
            GPU_RESOURCE: self.machine.gpus_per_node * self.nodes,
        }
        if self.machine.accelerator_topology is not None:
            quota[CHANNEL_RESOURCE] = self.nodes
        if self.dranet:
            quota[MRDMA_RESOURCE] = self.machine.rdma_subnets * self.nodes
        return quota

    @property
    def waits_for_nodes(self) -> bool:
        """Admitted before its nodes exist and with nothing provisioning them first: the job's
        pods wait for the autoscaler under `waitForPodsReady.timeout`."""
        return bool(self.autoscaled) and not self.queued


@dataclass(frozen=True)
class MultiKueueDispatch(Args):
    """A MultiKueue manager: `multiKueue` of config.kueue.x-k8s.io/v1beta2 (Kueue v0.19.2), and
    every ClusterQueue admitting through the MultiKueue AdmissionCheck named after it
    (`multikueue_check_name`; components.multikueue makes the checks)."""

    dispatcher: str = INCREMENTAL_DISPATCHER
    """Which workers get a copy of an admitted workload: all at once, or incrementally in the order
    of `MultiKueueConfig.spec.clusters` (gate MultiKueueIncrementalDispatcherRespectConfigOrder,
    Beta and on in v0.19), adding `step_size` more every 5 minutes."""
    step_size: int = 1
    """The incremental dispatcher's step (gate MultiKueueIncrementalDispatcherConfig, Beta and on
    in v0.19; Kueue's default is 3)."""

    origin: str | None = None
    """The label value marking this manager's copies on its workers: its garbage collector deletes
    every copy of its origin without a local counterpart (v0.19.2 apis/config/v1beta2
    configuration_types.go `MultiKueue.Origin`, a label value by pkg/config/validation.go;
    pkg/controller/admissionchecks/multikueue/multikueuecluster.go runGC). None: Kueue's default,
    `multikueue`, which every manager shares: two managers on one worker delete each other's jobs."""

    _checks = {"dispatcher": one_of(ALL_AT_ONCE_DISPATCHER, INCREMENTAL_DISPATCHER), "step_size": rules.POSITIVE, "origin": rules.K8S_NAME}

    def configuration(self) -> dict[str, Any]:
        block: dict[str, Any] = {"dispatcherName": self.dispatcher}
        if self.origin is not None:
            block["origin"] = self.origin
        if self.dispatcher == INCREMENTAL_DISPATCHER:
            block["incrementalDispatcherConfig"] = {"stepSize": self.step_size}
        return block


def multikueue_check_name(cluster_queue: str) -> str:
    """The MultiKueue AdmissionCheck (and MultiKueueConfig) of a manager's ClusterQueue."""
    return f"{cluster_queue}-multikueue"


class PodsReadyAliases(WaitForPodsReady):
    """`waitForPodsReady`, also in the package's spelling before it took the spec's: the requeuing
    keys flat beside the timeout, deprecated and accepted for one release (`KueueArgs.spec_input`)."""

    requeue_timestamp: Literal["Eviction", "Creation"] | None = None
    """Deprecated: use `requeuingStrategy.timestamp`."""
    backoff_limit_count: int | None = None
    """Deprecated: use `requeuingStrategy.backoffLimitCount`."""
    backoff_base_seconds: int | None = None
    """Deprecated: use `requeuingStrategy.backoffBaseSeconds`."""
    backoff_max_seconds: int | None = None
    """Deprecated: use `requeuingStrategy.backoffMaxSeconds`."""


class KueueAliases(Section):
    """The package's Kueue inputs before they took the spec's spelling: deprecated, accepted for one
    release (`KueueArgs.spec_input`), then refused as unknown keys."""

    wait_for_pods_ready: PodsReadyAliases | None = None
    """All-or-nothing admission (`WaitForPodsReady`); its flat requeuing keys are deprecated."""


# The deprecated flat keys of `waitForPodsReady` -> their key in `requeuingStrategy`.
_FLAT_REQUEUING = {
    "requeueTimestamp": "timestamp",
    "backoffLimitCount": "backoffLimitCount",
    "backoffBaseSeconds": "backoffBaseSeconds",
    "backoffMaxSeconds": "backoffMaxSeconds",
}


@dataclass(frozen=True)
class KueueArgs(Args):
    """Kueue and its queues: `trainstack:kueue` as a stack file writes it, its queue names given,
    and the flavors, namespace and placement the stack derives."""

    spec: KueueSpec
    """Queue names and admission settings: a stack file's `trainstack:kueue`, its queues named."""
    namespace: pulumi.Input[str]
    """The LocalQueue's namespace (an Output of the Namespace, so it waits for it). Checked when
    plain; an Output is not checked."""
    flavors: list[GpuFlavor]
    """One per GPU pool."""
    topology_levels: list[str] = field(default_factory=lambda: list(GKE_TOPOLOGY_LEVELS))
    """The Topology's node labels, widest first."""
    frameworks: list[str] = field(default_factory=lambda: list(FRAMEWORKS))
    """Kueue integrations to enable."""
    # TopologyAwareScheduling is Beta and on by default since Kueue 0.14; set explicitly, it
    # states the intent and survives a change of default.
    feature_gates: dict[str, bool] = field(default_factory=lambda: {"TopologyAwareScheduling": True})
    """Set on the manager's command line (`--feature-gates`)."""
    placement: Placement = field(default_factory=Placement)
    """Where the controller runs."""
    chart: catalog.HelmChart = catalog.KUEUE_CHART
    """The pinned chart."""
    multikueue: MultiKueueDispatch | None = None
    """A MultiKueue manager's dispatcher; None: no MultiKueue admission check on the queues."""

    _checks = {
        "namespace": rules.K8S_NAME,
        "flavors": not_empty,
        "topology_levels": not_empty,
    }

    @classmethod
    def spec_aliases(cls) -> type[BaseModel]:
        return KueueAliases

    @classmethod
    def spec_required(cls) -> tuple[str, ...]:
        return ("localQueue", "clusterQueue")

    @classmethod
    def spec_input(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The package's inputs of the spec, `waitForPodsReady`'s deprecated flat requeuing keys
        (`PodsReadyAliases`) in the spec's spelling."""
        moves: dict[KeyPath, KeyPath] = {("waitForPodsReady", old): ("waitForPodsReady", "requeuingStrategy", new) for old, new in _FLAT_REQUEUING.items()}
        return deprecated_keys(raw, moves, "KueueArgs")

    @property
    def local_queue(self) -> str:
        """The LocalQueue jobs name (`kueue.x-k8s.io/queue-name`)."""
        return self.spec.local_queue or ""

    @property
    def cluster_queue(self) -> str:
        """The ClusterQueue holding the GPU quota."""
        return self.spec.cluster_queue or ""

    def queues(self) -> list[tuple[str, str, list[GpuFlavor]]]:
        """(ClusterQueue, LocalQueue, its flavors in the order Kueue tries them), the main queue first."""
        found: dict[str | None, list[GpuFlavor]] = {None: []}
        for flavor in self.flavors:
            found.setdefault(flavor.queue if flavor.queue != self.local_queue else None, []).append(flavor)
        return [(self.cluster_queue, self.local_queue, found[None]), *((q, q, fl) for q, fl in found.items() if q is not None)]

    def _cross(self) -> Iterator[Problem]:
        # The stack file's default queue names are the stack's (the first machine's); a component names them.
        missing = [key for key, name in (("localQueue", self.spec.local_queue), ("clusterQueue", self.spec.cluster_queue)) if name is None]
        if missing:
            yield from (Problem((key,), ABSENT, "required key is missing") for key in missing)
            return
        timeout = self.spec.wait_for_pods_ready.timeout
        waiting = [f.name for f in self.flavors if f.waits_for_nodes]
        if waiting and (wrong := rules.pods_ready_budget(timeout, waiting)):
            yield Problem(("waitForPodsReady", "timeout"), timeout, wrong)
        if self.flavors and not self.queues()[0][2]:
            yield Problem(("flavors",), [f.name for f in self.flavors], f"none is of the main queue {self.local_queue}")
        if self.multikueue is not None and (queued := [f.name for f in self.flavors if f.queued]):
            yield Problem(("flavors",), queued, "a MultiKueue manager runs no job: its flavors provision nothing (queued is a worker's)")
        for cluster_queue, _, flavors in self.queues():
            if len({f.machine_type for f in flavors}) > 1:
                yield Problem(
                    ("flavors",),
                    [f.name for f in flavors],
                    f"queue {cluster_queue} mixes machine types; give each machine type a queue of its own (GpuFlavor.queue)",
                )
        # Kueue object names are unique: one ResourceFlavor a name (the stack names a flavor by its pool's).
        seen: set[str] = set()
        for i, flavor in enumerate(self.flavors):
            if flavor.name in seen:
                yield Problem(("flavors", i, "name"), flavor.name, rules.duplicate("flavor"))
            seen.add(flavor.name)


def manager_configuration(args: KueueArgs) -> dict[str, Any]:
    """The manager's whole `Configuration`: the chart's default document at the pinned version
    (kubernetes-sigs/kueue charts/kueue/values.yaml, v0.19.2), with our integrations and
    `waitForPodsReady`."""
    config: dict[str, Any] = {
        "apiVersion": catalog.KUEUE_CONFIG_API,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": catalog.CONTROLLER_WEBHOOK_PORT},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "integrations": {"frameworks": list(args.frameworks)},
    }
    config["waitForPodsReady"] = args.spec.wait_for_pods_ready.configuration()
    if args.multikueue is not None:
        config["multiKueue"] = args.multikueue.configuration()
    # Kueue 0.19.2 counts DRA claims (KueueDRAIntegration, on by default) and refuses a claim of a
    # DeviceClass no mapping names (pkg/dra/claims.go): map the IMEX channel's and DRANET's RDMA NICs'.
    mappings = []
    if any(f.machine.accelerator_topology is not None for f in args.flavors):
        mappings.append({"name": CHANNEL_RESOURCE, "deviceClassNames": [catalog.COMPUTE_DOMAIN_CHANNEL_CLASS]})
    if any(f.dranet for f in args.flavors):
        mappings.append({"name": MRDMA_RESOURCE, "deviceClassNames": [catalog.MRDMA_DEVICE_CLASS]})
    if mappings:
        config["resources"] = {"deviceClassMappings": mappings}
    return config


def render_configuration(args: KueueArgs) -> str:
    """The Configuration as the YAML document the chart puts in its ConfigMap (deterministic)."""
    return yaml.safe_dump(manager_configuration(args), sort_keys=False, default_flow_style=False)


def chart_values(args: KueueArgs) -> dict[str, Any]:
    """Values of the Kueue chart (v0.19.2 keys: controllerManager.*, managerConfig.*)."""
    configuration = render_configuration(args)
    return {
        "controllerManager": {
            "featureGates": [{"name": name, "enabled": on} for name, on in sorted(args.feature_gates.items())],
            "manager": {"podAnnotations": {CONFIG_HASH_ANNOTATION: hashlib.sha256(configuration.encode()).hexdigest()}},
            **args.placement.pod_fields(),
        },
        "managerConfig": {"controllerManagerConfigYaml": configuration},
    }


def _content_name(base: str, spec: Mapping[str, Any]) -> str:
    """`<base>-<hash of spec>`: a Kueue object whose spec is immutable gets a new name when the
    spec changes, so Pulumi creates the new object, moves what refers to it, then deletes the
    old one, and the queue keeps admitting throughout."""
    return f"{base}-{hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:8]}"


def topology_spec(args: KueueArgs) -> dict[str, Any]:
    return {"levels": [{"nodeLabel": level} for level in args.topology_levels]}


def topology_object_name(args: KueueArgs) -> str:
    """The Topology's name: its `levels` are immutable (v0.19.2 CRD)."""
    return _content_name(args.spec.topology_name, topology_spec(args))


def flavor_spec(flavor: GpuFlavor, args: KueueArgs) -> dict[str, Any]:
    return {
        "nodeLabels": flavor.node_labels(),
        "tolerations": flavor.tolerations(),  # added to admitted pods
        **({"topologyName": topology_object_name(args)} if flavor.topology_aware else {}),
    }


def flavor_object_name(flavor: GpuFlavor, args: KueueArgs) -> str:
    """The ResourceFlavor's name: with a `topologyName`, its `nodeLabels` and the topology are
    immutable (v0.19.2 CRD transition rules)."""
    spec = flavor_spec(flavor, args)
    return _content_name(flavor.name, {k: spec[k] for k in ("nodeLabels", "topologyName") if k in spec})


def cluster_queue_spec(flavors: list[GpuFlavor], args: KueueArgs, name: str | None = None) -> dict[str, Any]:
    """ClusterQueue `name` trying `flavors` in order (kueue.x-k8s.io/v1beta2 at v0.19.2)."""
    spec: dict[str, Any] = {
        "namespaceSelector": {},  # every namespace may have a LocalQueue pointing here
        "queueingStrategy": "BestEffortFIFO",
        # a job of a higher WorkloadPriorityClass may evict lower ones to be admitted
        "preemption": {"withinClusterQueue": "LowerPriority"},
        "resourceGroups": [
            {
                "coveredResources": list(flavors[0].quota()),  # one machine a queue: every flavor's resources
                "flavors": [
                    {"name": flavor_object_name(flavor, args), "resources": [{"name": r, "nominalQuota": q} for r, q in flavor.quota().items()]}
                    for flavor in flavors
                ],
            }
        ],
    }
    if len(flavors) > 1:
        # A job that could be admitted on an earlier flavor only by borrowing or preempting moves
        # on to the next flavor instead of waiting there (Kueue docs, concepts/cluster_queue
        # "Flavor fungibility"; a flavor without room is always skipped).
        spec["flavorFungibility"] = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
    queued = [f for f in flavors if f.queued]
    if args.multikueue is not None and name is not None:
        # Every workload of a manager's queue is dispatched to a worker (kueue v0.19.2
        # site/static/examples/multikueue/multikueue-setup.yaml).
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": multikueue_check_name(name)}]}
    elif queued:
        # The provisioning check on the queued flavors only (v1beta2 admissionChecksStrategy).
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": f.check_name(), "onFlavors": [flavor_object_name(f, args)]} for f in queued]}
    return spec


def provisioning_config_spec(flavor: GpuFlavor) -> dict[str, Any]:
    """The ProvisioningRequestConfig of a queued flavor: GKE's queued-provisioning class, for the
    pods that ask for GPUs (kueue v0.19.2 apis/kueue/v1beta2/provisioningrequestconfig_types.go),
    and its retry strategy written out (catalog PROVISIONING_RETRY_*): a request GKE fails is
    retried that many times on this same flavor, then the job is deactivated; it never moves on
    to the next flavor (README, GPU pools and capacity)."""
    spec: dict[str, Any] = {
        "provisioningClassName": QUEUED_PROVISIONING_CLASS,
        "managedResources": [GPU_RESOURCE],
        "retryStrategy": {
            "backoffLimitCount": catalog.PROVISIONING_RETRY_LIMIT,
            "backoffBaseSeconds": catalog.PROVISIONING_RETRY_BASE_SECONDS,
            "backoffMaxSeconds": catalog.PROVISIONING_RETRY_MAX_SECONDS,
        },
    }
    if flavor.max_run_duration_s is not None:
        spec["parameters"] = {"maxRunDurationSeconds": str(flavor.max_run_duration_s)}
    return spec


class _TopLevelObject(pulumi.CustomResource):
    """A custom resource whose fields sit at the top level, beside `metadata` (the SDK's
    CustomResource takes only `spec`): e.g. a WorkloadPriorityClass's `value`."""

    def __init__(self, child: ChildArgs, api_version: str, kind: str, fields: Mapping[str, Any]):
        props = {"apiVersion": api_version, "kind": kind, **fields}
        super().__init__(f"kubernetes:{api_version}:{kind}", child["resource_name"], props, child["opts"])


def _unsuffixed(role: str, main: bool) -> dict[str, Any]:
    """The options aliasing the main queue's object from its unsuffixed names (before queues were
    keyed by name: `<kueue>-<role>`, and the bare role before that)."""
    return {"was": role, "roles_were": [role]} if main else {}


class Kueue(pulumi.ComponentResource):
    """Kueue from its pinned chart, and its Topology, ResourceFlavors, ClusterQueue, LocalQueue
    and WorkloadPriorityClasses (kueue.x-k8s.io/v1beta2).

    In Python, `cluster_queue` and `local_queue` are the queue objects and `objects` every queue
    object in creation order (what a job depends on).
    """

    release: k8s.helm.v3.Release
    """The Helm release; every queue object depends on it."""
    configuration: str
    """The manager Configuration (YAML) passed to the chart."""
    local_queue_name: str
    """The LocalQueue's name, what jobs are submitted to."""

    def __init__(self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None):
        args = KueueArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:Kueue", name, None, opts)
        self.configuration = render_configuration(args)
        kids = Children(self, name, opts)
        self.release = controller_release(kids.main(), args.chart, chart_values(args))

        def custom(role: str, kind: str, meta: k8s.meta.v1.ObjectMetaArgs, spec: dict[str, Any], *after: pulumi.Resource, **more: Any):
            return k8s.apiextensions.CustomResource(
                **kids(role, self.release, *after, **more),
                api_version=catalog.KUEUE_API,
                kind=kind,
                metadata=meta,
                spec=spec,
            )

        topology_name = topology_object_name(args)
        topology = (
            [
                custom(
                    "topology",
                    "Topology",
                    metadata(topology_name),
                    topology_spec(args),
                    replace_on_changes=["spec.levels"],
                )
            ]
            if any(flavor.topology_aware for flavor in args.flavors)
            else []
        )
        flavors = [
            custom(
                f"flavor-{flavor.name}",
                "ResourceFlavor",
                metadata(flavor_object_name(flavor, args)),
                flavor_spec(flavor, args),
                *topology,
                replace_on_changes=["spec.nodeLabels", "spec.topologyName"],
            )
            for flavor in args.flavors
        ]
        checks = []
        for flavor in (f for f in args.flavors if f.queued):
            config = custom(f"provisioning-{flavor.name}", "ProvisioningRequestConfig", metadata(flavor.check_name()), provisioning_config_spec(flavor))
            checks.append(
                custom(
                    f"admission-check-{flavor.name}",
                    "AdmissionCheck",
                    metadata(flavor.check_name()),
                    {
                        "controllerName": PROVISIONING_CONTROLLER,
                        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": flavor.check_name()},
                    },
                    config,
                    # Immutable (v0.19.2 CRD), and the name stays: the old one goes first.
                    replace_on_changes=["spec.controllerName"],
                    delete_before_replace=True,
                )
            )
        queues = []
        for i, (cluster_queue, local_queue, queue_flavors) in enumerate(args.queues()):
            # Keyed by the queue's own name, so adding, removing or reordering queues touches no
            # other queue. The main queue's objects were unsuffixed before: aliased from those.
            suffix = f"-{local_queue}"
            dispatch = []
            if args.multikueue is not None:
                # Its MultiKueueConfig (same name) lists the workers: components.multikueue.
                check = multikueue_check_name(cluster_queue)
                dispatch.append(
                    custom(
                        f"multikueue-check{suffix}",
                        "AdmissionCheck",
                        metadata(check),
                        {"controllerName": MULTIKUEUE_CONTROLLER, "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": check}},
                        replace_on_changes=["spec.controllerName"],
                        delete_before_replace=True,
                        **_unsuffixed("multikueue-check", main=i == 0),
                    )
                )
            cq = custom(
                f"cluster-queue{suffix}",
                "ClusterQueue",
                metadata(cluster_queue),
                cluster_queue_spec(queue_flavors, args, cluster_queue),
                *flavors,
                *checks,
                *dispatch,  # and so deleted before them: a flavor or check in use cannot be deleted
                **_unsuffixed("cluster-queue", main=i == 0),
            )
            checks += dispatch
            lq = custom(
                f"local-queue{suffix}",
                "LocalQueue",
                metadata(local_queue, args.namespace),
                {"clusterQueue": cluster_queue},
                cq,
                # Immutable (Kueue v0.19.2 CRD: `self == oldSelf`), and jobs name the queue: same
                # name, so the old one goes first.
                replace_on_changes=["spec.clusterQueue"],
                delete_before_replace=True,
                **_unsuffixed("local-queue", main=i == 0),
            )
            queues += [cq, lq]
        self.cluster_queue, self.local_queue = queues[0], queues[1]
        self.local_queue_name = args.local_queue
        priority_classes = [
            _TopLevelObject(
                kids(f"priority-{pc.name}", self.release),
                catalog.KUEUE_API,
                "WorkloadPriorityClass",
                {
                    "metadata": {"name": pc.name, "labels": dict(MANAGED_BY)},
                    "value": pc.value,
                    **({"description": pc.description} if pc.description else {}),
                },
            )
            for pc in args.spec.priority_classes
        ]
        self.objects: list[pulumi.Resource] = [*topology, *flavors, *checks, *queues, *priority_classes]
        self.register_outputs({"localQueue": self.local_queue_name, "clusterQueue": args.cluster_queue})
